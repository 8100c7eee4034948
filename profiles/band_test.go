package profiles

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestBandQuantiles(t *testing.T) {
	seq := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(n - i) // reversed: BandQuantiles sorts
		}
		return x
	}
	for _, tt := range []struct {
		name string
		x    []float64
		want [5]float64
	}{
		{"none", nil, [5]float64{}},
		// n=9: h = 10p: 0.25, 1, 5, 9, 9.75, clamped to 1 and 9.
		{"1..9", seq(9), [5]float64{1, 1, 5, 9, 9}},
		// n=19: h = 20p: 0.5, 2, 10, 18, 19.5.
		{"1..19", seq(19), [5]float64{1, 2, 10, 18, 19}},
		// n=4: the median at h = 2.5 is halfway between 1 and 2.
		{"interpolated", []float64{3, 0, 2, 1}, [5]float64{0, 0, 1.5, 3, 3}},
	} {
		if got := BandQuantiles(tt.x); got != tt.want {
			t.Errorf("%s: BandQuantiles = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestWiden(t *testing.T) {
	q := [5]float64{-0.3, -0.1, 0, 0.2, 0.4}
	pool := [5]float64{-0.4, -0.2, 0, 0.2, 0.5}
	if got := Widen(q, pool, 0); got != q {
		t.Errorf("Widen(k=0) = %v, want %v", got, q)
	}
	// k=1: each end's distance from the median in quadrature with the
	// pool's: sqrt(0.3²+0.4²) = 0.5, sqrt(0.1²+0.2²) = 0.2236,
	// sqrt(0.2²+0.2²) = 0.2828, sqrt(0.4²+0.5²) = 0.6403.
	want := [5]float64{-0.5, -0.22361, 0, 0.28284, 0.64031}
	got := Widen(q, pool, 1)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-5 {
			t.Errorf("Widen(k=1)[%d] = %.5f, want %.5f", i, got[i], want[i])
		}
	}
}

func TestMemoryFit(t *testing.T) {
	// x = 0..4: sd = 1.5811, IQR (type 6: 0.5 to 3.5) = 3, 3/1.34 = 2.2388;
	// h = 0.9 · 1.5811 · 5^-0.2 = 1.03135.
	f := MemoryFitOf([]float64{4, 3, 2, 1, 0}, "x")
	if math.Abs(f.BandwidthLog-1.03135) > 1e-4 || !slices.IsSorted(f.LogErrors) {
		t.Errorf("MemoryFitOf(0..4) = %+v, want bandwidth 1.03135 and sorted errors", f)
	}
	for _, tt := range []struct {
		name string
		f    MemoryFit
		x    float64
		want float64
	}{
		{"no errors, above 0", MemoryFit{}, 0.1, 0},
		{"no errors, below 0", MemoryFit{}, -0.1, 1},
		{"one error at 0, at it", MemoryFit{LogErrors: []float64{0}, BandwidthLog: 0.1}, 0, 0.5},
		// 1 - Φ(1) = 0.158655.
		{"one error at 0, one bandwidth above", MemoryFit{LogErrors: []float64{0}, BandwidthLog: 0.1}, 0.1, 0.158655},
		{"no kernel: the share above", MemoryFit{LogErrors: []float64{-0.1, 0, 0.2, 0.5}}, 0.1, 0.5},
	} {
		if got := tt.f.Exceeds(tt.x); math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("%s: Exceeds(%g) = %g, want %g", tt.name, tt.x, got, tt.want)
		}
	}
}

// testBands is a hand-made set of bands: tpu-v5e has 10 runs, tpu-v6e 2,
// the tpu kind 12.
func testBands() Bands {
	fit := func(family string, runs, sources, maxChips int, q ...float64) BandFit {
		return BandFit{Family: family, Runs: runs, Sources: sources, MaxChips: maxChips, Q: [5]float64(q), Coverage80: 0.8}
	}
	fixed := BandTable{
		Regime: RegimeFixed,
		Pooled: fit("", 40, 6, 1024, -0.4, -0.2, 0, 0.2, 0.4),
		Dense:  fit(DenseBand, 30, 5, 1024, -0.3, -0.16, 0, 0.16, 0.3),
		Families: []BandFit{
			fit("nvidia-blackwell", 0, 0, 256, 0, 0, 0, 0, 0), // MoE runs only
			fit("nvidia-hopper", 12, 1, 1024, -0.1, -0.05, 0, 0.05, 0.1),
			fit("tpu-v5e", 10, 3, 256, -0.2, -0.1, 0, 0.1, 0.2),
			fit("tpu-v6e", 2, 1, 64, 0, 0, 0, 0, 0),
		},
		Kinds:      []BandFit{fit("tpu", 12, 3, 256, -0.3, -0.15, 0, 0.15, 0.3), fit("nvidia", 18, 4, 1024, -0.4, -0.2, 0, 0.2, 0.4)},
		MoE:        fit(MoEBand, 10, 3, 512, -0.6, -0.3, 0.1, 0.5, 0.8),
		Frameworks: []string{"generic", "maxtext"},
		Precisions: []string{"bf16"},
		ChipNames:  []string{"v5e", "h100"},
	}
	single := BandTable{Regime: RegimeSingle, Pooled: fit("", 10, 3, 1, -0.05, -0.03, 0, 0.03, 0.05),
		Dense:    fit(DenseBand, 10, 3, 1, -0.05, -0.03, 0, 0.03, 0.05),
		Families: []BandFit{fit("nvidia-hopper", 10, 3, 1, -0.05, -0.03, 0, 0.03, 0.05)}, Frameworks: []string{"torchtitan"}, Precisions: []string{"bf16"}}
	return Bands{Tables: []BandTable{fixed, single}}
}

func TestStepTimeBand(t *testing.T) {
	fewMoESources := testBands()
	fewMoESources.Tables[0].MoE.Sources = 2
	for _, tt := range []struct {
		name   string
		bs     Bands
		q      BandQuery
		lo, hi float64 // ln of the 80% ends
		family string
		novel  []string
	}{
		{"a family of its own", testBands(), BandQuery{Family: "tpu-v5e", Chips: 64, Framework: "maxtext"}, -0.1, 0.1, "tpu-v5e", nil},
		{"too few runs: its kind's", testBands(), BandQuery{Family: "tpu-v6e", Chips: 64, Framework: "maxtext"}, -0.15, 0.15, "tpu", nil},
		{"runs from one source: its kind's", testBands(), BandQuery{Family: "nvidia-hopper", Chips: 64, Framework: "generic"}, -0.2, 0.2, "nvidia", nil},
		{"MoE runs only: known, its kind's", testBands(), BandQuery{Family: "nvidia-blackwell", Chips: 64, Framework: "generic"}, -0.2, 0.2, "nvidia", nil},
		{"no runs: its kind's, not widened", testBands(), BandQuery{Family: "tpu-7x", Chips: 64}, -0.15, 0.15, "tpu", []string{"family"}},
		{"no kind: the dense runs'", testBands(), BandQuery{Family: "amd-cdna3", Chips: 64}, -0.16, 0.16, DenseBand, []string{"family"}},
		// sqrt(0.1² + 0.2²) = 0.22361 each side.
		{"a framework no run covers", testBands(), BandQuery{Family: "tpu-v5e", Chips: 64, Framework: "megatron"}, -0.22361, 0.22361, "tpu-v5e", []string{"framework"}},
		// Two novelties: sqrt(0.1² + 2·0.2²) = 0.3.
		{"fp8 beyond the largest run", testBands(), BandQuery{Family: "tpu-v5e", Chips: 512, Precision: "fp8"}, -0.3, 0.3, "tpu-v5e", []string{"precision", "scale"}},
		// A chip of a known family no run ran on: sqrt(0.1² + 0.2²) = 0.22361.
		{"a chip no run covers", testBands(), BandQuery{Family: "tpu-v5e", Chips: 64, Chip: "v5e-custom", Framework: "maxtext"}, -0.22361, 0.22361, "tpu-v5e", []string{"chip"}},
		{"a chip the runs cover", testBands(), BandQuery{Family: "tpu-v5e", Chips: 64, Chip: "v5e", Framework: "maxtext"}, -0.1, 0.1, "tpu-v5e", nil},
		{"a chip of a family no run covers: the family's novelty alone", testBands(), BandQuery{Family: "tpu-7x", Chips: 64, Chip: "tpu7x"}, -0.15, 0.15, "tpu", []string{"family"}},
		{"one chip: the single-chip table", testBands(), BandQuery{Family: "nvidia-hopper", Chips: 1, Framework: "torchtitan"}, -0.03, 0.03, "nvidia-hopper", nil},
		{"one chip of a family without steps: the fixed table", testBands(), BandQuery{Family: "tpu-v5e", Chips: 1}, -0.1, 0.1, "tpu-v5e", nil},
		{"a MoE model: the MoE runs' on any family", testBands(), BandQuery{Family: "tpu-v5e", Chips: 64, Framework: "maxtext", MoE: true}, -0.3, 0.5, MoEBand, nil},
		// Widened about the MoE median 0.1: 0.1 - sqrt(0.4² + 0.2²) = -0.34721, 0.1 + sqrt(0.4² + 0.2²) = 0.54721.
		{"a MoE model under a framework no run covers", testBands(), BandQuery{Family: "nvidia-hopper", Chips: 64, Framework: "megatron", MoE: true}, -0.34721, 0.54721, MoEBand, []string{"framework"}},
		// MoE runs of two sources: the family's dense band widened by the pool's, sqrt(0.1² + 0.2²) = 0.22361.
		{"MoE runs from too few sources", fewMoESources, BandQuery{Family: "tpu-v5e", Chips: 64, Framework: "maxtext", MoE: true}, -0.22361, 0.22361, "tpu-v5e", []string{MoEBand}},
		// Too few MoE runs on one chip: the single-chip family's, widened by the pool's: sqrt(0.03² + 0.03²) = 0.04243.
		{"a MoE model on one chip without MoE steps", testBands(), BandQuery{Family: "nvidia-hopper", Chips: 1, Framework: "torchtitan", MoE: true}, -0.04243, 0.04243, "nvidia-hopper", []string{MoEBand}},
	} {
		b := tt.bs.StepTimeBand(tt.q)
		if math.Abs(math.Log(b.Lo80)-tt.lo) > 1e-5 || math.Abs(math.Log(b.Hi80)-tt.hi) > 1e-5 || b.Family != tt.family || !slices.Equal(b.Novel, tt.novel) {
			t.Errorf("%s: band ln [%.5f, %.5f] of %q, novel %v; want [%.5f, %.5f] of %q, %v", tt.name,
				math.Log(b.Lo80), math.Log(b.Hi80), b.Family, b.Novel, tt.lo, tt.hi, tt.family, tt.novel)
		}
	}
}

func TestOOMRisk(t *testing.T) {
	bs := Bands{Memory: MemoryFit{LogErrors: []float64{0}, BandwidthLog: 0.1},
		MemoryByFramework: []MemoryFit{{Framework: "megatron", LogErrors: make([]float64, 10), BandwidthLog: 0.01}}}
	for _, tt := range []struct {
		name              string
		predicted, usable float64
		framework         string
		want              float64
	}{
		{"nothing predicted", 0, 80, "", 0},
		{"no usable memory", 10, 0, "", 1},
		{"at the limit", 80, 80, "", 0.5},
		// ln(88/80) = 0.09531: 1 - Φ(0.9531) = 0.170269.
		{"10% headroom", 80, 88, "", 0.170269},
		// Megatron's own fit, bandwidth 0.01: 1 - Φ(9.531), nil.
		{"10% headroom under megatron", 80, 88, "megatron", 0},
	} {
		if got := bs.OOMRisk(tt.predicted, tt.usable, 8, tt.framework); math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("%s: OOMRisk = %g, want %g", tt.name, got, tt.want)
		}
	}
}

// ExampleBands_StepTimeBand draws the interval of a step time predicted
// at 10 s on a family with runs of its own.
func ExampleBands_StepTimeBand() {
	b := testBands().StepTimeBand(BandQuery{Family: "tpu-v5e", Chips: 64, Framework: "maxtext", Searched: false})
	fmt.Printf("80%%: %.2f s to %.2f s, 95%%: %.2f s to %.2f s\n", 10*b.Lo80, 10*b.Hi80, 10*b.Lo95, 10*b.Hi95)
	fmt.Println(b.Basis())
	// Output:
	// 80%: 9.05 s to 11.05 s, 95%: 8.19 s to 12.21 s
	// 10 published runs on tpu-v5e, each source left out; 80% fall in it drawn without their source
}

// ExampleBands_StepTimeBand_moe draws the band of a mixture-of-experts
// model: the MoE runs' of every family, and on one chip, where the
// single-chip table has no MoE step, its family's widened.
func ExampleBands_StepTimeBand_moe() {
	bs := testBands()
	fmt.Println(bs.StepTimeBand(BandQuery{Family: "tpu-v5e", Chips: 64, Framework: "maxtext", MoE: true}).Basis())
	fmt.Println(bs.StepTimeBand(BandQuery{Family: "nvidia-hopper", Chips: 1, Framework: "torchtitan", MoE: true}).Basis())
	// Output:
	// 10 published runs of mixture-of-experts models on every chip family, each source left out; 80% fall in it drawn without their source
	// 10 measured single-chip steps on nvidia-hopper; 80% fall in it drawn without their source; no run covers this MoE model, so it is widened
}

// TestChanceRange80: the 5% and 95% points of Bin(n, 0.8), by hand from
// the binomial sums (n = 10: P(X <= 5) = 0.033, P(X <= 6) = 0.121,
// P(X <= 9) = 0.893; n = 18: P(X <= 10) = 0.041, P(X <= 11) = 0.133,
// P(X <= 16) = 0.901, P(X <= 17) = 0.982), and where a count stands.
func TestChanceRange80(t *testing.T) {
	for _, tt := range []struct {
		n, lo, hi int
	}{
		{0, 0, 0},
		{1, 0, 1},
		{10, 6, 10},
		{12, 7, 12},
		{18, 11, 17},
		{62, 44, 55},
	} {
		if lo, hi := ChanceRange80(tt.n); lo != tt.lo || hi != tt.hi {
			t.Errorf("ChanceRange80(%d) = %d, %d; want %d, %d", tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
	for _, tt := range []struct {
		in80 int
		want string
	}{{10, "too narrow"}, {11, "consistent"}, {17, "consistent"}, {18, "too wide"}} {
		c := Covered{Runs: 18, In80: tt.in80}
		c.ChanceLow80, c.ChanceHigh80 = ChanceRange80(18)
		if got := c.Calibration80(); got != tt.want {
			t.Errorf("%d of 18 held: %q, want %q", tt.in80, got, tt.want)
		}
	}
	if got := (Covered{}).Calibration80(); got != "" {
		t.Errorf("no runs: %q, want none", got)
	}
}
