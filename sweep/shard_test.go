package sweep

import (
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Shard
		wantErr string
	}{
		{"0/1", Shard{0, 1}, ""},
		{"3/4", Shard{3, 4}, ""},
		{" 1 / 2 ", Shard{1, 2}, ""},
		{"4/4", Shard{}, "shard index must be in [0, 4), got 4"},
		{"-1/4", Shard{}, "got -1"},
		{"0/0", Shard{}, "shard count must be at least 1"},
		{"1", Shard{}, "want I/N"},
		{"a/b", Shard{}, "two whole numbers"},
	} {
		got, err := ParseShard(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseShard(%q): error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestShardFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    Shard
		wantErr string
	}{
		{"none", nil, Whole, ""},
		{"kubernetes", map[string]string{"JOB_COMPLETION_INDEX": "2", "JOB_COMPLETIONS": "4"}, Shard{2, 4}, ""},
		{"kubernetes wins over slurm", map[string]string{"JOB_COMPLETION_INDEX": "1", "JOB_COMPLETIONS": "2", "SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "8"}, Shard{1, 2}, ""},
		{"kubernetes without count", map[string]string{"JOB_COMPLETION_INDEX": "0"}, Shard{}, "JOB_COMPLETIONS is not"},
		{"kubernetes index too large", map[string]string{"JOB_COMPLETION_INDEX": "4", "JOB_COMPLETIONS": "4"}, Shard{}, "got 4"},
		{"slurm from 0", map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0"}, Shard{3, 4}, ""},
		{"slurm from 1", map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1"}, Shard{3, 4}, ""},
		{"slurm stepped", map[string]string{"SLURM_ARRAY_TASK_ID": "6", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0"}, Shard{}, "consecutive"},
		{"slurm without count", map[string]string{"SLURM_ARRAY_TASK_ID": "1"}, Shard{}, "SLURM_ARRAY_TASK_COUNT is not"},
		{"slurm not a number", map[string]string{"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "2"}, Shard{}, `SLURM_ARRAY_TASK_ID="x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := ShardFromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// Every cell belongs to exactly one shard, shards differ in size by at
// most one, and a shard's cells are in grid order.
func TestShardsPartition(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 100} {
		for _, cells := range []int{0, 1, 5, 99, 100, 101} {
			owner := make([]int, cells)
			for i := range owner {
				owner[i] = -1
			}
			lo, hi := cells, 0
			for s := range n {
				sh := Shard{s, n}
				idx := sh.Indexes(cells)
				lo, hi = min(lo, len(idx)), max(hi, len(idx))
				for k, i := range idx {
					if k > 0 && idx[k-1] >= i {
						t.Fatalf("%d cells, shard %v: not in grid order: %v", cells, sh, idx)
					}
					if owner[i] != -1 || !sh.Owns(i) {
						t.Fatalf("%d cells: cell %d in shards %d and %d", cells, i, owner[i], s)
					}
					owner[i] = s
				}
			}
			for i, o := range owner {
				if o == -1 {
					t.Fatalf("%d cells in %d shards: cell %d has no shard", cells, n, i)
				}
			}
			if hi-lo > 1 {
				t.Errorf("%d cells in %d shards: sizes from %d to %d", cells, n, lo, hi)
			}
		}
	}
}
