package memory

import (
	"slices"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestLoopCounts: the layers of each kind a rank holds under a loop of
// chunks (the interleaved schedule, space.Split.VisitChunks), counted for
// every rank in one pass (Model.loopCounts, the Estimator's) and rank by
// rank (countStage, Model.Estimate's), are the same; for a
// DeepSeek-V3 stack of 61 layers at pp 8, v 4, rank 0 holds one of
// the three dense layers and rank 1 two, and the last rank the MTP module.
func TestLoopCounts(t *testing.T) {
	m, err := model.Preset("deepseek-v3") // 61 layers, the first 3 dense, one MTP module
	if err != nil {
		t.Fatal(err)
	}
	mm := NewModel(model.MustProgram(m, model.ProgramOptions{}))
	nk := len(mm.p.Kinds)
	for _, split := range []space.Split{{}, {First: 7, Last: 6}} {
		all := mm.loopCounts(8, 4, split, nil)
		for r := range 8 {
			one := make([]int, nk)
			mm.countStage(r, 8, 4, split, one)
			if !slices.Equal(one, all[r*nk:(r+1)*nk]) {
				t.Errorf("%q rank %d: countStage %v, loopCounts %v", split, r, one, all[r*nk:(r+1)*nk])
			}
		}
	}
	all := mm.loopCounts(8, 4, space.Split{}, nil)
	for r, want := range map[int][]int{0: {1, 6, 0}, 1: {2, 6, 0}, 7: {0, 7, 1}} {
		if got := all[r*nk : (r+1)*nk]; !slices.Equal(got, want) {
			t.Errorf("rank %d holds %v, want %v", r, got, want)
		}
	}
}
