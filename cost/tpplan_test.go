package cost

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestSeqCopySeconds works the copies of a DTensor plan's sequence-parallel
// collectives (Comm.TPPlan, seqCopySeconds) by hand on an H100 (3,350 GB/s
// at an HBM fraction of 0.8): each all-gather or reduce-scatter of an
// activation over tp alone reads and writes its full array once, 2 bytes
// per byte; an all-reduce, a weight gather and a collective over fsdp copy
// nothing. Llama 3 8B's [12, 8192, 4096] bf16 activation is 805,306,368
// bytes: 2·805,306,368/(0.8·3350e9) = 0.601 ms per collective.
func TestSeqCopySeconds(t *testing.T) {
	const act = 12 * 8192 * 4096 * 2
	tp, fsdp := bit(space.RoleTP), bit(space.RoleFSDP)
	e := evaluator{hbm: 3350e9, eff: profiles.Efficiency{HBMFraction: 0.8}}
	for _, tc := range []struct {
		name string
		em   []emission
		want float64
	}{
		{"one all-gather over tp", []emission{{op: opAG, roles: tp, bytes: act, class: classCritical}}, 2 * act / (0.8 * 3350e9)},
		{"all-gather and reduce-scatter", []emission{{op: opAG, roles: tp, bytes: act, class: classCritical},
			{op: opRS, roles: tp, bytes: act, class: classCritical}}, 4 * act / (0.8 * 3350e9)},
		{"all-reduce", []emission{{op: opAR, roles: tp, bytes: act, class: classCritical}}, 0},
		{"weight gather over fsdp and tp", []emission{{op: opAG, roles: tp | fsdp, bytes: act, class: classWeights}}, 0},
		{"weight-class gather over tp", []emission{{op: opAG, roles: tp, bytes: act, class: classWeights}}, 0},
		{"activation all-to-all", []emission{{op: opA2A, roles: tp, bytes: act, class: classCritical}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.seqCopySeconds(tc.em); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("seqCopySeconds = %.6g s, want %.6g s", got, tc.want)
			}
		})
	}
}

// TestTPPlanCollectives checks Comm.TPPlan on Llama 3 8B at tp 8 with
// sequence parallelism inside a node and fsdp 2 over two nodes, one
// 8,192-token sequence per replica: the weights
// keep their tp shard, so no weight is gathered over tp and no activation
// is resharded by an all-to-all; each sequence-parallel collective moves
// the full activation, 8192·4096·2 = 67,108,864 bytes (the qkv input's
// all-gather and the attention output's reduce-scatter in the forward);
// and none of the tp collectives is hidden (Megatron's dX/dW overlap of
// the backward is off). Without the plan the planner gathers the fsdp- and
// tp-sharded qkv weight over both and reshards the qkv output by an
// all-to-all over tp instead (cheaper, but not what the plan runs).
func TestTPPlanCollectives(t *testing.T) {
	m := llama3("8b")
	w := space.Workload{Batch: 2, SeqLen: 8192}
	st := strategy(space.Strategy{SP: true})
	st.Degree[space.TP], st.Degree[space.FSDP] = 8, 2
	st.Mesh[space.TP], st.Mesh[space.FSDP] = share("gpu", 8), share("node", 2)
	cl := gpuCluster("h100-16", chipH100, 16, 450e9, 50e9)
	const act = 8192 * 4096 * 2
	for _, tc := range []struct {
		plan         bool
		a2a          bool // an all-to-all over tp
		hiddenTP     bool // a tp collective overlapped
		qkvGatherOps string
	}{
		{plan: true, a2a: false, hiddenTP: false, qkvGatherOps: "AllGather"},
		{plan: false, a2a: true, hiddenTP: true, qkvGatherOps: "AllToAll"},
	} {
		est, err := evaluate(m, cl, w, st, Options{Comm: Comm{TPPlan: tc.plan}})
		if err != nil {
			t.Fatal(err)
		}
		var a2a, hidden, weightTP bool
		var qkvOp string
		var qkvBytes float64
		for _, c := range est.Collectives {
			if c.Kind == KindWeights && slices.Contains(c.Axes, "gpu") {
				weightTP = true
			}
			if c.Kind != KindActivation {
				continue
			}
			a2a = a2a || c.Op == "AllToAll"
			hidden = hidden || c.Overlapped
			if strings.HasPrefix(c.Why, "qkv:") {
				qkvOp, qkvBytes = c.Op, c.Bytes
			}
		}
		if a2a != tc.a2a || hidden != tc.hiddenTP || qkvOp != tc.qkvGatherOps {
			t.Errorf("TPPlan %v: all-to-all %v, hidden %v, qkv's collective %s; want %v, %v, %s (%+v)",
				tc.plan, a2a, hidden, qkvOp, tc.a2a, tc.hiddenTP, tc.qkvGatherOps, est.Collectives)
		}
		if weightTP != !tc.plan || (tc.plan && qkvBytes != act) {
			t.Errorf("TPPlan %v: a weight gathered over tp %v, qkv's collective %g bytes; want %v and %d", tc.plan, weightTP, qkvBytes, !tc.plan, act)
		}
	}
}

// TestTPPlanWeightGradientGather checks which weight gradients of a
// column-parallel projection gather their sequence-parallel input over tp
// again in the backward pass (Llama 3 8B at tp 8 with sequence parallelism
// inside a node, fsdp 2 over two nodes). Megatron's linear layers save the
// sequence shard and re-gather it for the weight gradient, with or without
// recompute ([MEG-TP]). Under a DTensor plan (Comm.TPPlan, whose program
// keeps gathered inputs: model.ProgramOptions.SavesGathered) autograd saves
// the gathered input: a full checkpoint's recompute re-gathers it
// (evaluator.resetCache), and without recompute the forward pass's gathered
// input is what autograd keeps (Model.spSaved), so the weight gradient
// gathers nothing either way. torchtitan's per-op policy re-makes the
// all-gather (it saves matmul outputs, not collectives), so there the
// backward pass's gather stands for the recompute's.
func TestTPPlanWeightGradientGather(t *testing.T) {
	m := llama3("8b")
	w := space.Workload{Batch: 2, SeqLen: 8192}
	cl := gpuCluster("h100-16", chipH100, 16, 450e9, 50e9)
	for _, tc := range []struct {
		name      string
		plan      bool
		recompute string
		want      int // weight gradients (of qkv and ffn_in) gathering over tp, per layer kind
	}{
		{"DTensor plan, full checkpoint", true, space.RecomputeFull, 0},
		{"DTensor plan, no recompute", true, space.RecomputeNone, 0},
		{"DTensor plan, per-op selective", true, model.RecomputeSelectiveOp, 2},
		{"Megatron, full checkpoint", false, space.RecomputeFull, 2},
		{"Megatron, no recompute", false, space.RecomputeNone, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := strategy(space.Strategy{SP: true, Recompute: tc.recompute})
			st.Degree[space.TP], st.Degree[space.FSDP] = 8, 2
			st.Mesh[space.TP], st.Mesh[space.FSDP] = share("gpu", 8), share("node", 2)
			p := program(m, model.ProgramOptions{SavesGathered: tc.plan})
			est, err := Evaluate(p, cl, w, st, Options{Comm: Comm{TPPlan: tc.plan}})
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for _, c := range est.Collectives {
				if c.Op == "AllGather" && c.Pass == "bwd" && len(c.Axes) == 1 && c.Axes[0] == "gpu" &&
					(strings.HasPrefix(c.Why, "dqkv/dWqkv:") || strings.HasPrefix(c.Why, "dffn_in/dWin:")) {
					got++
				}
			}
			if got != tc.want {
				t.Errorf("%d weight gradients gather their input over tp in the backward pass, want %d", got, tc.want)
			}
		})
	}
}
