package results

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/search"
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

func TestUnevenSplit(t *testing.T) {
	for _, tc := range []struct {
		layers, pp, first, last int
		ok                      bool
	}{
		{126, 32, 2, 4, true}, // Llama 3 405B: 30 middle stages of 4
		{126, 16, 6, 8, true}, // 14 x 8 = 112, 14 left
		{80, 32, 0, 0, false}, // 30 x 3 = 90 > 80
		{10, 1, 0, 0, false},
	} {
		first, last, ok := unevenSplit(tc.layers, tc.pp)
		if ok != tc.ok || ok && (first != tc.first || last != tc.last) {
			t.Errorf("unevenSplit(%d, %d) = %d, %d, %t; want %d, %d, %t", tc.layers, tc.pp, first, last, ok, tc.first, tc.last, tc.ok)
		}
		if ok {
			c := (tc.layers + tc.pp - 1) / tc.pp
			if first+last+(tc.pp-2)*c != tc.layers || first > c || last > c || first < 1 {
				t.Errorf("unevenSplit(%d, %d) = %d, %d does not split the layers with at most %d per stage", tc.layers, tc.pp, first, last, c)
			}
		}
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
