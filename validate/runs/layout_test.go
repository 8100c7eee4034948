package runs

import (
	"slices"
	"testing"

	"github.com/meshplan/meshplan/space"
)

// TestParseLayout reads Megatron-Core pipeline layouts of DeepSeek-V3's 61
// layers into each rank's decoder layers (virtual stage i on rank i mod
// pp) and the Split that gives them, counted by hand: Megatron-Bridge's
// "Et|(tt|)*30mL" at pp 8, v 4 is 7, 8 x 6, 6 (rank 0: 1 + 2 + 2 + 2;
// rank 7: 2 + 2 + 2 + the MTP module and the loss); "Et*4|(t*4|)*14tmL"
// at pp 4, v 4 is 16, 16, 16, 13, at pp 8, v 2 8 x 7, 5 and at pp 16 4 x
// 15, 1.
func TestParseLayout(t *testing.T) {
	for _, tt := range []struct {
		layout string
		pp, vp int
		ranks  []int
		mtp    bool
		split  space.Split
		ok     bool
	}{
		{"Et|(tt|)*30mL", 8, 4, []int{7, 8, 8, 8, 8, 8, 8, 6}, true, space.Split{First: 7, Last: 6}, true},
		{"Et|(tt|)*30L", 8, 4, []int{7, 8, 8, 8, 8, 8, 8, 6}, false, space.Split{First: 7, Last: 6}, true},
		{"Et|(tt|)*30mL", 4, 8, []int{15, 16, 16, 14}, true, space.Split{First: 15, Last: 14}, true},
		{"Et*4|(t*4|)*14tmL", 4, 4, []int{16, 16, 16, 13}, true, space.Split{Last: 13}, true},
		{"Et*4|(t*4|)*14tmL", 8, 2, []int{8, 8, 8, 8, 8, 8, 8, 5}, true, space.Split{Last: 5}, true},
		{"Et*4|(t*4|)*14tmL", 16, 1, []int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1}, true, space.Split{Last: 1}, true},
		{"Ettt|(tt|)*29,m|L", 32, 1, nil, true, space.Split{}, false}, // middle ranks of 2 and 0 layers
		{"Et*4|(t*4|)*14tmL", 8, 4, nil, false, space.Split{}, false}, // 16 virtual stages, not 32
		{"Ext|t", 2, 1, nil, false, space.Split{}, false},             // x is no layer
		{"(t|)*99999999", 4, 1, nil, false, space.Split{}, false},     // unrolls past the bound
		{"", 1, 1, nil, false, space.Split{}, false},
	} {
		l, ok := parseLayout(tt.layout, tt.pp, tt.vp)
		if tt.ranks != nil && (!ok || !slices.Equal(l.rankLayers, tt.ranks) || l.mtp != tt.mtp) {
			t.Errorf("parseLayout(%q, %d, %d) = %v, mtp %v, %v; want %v, mtp %v", tt.layout, tt.pp, tt.vp, l.rankLayers, l.mtp, ok, tt.ranks, tt.mtp)
			continue
		}
		if !ok {
			if tt.ok {
				t.Errorf("parseLayout(%q, %d, %d) failed", tt.layout, tt.pp, tt.vp)
			}
			continue
		}
		sp, sok := l.split()
		if sok != tt.ok || sp != tt.split {
			t.Errorf("%q at pp %d: split %q, %v; want %q, %v", tt.layout, tt.pp, sp, sok, tt.split, tt.ok)
		}
	}
}

// FuzzParseLayout: no layout string panics or unrolls past the bound, and
// a layout that parses gives every rank a count of decoder layers.
func FuzzParseLayout(f *testing.F) {
	for _, s := range []string{"Et|(tt|)*30mL", "Et*4|(t*4|)*14tmL", "(|ab)*2,cd", "((t|)*3)*4", "t*99999", "E|L"} {
		f.Add(s, 8, 4)
	}
	f.Fuzz(func(t *testing.T, s string, pp, vp int) {
		pp, vp = pp%64, vp%16
		l, ok := parseLayout(s, pp, vp)
		if ok && len(l.rankLayers) != pp {
			t.Fatalf("%q: %d ranks, want %d", s, len(l.rankLayers), pp)
		}
		if ok {
			l.split()
		}
	})
}

// TestRowLayouts: the pipeline layout each DeepSeek-V3 row ran, and the
// split it poses: Megatron-Bridge's 25.09 H100 row the 32-stage layout
// (7, 8 x 6, 6), the 16-stage one at every shape of 16 virtual stages
// (GB200 at pp 4, v 4: 16 x 3, 13; B200 at pp 16: 4 x 15, 1; GB300 at pp 2,
// v 8: 32, 29), B300 at pp 8 without virtual stages the 8-stage one (8 x
// 7, 5); 25.11's GB200 row at pp 8, v 4, which no config of its release
// has, none; the Megatron-LM guide's rows the layout their notes state,
// without a multi-token-prediction module; any other model none.
func TestRowLayouts(t *testing.T) {
	src := func(release string) string {
		return "NVIDIA-NeMo/Megatron-Bridge@067f987d:docs/performance-summary-archive.md section \"" + release + " NeMo Container\""
	}
	for _, tt := range []struct {
		name       string
		r          Run
		split      space.Split
		mtp, posed bool
	}{
		{"25.09 H100", Run{Source: src("25.09"), ModelName: "DeepSeek-V3", Chip: "H100-SXM-80GB", PP: 8, InterleaveV: 4}, space.Split{First: 7, Last: 6}, true, true},
		{"26.04.01 GB200", Run{Source: src("26.04.01"), ModelName: "DeepSeek-V3", Chip: "GB200", PP: 4, InterleaveV: 4}, space.Split{Last: 13}, true, true},
		{"25.11 B200", Run{Source: src("25.11"), ModelName: "DeepSeek-V3", Chip: "B200", PP: 16}, space.Split{Last: 1}, true, true},
		{"26.06 GB300", Run{Source: src("26.06"), ModelName: "DeepSeek-V3", Chip: "GB300", PP: 2, InterleaveV: 8}, space.Split{First: 32, Last: 29}, true, true},
		{"26.06 B300", Run{Source: src("26.06"), ModelName: "DeepSeek-V3", Chip: "B300", PP: 8}, space.Split{Last: 5}, true, true},
		{"25.11 GB200", Run{Source: src("25.11"), ModelName: "DeepSeek-V3", Chip: "GB200", PP: 8, InterleaveV: 4}, space.Split{}, false, false},
		{"Megatron-LM guide", Run{Source: "NVIDIA/Megatron-LM@eb0783b6:docs/discussions", ModelName: "DeepSeek-V3", Chip: "GB200", PP: 8, InterleaveV: 4,
			Notes: "PP layout Et|(tt|)*30L = 32 virtual stages (embedding+1 layer first, loss last)"}, space.Split{First: 7, Last: 6}, false, true},
		{"Qwen3", Run{Source: src("26.04.01"), ModelName: "Qwen3-235B-A22B", Chip: "GB200", PP: 8, InterleaveV: 3}, space.Split{}, false, false},
		{"a layout of other layers than the row's", Run{Source: "mine", ModelName: "x", PP: 8, InterleaveV: 4, Layers: 64,
			Notes: "PP layout Et|(tt|)*30L"}, space.Split{}, false, false},
	} {
		l, ok := tt.r.pipelineLayout()
		if ok != tt.posed {
			t.Errorf("%s: layout %q posed %v, want %v", tt.name, tt.r.layoutText(), ok, tt.posed)
			continue
		}
		if !ok {
			continue
		}
		if sp, sok := l.split(); !sok || sp != tt.split || l.mtp != tt.mtp {
			t.Errorf("%s: split %q (%v), mtp %v; want %q, mtp %v", tt.name, sp, sok, l.mtp, tt.split, tt.mtp)
		}
	}
}
