package cost

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// BenchmarkEvaluate: Llama 3 405B on 16384 H100, tp=8, pp=16, dp=128,
// zero=1, interleaved v=4 (the search hot path: one Model, many strategies).
func BenchmarkEvaluate(b *testing.B) {
	m := llama3("405b")
	c := gpuCluster("h100-16384", chipH100, 16384, 450e9, 50e9)
	s := strategy(space.Strategy{Degree: space.Degrees{space.TP: 8, space.PP: 16, space.DP: 128}, Zero: 1, SP: true, Schedule: space.Interleaved, V: 4})
	s.Mesh[space.TP] = share("gpu", 8)
	s.Mesh[space.PP] = share("node", 16)
	s.Mesh[space.DP] = share("node", 128)
	w := space.Workload{Batch: 2048, SeqLen: 8192}
	b.Run("evaluator", func(b *testing.B) {
		ev := NewModel(program(m, model.ProgramOptions{})).NewEvaluator(c, w, Options{SkipCollectives: true})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ev.Evaluate(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("evaluator-schedules", func(b *testing.B) {
		// The search's order: the schedule varies fastest, so the segment
		// costs of one layout, micro-batch, recompute and ZeRO stage are reused.
		ev := NewModel(program(m, model.ProgramOptions{})).NewEvaluator(c, w, Options{SkipCollectives: true})
		var ss []space.Strategy
		for _, v := range []int{1, 2, 3, 4} {
			t := s
			t.V = v
			if v == 1 {
				t.Schedule = space.OneFOneB
			}
			ss = append(ss, t)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			t := ss[i%len(ss)]
			t.Zero = 1 + (i/len(ss))%2 // a new segment key every len(ss) calls
			i++
			if _, err := ev.Evaluate(t); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, bc := range []struct {
		name string
		o    Options
	}{{"collectives", Options{}}, {"skip", Options{SkipCollectives: true}}} {
		b.Run(bc.name, func(b *testing.B) {
			cm := NewModel(program(m, model.ProgramOptions{}))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cm.Evaluate(c, w, s, bc.o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
