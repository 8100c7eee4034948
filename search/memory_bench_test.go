package search

import (
	"testing"

	"github.com/meshplan/meshplan/space"
)

// BenchmarkWorkerMemory measures the memory estimates per second of one
// worker (planWorker.Memory, a memory.Estimator per program) on the
// strategies BenchmarkCosted costs, in enumeration order and shuffled
// (cold): the memory share of BenchmarkCosted.
//
//	go test ./search -run '^$' -bench '^BenchmarkWorkerMemory$' -benchmem
func BenchmarkWorkerMemory(b *testing.B) {
	benchmarkSample(b, func(b *testing.B, _ *Problem, w Scorer, s *space.Strategy, _ int) {
		if _, err := w.Memory(s); err != nil {
			b.Fatal(err)
		}
	})
}
