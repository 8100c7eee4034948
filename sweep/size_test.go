package sweep

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestCellCount(t *testing.T) {
	n := func(k int) []string { return make([]string, k) }
	ints := func(k int) []int { return make([]int, k) }
	tests := []struct {
		name  string
		c     Config
		count int64
		more  bool
	}{
		{"explicit cells only", Config{Cells: make([]CellSpec, 3)}, 3, false},
		{"grid 2x3x4, no seqs or fix", Config{Models: n(2), Clusters: n(3), Batches: ints(4)}, 24, false},
		{"grid with seqs, fix and cells", Config{Models: n(2), Clusters: n(3), Batches: ints(4), Seqs: ints(5), Fix: n(2), Cells: make([]CellSpec, 1)}, 241, false},
		{"grid missing a list", Config{Models: n(2), Batches: ints(4)}, 0, false},
		{"at the limit", Config{Models: n(10), Clusters: n(10), Batches: ints(1000)}, 100_000, false},
		{"the issue's grid", Config{Models: n(10), Clusters: n(10), Batches: ints(1000), Seqs: ints(100)}, 10_000_000, false},
		{"1000^5", Config{Models: n(1000), Clusters: n(1000), Batches: ints(1000), Seqs: ints(1000), Fix: n(1000)}, 1_000_000_000_000_000, false},
		// 100000^4 = 1e20 is past math.MaxInt64 (about 9.2e18).
		{"overflow", Config{Models: n(100_000), Clusters: n(100_000), Batches: ints(100_000), Seqs: ints(100_000)}, math.MaxInt64, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			count, more := tt.c.CellCount()
			if count != tt.count || more != tt.more {
				t.Errorf("CellCount = %d, %v; want %d, %v", count, more, tt.count, tt.more)
			}
		})
	}
}

// TestTooManyCells: a 10-million-cell configuration is refused within 1 s,
// naming its count and how to split it.
func TestTooManyCells(t *testing.T) {
	batches := make([]string, 1000)
	for i := range batches {
		batches[i] = fmt.Sprint(i + 1)
	}
	seqs := make([]string, 100)
	for i := range seqs {
		seqs[i] = fmt.Sprint(1024 * (i + 1))
	}
	models := "[m0, m1, m2, m3, m4, m5, m6, m7, m8, m9]"
	clusters := "[c0, c1, c2, c3, c4, c5, c6, c7, c8, c9]"
	cfg := fmt.Sprintf("models: %s\nclusters: %s\nbatches: [%s]\nseqs: [%s]\n", models, clusters, strings.Join(batches, ", "), strings.Join(seqs, ", "))
	start := time.Now()
	_, err := ParseConfig("big.yaml", []byte(cfg))
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing took %v", d)
	}
	want := "the sweep has 10000000 cells (10 models x 10 clusters x 1000 batches x 100 seqs x 1 fixes, plus 0 explicit cells), more than the 100000 one configuration may hold: split it"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "--shard") {
		t.Errorf("ParseConfig: %v, want %q...", err, want)
	}
}
