package cost

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestPerExpertGEMMs checks Options.PerExpertGEMMs against values worked
// by hand: Mixtral 8x7B (32 layers, 8 experts) on one node of 8 H100 with
// ep=2 holds 4 experts per chip, so each of a layer's six expert matmuls
// (the gate-and-up and the down projection, forward, input gradient and
// weight gradient) runs 4 GEMMs instead of one grouped call and pays 3
// more per-call tails t₀ = MatmulHalfFLOPs/(MatmulFraction·peak), 24.4 µs on
// the H100 (profiles.Efficiency), over the sustained fraction 0.9 of a
// multi-GPU job: 27.1 µs, and 32·6·3·27.1 µs = 15.6 ms per micro-batch.
// With ep=8 (one expert per chip) nothing changes. The added time is all
// tails, and Estimate.MatmulTailSeconds grows by it.
func TestPerExpertGEMMs(t *testing.T) {
	m, _ := model.Preset("mixtral-8x7b")
	c, err := profiles.Parse("h100-8")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 64, SeqLen: 4096}
	eff := c.Efficiency
	t0 := eff.MatmulHalfFLOPs / (eff.MatmulFraction * eff.SustainedFraction * c.Chip.PeakBF16FLOPs)
	if !near(t0, 27.09e-6, 0.001) {
		t.Errorf("H100 t0 = %.4g s, want 27.09 µs", t0)
	}
	for _, tc := range []struct {
		spec   string
		extraS float64 // per micro-batch
	}{
		{"dp=8,zero=1,ep=2", 32 * 6 * 3 * t0},
		{"dp=8,zero=1,ep=8", 0},
	} {
		s := parseStrategy(t, tc.spec)
		placed, err := s.Place(c)
		if err != nil {
			t.Fatal(err)
		}
		p := program(m, model.ProgramOptions{})
		one, err := NewModel(p).Evaluate(c, w, placed, Options{})
		if err != nil {
			t.Fatal(err)
		}
		per, err := NewModel(p).Evaluate(c, w, placed, Options{PerExpertGEMMs: true})
		if err != nil {
			t.Fatal(err)
		}
		micro := float64(w.Batch / 8) // mb=1 on 8 data-parallel chips
		if got, want := per.MatmulSeconds-one.MatmulSeconds, micro*tc.extraS; !near(got, want, 1e-6) && !(want == 0 && got == 0) {
			t.Errorf("%s: per-expert GEMMs add %.6g s of matmul, want %.6g s", tc.spec, got, want)
		}
		// The breakdown counts the added calls' tails as tails, all of
		// the difference (Estimate.MatmulTailSeconds).
		if got, want := per.MatmulTailSeconds-one.MatmulTailSeconds, micro*tc.extraS; !near(got, want, 1e-6) && !(want == 0 && got == 0) {
			t.Errorf("%s: per-expert GEMMs add %.6g s of tails, want %.6g s", tc.spec, got, want)
		}
		if one.MatmulTailSeconds <= 0 || per.MatmulTailSeconds >= per.MatmulSeconds {
			t.Errorf("%s: tails %.4g s of %.4g s of matmuls (one call each: %.4g s); want a positive part", tc.spec, per.MatmulTailSeconds, per.MatmulSeconds, one.MatmulTailSeconds)
		}
	}
}
