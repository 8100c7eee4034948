package space

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// torus2x2x4 is a small single-tier cluster with two interchangeable axes.
func torus2x2x4() profiles.Cluster {
	ax := func(name string, n int) profiles.Axis {
		return profiles.Axis{Name: name, Size: n, Tier: profiles.ICI, Wraparound: true, BandwidthBytesPerS: 45e9}
	}
	return profiles.Cluster{Name: "torus-16", Axes: []profiles.Axis{ax("x", 2), ax("y", 2), ax("z", 4)}}
}

// smallModel is a toy dense model; smallMoE adds four experts.
func smallModel() model.Spec {
	return model.Spec{Name: "toy", Layers: 8, Hidden: 256, Heads: 8, KVHeads: 2, HeadDim: 32, FFNHidden: 1024, Vocab: 1000, SeqLen: 64}
}

func smallMoE() model.Spec {
	m := smallModel()
	m.Name = "toy-moe"
	m.MoE = &model.MoE{Experts: 4, TopK: 1, ExpertFFNHidden: 512}
	return m
}

// divisors lists the divisors of n ascending.
// tinyModel has too few layers for 8 pipeline stages.
func tinyModel() model.Spec {
	m := llama3_8b()
	m.Name, m.Layers = "tiny", 4
	return m
}

func divisors(n int) []int {
	var d []int
	for i := 1; i <= n; i++ {
		if n%i == 0 {
			d = append(d, i)
		}
	}
	return d
}

// bruteForce counts the valid strategies of m on c for w that fix allows,
// independently of New: every assignment of a factor of each axis to each
// dimension, every ep share inside the dp and fsdp part, every mb up to the
// batch, every schedule with v up to the layers, recompute and zero
// (sp as the fix pins it, else tp > 1),
// checked by Validate, with strategies that differ only by swapping
// interchangeable axes counted once and, with pp=1, only the 1f1b schedule
// (the Space lists each once; Decode treats the others as duplicates).
func bruteForce(t *testing.T, m model.Spec, c profiles.Cluster, w Workload, fix Fix) int {
	t.Helper()
	nAxes := len(c.Axes)
	dims := []Dim{DP, FSDP, TP, CP, PP}
	seen := map[string]bool{}
	// swaps lists the axis permutations among interchangeable axes
	// (identity and, for this test's clusters, swapping axes 0 and 1).
	perms := [][]int{{0, 1, 2}}
	if c.Axes[0].Size == c.Axes[1].Size && c.Axes[0].Tier == c.Axes[1].Tier {
		perms = append(perms, []int{1, 0, 2})
	}
	factors := make([][NumDims]int, nAxes) // factors[a][d]
	var meshes []Strategy
	var recAxis func(a int)
	var recDim func(a, k, left int)
	recDim = func(a, k, left int) {
		if k == len(dims) {
			if left == 1 {
				recAxis(a + 1)
			}
			return
		}
		for _, f := range divisors(left) {
			factors[a][dims[k]] = f
			recDim(a, k+1, left/f)
		}
	}
	recAxis = func(a int) {
		if a == nAxes {
			s := Defaults()
			s.Degree[DP], s.Degree[FSDP], s.Degree[TP], s.Degree[CP], s.Degree[PP] = 1, 1, 1, 1, 1
			for _, d := range dims {
				for b := range nAxes {
					if f := factors[b][d]; f > 1 {
						s.Mesh[d] = append(s.Mesh[d], Share{Axis: c.Axes[b].Name, Size: f})
						switch d {
						case DP:
							s.Degree[DP] *= f
						case FSDP:
							s.Degree[FSDP] *= f
						case TP:
							s.Degree[TP] *= f
						case CP:
							s.Degree[CP] *= f
						case PP:
							s.Degree[PP] *= f
						}
					}
				}
			}
			s.SP = s.Degree[TP] > 1
			if v, ok := fix.Set["sp"]; ok {
				s.SP = v == "true"
			}
			meshes = append(meshes, s)
			return
		}
		recDim(a, 0, c.Axes[a].Size)
	}
	recAxis(0)
	// EP variants: every per-axis ep factor of the axis size.
	var layouts []Strategy
	for _, s := range meshes {
		var recEP func(b int, cur Strategy)
		recEP = func(b int, cur Strategy) {
			if b == nAxes {
				if cur.Validate(m, c, w) == nil {
					layouts = append(layouts, cur)
				}
				return
			}
			for _, f := range divisors(c.Axes[b].Size) {
				next := cur
				next.Mesh[EP] = slices.Clone(cur.Mesh[EP])
				if f > 1 {
					next.Mesh[EP] = append(next.Mesh[EP], Share{Axis: c.Axes[b].Name, Size: f})
					next.Degree[EP] *= f
				}
				recEP(b+1, next)
			}
		}
		recEP(0, s)
	}
	schedules := []scheduleChoice{{name: OneFOneB, v: 1}, {name: GPipe, v: 1}}
	// The schedules the search lists only when asked for, when the fix
	// names one.
	for _, sc := range Schedules() {
		if !sc.Virtual() && !sc.Rules().Searched() && fix.Has("schedule") {
			schedules = append(schedules, scheduleChoice{name: sc, v: 1})
		}
	}
	for v := 2; v <= m.Layers; v++ {
		schedules = append(schedules, scheduleChoice{name: Interleaved, v: v})
	}
	rename := func(s Strategy, perm []int) string {
		r := s
		for d := range r.Mesh {
			r.Mesh[d] = nil
			var shares []Share
			for b := range nAxes {
				for _, sh := range s.Mesh[d] {
					if sh.Axis == c.Axes[perm[b]].Name {
						shares = append(shares, Share{Axis: c.Axes[b].Name, Size: sh.Size})
					}
				}
			}
			r.Mesh[d] = shares
		}
		return r.String()
	}
	for _, l := range layouts {
		for mb := 1; mb <= w.Batch; mb++ {
			if w.Batch%(l.Replicas()*mb) != 0 {
				continue // Validate's batch rule, checked first: it formats every error it finds
			}
			for _, sc := range schedules {
				if l.Degree[PP] == 1 && sc.name != OneFOneB {
					continue
				}
				for _, rc := range []string{RecomputeNone, RecomputeSelective, RecomputeFull} {
					for z := range 3 {
						etps := []int{0} // experts whole (the default), or split over tp
						if m.MoE != nil {
							etps = append(etps, l.Degree[TP])
						}
						for _, etp := range etps {
							s := l
							s.MB, s.Schedule, s.V, s.Recompute, s.Zero, s.ETP = mb, sc.name, sc.v, rc, z, etp
							if s.Validate(m, c, w) != nil || !fix.Allows(s) {
								continue
							}
							// The space interleaves equal chunks of whole layers
							// only, unless v is pinned.
							if _, pinned := fix.Set["v"]; !pinned && s.Schedule.Virtual() && MaxStageLayers(m.Layers, s.Degree[PP])%s.V != 0 {
								continue
							}
							key := s.String()
							for _, p := range perms {
								key = min(key, rename(s, p))
							}
							seen[key] = true
						}
					}
				}
			}
		}
	}
	return len(seen)
}

// checkAll decodes every vector of sp, checks each valid one against
// Validate and fix, the Encode round trip and returns the valid count.
func checkAll(t *testing.T, sp *Space, m model.Spec, c profiles.Cluster, w Workload, fix Fix) int {
	t.Helper()
	genes := make([]int, NumGenes)
	var s Strategy
	valid := 0
	for i := range sp.Size() {
		ok := sp.DecodeIndex(i, genes, &s)
		if back, eok := sp.Encode(s); !eok || !slices.Equal(back, genes) {
			t.Fatalf("Encode(Decode(%v) = %q) = %v, %v", genes, s, back, eok)
		}
		if !ok {
			continue
		}
		valid++
		if err := s.Validate(m, c, w); err != nil {
			t.Fatalf("Decode(%v) = %q is valid but Validate says %v", genes, s, err)
		}
		if !fix.Allows(s) {
			t.Fatalf("Decode(%v) = %q is valid but fix %q does not allow it", genes, s, fix)
		}
	}
	if n := sp.CountValid(); n != int64(valid) {
		t.Errorf("CountValid() = %d, want %d", n, valid)
	}
	return valid
}

func TestSpaceBruteForce(t *testing.T) {
	mustFix := func(s string) Fix {
		f, err := ParseFix(s)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	tests := []struct {
		name string
		m    model.Spec
		w    Workload
		fix  Fix
	}{
		{"dense", smallModel(), Workload{Batch: 16, SeqLen: 64}, Fix{}},
		{"moe", smallMoE(), Workload{Batch: 8, SeqLen: 64}, Fix{}},
		{"fixed", smallModel(), Workload{Batch: 16, SeqLen: 64}, mustFix("pp=2,mesh=tp:z*2,recompute=full")},
		{"fixed sp", smallModel(), Workload{Batch: 16, SeqLen: 60}, mustFix("sp=false,zero=1")},
		{"moe fixed ep mesh", smallMoE(), Workload{Batch: 8, SeqLen: 64}, mustFix("mesh=ep:z*2")},
		{"fixed zb-v", smallModel(), Workload{Batch: 16, SeqLen: 64}, mustFix("schedule=zb-v,recompute=none")},
		{"fixed dualpipe", smallMoE(), Workload{Batch: 8, SeqLen: 64}, mustFix("schedule=dualpipe,recompute=full")},
		{"moe whole experts", smallMoE(), Workload{Batch: 8, SeqLen: 64}, mustFix("etp=1")},
		{"moe split experts", smallMoE(), Workload{Batch: 8, SeqLen: 64}, mustFix("etp=2")},
	}
	c := torus2x2x4()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // seconds each: the brute force validates every combination
			sp, err := New(tt.m, c, tt.w, tt.fix)
			if err != nil {
				t.Fatalf("New error: %v", err)
			}
			sp.indexOnce.Do(sp.fillIndex) // as Encode builds it
			if len(sp.index) != sp.Layouts() {
				t.Errorf("%d layouts but %d distinct keys: a placement is listed twice", sp.Layouts(), len(sp.index))
			}
			got := checkAll(t, sp, tt.m, c, tt.w, tt.fix)
			want := bruteForce(t, tt.m, c, tt.w, tt.fix)
			if got != want {
				t.Errorf("%v: %d valid strategies, brute force finds %d", sp, got, want)
			}
			t.Logf("%v: %d valid", sp, got)
		})
	}
}

func TestSpaceDeterministic(t *testing.T) {
	m, c, w := llama3_70b(), v5p256(), Workload{Batch: 512, SeqLen: 4096}
	a, err := New(m, c, w, Fix{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(m, c, w, Fix{})
	if !slices.Equal(a.Cardinalities(), b.Cardinalities()) {
		t.Fatalf("Cardinalities differ: %v vs %v", a.Cardinalities(), b.Cardinalities())
	}
	ga, gb := make([]int, NumGenes), make([]int, NumGenes)
	var sa, sb Strategy
	step := a.Size()/5000 + 1
	for i := int64(0); i < a.Size(); i += step {
		oa := a.DecodeIndex(i, ga, &sa)
		ob := b.DecodeIndex(i, gb, &sb)
		if oa != ob || sa.String() != sb.String() {
			t.Fatalf("index %d decodes to %q (%v) and %q (%v)", i, sa, oa, sb, ob)
		}
	}
}

func TestSpaceSizes(t *testing.T) {
	tests := []struct {
		name       string
		m          model.Spec
		c          profiles.Cluster
		w          Workload
		maxSize    int64
		wantLayout string // a layout the space must contain
	}{
		{"llama3-8b/h100-8", llama3_8b(), gpuCluster(8), Workload{32, 8192}, 1e5, "tp=8,mb=4"},
		// Interleaving takes every v that splits ceil(layers/pp) evenly: 8
		// values of v for 80 layers on 2 to 64 stages, 10 for 126.
		{"llama70b/v5p-256", llama3_70b(), v5p256(), Workload{512, 4096}, 5e6, "fsdp=16,tp=8,mesh=tp:z;fsdp:x.y"},
		{"llama3-405b/h100-16384", llama3_405b(), gpuCluster(16384), Workload{2048, 8192}, 2e7, "dp=128,tp=8,pp=16,schedule=interleaved,v=4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp, err := New(tt.m, tt.c, tt.w, Fix{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%v, %d valid", sp, sp.CountValid())
			if sp.Size() > tt.maxSize {
				t.Errorf("Size() = %d, want at most %d", sp.Size(), tt.maxSize)
			}
			s, _ := Parse(tt.wantLayout)
			genes, ok := sp.Encode(s)
			var d Strategy
			if !ok || !sp.Decode(genes, &d) {
				t.Fatalf("Encode(%q) = %v, %v; want a valid gene vector", s, genes, ok)
			}
			if err := d.Validate(tt.m, tt.c, tt.w); err != nil {
				t.Errorf("Decode(Encode(%q)) = %q: %v", s, d, err)
			}
			// A sample of valid decodes passes Validate.
			rng := rand.New(rand.NewPCG(1, 2))
			g := make([]int, NumGenes)
			for range 20000 {
				if sp.DecodeIndex(rng.Int64N(sp.Size()), g, &d) {
					if err := d.Validate(tt.m, tt.c, tt.w); err != nil {
						t.Fatalf("Decode(%v) = %q is valid but Validate says %v", g, d, err)
					}
				}
			}
		})
	}
}

func TestSpacePruning(t *testing.T) {
	m, c, w := llama3_405b(), gpuCluster(1024), Workload{Batch: 1024, SeqLen: 8192}
	sp, err := New(m, c, w, Fix{})
	if err != nil {
		t.Fatal(err)
	}
	g := make([]int, NumGenes)
	var s Strategy
	for l := range sp.Layouts() {
		g[GeneLayout] = l
		sp.Decode(g, &s)
		for _, sh := range s.Mesh[TP] {
			if sh.Axis == "node" {
				t.Fatalf("layout %q puts tp across nodes", s)
			}
		}
	}
	s16, _ := Parse("tp=16,pp=8,dp=8")
	if _, ok := sp.Encode(s16); ok {
		t.Errorf("Encode(%q) succeeded, want tp=16 pruned", s16)
	}
	// Multislice: FSDP and CP stay off the data-centre network.
	ms := torus2x2x4()
	ms.Axes[2] = profiles.Axis{Name: "slice", Size: 4, Tier: profiles.DCN, BandwidthBytesPerS: 6e9}
	msp, err := New(smallModel(), ms, Workload{Batch: 16, SeqLen: 64}, Fix{})
	if err != nil {
		t.Fatal(err)
	}
	for l := range msp.Layouts() {
		g[GeneLayout] = l
		msp.Decode(g, &s)
		for _, d := range []Dim{TP, CP, FSDP} {
			for _, sh := range s.Mesh[d] {
				if sh.Axis == "slice" {
					t.Fatalf("layout %q puts %s over DCN", s, d)
				}
			}
		}
	}
	fixed, err := New(m, c, w, Fix{Set: map[string]string{"tp": "16"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fixed.Encode(s16); !ok {
		t.Errorf("with --fix tp=16, Encode(%q) failed", s16)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		m    model.Spec
		c    profiles.Cluster
		w    Workload
		fix  string
		want string
	}{
		{"fix excludes all", llama3_8b(), gpuCluster(8), Workload{32, 8192}, "tp=3", "that agrees with --fix \"tp=3\""},
		{"bad fix key", llama3_8b(), gpuCluster(8), Workload{32, 8192}, "", "space: fix key \"tpp\" is unknown"},
		{"batch", llama3_8b(), gpuCluster(8), Workload{0, 8192}, "", "batch=0 must be a positive number"},
		{"no layout", tinyModel(), gpuCluster(8), Workload{3, 8191}, "", "no layout of the 8 chips"},
		{"fixed mb", llama3_8b(), gpuCluster(8), Workload{32, 8192}, "mb=3", "the fixed mb=3 does not divide the batch"},
		{"fixed schedule", llama3_8b(), gpuCluster(8), Workload{32, 8192}, "schedule=interleaved,v=1", "no pipeline schedule agrees"},
		{"fixed zero", llama3_8b(), gpuCluster(8), Workload{32, 8192}, "zero=1,tp=8", "the fixed zero=1 needs dp > 1"},
		{"fp8 without a peak", llama3_8b(), gpuCluster(8), Workload{32, 8192}, "precision=fp8", "--fix precision=fp8: the chip has no FP8 matmul speed-up"},
		// 16 chips / (tp 2 · pp 2) = 4 data-parallel chips, which ep=8
		// does not divide with the experts split over tp (etp=2).
		{"ep beyond dp", mixtral(), gpuCluster(16), Workload{32, 4096}, "tp=2,pp=2,ep=8,etp=2",
			"ep=8 does not divide the 4 data-parallel chips (dp*fsdp = 16 chips / tp*cp*pp 4); ep takes tensor-parallel ranks only with whole experts (etp=1) under sp: use ep in 1, 2, 4, or etp=1"},
		// 32 chips / (tp 2 · pp 2 · cp 2) = 4 data-parallel chips x tp 2 = 8,
		// which ep=16 does not divide even with whole experts.
		{"ep beyond dp x tp", mixtral(), gpuCluster(32), Workload{32, 4096}, "tp=2,pp=2,cp=2,ep=16,etp=1",
			"ep=16 does not divide the 8 chips it is carved out of (dp*fsdp 4 x tp 2, with whole experts under sp)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fix Fix
			if tt.name == "bad fix key" {
				fix = Fix{Set: map[string]string{"tpp": "8"}}
			} else if tt.fix != "" {
				var err error
				if fix, err = ParseFix(tt.fix); err != nil {
					t.Fatal(err)
				}
			}
			_, err := New(tt.m, tt.c, tt.w, fix)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestPrecision checks that every strategy of a space has the pinned
// precision, bf16 unless pinned, that Encode tells them apart, and that a
// framework without FP8 refuses it.
func TestPrecision(t *testing.T) {
	for _, tt := range []struct {
		fix, want string
	}{{"", PrecisionBF16}, {"precision=fp8", PrecisionFP8}, {"precision=bf16", PrecisionBF16}} {
		fix, err := ParseFix(tt.fix)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := New(llama3_8b(), fp8Cluster(8), Workload{32, 8192}, fix)
		if err != nil {
			t.Fatal(err)
		}
		genes := make([]int, NumGenes)
		var s Strategy
		n := 0
		for i := int64(0); i < sp.Size(); i++ {
			if !sp.DecodeIndex(i, genes, &s) {
				continue
			}
			n++
			if got := s.Precision; got != tt.want {
				t.Fatalf("fix %q: %s has precision %q, want %q", tt.fix, s, got, tt.want)
			}
			other := s
			other.Precision = PrecisionFP8
			if tt.want == PrecisionFP8 {
				other.Precision = PrecisionBF16
			}
			if _, ok := sp.Encode(other); ok {
				t.Fatalf("fix %q: Encode accepted %s", tt.fix, other)
			}
		}
		if n == 0 {
			t.Fatalf("fix %q: no valid strategy", tt.fix)
		}
	}
	fix, _ := ParseFix("precision=fp8")
	lim := Limits{Framework: "eager", NoFP8: true}
	if _, err := NewLimited(llama3_8b(), fp8Cluster(8), Workload{32, 8192}, fix, lim); err == nil || !strings.Contains(err.Error(), "eager cannot express precision=fp8") {
		t.Errorf("NewLimited without fp8: %v", err)
	}
	s, _ := Parse("tp=8,precision=fp8")
	if err := lim.Check(s, 32); err == nil {
		t.Error("Limits.Check accepted precision=fp8 without fp8")
	}
	// int8: every strategy of the space pins it; a framework without int8
	// refuses it.
	fix, _ = ParseFix("precision=int8")
	sp, err := New(llama3_8b(), int8Cluster(8), Workload{32, 8192}, fix)
	if err != nil {
		t.Fatal(err)
	}
	var st Strategy
	if !sp.DecodeIndex(0, make([]int, NumGenes), &st) || !st.Int8() || !st.EightBit() || st.FP8() {
		t.Errorf("precision=int8 space decodes %s", st)
	}
	no8 := Limits{Framework: "megatron", NoInt8: true}
	if _, err := NewLimited(llama3_8b(), int8Cluster(8), Workload{32, 8192}, fix, no8); err == nil || !strings.Contains(err.Error(), "megatron cannot express precision=int8") {
		t.Errorf("NewLimited without int8: %v", err)
	}
}

// TestEightBitFix: precision=fp8 becomes int8 only on a chip with an int8
// peak and no fp8 one, under a framework with int8 matmuls.
func TestEightBitFix(t *testing.T) {
	v6e := profiles.Chip{Name: "v6e", PeakBF16FLOPs: 918e12, PeakInt8OPs: 1836e12}
	h100 := profiles.Chip{Name: "h100", PeakBF16FLOPs: 989e12, PeakFP8FLOPs: 1979e12}
	v4 := profiles.Chip{Name: "v4", PeakBF16FLOPs: 275e12}
	tests := []struct {
		name, fix string
		chip      profiles.Chip
		lim       Limits
		want      string // the fixed precision
		note      string
	}{
		{"v6e fp8", "tp=1,precision=fp8", v6e, Limits{}, "int8", "v6e has no FP8: 8-bit matmuls planned as int8 (AQT)"},
		{"h100 fp8", "precision=fp8", h100, Limits{}, "fp8", ""},
		{"v4 fp8", "precision=fp8", v4, Limits{}, "fp8", ""},
		{"v6e bf16", "precision=bf16", v6e, Limits{}, "bf16", ""},
		{"v6e no precision", "tp=1", v6e, Limits{}, "", ""},
		{"framework without int8", "precision=fp8", v6e, Limits{NoInt8: true}, "fp8", ""},
	}
	for _, tt := range tests {
		f, _ := ParseFix(tt.fix)
		before := f.String()
		g, note := tt.lim.EightBitFix(f, tt.chip)
		if g.Set["precision"] != tt.want || note != tt.note {
			t.Errorf("%s: precision %q, note %q; want %q, %q", tt.name, g.Set["precision"], note, tt.want, tt.note)
		}
		if f.String() != before {
			t.Errorf("%s: EightBitFix changed its argument to %s", tt.name, f)
		}
	}
}

func TestDecodeBadGenes(t *testing.T) {
	sp, err := New(llama3_8b(), gpuCluster(8), Workload{32, 8192}, Fix{})
	if err != nil {
		t.Fatal(err)
	}
	var s Strategy
	for _, g := range [][]int{nil, {0}, {0, 0, 0, 0, 0, 0}, {-1, 0, 0, 0, 0}, {sp.Layouts(), 0, 0, 0, 0}} {
		if sp.Decode(g, &s) {
			t.Errorf("Decode(%v) = true, want false", g)
		}
	}
	if sp.DecodeIndex(sp.Size(), make([]int, NumGenes), &s) || sp.DecodeIndex(-1, make([]int, NumGenes), &s) {
		t.Error("DecodeIndex out of range = true, want false")
	}
}

// TestDecodeInnerMatchesDecode checks DecodeInner against Decode: on a
// strategy decoded from a gene vector of the same layout, valid or not, it
// gives the strategy and validity Decode gives, for every gene vector of
// sampled layouts in a shuffled order, and it refuses genes out of range,
// leaving the strategy as it was.
func TestDecodeInnerMatchesDecode(t *testing.T) {
	for _, m := range []model.Spec{smallModel(), smallMoE()} {
		sp, err := New(m, torus2x2x4(), Workload{Batch: 16, SeqLen: 1024}, Fix{})
		if err != nil {
			t.Fatal(err)
		}
		cards := sp.Cardinalities()
		per := int64(sp.Size() / int64(cards[GeneLayout]))
		rng := rand.New(rand.NewPCG(3, 4))
		checked, valid := 0, 0
		for l := 0; l < cards[GeneLayout]; l += 1 + l%7 {
			order := rng.Perm(int(per))
			var got Strategy
			genes := make([]int, NumGenes)
			sp.DecodeIndex(int64(l)*per+int64(order[0]), genes, &got)
			for _, k := range order[1:] {
				var want Strategy
				wantOK := sp.DecodeIndex(int64(l)*per+int64(k), genes, &want)
				if ok := sp.DecodeInner(genes, &got); ok != wantOK || !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: DecodeInner(%v) = %v, %v; Decode gives %v, %v", m.Name, genes, got.String(), ok, want.String(), wantOK)
				}
				checked++
				if wantOK {
					valid++
				}
			}
			before := got
			bad := append([]int(nil), genes...)
			bad[GeneMB] = cards[GeneMB]
			if sp.DecodeInner(bad, &got) || sp.DecodeInner(genes[:2], &got) || !reflect.DeepEqual(got, before) {
				t.Fatalf("%s: DecodeInner of genes out of range: true or the strategy changed", m.Name)
			}
		}
		if valid == 0 || valid == checked {
			t.Fatalf("%s: %d of %d gene vectors valid: the test needs both", m.Name, valid, checked)
		}
	}
}

func FuzzDecode(f *testing.F) {
	m, c, w := mixtral(), gpuCluster(64), Workload{Batch: 256, SeqLen: 4096}
	sp, err := New(m, c, w, Fix{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(0, 0, 0, 0, 0)
	f.Add(100, 3, 2, 1, 1)
	f.Fuzz(func(t *testing.T, l, mb, sc, rc, z int) {
		genes := []int{l, mb, sc, rc, z}
		var s Strategy
		ok := sp.Decode(genes, &s)
		inRange := true
		for i, g := range genes {
			inRange = inRange && g >= 0 && g < sp.Cardinalities()[i]
		}
		if !inRange {
			if ok {
				t.Fatalf("Decode(%v) out of range = true", genes)
			}
			return
		}
		back, eok := sp.Encode(s)
		if !eok || !slices.Equal(back, genes) {
			t.Fatalf("Encode(Decode(%v) = %q) = %v, %v", genes, s, back, eok)
		}
		if ok {
			if err := s.Validate(m, c, w); err != nil {
				t.Fatalf("Decode(%v) = %q valid but Validate: %v", genes, s, err)
			}
			p, err := Parse(s.String())
			if err != nil {
				t.Fatalf("Parse(%q): %v", s, err)
			}
			if again, ok := sp.Encode(p); !ok || !slices.Equal(again, genes) {
				t.Fatalf("Encode(Parse(%q)) = %v, %v; want %v", s, again, ok, genes)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	sp, err := New(llama3_405b(), gpuCluster(16384), Workload{Batch: 2048, SeqLen: 8192}, Fix{})
	if err != nil {
		b.Fatal(err)
	}
	genes := make([]int, NumGenes)
	var s Strategy
	i, n := int64(0), sp.Size()
	b.ReportAllocs()
	for b.Loop() {
		sp.DecodeIndex(i, genes, &s)
		i += 7919
		if i >= n {
			i -= n
		}
	}
}

// TestSkip checks that every gene vector Skip jumps over is invalid, on
// dense and MoE spaces.
func TestSkip(t *testing.T) {
	dualpipe, err := ParseFix("schedule=dualpipe")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m   model.Spec
		w   Workload
		fix Fix
	}{{smallModel(), Workload{Batch: 16, SeqLen: 64}, Fix{}}, {smallMoE(), Workload{Batch: 8, SeqLen: 64}, Fix{}},
		{smallModel(), Workload{Batch: 16, SeqLen: 64}, dualpipe}} {
		sp, err := New(tc.m, torus2x2x4(), tc.w, tc.fix)
		if err != nil {
			t.Fatal(err)
		}
		genes := make([]int, NumGenes)
		var s Strategy
		skipped := int64(0)
		for i := int64(0); i < sp.Size(); i++ {
			sp.DecodeIndex(i, genes, &s)
			n := sp.Skip(genes)
			if n < 0 || i+n > sp.Size() {
				t.Fatalf("Skip(%v) = %d beyond the space of %d", genes, n, sp.Size())
			}
			for j := i; j < i+n; j++ {
				if sp.DecodeIndex(j, genes, &s) {
					t.Fatalf("Skip at %d jumps %d over the valid vector %d (%s)", i, n, j, s)
				}
			}
			skipped += n
		}
		if skipped == 0 {
			t.Errorf("%s: Skip never skipped", tc.m.Name)
		}
	}
}

// TestRecomputeBeyondDefaults checks that a policy the search does not try
// on its own (DeepSeek's, MaxText's minimal) can be fixed and checked under
// a framework that lists no policies, and is refused by one that lists
// others.
func TestRecomputeBeyondDefaults(t *testing.T) {
	for _, pol := range []string{model.RecomputeDeepSeek, model.RecomputeMinimal} {
		fix, err := ParseFix("recompute=" + pol)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := NewLimited(llama3_8b(), fp8Cluster(8), Workload{32, 8192}, fix, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", pol, err)
		}
		genes := make([]int, NumGenes)
		var s Strategy
		n := 0
		for i := int64(0); i < sp.Size(); i++ {
			if !sp.DecodeIndex(i, genes, &s) {
				continue
			}
			n++
			if s.Recompute != pol {
				t.Fatalf("%s: decoded %s", pol, s)
			}
		}
		if n == 0 {
			t.Fatalf("%s: no strategy", pol)
		}
		if err := (Limits{}).Check(s, 32); err != nil {
			t.Errorf("%s: Limits{}.Check: %v", pol, err)
		}
		lim := Limits{Framework: "eager", Recomputes: []string{RecomputeNone, RecomputeFull}}
		if err := lim.Check(s, 32); err == nil || !strings.Contains(err.Error(), "eager cannot express recompute="+pol) {
			t.Errorf("%s: eager Check: %v", pol, err)
		}
		if _, err := NewLimited(llama3_8b(), fp8Cluster(8), Workload{32, 8192}, fix, lim); err == nil {
			t.Errorf("%s: eager NewLimited accepted it", pol)
		}
	}
}

// TestSpaceSchedulesAsked checks which schedules the search lists: the
// classic ones unasked, the zero-bubble and DualPipe ones when the
// framework runs them or a fix names them.
func TestSpaceSchedulesAsked(t *testing.T) {
	names := func(sp *Space) []Schedule {
		var out []Schedule
		for _, sc := range sp.schedules {
			if !slices.Contains(out, sc.name) {
				out = append(out, sc.name)
			}
		}
		return out
	}
	m, c, w := llama3_8b(), gpuCluster(16), Workload{Batch: 64, SeqLen: 8192}
	sp, err := New(m, c, w, Fix{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(sp), []Schedule{OneFOneB, GPipe, Interleaved}; !slices.Equal(got, want) {
		t.Errorf("unasked: %v, want %v", got, want)
	}
	lim := Limits{Framework: "titan", Schedules: []Schedule{OneFOneB, GPipe, Interleaved, ZBV, DualPipeV}}
	if sp, err = NewLimited(m, c, w, Fix{}, lim); err != nil {
		t.Fatal(err)
	}
	if got, want := names(sp), []Schedule{OneFOneB, GPipe, ZBV, DualPipeV, Interleaved}; !slices.Equal(got, want) {
		t.Errorf("under %v: %v, want %v", lim.Schedules, got, want)
	}
	fix, err := ParseFix("schedule=dualpipe")
	if err != nil {
		t.Fatal(err)
	}
	if sp, err = New(m, c, w, fix); err != nil {
		t.Fatal(err)
	}
	if got, want := names(sp), []Schedule{DualPipe}; !slices.Equal(got, want) {
		t.Errorf("fixed: %v, want %v", got, want)
	}
	// Only layouts with an even pp of at least 2 and 2·pp micro-batches.
	g := make([]int, NumGenes)
	var s Strategy
	n := 0
	for i := range sp.Size() {
		if sp.DecodeIndex(i, g, &s) {
			n++
			if pp := s.Degree[PP]; pp < 2 || pp%2 != 0 || s.NumMicrobatches(w) < 2*pp {
				t.Fatalf("the space lists %s", s)
			}
		}
	}
	if n == 0 {
		t.Error("no dualpipe strategy listed")
	}
	fix, _ = ParseFix("schedule=zb-h1,pp=1")
	if _, err := New(m, c, w, fix); err == nil || !strings.Contains(err.Error(), "schedule=zb-h1 needs pp > 1") {
		t.Errorf("fix schedule=zb-h1,pp=1: %v, want the schedule's need of a pipeline", err)
	}
}

// TestWholeExperts checks --fix etp=1: every strategy with tp > 1 keeps
// whole experts, Encode refuses one that splits them, and a dense model's
// space is the same with the fix as without.
func TestWholeExperts(t *testing.T) {
	fix, err := ParseFix("etp=1")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := New(mixtral(), gpuCluster(16), Workload{Batch: 32, SeqLen: 4096}, fix)
	if err != nil {
		t.Fatal(err)
	}
	genes := make([]int, NumGenes)
	var s Strategy
	whole := 0
	for i := range sp.Size() {
		if !sp.DecodeIndex(i, genes, &s) {
			continue
		}
		if s.Degree[TP] > 1 {
			if !s.ExpertsWhole() {
				t.Fatalf("%s: etp %d", s, s.ETP)
			}
			whole++
			split := s
			split.ETP = s.Degree[TP]
			if _, ok := sp.Encode(split); ok {
				t.Fatalf("Encode accepted %s under etp=1", split)
			}
		} else if s.ETP != 0 {
			t.Fatalf("%s: etp %d without tp", s, s.ETP)
		}
	}
	if whole == 0 {
		t.Fatal("no strategy with tp > 1")
	}
	dense, err := New(llama3_8b(), gpuCluster(8), Workload{Batch: 32, SeqLen: 8192}, fix)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := New(llama3_8b(), gpuCluster(8), Workload{Batch: 32, SeqLen: 8192}, Fix{})
	if dense.Size() != plain.Size() || dense.Layouts() != plain.Layouts() {
		t.Errorf("dense model with etp=1: %d layouts, %d without", dense.Layouts(), plain.Layouts())
	}
}

// TestSortedLayouts checks sortedLayouts against its definition: the
// expert-tensor parallel choices listed (split, then whole, for tp > 1),
// then a stable sort by the degrees in fill order, on layouts enough to
// fill several chunks of a layoutList.
func TestSortedLayouts(t *testing.T) {
	moe := &model.MoE{Experts: 8, TopK: 2}
	for _, tc := range []struct {
		name string
		moe  *model.MoE
		etp  string // pinned etp, "" for none
	}{
		{"dense", nil, ""},
		{"moe", moe, ""},
		{"moe etp=1", moe, "1"},
		{"moe etp=tp", moe, "4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Fix{Set: map[string]string{}}
			if tc.etp != "" {
				f.Set["etp"] = tc.etp
			}
			fp, err := f.pins()
			if err != nil {
				t.Fatal(err)
			}
			m := &model.Spec{MoE: tc.moe}
			var ll layoutList
			var found []layout
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range 3*layoutChunk + 17 {
				var l layout
				for d := range l.deg {
					l.deg[d] = 1 << rng.IntN(3)
				}
				l.perReplica = i // tells equal degrees apart
				ll.add(l)
				found = append(found, l)
			}
			split, whole := true, tc.moe != nil
			if tc.moe != nil && tc.etp != "" {
				split, whole = tc.etp != "1", tc.etp == "1"
			}
			var want []layout
			for _, l := range found {
				if l.deg[TP] == 1 || split {
					want = append(want, l)
				}
				if l.deg[TP] > 1 && whole {
					l.whole = true
					want = append(want, l)
				}
			}
			order := fillOrder()
			slices.SortStableFunc(want, func(a, b layout) int {
				for _, d := range order {
					if c := cmp.Compare(a.deg[d], b.deg[d]); c != 0 {
						return c
					}
				}
				return 0
			})
			got := sortedLayouts(&ll, m, &fp)
			if len(got) != len(want) || cap(got) != len(want) {
				t.Fatalf("%d layouts (capacity %d), want %d", len(got), cap(got), len(want))
			}
			for i := range want {
				if got[i].deg != want[i].deg || got[i].perReplica != want[i].perReplica || got[i].whole != want[i].whole {
					t.Fatalf("layout %d is %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}

// BenchmarkNew builds the space of a large mixture of experts on a large
// torus: Mixtral 8x22B on v5p-4096 (2,048 chips), 1,377,363 layouts and
// 867,738,690 gene vectors, the part of plan's wall time before the search.
//
//	go test ./space -run '^$' -bench '^BenchmarkNew$' -benchmem
func BenchmarkNew(b *testing.B) {
	m, err := model.Load("mixtral-8x22b")
	if err != nil {
		b.Fatal(err)
	}
	c, err := profiles.Parse("v5p-4096")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(m, c, Workload{Batch: 512, SeqLen: 8192}, Fix{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEncodeConcurrent checks that Encode, which builds the space's index
// of layout keys on its first call, is safe for concurrent use as the
// Space promises: goroutines encoding every layout's first strategy at
// once on a fresh space each get its gene vector back (run with -race to
// see the index built once).
func TestEncodeConcurrent(t *testing.T) {
	sp, err := New(smallModel(), torus2x2x4(), Workload{Batch: 16, SeqLen: 1024}, Fix{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for range 4 {
		wg.Go(func() {
			genes := make([]int, NumGenes)
			var s Strategy
			for l := range sp.Layouts() {
				genes[GeneLayout] = l
				sp.Decode(genes, &s)
				if back, ok := sp.Encode(s); !ok || !slices.Equal(back, genes) {
					errs <- fmt.Sprintf("Encode(%q) = %v, %v; want %v", s, back, ok, genes)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestLayoutsIndependentOfProcs checks that New lists the same layouts in
// the same order however many goroutines walk the first axis's branches
// (enumerateLayouts joins their lists in that axis's order), on a dense
// and a mixture-of-experts model: with one, and with more than the
// branches' count, so that they finish out of order.
func TestLayoutsIndependentOfProcs(t *testing.T) {
	for _, m := range []model.Spec{smallModel(), smallMoE()} {
		var spaces [2]*Space
		for i, procs := range []int{1, 16} {
			prev := runtime.GOMAXPROCS(procs)
			sp, err := New(m, torus2x2x4(), Workload{Batch: 16, SeqLen: 1024}, Fix{})
			runtime.GOMAXPROCS(prev)
			if err != nil {
				t.Fatal(err)
			}
			spaces[i] = sp
		}
		a, b := spaces[0].layouts, spaces[1].layouts
		if len(a) < 100 || len(a) != len(b) {
			t.Fatalf("%s: %d layouts with one goroutine, %d with 16", m.Name, len(a), len(b))
		}
		for i := range a {
			ma, mb := meshOf(spaces[0].shares, &a[i]), meshOf(spaces[1].shares, &b[i])
			la, lb := a[i], b[i]
			la.meshOff, lb.meshOff = [NumDims]uint32{}, [NumDims]uint32{}
			if la != lb || !reflect.DeepEqual(ma, mb) {
				t.Fatalf("%s: layout %d is %+v %v with one goroutine, %+v %v with 16", m.Name, i, la, ma, lb, mb)
			}
		}
	}
}

// TestNewRefusesAbsurdClusters checks that New names a cluster of more
// chips than any real one (profiles.MaxChips), whose degrees a layout could
// not hold, instead of enumerating it.
func TestNewRefusesAbsurdClusters(t *testing.T) {
	huge := profiles.Cluster{Name: "huge", Axes: []profiles.Axis{
		{Name: "gpu", Size: 8, Tier: profiles.NVLink},
		{Name: "node", Size: 1 << 40, Tier: profiles.InfiniBand},
		{Name: "pod", Size: 1 << 40, Tier: profiles.InfiniBand},
	}}
	_, err := New(smallModel(), huge, Workload{Batch: 16, SeqLen: 1024}, Fix{})
	if err == nil || !strings.Contains(err.Error(), "cluster huge has more than 1000000 chips") {
		t.Fatalf("New on %d-axis cluster of 2^83 chips: %v", len(huge.Axes), err)
	}
	real := profiles.Cluster{Name: "real", Axes: []profiles.Axis{{Name: "gpu", Size: 8}, {Name: "node", Size: profiles.MaxChips / 8}}}
	m := smallModel()
	if err := checkInputs(&m, &real, Workload{Batch: 16, SeqLen: 1024}); err != nil {
		t.Fatalf("checkInputs on %d chips: %v", real.Chips(), err)
	}
}

// TestSpaceSplits: with pp pinned to 8, the 126 layers of Llama 3.1 405B
// come with the default split and the two Splits offers (16/14, 14/16),
// every decoded strategy valid; a pinned split that does not add up is
// New's error, in one sentence naming it.
func TestSpaceSplits(t *testing.T) {
	m, c, w := llama3_405b(), gpuCluster(1024), Workload{1536, 8192}
	fix, err := ParseFix("tp=8,pp=8,schedule=interleaved,v=8,mb=1,recompute=full,zero=1")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := New(m, c, w, fix)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Split]bool{}
	genes := make([]int, NumGenes)
	for i := range sp.Size() {
		var s Strategy
		if !sp.DecodeIndex(i, genes, &s) {
			continue
		}
		if err := s.Validate(m, c, w); err != nil {
			t.Fatalf("%s decodes but: %v", s, err)
		}
		if back, ok := sp.Encode(s); !ok || !slices.Equal(back, genes) {
			t.Errorf("Encode(%s) = %v, %t; want %v", s, back, ok, genes)
		}
		seen[s.Split] = true
	}
	for _, want := range []Split{{}, {First: 16, Last: 14}, {First: 14, Last: 16}} {
		if !seen[want] {
			t.Errorf("split %q never decoded (saw %v)", want, seen)
		}
	}
	if len(seen) != 3 {
		t.Errorf("splits decoded %v, want 3", seen)
	}
	bad, _ := ParseFix("tp=8,pp=8,first=14,last=14")
	_, err = New(m, c, w, bad)
	if want := `space: first=14,last=14 with pp=8 leaves 98 of the 126 layers for the other 6 stages, which do not share them evenly: make 126 minus first and last a multiple of 6 (e.g. first=15,last=15) (in --fix "tp=8,pp=8,first=14,last=14")`; err == nil || err.Error() != want {
		t.Errorf("New with --fix first=14,last=14: %v, want %s", err, want)
	}
}

// TestWeightsOverCP checks that a framework whose weight sharding spans cp
// (torchtitan's dp_shard x cp, MaxText's embed rule) searches cp for a
// dense model, whose weights the layer program shards over fsdp x cp, and
// keeps a mixture of experts at cp = 1, refusing a fixed cp naming why.
func TestWeightsOverCP(t *testing.T) {
	lim := Limits{Framework: "torchtitan", WeightsOverCP: true}
	count := func(m model.Spec) (all, withCP int) {
		t.Helper()
		sp, err := NewLimited(m, fp8Cluster(8), Workload{32, 8192}, Fix{}, lim)
		if err != nil {
			t.Fatal(err)
		}
		genes := make([]int, NumGenes)
		var s Strategy
		for i := int64(0); i < sp.Size(); i++ {
			if !sp.DecodeIndex(i, genes, &s) {
				continue
			}
			all++
			if s.Degree[CP] > 1 {
				withCP++
			}
		}
		return all, withCP
	}
	if all, withCP := count(llama3_8b()); all == 0 || withCP == 0 {
		t.Errorf("dense: %d strategies, %d with cp > 1; want some of each", all, withCP)
	}
	if all, withCP := count(mixtral()); all == 0 || withCP != 0 {
		t.Errorf("moe: %d strategies, %d with cp > 1; want cp = 1 only", all, withCP)
	}
	fix, err := ParseFix("cp=2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewLimited(mixtral(), fp8Cluster(8), Workload{32, 8192}, fix, lim); err == nil || !strings.Contains(err.Error(), "fsdp x cp") {
		t.Errorf("moe --fix cp=2: %v, want a refusal naming fsdp x cp", err)
	}
	if _, err := NewLimited(llama3_8b(), fp8Cluster(8), Workload{32, 8192}, fix, lim); err != nil {
		t.Errorf("dense --fix cp=2: %v", err)
	}
}

// TestStageMicrobatches checks that a framework whose pipeline needs its
// micro-batches to divide over its stages (MaxText) lists no strategy
// with pp > 1 whose micro-batch count pp does not divide, and still lists
// pipelines.
func TestStageMicrobatches(t *testing.T) {
	sp, err := NewLimited(llama3_8b(), gpuCluster(16), Workload{Batch: 24, SeqLen: 4096}, Fix{}, Limits{StageMicrobatches: true})
	if err != nil {
		t.Fatal(err)
	}
	genes := make([]int, NumGenes)
	var s Strategy
	pipelines := 0
	for i := int64(0); i < sp.Size(); i++ {
		if !sp.DecodeIndex(i, genes, &s) || s.Degree[PP] == 1 {
			continue
		}
		pipelines++
		if nmb := 24 / s.Replicas() / s.MB; nmb%s.Degree[PP] != 0 {
			t.Fatalf("decoded %s: %d micro-batches over pp=%d", s, nmb, s.Degree[PP])
		}
	}
	if pipelines == 0 {
		t.Fatal("no pipelined strategy")
	}
	if n := sp.CountValid(); n < int64(pipelines) {
		t.Errorf("CountValid() = %d, fewer than the %d pipelines decoded", n, pipelines)
	}
}
