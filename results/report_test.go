package results

import (
	"math"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

func TestParseCount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"15T", 15e12}, {"15t", 15e12}, {"300B", 300e9}, {"300G", 300e9}, {"2.5M", 2.5e6}, {"4K", 4e3},
		{"2e12", 2e12}, {"1000000", 1e6}, {"1_000", 1e3}, {" 7 ", 7}, {"4Mi", 4194304}, {"1.5K", 1500},
	} {
		got, err := ParseCount(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseCount(%q) = %g, %v; want %g", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "T", "15Q", "-3B", "0", "NaN", "inf", "0x10", "1e400", "two", "1.5", "2.0000001M"} {
		if got, err := ParseCount(in); err == nil {
			t.Errorf("ParseCount(%q) = %g, want an error", in, got)
		}
	}
}

func TestTraining(t *testing.T) {
	tr := Training{Tokens: 15e12, PricePerChipHour: 2.5}
	// 1e6 tokens/s on 1000 chips: 15e6 s = 173.6 days = 4.17M chip-hours.
	days := tr.Days(1e6)
	if math.Abs(days-15e6/86400) > 1e-9 {
		t.Errorf("Days(1e6) = %g, want %g", days, 15e6/86400)
	}
	if got, want := tr.ChipHours(1e6, 1000), days*24*1000; math.Abs(got-want) > 1e-6 {
		t.Errorf("ChipHours = %g, want %g", got, want)
	}
	if got, want := tr.Cost(1e6, 1000), days*24*1000*2.5; math.Abs(got-want) > 1e-6 {
		t.Errorf("Cost = %g, want %g", got, want)
	}
	r := Result{TokensPerS: 1e6}
	Training{}.apply(&r, 1000)
	if r.Days != nil || r.ChipHours != nil || r.Cost != nil {
		t.Errorf("the zero Training set %+v", r)
	}
	Training{Tokens: 1e12}.apply(&r, 1000)
	if r.Days == nil || r.ChipHours == nil || r.Cost != nil {
		t.Errorf("tokens without a price: days %v, chip-hours %v, cost %v; want no cost only", r.Days, r.ChipHours, r.Cost)
	}
}

func TestMarkClusterFront(t *testing.T) {
	opt := func(name string, chips int, tps float64) ClusterOption {
		o := ClusterOption{Cluster: PlanCluster{Name: name, Chips: chips}}
		if tps > 0 {
			o.Best = &Result{TokensPerS: tps}
		}
		return o
	}
	opts := []ClusterOption{
		opt("a-8", 8, 100),   // slowest, cheapest (0.08 chip-s/token)
		opt("a-16", 16, 150), // faster, dearer (0.107)
		opt("a-32", 32, 140), // slower and dearer than a-16: dominated
		opt("a-64", 64, 400), // fastest (0.16)
		opt("a-4", 4, 0),     // nothing fits
	}
	if rec := MarkClusterFront(opts, search.ObjectiveCost); rec != 0 {
		t.Errorf("--objective cost recommends %d, want 0 (the cheapest on the front)", rec)
	}
	rec := MarkClusterFront(opts, search.ObjectiveBalanced)
	if rec != 3 {
		t.Errorf("recommended %d, want 3 (the fastest on the front)", rec)
	}
	for i, want := range []bool{true, true, false, true, false} {
		if opts[i].ParetoOptimal != want {
			t.Errorf("%s: pareto_optimal %t, want %t", opts[i].Cluster.Name, opts[i].ParetoOptimal, want)
		}
		if opts[i].Recommended != (i == rec) {
			t.Errorf("%s: recommended %t", opts[i].Cluster.Name, opts[i].Recommended)
		}
	}
	if MarkClusterFront([]ClusterOption{opt("x", 4, 0)}, "") != -1 {
		t.Errorf("no cluster fits: want -1")
	}
}

func TestMegatronSplit(t *testing.T) {
	st := func(pp, v int, sp space.Split) space.Strategy {
		s := space.Defaults().With(space.PP, pp)
		if v > 1 {
			s.Schedule, s.V = space.Interleaved, v
		}
		s.Split = sp
		return s
	}
	for _, tc := range []struct {
		name       string
		s          space.Strategy
		layers, mt int
		want       string
	}{
		// 128 layers in 8 stages of 16: nothing to say.
		{"even", st(8, 1, space.Split{}), 128, 0, ""},
		{"even chunks", st(8, 4, space.Split{}), 128, 0, "--num-layers-per-virtual-pipeline-stage 4"},
		// Llama 3.1 405B, 126 layers: 15, six of 16, 15 (Megatron-Bridge's
		// account for the embedding and the loss: (126+2)/8 = 16).
		{"405b pp=8", st(8, 1, space.Split{}), 126, 0, "--decoder-first-pipeline-num-layers 15 --decoder-last-pipeline-num-layers 15"},
		// v=8: 16 layers a rank in chunks of 2; the first chunk of rank 0
		// and the last of rank 7 hold 1 (128/64 = 2 with E and L).
		{"405b pp=8 v=8", st(8, 8, space.Split{}), 126, 0, "--pipeline-model-parallel-layout 'Et|(t*2|)*62tL'"},
		// v=8 at pp=16: (126+2)/128 = 1, the embedding and the loss each a
		// virtual stage of their own (Megatron-Bridge's 405B MXFP8 on GB200).
		{"405b pp=16 v=8", st(16, 8, space.Split{}), 126, 0, "--pipeline-model-parallel-layout 'E|(t|)*126L'"},
		// Qwen3-235B, 94 layers: 11, six of 12, 11.
		{"qwen3 pp=8", st(8, 1, space.Split{}), 94, 0, "--decoder-first-pipeline-num-layers 11 --decoder-last-pipeline-num-layers 11"},
		// DeepSeek-V3 at pp=16 as Megatron-Bridge lays it out: 4 on the
		// first, 14 of 4, 1 with the MTP module on the last.
		{"dsv3 pp=16", st(16, 1, space.Split{First: 4, Last: 1}), 61, 1, "--decoder-last-pipeline-num-layers 1"},
		// pp=4, v=4: 16, 16, 16, 13; rank 3's chunks 4, 3, 3, 3: 4+24+3+12+3+12+3 = 61.
		{"dsv3 pp=4 v=4", st(4, 4, space.Split{First: 16, Last: 13}), 61, 1, "--pipeline-model-parallel-layout 'Et*4|(t*4|)*6t*3|(t*4|)*3t*3|(t*4|)*3t*3mL'"},
		// 60 layers, pp=4, v=2, first=14,last=14: the middle stages 16 each,
		// every stage's layers in 2 equal chunks.
		{"first and last with v", st(4, 2, space.Split{First: 14, Last: 14}), 60, 0, "--decoder-first-pipeline-num-layers 14 --decoder-last-pipeline-num-layers 14 --num-virtual-stages-per-pipeline-rank 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var parts []string
			for _, f := range megatronSplit(tc.s, tc.layers, tc.mt) {
				parts = append(parts, f[0]+" "+f[1])
			}
			if got := strings.Join(parts, " "); got != tc.want {
				t.Errorf("megatronSplit = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		max  float64
		last float64
	}{{7.04, 8}, {73.6, 80}, {0.35, 0.4}, {1, 1}, {12, 15}} {
		ts := niceTicks(tc.max)
		if ts[0] != 0 || math.Abs(ts[len(ts)-1]-tc.last) > 1e-12 || len(ts) > 7 {
			t.Errorf("niceTicks(%g) = %v, want 0 .. %g in at most 6 steps", tc.max, ts, tc.last)
		}
	}
}

// TestCSVText follows OWASP's CSV Injection guidance: cells starting with
// = + - @ tab or carriage return get a leading single quote; others pass.
func TestCSVText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`=HYPERLINK("http://example.com","x")`, `'=HYPERLINK("http://example.com","x")`},
		{"+1+1", "'+1+1"}, {"-2+3", "'-2+3"}, {"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"}, {"\r=1", "'\r=1"},
		{"llama3-8b", "llama3-8b"}, {"a=b", "a=b"}, {"", ""}, {"'quoted", "'quoted"},
		{"dp=8,tp=8", "dp=8,tp=8"},
	} {
		if got := CSVText(tt.in); got != tt.want {
			t.Errorf("CSVText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestLabelAndEscapeControls: names with newlines or escape sequences are
// shown quoted with Go escapes; printable names (Unicode included) pass.
func TestLabelAndEscapeControls(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"llama3-8b", "llama3-8b"},
		{"modèle ünï", "modèle ünï"},
		{"two\nlines", `"two\nlines"`},
		{"\x1b[31mred", `"\x1b[31mred"`},
		{"tab\there", `"tab\there"`},
		{"rtl\u202egnp.exe", `"rtl\u202egnp.exe"`},
	} {
		if got := Label(tt.in); got != tt.want {
			t.Errorf("Label(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"table\nrow\twith tab\n", "table\nrow\twith tab\n"},
		{"bell\a esc\x1b[2J cr\r del\x7f", `bell\a esc\x1b[2J cr\r del\x7f`},
		{"c1 \u009b31m bidi \u202e", `c1 \u009b31m bidi \u202e`},
	} {
		if got := EscapeControls(tt.in); got != tt.want {
			t.Errorf("EscapeControls(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTitanStages(t *testing.T) {
	s := space.Defaults().With(space.PP, 4)
	s.Schedule, s.V = space.Interleaved, 2
	// 10 layers over 4 ranks of 2 chunks: ranks 2, 3, 3, 2 (the default
	// split); rank 0's chunks 1, 1, the middle ranks' 1, 2, rank 3's 1, 1:
	// stages (j*4+r) 1, 1, 1, 1, 1, 2, 2, 1.
	want := `module_fqns_per_model_part = [
  ["tok_embeddings", "layers.0"],
  ["layers.1"],
  ["layers.2"],
  ["layers.3"],
  ["layers.4"],
  ["layers.5", "layers.6"],
  ["layers.7", "layers.8"],
  ["layers.9", "norm", "output"],
]
`
	if got := titanStages(s, 10, 2); got != want {
		t.Errorf("titanStages:\n%s\nwant\n%s", got, want)
	}
	if got := titanStages(s, 16, 2); got != "" {
		t.Errorf("titanStages of equal stages = %q, want none", got)
	}
}
