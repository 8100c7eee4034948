package results

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// TestEvaluationBandMoE checks that a row's band follows its model: a
// mixture-of-experts model draws the shipped table's MoE runs, a dense one
// its chip family's, in both the fixed and the searched regime.
func TestEvaluationBandMoE(t *testing.T) {
	c, err := profiles.Parse("h100-64")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		preset   string
		searched bool
		family   string
	}{
		{"mixtral-8x7b", false, profiles.MoEBand},
		{"mixtral-8x7b", true, profiles.MoEBand},
		{"llama3-70b", false, "nvidia-hopper"},
		{"llama3-70b", true, "nvidia-hopper"},
	} {
		m, err := model.Preset(tt.preset)
		if err != nil {
			t.Fatal(err)
		}
		b := Evaluation{Model: m, Cluster: c, Searched: tt.searched}.Band()
		if b.Family != tt.family || b.Lo80 >= b.Hi80 {
			t.Errorf("%s (searched %v): band of %q [%.3f, %.3f]; want %q's, non-empty", tt.preset, tt.searched, b.Family, b.Lo80, b.Hi80, tt.family)
		}
	}
}
