package search

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestStagesByTheLayersTheyHold: Llama 4 Maverick (transformers'
// Llama4TextConfig from model/testdata: MoE every second layer, full
// attention every fourth, chunked attention on the others) on 64 H100
// with pp = 4 puts 6 chunked dense, 3 chunked MoE and 3 full MoE layers on
// every rank. The same 24 MoE and 24 dense layers stacked MoE first put 12
// MoE layers on each of the first two ranks: the pipeline's busiest rank
// then holds more all-to-all and expert weights, so the step is slower and
// the peak memory higher, though the model's parameters and FLOPs are the
// same.
func TestStagesByTheLayersTheyHold(t *testing.T) {
	published, err := model.Load("../model/testdata/llama-4-maverick.config.json")
	if err != nil {
		t.Fatal(err)
	}
	stacked := published
	stacked.Pattern = make([]string, published.Layers)
	for i := range stacked.Pattern {
		attn, mlp := "chunked", "dense"
		if i%4 == 3 {
			attn = "full"
		}
		if i < published.Layers/2 {
			mlp = "moe"
		}
		stacked.Pattern[i] = attn + "/" + mlp
	}
	if a, b := published.Counts(), stacked.Counts(); a != b {
		t.Fatalf("counts differ: %+v and %+v", a, b)
	}
	c, err := profiles.Parse("h100-64")
	if err != nil {
		t.Fatal(err)
	}
	s, err := space.Parse("dp=4,zero=1,tp=4,pp=4,ep=2,etp=4,schedule=1f1b")
	if err != nil {
		t.Fatal(err)
	}
	placed, err := s.Place(c)
	if err != nil {
		t.Fatal(err)
	}
	var step, mem [2]float64
	for i, m := range []model.Spec{published, stacked} {
		p, err := NewProblem(m, c, space.Workload{Batch: 64, SeqLen: 8192}, space.Fix{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		cand := p.Evaluate(placed, false)
		if cand.Err != nil {
			t.Fatal(cand.Err)
		}
		step[i], mem[i] = cand.StepSeconds, cand.MemoryBytes
		t.Logf("%s: step %.3f s, %.1f GB per chip", []string{"published", "MoE first"}[i], step[i], mem[i]/1e9)
	}
	prog := model.MustProgram(published, model.ProgramOptions{})
	for r := range 4 {
		first, n := space.StageLayers(published.Layers, 4, r)
		dense, moe := 0, 0
		for k, cnt := range prog.Layers(first, first+n) {
			for _, b := range prog.Kinds[k].Blocks {
				switch prog.Blocks[b].Name {
				case "mlp":
					dense += cnt
				case "moe":
					moe += cnt
				}
			}
		}
		if n != 12 || dense != 6 || moe != 6 {
			t.Errorf("rank %d: %d layers, %d dense and %d MoE; want 12, 6 and 6", r, n, dense, moe)
		}
	}
	if !(step[1] > step[0]) || !(mem[1] > mem[0]) {
		t.Errorf("MoE layers first: step %.3f s and %.1f GB, want more than the published stack's %.3f s and %.1f GB",
			step[1], mem[1]/1e9, step[0], mem[0]/1e9)
	}
}
