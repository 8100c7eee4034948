package profiles

import (
	"math"
	"strings"
	"testing"
)

// wantAxis is the part of an Axis a test pins: name, size, tier, wraparound.
type wantAxis struct {
	name string
	size int
	tier Tier
	wrap bool
}

func TestParse(t *testing.T) {
	// Shapes, chip counts and wrap rules from docs/hardware.md §1.2-1.3
	// [XPK][GC-v5p][GC-ver][SB-TPU]; GPU domains from §2.1 [SB-GPU].
	tests := []struct {
		name  string
		chip  string
		chips int
		axes  []wantAxis
	}{
		// v4-8 is one 2x2x1 tray with no wraparound [XPK][SB-TPU]; the size-1 z axis is left out.
		{"v4-8", "v4", 4, []wantAxis{{"x", 2, ICI, false}, {"y", 2, ICI, false}}},
		// v4-32 is 2x2x4, smaller than a cube, so no wrap [XPK].
		{"v4-32", "v4", 16, []wantAxis{{"x", 2, ICI, false}, {"y", 2, ICI, false}, {"z", 4, ICI, false}}},
		// v4-128 is one 4x4x4 cube with wraparound [XPK][SB-TPU].
		{"v4-128", "v4", 64, []wantAxis{{"x", 4, ICI, true}, {"y", 4, ICI, true}, {"z", 4, ICI, true}}},
		// v5p-256 is 128 chips, 4x4x8, two cubes, all axes wrap [GC-v5p][SB-TPU].
		{"v5p-256", "v5p", 128, []wantAxis{{"x", 4, ICI, true}, {"y", 4, ICI, true}, {"z", 8, ICI, true}}},
		// xpk default shapes: v5p-384 = 4x4x12, v5p-768 = 4x8x12, v5p-1536 = 8x8x12 [XPK].
		{"v5p-384", "v5p", 192, []wantAxis{{"x", 4, ICI, true}, {"y", 4, ICI, true}, {"z", 12, ICI, true}}},
		{"v5p-768", "v5p", 384, []wantAxis{{"x", 4, ICI, true}, {"y", 8, ICI, true}, {"z", 12, ICI, true}}},
		{"v5p-1536", "v5p", 768, []wantAxis{{"x", 8, ICI, true}, {"y", 8, ICI, true}, {"z", 12, ICI, true}}},
		// v5p-2048 = 8x8x16 [GC-v5p]; v5p-12288 = 16x16x24, the doc's largest slice [GC-v5p].
		{"v5p-2048", "v5p", 1024, []wantAxis{{"x", 8, ICI, true}, {"y", 8, ICI, true}, {"z", 16, ICI, true}}},
		{"v5p-12288", "v5p", 6144, []wantAxis{{"x", 16, ICI, true}, {"y", 16, ICI, true}, {"z", 24, ICI, true}}},
		// The full v5p pod, 16x20x28 = 8960 chips [SB-TPU].
		{"v5p-17920", "v5p", 8960, []wantAxis{{"x", 16, ICI, true}, {"y", 20, ICI, true}, {"z", 28, ICI, true}}},
		// v5e-256: 16x16, both axes wrap [GC-ver][SB-TPU].
		{"v5e-256", "v5e", 256, []wantAxis{{"x", 16, ICI, true}, {"y", 16, ICI, true}}},
		// v5e-64: 8x8, no wraparound [SB-TPU].
		{"v5e-64", "v5e", 64, []wantAxis{{"x", 8, ICI, false}, {"y", 8, ICI, false}}},
		// v5e-128: 8x16, wrap only on the 16 axis [SB-TPU].
		{"v5e-128", "v5e", 128, []wantAxis{{"x", 8, ICI, false}, {"y", 16, ICI, true}}},
		// v5litepod is an alias of v5e; names are case-insensitive.
		{"V5litepod-16", "v5e", 16, []wantAxis{{"x", 4, ICI, false}, {"y", 4, ICI, false}}},
		// v5e-1 is one chip: a single axis of size 1 is kept.
		{"v5e-1", "v5e", 1, []wantAxis{{"x", 1, ICI, false}}},
		// v6e uses v5e's shapes [GC-v6e].
		{"v6e-256", "v6e", 256, []wantAxis{{"x", 16, ICI, true}, {"y", 16, ICI, true}}},
		// 2xv5p-256 is two 128-chip slices over DCN (docs/contract.md).
		{"2xv5p-256", "v5p", 256, []wantAxis{{"x", 4, ICI, true}, {"y", 4, ICI, true}, {"z", 8, ICI, true}, {"slice", 2, DCN, false}}},
		{"1xv5p-8", "v5p", 4, []wantAxis{{"x", 2, ICI, false}, {"y", 2, ICI, false}}},
		// h100-1024: 128 nodes of 8 GPUs (docs/contract.md; [SB-GPU]).
		{"h100-1024", "h100", 1024, []wantAxis{{"gpu", 8, NVLink, false}, {"node", 128, InfiniBand, false}}},
		// One node has no node axis.
		{"h100-8", "h100", 8, []wantAxis{{"gpu", 8, NVLink, false}}},
		// Part of a node that divides it.
		{"h100-2", "h100", 2, []wantAxis{{"gpu", 2, NVLink, false}}},
		{"a100-40gb-64", "a100-40gb", 64, []wantAxis{{"gpu", 8, NVLink, false}, {"node", 8, InfiniBand, false}}},
		{"a100-80gb-16", "a100", 16, []wantAxis{{"gpu", 8, NVLink, false}, {"node", 2, InfiniBand, false}}},
		// gb200-144: two NVL72 domains [SB-GPU].
		{"gb200-144", "gb200", 144, []wantAxis{{"gpu", 72, NVLink, false}, {"node", 2, InfiniBand, false}}},
		// GB200 jobs take whole 4-GPU trays; one that fits a domain stays in it:
		// gb200-64 is 16 of the 18 trays of one NVL72 domain.
		{"gb200-64", "gb200", 64, []wantAxis{{"gpu", 64, NVLink, false}}},
		// Larger jobs are equal segments of whole trays, the segment the most
		// trays up to 18 that divide the job's (Megatron-Bridge's --segment):
		// 32 trays -> 2 segments of 16 trays = 2 x 64 GPUs; 64 trays -> 4 x 64.
		{"gb200-128", "gb200", 128, []wantAxis{{"gpu", 64, NVLink, false}, {"node", 2, InfiniBand, false}}},
		{"gb200-256", "gb200", 256, []wantAxis{{"gpu", 64, NVLink, false}, {"node", 4, InfiniBand, false}}},
		// 1152 GPUs = 288 trays = 16 segments of 18 trays, whole domains.
		{"gb200-1152", "gb200", 1152, []wantAxis{{"gpu", 72, NVLink, false}, {"node", 16, InfiniBand, false}}},
		// 100 GPUs = 25 trays: 18..6 do not divide 25, 5 does: 5 x 20 GPUs.
		{"gb200-100", "gb200", 100, []wantAxis{{"gpu", 20, NVLink, false}, {"node", 5, InfiniBand, false}}},
		// Part of one tray that divides it.
		{"gb200-2", "gb200", 2, []wantAxis{{"gpu", 2, NVLink, false}}},
		{"mi300x-64", "mi300x", 64, []wantAxis{{"gpu", 8, NVLink, false}, {"node", 8, InfiniBand, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(tt.name)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.name, err)
			}
			if c.Chip.Name != tt.chip {
				t.Errorf("chip = %q, want %q", c.Chip.Name, tt.chip)
			}
			if c.Chips() != tt.chips {
				t.Errorf("Chips() = %d, want %d", c.Chips(), tt.chips)
			}
			var got []wantAxis
			for _, a := range c.Axes {
				got = append(got, wantAxis{a.Name, a.Size, a.Tier, a.Wraparound})
			}
			if !equalAxes(got, tt.axes) {
				t.Errorf("axes = %v, want %v", got, tt.axes)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func equalAxes(a, b []wantAxis) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseBandwidths(t *testing.T) {
	// One-way bandwidth per chip along each axis (doc.go's convention).
	tests := []struct {
		cluster, axis string
		bytesPerS     float64
	}{
		{"v5p-256", "z", 9e10},          // ICI per link one way [SB-TPU]
		{"v5e-256", "x", 4.5e10},        // [SB-TPU]
		{"2xv5p-256", "slice", 6.25e9},  // 50 Gb/s per chip [GC-v5p][SB-TPU]
		{"2xv5e-256", "slice", 3.125e9}, // 25 Gb/s per chip [GC-v5e][SB-TPU]
		{"2xv6e-256", "slice", 12.5e9},  // 100 Gb/s per chip [GC-v6e][SB-TPU]
		{"h100-1024", "gpu", 450e9},     // NVLink 4 egress one way [SB-GPU][MLE-NET]
		{"h100-1024", "node", 50e9},     // 400 Gb/s NDR per GPU [SB-GPU]
		{"h800-16", "gpu", 200e9},       // 400 GB/s bidi, docs/published-runs.md
		{"b200-16", "gpu", 900e9},       // NVLink 5 [MLE-NET]
		{"a100-16", "gpu", 300e9},       // NVLink 3 [MLE-NET]
		{"mi300x-8", "gpu", 448e9},      // 7 x 64 GB/s [MLE-NET]
		{"mi300x-2", "gpu", 64e9},       // one peer link [MLE-NET]
		{"gb200-64", "gpu", 900e9},      // NVSwitch: a part of a domain keeps the whole egress [MLE-NET]
		{"gb200-128", "node", 50e9},     // 400 Gb/s ConnectX-7 per GPU [MLE-NET][SB-GPU]
	}
	for _, tt := range tests {
		c, err := Parse(tt.cluster)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.cluster, err)
		}
		a, ok := c.Axis(tt.axis)
		if !ok {
			t.Fatalf("%s has no axis %q", tt.cluster, tt.axis)
		}
		if a.BandwidthBytesPerS != tt.bytesPerS {
			t.Errorf("%s axis %s: bandwidth %g, want %g", tt.cluster, tt.axis, a.BandwidthBytesPerS, tt.bytesPerS)
		}
	}
	if _, ok := (Cluster{}).Axis("x"); ok {
		t.Error("Axis on an empty cluster reported an axis")
	}
}

func TestGPULayout(t *testing.T) {
	// Hand-computed: nodes = n/node; one domain when n <= domain, else
	// the most nodes s <= domain/node that divide the nodes, per segment.
	tests := []struct {
		n, node, domain    int
		perDomain, domains int
		ok                 bool
	}{
		{64, 4, 72, 64, 1, true},  // 16 trays, one NVL72
		{72, 4, 72, 72, 1, true},  // 18 trays, the whole domain
		{128, 4, 72, 64, 2, true}, // 32 trays: 18,17 no; 16 yes
		{256, 4, 72, 64, 4, true}, // 64 trays: 16 x 4
		{144, 4, 72, 72, 2, true}, // 36 trays: 18 x 2
		{216, 4, 72, 72, 3, true}, // 54 trays: 18 x 3
		{192, 4, 72, 64, 3, true}, // 48 trays: 18, 17 no; 16 yes: 3 x 64
		{76, 4, 72, 4, 19, true},  // 19 trays, prime: 19 domains of one tray
		{2, 4, 72, 2, 1, true},    // part of a tray that divides it
		{3, 4, 72, 0, 0, false},   // part of a tray that does not divide it
		{66, 4, 72, 0, 0, false},  // 16.5 trays
		{16, 8, 8, 8, 2, true},    // DGX: whole 8-GPU domains
		{4, 8, 8, 4, 1, true},     // h100-4
		{12, 8, 8, 0, 0, false},   // h100-12
	}
	for _, tt := range tests {
		per, doms, ok := gpuLayout(tt.n, tt.node, tt.domain)
		if ok != tt.ok || (ok && (per != tt.perDomain || doms != tt.domains)) {
			t.Errorf("gpuLayout(%d, %d, %d) = %d x %d, %t; want %d x %d, %t", tt.n, tt.node, tt.domain, per, doms, ok, tt.perDomain, tt.domains, tt.ok)
		}
	}
}

func TestParseErrors(t *testing.T) {
	// Each error must name the problem and what would work.
	tests := []struct {
		name string
		want []string // substrings of the message
	}{
		{"v5p-7", []string{"TensorCores", "v5p-8"}},
		{"v5p-6", []string{"3 chips", "no standard", "v5p-8"}},
		{"v5p-24", []string{"v5p-16", "v5p-32"}},
		{"v5p-200", []string{"v5p-128", "v5p-256"}},
		{"v5e-512", []string{"largest", "2xv5e-256"}},
		{"v5e-2", []string{"v5e-1", "v5e-4"}},
		{"v5p-20000", []string{"largest", "v5p-17920", "2x"}},
		{"h100-12", []string{"h100-8 or h100-16"}},
		{"h100-3", []string{"h100-2 or h100-4"}},
		{"gb200-102", []string{"4-GPU trays", "gb200-100 or gb200-104"}},
		{"gb200-3", []string{"4-GPU trays", "gb200-2 or gb200-4"}},
		{"gb200-18", []string{"4-GPU trays", "gb200-16 or gb200-20"}},
		{"h10-8", []string{"unknown chip", "h100"}},
		{"mi300-8", []string{"unknown chip", "mi300x"}},
		{"zzzzzzzz-8", []string{"unknown chip", "known chips"}},
		{"v5p-0", []string{"zero"}},
		{"h100-0", []string{"zero"}},
		{"v5p--8", []string{"negative"}},
		{"h100--1", []string{"negative"}},
		{"h100-9999999", []string{"1000000"}},
		{"h100-99999999999999999999999", []string{"1000000"}},
		{"9999xv5p-17920", []string{"1000000"}},
		{"0xv5p-256", []string{"K >= 1"}},
		{"2xh100-8", []string{"h100-16"}},
		{"v5p-abc", []string{"whole number"}},
		{"v5p-8.0", []string{"whole number"}},
		{"v5p", []string{"no size", "v5p-256"}},
		{"h100-", []string{"no size"}},
		{"", []string{"empty"}},
		{"hello", []string{"CHIP-N"}},
		{strings.Repeat("a", 500), []string{"too long"}},
	}
	for _, tt := range tests {
		_, err := Parse(tt.name)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", tt.name)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "profiles: ") || strings.Contains(msg, "\n") {
			t.Errorf("Parse(%q) error %q is not one line prefixed \"profiles: \"", tt.name, msg)
		}
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("Parse(%q) error %q does not mention %q", tt.name, msg, w)
			}
		}
	}
}

func TestNamesParse(t *testing.T) {
	for _, n := range Names() {
		c, err := Parse(n)
		if err != nil {
			t.Errorf("preset %q: %v", n, err)
			continue
		}
		if err := c.Validate(); err != nil {
			t.Errorf("preset %q: %v", n, err)
		}
		if c.Name != n {
			t.Errorf("preset %q parsed with name %q", n, c.Name)
		}
	}
}

func TestStandardShapes(t *testing.T) {
	// Every 3D shape docs/hardware.md lists for v4/v5p comes out of the shape rule
	// [XPK][GC-v5p][SB-TPU].
	listed := map[int]string{
		4: "2x2x1", 8: "2x2x2", 16: "2x2x4", 32: "2x4x4", 64: "4x4x4",
		128: "4x4x8", 192: "4x4x12", 256: "4x8x8", 320: "4x4x20", 384: "4x8x12",
		512: "8x8x8", 576: "4x12x12", 768: "8x8x12", 1024: "8x8x16",
		1728: "12x12x12", 2048: "8x16x16", 3456: "12x12x24", 4096: "16x16x16",
		6144: "16x16x24", 8960: "16x20x28",
	}
	spec, _ := lookupSpec("v5p")
	for chips, want := range listed {
		if got := shapeString(spec.torus.shape(chips)); got != want {
			t.Errorf("v5p shape for %d chips = %q, want %q", chips, got, want)
		}
	}
}

func TestInt8Peaks(t *testing.T) {
	// Dense int8 OP/s, docs/hardware.md §1.1 and §2.1; zero where int8 runs
	// at the bf16 rate (v4) or is not listed (chips with fp8).
	tests := []struct {
		name string
		int8 float64
	}{
		{"v4", 0},        // 275, the bf16 rate [GC-v4]
		{"v5e", 393e12},  // [GC-v5e]
		{"v5p", 918e12},  // [SB-TPU][MLE-ACC]
		{"v6e", 1836e12}, // [GC-v6e]
		{"a100", 624e12}, // [KL-A100]
		{"a100-40gb", 624e12},
		{"h100", 0}, // has fp8
	}
	for _, tt := range tests {
		c, err := LookupChip(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if c.PeakInt8OPs != tt.int8 {
			t.Errorf("%s: PeakInt8OPs %g, want %g", tt.name, c.PeakInt8OPs, tt.int8)
		}
	}
}

func TestHostBandwidth(t *testing.T) {
	// One way per chip, docs/hardware.md §1.1 and §2.1.
	tests := []struct {
		name      string
		bytesPerS float64
	}{
		{"v4", 1.6e10},         // Gen3 x16 [SB-TPU]
		{"v5p", 1.6e10},        // [SB-TPU]
		{"v6e", 3.2e10},        // Gen5 [GC-v6e md][SB-TPU]
		{"h100", 0.8 * 64e9},   // Gen5 x16 at 80% [MLE-NET]
		{"a100", 0.8 * 32e9},   // Gen4 x16 at 80% [MLE-NET]
		{"gb200", 0.8 * 450e9}, // NVLink-C2C at 80% [MLE-NET]
	}
	for _, tt := range tests {
		c, err := LookupChip(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if c.HostBandwidthBytesPerS != tt.bytesPerS {
			t.Errorf("%s: host %g B/s, want %g", tt.name, c.HostBandwidthBytesPerS, tt.bytesPerS)
		}
	}
}

func TestChips(t *testing.T) {
	// Peak bf16 FLOP/s per chip, docs/hardware.md §1.1 and §2.1; HBM as the
	// runtime reports it (CUDA's total, JAX's bytes_limit), docs/runtime-memory.md [HBM-RT].
	tests := []struct {
		name      string
		bf16, hbm float64
		cores     int
	}{
		{"v4", 275e12, 34088157184, 2},        // [GC-v4], 31.75 GiB
		{"v5litepod", 197e12, 16909332480, 1}, // [GC-v5e], 15.75 GiB
		{"v5p", 459e12, 102803439616, 2},      // [GC-v5p], 95.74 GiB
		{"v6e", 918e12, 33550237696, 1},       // [GC-v6e], 31.25 GiB
		{"a100-40gb", 312e12, 42298834944, 1}, // [KL-A100], 39.39 GiB
		{"A100-80GB", 312e12, 84987740160, 1}, // [KL-A100], 81,051 MiB
		{"h100", 989e12, 85017493504, 1},      // [KL-H100], docs/measured-h100.md
		{"h200", 989e12, 150109945856, 1},     // [MLE-ACC], 143,156 MiB
		{"b200", 2250e12, 191502483456, 1},    // [MLE-ACC], 182,631 MiB
		{"gb200", 2500e12, 197.9e9, 1},        // [MLE-ACC], 184.31 GiB
		{"mi300x", 1307e12, 206141652992, 1},  // [MLE-ACC], 192 GiB - 16 MiB
	}
	for _, tt := range tests {
		ch, err := LookupChip(tt.name)
		if err != nil {
			t.Fatalf("LookupChip(%q): %v", tt.name, err)
		}
		if ch.PeakBF16FLOPs != tt.bf16 || ch.HBMBytes != tt.hbm || ch.TensorCoresPerChip != tt.cores {
			t.Errorf("%s = %+v, want bf16 %g, hbm %g, cores %d", tt.name, ch, tt.bf16, tt.hbm, tt.cores)
		}
		if _, ok := DefaultEfficiency(ch.Family); !ok {
			t.Errorf("%s: family %q has no default efficiency", tt.name, ch.Family)
		}
	}
	if _, err := LookupChip("h1000"); err == nil || !strings.Contains(err.Error(), "h100") {
		t.Errorf("LookupChip(h1000) = %v, want a suggestion of h100", err)
	}
	for _, n := range ChipNames() {
		if _, err := LookupChip(n); err != nil {
			t.Errorf("ChipNames lists %q but LookupChip fails: %v", n, err)
		}
	}
}

func TestDefaultEfficiency(t *testing.T) {
	// MatmulFraction: the H100's measured 0.705; other GPUs MAMF / peak
	// [MLE-ACC] x 0.88 (A100 0.87 x 0.88 = 0.766 -> 0.77); the half point is
	// MatmulFraction x peak x 25 us (A100: 0.77 x 312e12 x 25e-6 = 6.0e9);
	// TPUs from large-matmul measurements (v5 0.92, v6e 0.77) with t0 = 3 us
	// (v5p: 0.92 x 459e12 x 3e-6 = 1.27e9 -> 1.3e9; docs/tpu.md, efficiency.go).
	tests := []struct {
		family   string
		fraction float64
		half     float64
	}{
		{"nvidia-hopper", 0.705, 1.7e10},
		{"nvidia-ampere", 0.77, 6e9},
		{"nvidia-blackwell", 0.69, 3.9e10},
		{"nvidia-grace-blackwell", 0.64, 4e10},
		{"amd-cdna3", 0.45, 1.5e10},
		{"tpu-v5p", 0.92, 1.3e9},
		{"tpu-v6e", 0.77, 2.1e9},
	}
	for _, tt := range tests {
		e, ok := DefaultEfficiency(tt.family)
		if !ok {
			t.Fatalf("no defaults for %q", tt.family)
		}
		if e.MatmulFraction != tt.fraction || e.MatmulHalfFLOPs != tt.half {
			t.Errorf("%s = %+v, want fraction %g, half %g", tt.family, e, tt.fraction, tt.half)
		}
	}
	if _, ok := DefaultEfficiency("nope"); ok {
		t.Error("DefaultEfficiency(nope) reported defaults")
	}
}

// TestPowerLimitedRateCatalogue checks the catalogue chips with a
// power-limited rate: the H200 (1/1.037, its measured GEMM sweep), B300 and
// GB300 (the cube roots of 1100/1000 and 1400/1200 over their Blackwell
// twins); that the H200's datasheet peak stays; and that a chip file may not
// set an absurd rate or exponential rate.
func TestPowerLimitedRateCatalogue(t *testing.T) {
	for _, tt := range []struct {
		name string
		want float64
	}{{"h200", 1 / 1.037}, {"h100", 1}, {"b200", 1}, {"v5p", 1}, {"b300", 1.0323}, {"gb300", 1.0527}} {
		ch, err := LookupChip(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := ch.KernelRate(); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: kernel rate %v, want %v", tt.name, got, tt.want)
		}
		if tt.name == "h200" && ch.PeakBF16FLOPs != 989e12 {
			t.Errorf("h200: peak %g, want the datasheet's 989e12", ch.PeakBF16FLOPs)
		}
	}
	for _, r := range []float64{-0.1, 2.5} {
		ch, _ := LookupChip("h100")
		ch.PowerLimitedRate = r
		if err := ch.validate(); err == nil || !strings.Contains(err.Error(), "power_limited_rate") {
			t.Errorf("power_limited_rate %v: error %v, want one naming the field", r, err)
		}
	}
	for _, r := range []float64{-0.1, 4.5} {
		ch, _ := LookupChip("b200")
		ch.ScoreRate = r
		if err := ch.validate(); err == nil || !strings.Contains(err.Error(), "score_rate") {
			t.Errorf("score_rate %v: error %v, want one naming the field", r, err)
		}
	}
	for _, name := range []string{"b300", "gb300"} {
		if ch, _ := LookupChip(name); math.Abs(ch.ScoreRate-2.14) > 1e-12 || ch.SMs != 160 {
			t.Errorf("%s: score rate %v, %d SMs; want 2.14 and 160", name, ch.ScoreRate, ch.SMs)
		}
	}
}
