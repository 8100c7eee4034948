package memory

import (
	"slices"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestLoopCounts: the layers of each kind a rank holds under a loop of
// chunks (the interleaved schedule, space.Split.VisitChunks), counted for
// every rank in one pass (Model.loopCounts): for DeepSeek-V3's 61 layers
// at pp 8, v 4, rank 0 holds one of the three dense layers and six MoE
// layers, rank 1 two and six, rank 7 seven MoE layers and the MTP module;
// under first=7,last=6 rank 0 holds one and six, rank 7 six and the MTP
// module. Model.Estimate and the Estimator agree on such pipelines
// (TestEstimatorExact's deepseek-v3 case).
func TestLoopCounts(t *testing.T) {
	m, err := model.Preset("deepseek-v3") // 61 layers, the first 3 dense, one MTP module
	if err != nil {
		t.Fatal(err)
	}
	mm := NewModel(model.MustProgram(m, model.ProgramOptions{}))
	nk := len(mm.p.Kinds)
	for _, tt := range []struct {
		split space.Split
		want  map[int][]int
	}{
		{space.Split{}, map[int][]int{0: {1, 6, 0}, 1: {2, 6, 0}, 7: {0, 7, 1}}},
		{space.Split{First: 7, Last: 6}, map[int][]int{0: {1, 6, 0}, 1: {2, 6, 0}, 7: {0, 6, 1}}},
	} {
		all := mm.loopCounts(8, 4, tt.split, nil)
		for r, want := range tt.want {
			if got := all[r*nk : (r+1)*nk]; !slices.Equal(got, want) {
				t.Errorf("%q: rank %d holds %v, want %v", tt.split, r, got, want)
			}
			one := make([]int, nk)
			if mm.countStage(r, 8, 4, tt.split, one); !slices.Equal(one, want) {
				t.Errorf("%q: countStage gives rank %d %v, want %v", tt.split, r, one, want)
			}
		}
	}
}
