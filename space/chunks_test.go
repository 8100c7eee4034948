package space

import (
	"fmt"
	"slices"
	"testing"

	"github.com/meshplan/meshplan/model"
)

// TestVisitChunks: the layers of a loop of chunks (the interleaved
// schedule) go to the ranks in virtual-stage order, chunk j of rank r being
// virtual stage j·p+r, as Megatron-Core's offsets and the megatron
// emitter's layout give them. DeepSeek-V3's 61 layers at pp 8, v 4 under
// the default split (7, 8 x 5, 7, 7 layers; chunks 1+2+2+2 on rank 0 and
// 6, 2+2+2+1 on rank 7): rank 0 holds layers 0, 14-15, 30-31 and 46-47,
// rank 1 layers 1-2 (two of the three dense ones), 16-17, 32-33, 48-49.
func TestVisitChunks(t *testing.T) {
	held := func(n, p, v int, sp Split) [][][2]int {
		out := make([][][2]int, p)
		sp.VisitChunks(n, p, v, func(r, from, to int) {
			if to > from {
				out[r] = append(out[r], [2]int{from, to})
			}
		})
		return out
	}
	got := held(61, 8, 4, Split{})
	for _, tt := range []struct {
		rank int
		want [][2]int
	}{
		{0, [][2]int{{0, 1}, {14, 16}, {30, 32}, {46, 48}}},
		{1, [][2]int{{1, 3}, {16, 18}, {32, 34}, {48, 50}}},
		{6, [][2]int{{11, 12}, {26, 28}, {42, 44}, {58, 60}}},
		{7, [][2]int{{12, 14}, {28, 30}, {44, 46}, {60, 61}}},
	} {
		if !slices.Equal(got[tt.rank], tt.want) {
			t.Errorf("rank %d holds %v, want %v", tt.rank, got[tt.rank], tt.want)
		}
	}
	// The chunks tile the stack in order, and each rank holds its
	// StageLayers' count; without a loop (v 1) its StageLayers.
	for _, tt := range []struct {
		n, p, v int
		sp      Split
	}{
		{61, 8, 4, Split{}}, {61, 4, 4, Split{First: 16, Last: 13}}, {126, 16, 8, Split{}}, {80, 8, 5, Split{}}, {80, 8, 1, Split{}}, {32, 1, 1, Split{}},
	} {
		at := 0
		count := make([]int, tt.p)
		tt.sp.VisitChunks(tt.n, tt.p, tt.v, func(r, from, to int) {
			if from != at || to < from {
				t.Errorf("%d layers, p %d, v %d, %q: a chunk [%d, %d) after layer %d", tt.n, tt.p, tt.v, tt.sp, from, to, at)
			}
			at = to
			count[r] += to - from
		})
		if at != tt.n {
			t.Errorf("%d layers, p %d, v %d, %q: chunks end at %d", tt.n, tt.p, tt.v, tt.sp, at)
		}
		for r := range tt.p {
			first, c := tt.sp.StageLayers(tt.n, tt.p, r)
			if count[r] != c {
				t.Errorf("%d layers, p %d, v %d, %q: rank %d holds %d layers, want its StageLayers' %d", tt.n, tt.p, tt.v, tt.sp, r, count[r], c)
			}
			if tt.v == 1 && !slices.Equal(held(tt.n, tt.p, 1, tt.sp)[r], [][2]int{{first, first + c}}) {
				t.Errorf("%d layers, p %d, v 1: rank %d holds %v, want [%d, %d)", tt.n, tt.p, r, held(tt.n, tt.p, 1, tt.sp)[r], first, first+c)
			}
		}
	}
}

// TestLoopChunks: only the interleaved schedule loops its chunks; V-shaped
// and mirrored placements pair stages instead.
func TestLoopChunks(t *testing.T) {
	for _, tt := range []struct {
		sc   Schedule
		v    int
		want int
	}{
		{Interleaved, 4, 4}, {Interleaved, 1, 1}, {OneFOneB, 4, 1}, {ZBV, 2, 1}, {DualPipe, 1, 1}, {GPipe, 1, 1},
	} {
		if got := (Strategy{Schedule: tt.sc, V: tt.v}).LoopChunks(); got != tt.want {
			t.Errorf("%s, v %d: LoopChunks %d, want %d", tt.sc, tt.v, got, tt.want)
		}
	}
}

// TestLoopCandidateRanks: a loop of chunks over a stack whose layer kind
// changes makes every rank a candidate; without a loop, or over one kind
// of layer, the candidates are CandidateRanks'.
func TestLoopCandidateRanks(t *testing.T) {
	if got := (Split{}).LoopCandidateRanks(61, 8, 4, []int{3}, nil); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("looped over a change of kind: %v, want every rank", got)
	}
	for _, tt := range []struct {
		loop  int
		kinds []int
	}{{1, []int{3}}, {4, nil}} {
		want := (Split{}).CandidateRanks(61, 8, tt.kinds, nil)
		if got := (Split{}).LoopCandidateRanks(61, 8, tt.loop, tt.kinds, nil); !slices.Equal(got, want) {
			t.Errorf("loop %d, kinds change at %v: %v, want CandidateRanks' %v", tt.loop, tt.kinds, got, want)
		}
	}
}

func ExampleSplit_VisitChunks() {
	// Llama 3 70B's 80 layers at pp 4, v 2: each rank holds every fourth
	// run of ten layers.
	Split{}.VisitChunks(80, 4, 2, func(r, from, to int) {
		if r == 1 {
			fmt.Printf("rank 1: layers %d-%d\n", from, to-1)
		}
	})
	// Output:
	// rank 1: layers 10-19
	// rank 1: layers 50-59
}

// TestLoopChunksRules: LoopChunks' shortcut agrees with the schedules'
// rules: a loop of chunks is a schedule of virtual stages in a linear
// placement.
func TestLoopChunksRules(t *testing.T) {
	for _, sc := range Schedules() {
		r := sc.Rules()
		want := 1
		if r.Virtual() && r.Placement() == PlaceLinear {
			want = 3
		}
		if got := (Strategy{Schedule: sc, V: 3}).LoopChunks(); got != want {
			t.Errorf("%s: LoopChunks %d, want %d (virtual %v, placement %v)", sc, got, want, r.Virtual(), r.Placement())
		}
	}
}

// TestLoopCounts: the layers of each kind per rank of a loop of chunks,
// one pass over the chunks: DeepSeek-V3's 61 layers (three dense, then
// MoE) at pp 8, v 4 are one dense and six MoE layers on rank 0, two and
// six on rank 1, eight MoE layers on ranks 2 to 5 and seven on ranks 6
// and 7 (the MTP module not counted).
func TestLoopCounts(t *testing.T) {
	m, err := model.Preset("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	p := model.MustProgram(m, model.ProgramOptions{})
	got := Split{}.LoopCounts(p, 8, 4, nil)
	want := []int{1, 6, 0, 2, 6, 0, 0, 8, 0, 0, 8, 0, 0, 8, 0, 0, 8, 0, 0, 7, 0, 0, 7, 0}
	if !slices.Equal(got, want) {
		t.Errorf("LoopCounts = %v, want %v", got, want)
	}
}

// TestShortOfChunks: a rank cut into v chunks of at least one layer needs
// v layers, the first and the last v-1 (their first and last chunk hold
// only the embedding and the output layer). Qwen3-235B-A22B's 94 layers
// at pp 32, v 3 under Megatron-Core's layout E|(t|)*94L (first=2,last=2,
// 3 a middle rank) fit; first=1 leaves rank 0 short.
func TestShortOfChunks(t *testing.T) {
	for _, tt := range []struct {
		n, p, v    int
		sp         Split
		rank, have int
		short      bool
	}{
		{94, 32, 3, Split{First: 2, Last: 2}, 0, 0, false},
		{94, 32, 3, Split{}, 0, 0, false},
		{93, 32, 3, Split{First: 1, Last: 2}, 0, 1, true},
		{94, 32, 3, Split{First: 3, Last: 1}, 31, 1, true},
		{126, 8, 8, Split{First: 6, Last: 6}, 0, 6, true},
		{126, 8, 8, Split{First: 7, Last: 11}, 0, 0, false},
		{70, 8, 9, Split{First: 8, Last: 8}, 0, 0, false},
		{60, 8, 9, Split{First: 12, Last: 12}, 1, 6, true},
		{10, 1, 4, Split{}, 0, 0, false},
	} {
		r, have, short := tt.sp.ShortOfChunks(tt.n, tt.p, tt.v)
		if short != tt.short || short && (r != tt.rank || have != tt.have) {
			t.Errorf("%v.ShortOfChunks(%d, %d, %d) = %d, %d, %v; want %d, %d, %v", tt.sp, tt.n, tt.p, tt.v, r, have, short, tt.rank, tt.have, tt.short)
		}
	}
}
