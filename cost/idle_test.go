package cost

import (
	"slices"
	"testing"

	"github.com/meshplan/meshplan/model"
)

// TestIdleBlocks checks which blocks the cost model skips as run by no
// layer: the dense MLP of an all-MoE stack, and nothing of a dense model
// or of one whose first layers are dense.
func TestIdleBlocks(t *testing.T) {
	for _, tc := range []struct {
		model string
		idle  []string
	}{
		{"llama3-8b", nil},
		{"mixtral-8x7b", []string{"mlp"}},
		{"deepseek-v3", nil}, // three dense layers run the MLP
	} {
		m, err := model.Preset(tc.model)
		if err != nil {
			t.Fatal(err)
		}
		cm := NewModel(program(m, model.ProgramOptions{}))
		var idle []string
		for b, blk := range cm.p.Blocks {
			if cm.idle[b] {
				idle = append(idle, blk.Name)
			}
		}
		if !slices.Equal(idle, tc.idle) {
			t.Errorf("%s: idle blocks %q, want %q", tc.model, idle, tc.idle)
		}
	}
}
