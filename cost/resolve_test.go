package cost

import (
	"math/bits"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestWeightGradientGathersTheSmallerOperand: under FSDP with sequence-
// parallel tensor parallelism the q, k, v weight gradient dW = xnᵀ·dqkv
// has xn split on the sequence by tp and dqkv on the heads. Gathering xn
// over tp (one sequence's 8192 x 4096 bf16 input, 67 MB) and
// reduce-scattering the product over fsdp alone is the cheap resolution
// ([MEG-TP]: Megatron re-gathers the input for the weight gradient).
// Summing the product over the sequence shards instead leaves it to be
// reduce-scattered whole over fsdp and tp (the 4096 x 6144 fp32 gradient,
// 101 MB, on InfiniBand), which the rules used to price as if fsdp had
// already divided it by 8: a reduction still pending must not count as
// done when pricing another role's.
func TestWeightGradientGathersTheSmallerOperand(t *testing.T) {
	m := llama3("8b")
	c := gpuCluster("h100-64", chipH100, 64, 450e9, 50e9)
	w := space.Workload{Batch: 64, SeqLen: 8192}
	s := strategy(space.Strategy{Degree: space.Degrees{space.TP: 8, space.FSDP: 8}, SP: true})
	s.Mesh[space.TP], s.Mesh[space.FSDP] = share("gpu", 8), share("node", 8)
	e, err := evaluate(m, c, w, s, Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range e.Ops {
		if o.Pass != "bwd" || !strings.Contains(o.Text, "-> dWqkv") {
			continue
		}
		found = true
		if !strings.Contains(o.Text, "AllGather(tp)") || !strings.Contains(o.Text, "ReduceScatter(fsdp)") || strings.Contains(o.Text, "ReduceScatter(fsdp,tp)") {
			t.Errorf("dWqkv resolved as %q; want xn gathered over tp and the product reduce-scattered over fsdp alone", o.Text)
		}
	}
	if !found {
		t.Fatal("no dWqkv op in the trace")
	}
}

// TestChooseRoleMatchesEveryChoice checks planRole's pruning: for every
// role of every einsum outcome of a few evaluations (dense and MoE, TPU
// and GPU), chooseRole on the role's plan, which holds only the legal
// choices no earlier one dominates, picks what trying all four gather
// choices does: each legal one priced in full, the first of the cheapest
// kept (everyChoice). It also counts the plans the pruning shortened, so
// that the check cannot pass by never meeting one.
func TestChooseRoleMatchesEveryChoice(t *testing.T) {
	for _, tt := range []struct {
		model, cluster string
		batch, seq     int
		strategy       string
	}{
		{"llama2-70b", "v5p-256", 256, 4096, "dp=2,fsdp=8,tp=4,cp=2,zero=1,mb=1,recompute=full,mesh=tp:x*4;cp:y*2;fsdp:y*2.z*4;dp:z*2"},
		{"llama3-8b", "h100-64", 64, 8192, "fsdp=8,tp=8,sp=true,mesh=tp:gpu*8;fsdp:node*8"},
		{"mixtral-8x7b", "h100-64", 64, 4096, "dp=32,tp=2,ep=8,zero=2,recompute=selective"},
		{"deepseek-v3", "h800-2048", 2048, 4096, "dp=128,zero=1,pp=16,ep=64,recompute=deepseek,precision=fp8,mesh=ep:gpu*8.node*8;pp:node*16;dp:gpu*8.node*16"},
	} {
		t.Run(tt.model, func(t *testing.T) {
			m, c := presets(t, tt.model, tt.cluster)
			ev := NewModel(program(m, model.ProgramOptions{})).NewEvaluator(c, space.Workload{Batch: tt.batch, SeqLen: tt.seq}, Options{})
			if _, err := ev.Evaluate(parseStrategy(t, tt.strategy)); err != nil {
				t.Fatal(err)
			}
			e := &ev.st.e
			checked, shortened := 0, 0
			for i := range e.memo {
				mo := &e.memo[i]
				if mo.gen != e.gen || mo.x.o == nil {
					continue
				}
				x := &mo.x
				sure := sureRoles(x)
				for set := x.ra | x.rb | x.rc; set != 0; set &= set - 1 {
					r := space.Role(bits.TrailingZeros8(uint8(set)))
					plan := planRole(x, r)
					want, legal := everyChoice(e, x, r, sure)
					if got := e.chooseRole(x, r, sure, &plan); got != want {
						t.Fatalf("op %d, role %v: chooseRole = %010b, every choice tried = %010b", i, r, got, want)
					}
					checked++
					if int(plan.n) < legal {
						shortened++
					}
				}
			}
			if checked < 20 || shortened == 0 {
				t.Fatalf("%d roles checked, %d plans shortened; want at least 20 and one", checked, shortened)
			}
			t.Logf("%d roles checked, %d plans shortened", checked, shortened)
		})
	}
}

// everyChoice is role r's choice in einsum x found by trying all four
// gather choices (leave both operands, gather A, gather B, gather both),
// each legal one priced in full and the first of the cheapest kept (one
// costing less than the best by more than a part in 10⁹ replaces it), as
// the rules of docs/design.md describe; and the number of legal choices.
func everyChoice(e *evaluator, x *einsumCtx, r space.Role, sure roleSet) (roleChoice, int) {
	pc := pos(x.lc, x.tc.Rank, r)
	dc := model.NumDim
	if pc >= 0 {
		dc = x.tc.Dims[pc]
	}
	pa, pb := pos(x.la, x.ta.Rank, r), pos(x.lb, x.tb.Rank, r)
	best, c, legal := inf, choiceKnown, 0
	for g := 0; g < 4; g++ {
		doA, doB := g&1 != 0, g&2 != 0
		if doA && (pa < 0 || x.ta.NoComm) || doB && (pb < 0 || x.tb.NoComm) {
			continue
		}
		out, splits, ok := landing(x, kept(pa, doA), kept(pb, doB), dc)
		if !ok {
			continue
		}
		op := moveOp(x, r, out, pc, dc)
		if op != opNone && x.tc.NoComm {
			continue
		}
		legal++
		cost := 0.0
		if doA {
			cost += x.shareA * e.mr.seconds(opAG, x.scaled(e.bytes(x.o.A, x.ra&^bit(r)), bit(r)), bit(r))
		}
		if doB {
			cost += x.shareB * e.mr.seconds(opAG, x.scaled(e.bytes(x.o.B, x.rb&^bit(r)), bit(r)), bit(r))
		}
		if op != opNone {
			cost += e.mr.seconds(op, x.scaled(e.bytes(x.o.C, x.rc&^bit(r)&^(sure&^bit(r))), bit(r)), bit(r))
		}
		if cost < best*(1-1e-9) {
			best, c = cost, choiceOf(x, r, g, out, splits, pc, dc)
		}
	}
	return c, legal
}

// TestResolutionLanes checks resolution's word operations against their
// definition lane by lane: add sets role r in lane j exactly when the
// choice has bit j+1 (the choices in lane order), keep and merge act on
// every lane alike, and the accessors read their own lanes.
func TestResolutionLanes(t *testing.T) {
	choices := [...]roleChoice{choiceGA, choiceGB, choiceSplit, choiceAR, choiceRS, choiceAGC, choiceA2A, choicePartial}
	for r := space.Role(0); r < space.NumRoles; r++ {
		for c := roleChoice(0); c < 1<<9; c++ {
			var res resolution
			res.add(r, c|choiceKnown)
			for l, ch := range choices {
				want := roleSet(0)
				if c&ch != 0 {
					want = bit(r)
				}
				if got := res.lane(l); got != want {
					t.Fatalf("add(%v, %09b): lane %d = %08b; want %08b", r, c, l, got, want)
				}
			}
		}
	}
	var res resolution
	res.add(space.RoleTP, choiceGA|choicePartial)
	res.add(space.RoleDP, choiceAR)
	res.add(space.RoleCP, choiceA2A|choiceSplit)
	tp, dp, cp := bit(space.RoleTP), bit(space.RoleDP), bit(space.RoleCP)
	for _, tc := range []struct {
		name string
		got  roleSet
		want roleSet
	}{
		{"gA", res.gA(), tp}, {"gB", res.gB(), 0}, {"split", res.split(), cp}, {"ar", res.ar(), dp},
		{"rs", res.rs(), 0}, {"agC", res.agC(), 0}, {"a2a", res.a2a(), cp}, {"partial", res.partial(), tp},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %08b; want %08b", tc.name, tc.got, tc.want)
		}
	}
	kept := res
	kept.keep(tp | cp)
	if kept.ar() != 0 || kept.gA() != tp || kept.a2a() != cp {
		t.Errorf("keep(tp|cp) = %016x: dp should go, tp and cp stay", uint64(kept))
	}
	var merged resolution
	merged.merge(&res, dp)
	if merged != resolution(uint64(dp)<<(8*laneAR)) {
		t.Errorf("merge of dp alone = %016x; want dp in lane ar only", uint64(merged))
	}
}
