package search

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/meshplan/meshplan/space"
)

// TestEveryValidStrategyCosts draws 10,000 random valid strategies of
// dense and MoE presets on GPU and TPU clusters (one slice and two) and
// checks that the memory and cost models score every one: no error, a
// positive finite step time and memory (issue 10: every strategy that
// space accepts can be costed).
func TestEveryValidStrategyCosts(t *testing.T) {
	type problem struct {
		model      string
		batch, seq int
		cluster    string
	}
	var problems []problem
	for _, m := range []problem{{"mixtral-8x7b", 512, 4096, ""}, {"deepseek-v3", 4096, 4096, ""}, {"llama3-70b", 512, 8192, ""}} {
		for _, c := range []string{"h100-64", "h800-2048", "v5p-256", "2xv5p-256"} {
			m.cluster = c
			problems = append(problems, m)
		}
	}
	const total = 10000
	rng := rand.New(rand.NewPCG(1, 10))
	costed := 0
	for i, pr := range problems {
		quota := total / len(problems)
		if i < total%len(problems) {
			quota++
		}
		p := realProblem(t, pr.model, pr.cluster, pr.batch, pr.seq)
		sp, cards, size, err := p.radix()
		if err != nil {
			t.Fatal(err)
		}
		genes := make([]int, len(cards))
		var s space.Strategy
		for got, draws := 0, 0; got < quota; draws++ {
			if draws > 1000*quota {
				t.Fatalf("%s/%s: only %d valid strategies in %d draws", pr.model, pr.cluster, got, draws)
			}
			genesOf(cards, rng.Int64N(size), genes)
			if !sp.Decode(genes, &s) {
				continue
			}
			got++
			if err := s.Validate(p.Model(), p.Cluster(), p.Workload()); err != nil {
				t.Fatalf("%s/%s: the space decodes %s, which Validate rejects: %v", pr.model, pr.cluster, s, err)
			}
			c := p.evaluate(p.scorer, &s, -1, false, false)
			if c.Err != nil || !(c.StepSeconds > 0) || math.IsInf(c.StepSeconds, 0) || !(c.MemoryBytes > 0) {
				t.Fatalf("%s/%s: %s: step %g s, memory %g B, error %v", pr.model, pr.cluster, s, c.StepSeconds, c.MemoryBytes, c.Err)
			}
			costed++
		}
	}
	if costed != total {
		t.Errorf("costed %d strategies, want %d", costed, total)
	}
}

// TestInterleavingUncapped searches GPT-3 175B on 1024 A100s (batch 1536 of
// 2048 tokens) exhaustively: with every v the layers allow, the fastest
// step runs more chunks than a cap of v <= 4 allowed (v=12; issue 10).
func TestInterleavingUncapped(t *testing.T) {
	p := realProblem(t, "gpt3-175b", "a100-1024", 1536, 2048)
	r, err := Exhaustive{}.Search(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	best, _ := r.Recommended()
	t.Logf("%d gene vectors, %d feasible, best %.3f s: %s (%v)", r.SpaceSize, r.Feasible, best.StepSeconds, best.Strategy.String(), r.Elapsed)
	if best.Strategy.V <= 4 {
		t.Errorf("best step %.3f s runs v=%d; want the uncapped search's v above 4", best.StepSeconds, best.Strategy.V)
	}
	if r.Failed != 0 {
		t.Errorf("%d strategies failed to cost", r.Failed)
	}
}
