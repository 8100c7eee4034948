package search

import (
	"testing"
)

// BenchmarkWorkerMemory measures the memory estimates per second of one
// worker (score.Worker.Memory, a memory.Estimator per program) on the
// strategies BenchmarkCosted costs in runs, in enumeration order (runs)
// and shuffled (cold): the memory share of BenchmarkCosted.
//
//	go test ./search -run '^$' -bench '^BenchmarkWorkerMemory$' -benchmem
func BenchmarkWorkerMemory(b *testing.B) {
	benchmarkSample(b, false, func(_ *Problem, w Scorer, sample []sampled, _ bool) func(b *testing.B, j, n int) {
		return func(b *testing.B, j, _ int) {
			if _, err := w.Memory(&sample[j].s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
