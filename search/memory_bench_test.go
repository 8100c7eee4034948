package search

import (
	"math/rand"
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
	for _, ip := range benchProblems(testing.Short()) {
		p := ip.problem(b)
		ordered := costedSample(b, p, 64, 64)
		cold := append([]space.Strategy(nil), ordered...)
		rand.New(rand.NewSource(1)).Shuffle(len(cold), func(i, j int) { cold[i], cold[j] = cold[j], cold[i] })
		for _, order := range []struct {
			name       string
			strategies []space.Strategy
		}{{"enumeration", ordered}, {"cold", cold}} {
			b.Run(ip.name()+"/"+order.name, func(b *testing.B) {
				w := p.worker()
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					if _, err := w.Memory(&order.strategies[n%len(order.strategies)]); err != nil {
						b.Fatal(err)
					}
					n++
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "strategies/s")
			})
		}
	}
}
