package space

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// TestDimTableComplete checks that every row of the dimension table is
// whole: a name, a fill slot of its own, and a divisibility rule that
// passes degree 1 and rejects, on sizes of 4, a degree of 5 of its own
// dimension (5 divides none of them and exceeds the layers).
func TestDimTableComplete(t *testing.T) {
	tab := dimTable()
	var fills DimSet
	orders := map[int]*dimRule{}
	z := sizes{model: "probe", heads: 4, kvHeads: 4, layers: 4, experts: 4, batch: 4, seq: 4, mb: 1}
	for d, spec := range tab {
		dim := Dim(d)
		t.Run(fmt.Sprintf("row %d", d), func(t *testing.T) {
			if spec.name == "" {
				t.Fatalf("dimension %d has no name", d)
			}
			if spec.fill < 0 || spec.fill >= int(NumDims) || fills.Has(Dim(spec.fill)) {
				t.Errorf("%s: fill slot %d is out of range or taken", dim, spec.fill)
			}
			fills |= Dim(spec.fill).Bit()
			if dimByName(spec.name) != dim {
				t.Errorf("%s: dimByName(%q) = %v", dim, spec.name, dimByName(spec.name))
			}
			r := spec.divides
			if r == nil || r.running == nil {
				t.Fatalf("%s has no divisibility rule (dimSpec.divides)", dim)
			}
			if o, ok := orders[r.order]; ok && o != r {
				t.Errorf("%s: rule order %d is another rule's", dim, r.order)
			}
			orders[r.order] = r
			if !slices.Contains(dimRules, r) {
				t.Errorf("%s: its rule is not among dimRules", dim)
			}
			ones := Defaults().Degree
			var msgs []string
			why := func(format string, args ...any) { msgs = append(msgs, fmt.Sprintf(format, args...)) }
			if !r.running(&z, ones, why) || r.whole != nil && !r.whole(&z, ones, true, why) {
				t.Errorf("%s: the rule rejects degree 1: %q", dim, msgs)
			}
			bad := ones
			bad[d] = 5
			msgs = nil
			okRunning := r.running(&z, bad, why)
			okWhole := r.whole == nil || r.whole(&z, bad, true, why)
			if okRunning && okWhole {
				t.Errorf("%s: the rule passes %s=5 on sizes of 4", dim, dim)
			}
			if len(msgs) == 0 {
				t.Errorf("%s: the rule rejects %s=5 without saying why", dim, dim)
			}
			for _, m := range msgs {
				if !strings.Contains(m, dim.String()) && !strings.Contains(m, "dp*fsdp") {
					t.Errorf("%s: the rule's message %q does not name the dimension", dim, m)
				}
			}
			// Silent and allocation-free for the enumeration.
			if n := testing.AllocsPerRun(10, func() { r.running(&z, bad, nil) }); n != 0 {
				t.Errorf("%s: the running rule allocates %v times without a why", dim, n)
			}
		})
	}
}

// TestEnumerationAgreesWithValidate checks, on single-axis clusters (no
// tier pruning, every factorisation placeable), that the degree tuples New
// lists are exactly those Validate accepts: every way of writing the chips
// as dp*fsdp*tp*cp*pp, times every ep dividing them.
func TestEnumerationAgreesWithValidate(t *testing.T) {
	odd := smallModel()
	odd.Name, odd.Heads, odd.KVHeads, odd.Layers = "odd", 6, 3, 3
	moe6 := smallMoE()
	moe6.Name, moe6.MoE = "moe6", &model.MoE{Experts: 6, TopK: 2, ExpertFFNHidden: 512}
	line := func(n int) profiles.Cluster {
		return profiles.Cluster{Name: "line-" + itoa(n), Axes: []profiles.Axis{{Name: "x", Size: n, Tier: profiles.ICI, BandwidthBytesPerS: 45e9}}}
	}
	for _, m := range []model.Spec{smallModel(), odd, smallMoE(), moe6} {
		for _, c := range []profiles.Cluster{line(6), line(8), line(12)} {
			for _, w := range []Workload{{Batch: 16, SeqLen: 64}, {Batch: 12, SeqLen: 60}} {
				name := fmt.Sprintf("%s/%s/%dx%d", m.Name, c.Name, w.Batch, w.SeqLen)
				t.Run(name, func(t *testing.T) { agree(t, m, c, w) })
			}
		}
	}
}

// agree is TestEnumerationAgreesWithValidate for one problem.
func agree(t *testing.T, m model.Spec, c profiles.Cluster, w Workload) {
	listed := map[Degrees]bool{}
	if sp, err := New(m, c, w, Fix{}); err == nil {
		for i := range sp.layouts {
			listed[sp.layouts[i].degrees()] = true
		}
	}
	n := c.Chips()
	own := OwnDims()
	var rec func(k, left int, d Degrees)
	rec = func(k, left int, d Degrees) {
		if k == len(own) {
			if left != 1 {
				return
			}
			for _, ep := range divisors(n) {
				d[EP] = ep
				s := Defaults()
				s.Degree, s.SP = d, d[TP] > 1
				err := s.Validate(m, c, w)
				if (err == nil) != listed[d] {
					t.Errorf("%s: New lists it: %v; Validate says %v", s, listed[d], err)
				}
			}
			return
		}
		for _, f := range divisors(left) {
			d[own[k]] = f
			rec(k+1, left/f, d)
		}
	}
	rec(0, n, Defaults().Degree)
}

// TestRulesRejectAlike checks hand-built degrees that break one rule
// each: Validate says why, and New pinned to those degrees finds no
// layout.
func TestRulesRejectAlike(t *testing.T) {
	gqa := llama3_8b()
	gqa.Name, gqa.Heads, gqa.KVHeads = "gqa", 12, 4
	w8b := Workload{Batch: 32, SeqLen: 8192}
	six := profiles.Cluster{Name: "six", Axes: []profiles.Axis{{Name: "gpu", Size: 6, Tier: profiles.NVLink, BandwidthBytesPerS: 450e9}}}
	for _, tt := range []struct {
		m    model.Spec
		c    profiles.Cluster
		w    Workload
		s    string
		want string
	}{
		{gqa, gpuCluster(8), w8b, "tp=8", "tp=8 does not divide the 12 attention heads of gqa: use tp in 1, 2, 3, 4, 6, 12"},
		{gqa, six, Workload{6, 8190}, "tp=6", "tp=6 and the 4 key/value heads of gqa do not divide one another"},
		{llama3_8b(), gpuCluster(8), w8b, "dp=8,ep=2", "ep=2 needs a mixture-of-experts model, but llama3-8b is dense: use ep=1"},
		{mixtral(), six, Workload{48, 4096}, "dp=6,ep=3", "ep=3 does not divide the 8 experts of mixtral-8x7b: use ep in 1, 2, 4, 8"},
		{llama3_8b(), gpuCluster(8), Workload{12, 8192}, "dp=8", "batch 12 does not split over dp*fsdp = 8 data-parallel replicas"},
		{llama3_8b(), gpuCluster(8), Workload{32, 8190}, "cp=8", "cp=8 does not divide the sequence of 8190 tokens"},
		{llama3_8b(), gpuCluster(8), Workload{32, 8196}, "tp=8", "with sp, tp=8 must divide the 8196 tokens each cp rank holds"},
		{tinyModel(), gpuCluster(8), w8b, "pp=8", "pp=8 exceeds the 4 layers of tiny: use pp <= 4"},
	} {
		t.Run(tt.s+" "+tt.m.Name, func(t *testing.T) {
			s, err := Parse(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			errs := joined(s.Validate(tt.m, tt.c, tt.w))
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.want) {
				t.Errorf("Validate(%q) = %v, want one error containing %q", tt.s, errs, tt.want)
			}
			var pins []string
			for d := range NumDims {
				pins = append(pins, fmt.Sprintf("%s=%d", d, s.Degree[d]))
			}
			pins = append(pins, fmt.Sprintf("sp=%v", s.SP))
			fix, err := ParseFix(strings.Join(pins, ","))
			if err != nil {
				t.Fatal(err)
			}
			if sp, err := New(tt.m, tt.c, tt.w, fix); err == nil {
				t.Errorf("New(--fix %s) lists %d layouts, want none", fix, sp.Layouts())
			}
		})
	}
}
