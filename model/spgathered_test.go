package model

import (
	"slices"
	"testing"
)

// TestSPGathered checks which tensors sequence parallelism all-gathers over
// tp before a column-parallel matmul ([MEG-TP] §4.2.2's g): the normalised
// inputs of the q, k, v and the gate and up projections and of the output
// layer; under an fp8 recipe their fp8 copies, which the matmuls read (the
// output layer stays bf16); in latent attention the normalised latents
// before the up-projections, not the input of the down-projections, whose
// weights tp does not split.
func TestSPGathered(t *testing.T) {
	torchao, ok := LookupFP8Recipe(FP8Torchao)
	if !ok {
		t.Fatal("no torchao recipe")
	}
	for _, tc := range []struct {
		preset string
		fp8    *FP8Recipe
		want   []string
	}{
		{"llama3-8b", nil, []string{"xfn", "xn", "xn2"}},
		{"llama3-8b", &torchao, []string{"xfn", "xn2_fp8", "xn_fp8"}},
		{"deepseek-v3", nil, []string{"ckvn", "cqn", "xfn", "xn2"}},
	} {
		s, err := Preset(tc.preset)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewProgram(s, ProgramOptions{FP8: tc.fp8})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, g := range p.SPGathered() {
			if g && !slices.Contains(got, p.Tensors[i].Name) {
				got = append(got, p.Tensors[i].Name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s (fp8 %v): %v, want %v", tc.preset, tc.fp8 != nil, got, tc.want)
		}
	}
}
