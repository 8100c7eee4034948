package search

import (
	"math/rand"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestMemoryKey checks what the exhaustive search relies on when it
// estimates memory once per layout class: every layout of a class (the
// placements of one degree tuple with the same role degrees) decodes as
// valid under exactly the same other genes as the class's first layout,
// with exactly the same memory breakdown. It draws the other genes at
// random for every class of dense and MoE problems, one of them with a
// second layer program for the sharded strategies (Options.ShardedProgram).
func TestMemoryKey(t *testing.T) {
	autocast := model.ProgramOptions{Precision: model.AutocastPrecision()}
	bf16 := autocast
	bf16.Precision.Residual = 2
	for _, tc := range []struct {
		model, cluster string
		batch, seq     int
		options        Options
		draws          int
	}{
		{"llama3-8b", "h100-64", 512, 8192, Options{Program: autocast, ShardedProgram: &bf16}, 16},
		{"llama2-70b", "v5p-256", 1024, 4096, Options{}, 8},
		{"gpt3-175b", "a100-1024", 1536, 2048, Options{}, 4},
		{"mixtral-8x7b", "v5p-512", 512, 8192, Options{}, 2},
		{"deepseek-v3", "h800-2048", 1024, 4096, Options{}, 2},
	} {
		t.Run(tc.model+"/"+tc.cluster, func(t *testing.T) {
			m, err := model.Preset(tc.model)
			if err != nil {
				t.Fatal(err)
			}
			c, err := profiles.Parse(tc.cluster)
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewProblem(m, c, space.Workload{Batch: tc.batch, SeqLen: tc.seq}, space.Fix{}, tc.options)
			if err != nil {
				t.Fatal(err)
			}
			sp, cards, _, err := p.radix()
			if err != nil {
				t.Fatal(err)
			}
			lc := p.classes(sp, cards)
			rng := rand.New(rand.NewSource(1))
			genes := make([]int, len(cards))
			var rep, s space.Strategy
			checked, multi := 0, 0
			for _, members := range lc.members {
				if len(members) < 2 {
					continue
				}
				multi++
				for range tc.draws {
					for k := 1; k < len(cards); k++ {
						genes[k] = rng.Intn(cards[k])
					}
					genes[0] = members[0]
					ok := sp.Decode(genes, &rep)
					want, wantErr := p.scorer.Memory(&rep)
					for _, l := range members[1:] {
						genes[0] = l
						if sp.Decode(genes, &s) != ok {
							t.Fatalf("%v: valid %v, but %v for the class's first layout %v", s, !ok, ok, rep)
						}
						if !ok {
							continue
						}
						got, err := p.scorer.Memory(&s)
						if got != want || (err == nil) != (wantErr == nil) {
							t.Fatalf("%v: memory %+v (%v), but %+v (%v) for the class's first layout %v", s, got, err, want, wantErr, rep)
						}
						checked++
					}
				}
			}
			t.Logf("%d layouts in %d classes (%d with several layouts), %d memory estimates compared", cards[0], len(lc.members), multi, checked)
			if checked == 0 {
				t.Errorf("no class with several valid layouts")
			}
		})
	}
}
