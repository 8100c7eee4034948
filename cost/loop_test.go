package cost

import (
	"slices"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestLoopedStages: under the interleaved schedule a rank holds every
// pp-th chunk of layers (space.Split.VisitChunks), so the three dense
// layers that open a DeepSeek-V3 stack of 61 are not all on rank 0
// at pp 8, v 4: rank 0 holds one (layer 0) and six MoE layers, rank 1 two
// (layers 1-2) and six; without the loop (v 1) rank 0 holds all three and
// four MoE layers. Counts are per layer kind: dense, MoE, MTP module.
func TestLoopedStages(t *testing.T) {
	m, err := model.Preset("deepseek-v3") // 61 layers, the first 3 dense, one MTP module
	if err != nil {
		t.Fatal(err)
	}
	p := program(m, model.ProgramOptions{})
	for _, tt := range []struct {
		loop int
		want map[int][]int // rank: counts
	}{
		{1, map[int][]int{0: {3, 4, 0}, 1: {0, 8, 0}, 6: {0, 7, 0}, 7: {0, 7, 1}}},
		{4, map[int][]int{0: {1, 6, 0}, 1: {2, 6, 0}, 2: {0, 8, 0}, 6: {0, 7, 0}, 7: {0, 7, 1}}},
	} {
		var st evalState
		st.planStages(p, 8, tt.loop, space.Split{})
		for r, want := range tt.want {
			if got := st.stages[st.stageOf(r)].counts; !slices.Equal(got, want) {
				t.Errorf("loop %d: rank %d holds %v, want %v", tt.loop, r, got, want)
			}
		}
		if first, last := st.stages[st.stageOf(0)], st.stages[st.stageOf(7)]; !first.embed || !last.head {
			t.Errorf("loop %d: the embedding on rank 0 (%v) and the output layer on rank 7 (%v), want both", tt.loop, first.embed, last.head)
		}
	}
	// A stack of one kind is the same looped or not: the loop is not
	// kept (evalState.loopOf), so another v does not plan the stages again.
	dense := model.Spec{Name: "tiny-dense", Layers: 32, Hidden: 512, Heads: 8, FFNHidden: 1024, FFN: model.SwiGLU, Vocab: 32000, SeqLen: 1024, Norm: model.RMSNorm}
	dense.Normalize()
	var st evalState
	pd := program(dense, model.ProgramOptions{})
	st.planStages(pd, 4, 4, space.Split{})
	if st.loop != 1 || st.stagesStale(pd, &space.Strategy{Degree: space.Degrees{space.PP: 4}, Schedule: space.Interleaved, V: 2}) {
		t.Errorf("one kind of layer: loop %d kept, stale for another v; want 1 and not stale", st.loop)
	}
}

// TestStageSets: stage plans kept per pipeline (stageSet) are those a
// fresh evalState plans, whichever pipeline came before: DeepSeek-V3 at pp
// 8 under loops of 1, 4 and 2 chunks and two splits, visited in turn, more
// of them than an evalState keeps (maxStageSets) and back.
func TestStageSets(t *testing.T) {
	m, err := model.Preset("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	p := program(m, model.ProgramOptions{})
	type key struct {
		pp, loop int
		split    space.Split
	}
	var keys []key
	for _, pp := range []int{8, 4} {
		for _, loop := range []int{1, 4, 2} {
			for _, sp := range []space.Split{{}, {First: 7, Last: 6}} {
				if pp == 4 && sp.First > 0 {
					sp = space.Split{Last: 13}
				}
				keys = append(keys, key{pp, loop, sp})
			}
		}
	}
	order := append(append(append([]key{}, keys...), keys[3], keys[0]), keys...)
	var kept evalState
	for _, k := range order {
		kept.planStages(p, k.pp, k.loop, k.split)
		var fresh evalState
		fresh.planStages(p, k.pp, k.loop, k.split)
		if len(kept.stages) != len(fresh.stages) || !slices.Equal(kept.rankStage, fresh.rankStage) || !slices.Equal(kept.ranks, fresh.ranks) {
			t.Fatalf("%+v: %d stages, ranks %v -> %v; fresh %d, %v -> %v", k, len(kept.stages), kept.ranks, kept.rankStage, len(fresh.stages), fresh.ranks, fresh.rankStage)
		}
		for i := range fresh.stages {
			a, b := kept.stages[i], fresh.stages[i]
			if !slices.Equal(a.counts, b.counts) || !slices.Equal(a.mult, b.mult) || a.embed != b.embed || a.head != b.head || a.layers != b.layers {
				t.Errorf("%+v: stage %d is %+v, fresh %+v", k, i, a, b)
			}
		}
	}
}
