package sweep

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one of Count disjoint parts of a sweep; Index counts from 0.
// Cell i of the grid (in grid order) belongs to shard i mod Count.
type Shard struct {
	Index, Count int
}

// Whole is the one shard of an unsharded sweep.
var Whole = Shard{Index: 0, Count: 1}

// String returns the shard as --shard takes it, e.g. "0/4".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Valid reports what is wrong with s, or nil.
func (s Shard) Valid() error {
	if s.Count < 1 {
		return fmt.Errorf("shard count must be at least 1, got %d", s.Count)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard index must be in [0, %d), got %d", s.Count, s.Index)
	}
	return nil
}

// Owns reports whether cell number i of the grid belongs to s.
func (s Shard) Owns(i int) bool { return i%s.Count == s.Index }

// Indexes returns the grid positions of s's cells among n cells, in grid order.
func (s Shard) Indexes(n int) []int {
	var idx []int
	for i := s.Index; i < n; i += s.Count {
		idx = append(idx, i)
	}
	return idx
}

// CellsFile is the name of s's output file in the sweep directory,
// "cells-I-of-N.jsonl".
func (s Shard) CellsFile() string { return fmt.Sprintf("cells-%d-of-%d.jsonl", s.Index, s.Count) }

// SummaryFile is the name of s's summary in the sweep directory:
// "summary.csv" for the whole sweep, else "summary-I-of-N.csv".
func (s Shard) SummaryFile() string {
	if s.Count == 1 {
		return "summary.csv"
	}
	return fmt.Sprintf("summary-%d-of-%d.csv", s.Index, s.Count)
}

// ParseShard parses "I/N" (0 <= I < N).
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, fmt.Errorf("--shard %q: want I/N, e.g. 0/4 for the first of four shards", s)
	}
	idx, err1 := strconv.Atoi(strings.TrimSpace(i))
	cnt, err2 := strconv.Atoi(strings.TrimSpace(n))
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("--shard %q: want two whole numbers I/N, e.g. 0/4", s)
	}
	sh := Shard{Index: idx, Count: cnt}
	if err := sh.Valid(); err != nil {
		return Shard{}, fmt.Errorf("--shard %q: %w", s, err)
	}
	return sh, nil
}

// Environment variables read by ShardFromEnv.
const (
	// EnvK8sIndex is set by Kubernetes in each pod of an Indexed Job.
	EnvK8sIndex = "JOB_COMPLETION_INDEX"
	// EnvK8sCount is the Job's completions; Kubernetes does not set it, so
	// the manifest must (docs/k8s-sweep.yaml does).
	EnvK8sCount = "JOB_COMPLETIONS"
	// EnvSlurmIndex is set by Slurm in each task of a job array.
	EnvSlurmIndex = "SLURM_ARRAY_TASK_ID"
	// EnvSlurmCount is set by Slurm: the number of tasks of the array.
	EnvSlurmCount = "SLURM_ARRAY_TASK_COUNT"
	// EnvSlurmMin is set by Slurm: the smallest task id of the array.
	EnvSlurmMin = "SLURM_ARRAY_TASK_MIN"
)

// ShardFromEnv returns the shard a batch scheduler assigned through the
// environment (getenv is os.Getenv in production): a Kubernetes Indexed Job
// (JOB_COMPLETION_INDEX, with JOB_COMPLETIONS set by the manifest), else a
// Slurm job array (SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN, of
// SLURM_ARRAY_TASK_COUNT; the array's ids must be consecutive, e.g.
// --array=0-3). The source names the variables used, "" when none is set
// (the result is then Whole).
func ShardFromEnv(getenv func(string) string) (sh Shard, source string, err error) {
	if idx := getenv(EnvK8sIndex); idx != "" {
		cnt := getenv(EnvK8sCount)
		if cnt == "" {
			return Shard{}, "", fmt.Errorf("%s is set (a Kubernetes Indexed Job) but %s is not: set it to the Job's completions in the manifest, or pass --shard I/N", EnvK8sIndex, EnvK8sCount)
		}
		sh, err := envShard(EnvK8sIndex, idx, EnvK8sCount, cnt, 0)
		return sh, EnvK8sIndex + "/" + EnvK8sCount, err
	}
	if idx := getenv(EnvSlurmIndex); idx != "" {
		cnt := getenv(EnvSlurmCount)
		if cnt == "" {
			return Shard{}, "", fmt.Errorf("%s is set (a Slurm job array) but %s is not: pass --shard I/N", EnvSlurmIndex, EnvSlurmCount)
		}
		base := 0
		if m := getenv(EnvSlurmMin); m != "" {
			v, err := strconv.Atoi(strings.TrimSpace(m))
			if err != nil {
				return Shard{}, "", fmt.Errorf("%s=%q is not a whole number", EnvSlurmMin, m)
			}
			base = v
		}
		sh, err := envShard(EnvSlurmIndex, idx, EnvSlurmCount, cnt, base)
		return sh, EnvSlurmIndex + "/" + EnvSlurmCount, err
	}
	return Whole, "", nil
}

func envShard(idxName, idx, cntName, cnt string, base int) (Shard, error) {
	i, err := strconv.Atoi(strings.TrimSpace(idx))
	if err != nil {
		return Shard{}, fmt.Errorf("%s=%q is not a whole number", idxName, idx)
	}
	n, err := strconv.Atoi(strings.TrimSpace(cnt))
	if err != nil {
		return Shard{}, fmt.Errorf("%s=%q is not a whole number", cntName, cnt)
	}
	sh := Shard{Index: i - base, Count: n}
	if err := sh.Valid(); err != nil {
		return Shard{}, fmt.Errorf("%s=%s, %s=%s: %w (array ids must be consecutive from the first)", idxName, idx, cntName, cnt, err)
	}
	return sh, nil
}
