package cost

import (
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// tiny is a 4-layer GELU model with MHA, sized so every number is easy.
func tiny() model.Spec {
	m := model.Spec{Name: "tiny", Layers: 4, Hidden: 1024, Heads: 8, Vocab: 32000, SeqLen: 1024, FFN: model.GELU}
	m.Normalize()
	return m
}

func node8() profiles.Cluster { return gpuCluster("h100-8", chipH100, 8, 450e9, 50e9) }

// calls sums the per-step calls and reports the bytes of the collectives
// whose Op is op and whose Why starts with why.
func calls(est Estimate, op, why string) (n int, bytes float64) {
	for _, c := range est.Collectives {
		if c.Op == op && strings.HasPrefix(c.Why, why) {
			n += c.Count
			bytes = c.Bytes
		}
	}
	return n, bytes
}

func kinds(est Estimate) map[string]int {
	k := map[string]int{}
	for _, c := range est.Collectives {
		k[c.Op] += c.Count
	}
	return k
}

// TestDerivedCollectives pins the collectives that fall out of the rules to
// the hand results of docs/formulas.md §3 for each classic strategy (counts per
// step on one chip; L=4 layers, h=1024, s=1024, b=1 per micro-batch, bf16
// activations and weights, fp32 gradient reductions).
func TestDerivedCollectives(t *testing.T) {
	const L, h, s = 4, 1024.0, 1024.0
	act := 2 * s * h  // b·s·h·2 bytes, one sequence
	wqkv := 3 * h * h // MHA fused QKV parameters
	wIn := 4 * h * h  // GELU up projection
	on := func(d space.Dim, st space.Strategy) space.Strategy {
		st.Mesh[d] = share("gpu", 8)
		return strategy(st)
	}
	type want struct {
		op, why string
		n       int
		bytes   float64
	}
	for _, tc := range []struct {
		name  string
		m     model.Spec
		s     space.Strategy
		batch int
		wants []want
		none  []string // ops that must not appear
	}{
		// Pure DP: one AllReduce of every gradient per step, after accumulation
		// (docs/formulas.md §3.1 DDP), even with 4 micro-batches.
		{"dp", tiny(), on(space.DP, space.Strategy{Degree: space.Degrees{space.DP: 8}}), 32, []want{
			{AllReduce, "gradient of Wqkv", L, 4 * wqkv},
			{AllReduce, "gradient of Win", L, 4 * wIn},
		}, []string{AllGather, ReduceScatter, AllToAll}},
		// ZeRO-1: RS gradients + AG parameters once per step ([ZERO §7]).
		{"zero1", tiny(), on(space.DP, space.Strategy{Degree: space.Degrees{space.DP: 8}, Zero: 1}), 32, []want{
			{ReduceScatter, "gradient of Wqkv", L, 4 * wqkv},
			{AllGather, "parameters Wqkv", L, 2 * wqkv},
		}, []string{AllReduce}},
		// ZeRO-2: partitioned gradients cannot accumulate, RS per micro-batch
		// (docs/formulas.md §3.1), AG parameters once per step.
		{"zero2", tiny(), on(space.DP, space.Strategy{Degree: space.Degrees{space.DP: 8}, Zero: 2}), 32, []want{
			{ReduceScatter, "dqkv/dWqkv", L * 4, 4 * wqkv},
			{AllGather, "parameters Wqkv", L, 2 * wqkv},
		}, []string{AllReduce}},
		// FSDP: AG weights forward, AG again backward, RS gradients, per
		// micro-batch ([TORCH-FSDP] FULL_SHARD); 2 micro-batches.
		{"fsdp", tiny(), on(space.FSDP, space.Strategy{Degree: space.Degrees{space.FSDP: 8}}), 16, []want{
			{AllGather, "qkv: gather Wqkv", L * 2, 2 * wqkv},
			{AllGather, "dqkv/dxn: gather Wqkv", L * 2, 2 * wqkv},
			{ReduceScatter, "dqkv/dWqkv", L * 2, 4 * wqkv},
			{AllGather, "ffn_in: gather Win", L * 2, 2 * wIn},
		}, []string{AllReduce}},
		// Megatron TP: 2 AllReduce forward (g after Wo, W_out) and 2 backward
		// (f at the QKV and fc1 inputs) of b·s·h·2 bytes per layer ([SHOE]).
		{"tp", tiny(), on(space.TP, space.Strategy{Degree: space.Degrees{space.TP: 8}}), 1, []want{
			{AllReduce, "out:", L, act},
			{AllReduce, "ffn_out:", L, act},
			{AllReduce, "dqkv/dxn", L, act},
			{AllReduce, "dffn_in/dxn2", L, act},
		}, []string{AllToAll}},
		// TP+SP: the same volume as AG+RS pairs: forward 2 AG + 2 RS, backward
		// 2 AG(dY) + 2 RS(dX) + 2 AG re-gathering the saved inputs ([KORT §4.2.2]).
		{"sp", tiny(), on(space.TP, space.Strategy{Degree: space.Degrees{space.TP: 8}, SP: true}), 1, []want{
			{AllGather, "qkv: gather xn", L, act},
			{ReduceScatter, "out:", L, act},
			{AllGather, "dout/do: gather dy", L, act},
			{ReduceScatter, "dqkv/dxn", L, act},
			{AllGather, "dqkv/dWqkv: gather xn", L, act},
			{AllGather, "ffn_in: gather xn2", L, act},
			{ReduceScatter, "ffn_out:", L, act},
		}, []string{AllToAll}},
		// Full recompute replays the forward TP collectives: 2+2 AR fwd, 2 bwd.
		{"tp full recompute", tiny(), on(space.TP, space.Strategy{Degree: space.Degrees{space.TP: 8}, Recompute: space.RecomputeFull}), 1, []want{
			{AllReduce, "out:", 2 * L, act},
			{AllReduce, "dqkv/dxn", L, act},
		}, nil},
		// CP: K and V are gathered forward and again backward, dK and dV
		// reduce-scattered (docs/formulas.md §3.4); the weight gradients reduce over cp.
		{"cp", tiny(), on(space.CP, space.Strategy{Degree: space.Degrees{space.CP: 8}}), 1, []want{
			{AllGather, "scores: gather k", L, 2 * s * h},
			{AllGather, "attend: gather v", L, 2 * s * h},
			{ReduceScatter, "dscores/dk", L, 2 * s * h},
			{ReduceScatter, "dattend/dv", L, 2 * s * h},
			{AllReduce, "gradient of Wqkv", L, 4 * wqkv},
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			est, err := evaluate(tc.m, node8(), space.Workload{Batch: tc.batch, SeqLen: 1024}, tc.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.wants {
				n, b := calls(est, w.op, w.why)
				if n != w.n || !near(b, w.bytes, 1e-9) {
					t.Errorf("%s %q: got %d calls of %g bytes, want %d of %g", w.op, w.why, n, b, w.n, w.bytes)
				}
			}
			k := kinds(est)
			for _, op := range tc.none {
				if k[op] != 0 {
					t.Errorf("unexpected %d %s calls: %+v", k[op], op, est.Collectives)
				}
			}
		})
	}
}

// TestExpertParallel: 2 AllToAll forward (dispatch, combine) and 2 backward
// per MoE layer per micro-batch (docs/formulas.md §3.5), bytes = tokens·k·h·2.
func TestExpertParallel(t *testing.T) {
	m := tiny()
	m.MoE = &model.MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 1024}
	m.Normalize()
	s := strategy(space.Strategy{Degree: space.Degrees{space.DP: 8, space.EP: 8}})
	s.Mesh[space.DP], s.Mesh[space.EP] = share("gpu", 8), share("gpu", 8)
	est, err := evaluate(m, node8(), space.Workload{Batch: 8, SeqLen: 1024}, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := 8 * 1024 * 2 * 1024 * 2.0 // 8 sequences × s × k × h × 2 bytes
	for _, why := range []string{"dispatch", "combine", "ddispatch", "dcombine"} {
		if n, b := calls(est, AllToAll, why); n != 4 || !near(b, want, 1e-9) {
			t.Errorf("%s: got %d AllToAll of %g bytes, want 4 of %g", why, n, b, want)
		}
	}
	if k := kinds(est); k[AllToAll] != 16 {
		t.Errorf("got %d AllToAll per step, want 16 (4 layers × 4)", k[AllToAll])
	}
}

// TestBubble: 1F1B with K=8 stages and M=32 micro-batches idles 7/32 of the
// ideal compute; interleaved v=2 halves it ([NARA §2.2], docs/formulas.md §8).
// Memory-bound time and sends are made free so only the bubble remains.
func TestBubble(t *testing.T) {
	c := gpuCluster("x", chipH100, 8, 450e9, 50e9)
	c.Chip.HBMBandwidthBytesPerS = 1e30
	c.Axes[0].Tier = profiles.InfiniBand
	c.Axes[0].BandwidthBytesPerS, c.Axes[0].LatencySeconds = 1e30, 0
	m := tiny()
	m.Layers = 16
	for _, tc := range []struct {
		sched space.Schedule
		v     int
		want  float64
	}{{space.OneFOneB, 1, 7.0 / 32}, {space.GPipe, 1, 7.0 / 32}, {space.Interleaved, 2, 7.0 / 64}} {
		s := strategy(space.Strategy{Degree: space.Degrees{space.PP: 8}, Schedule: tc.sched, V: tc.v})
		s.Mesh[space.PP] = share("gpu", 8)
		est, err := evaluate(m, c, space.Workload{Batch: 32, SeqLen: 1024}, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := est.BubbleSeconds / est.ComputeSeconds; !near(got, tc.want, 1e-6) {
			t.Errorf("%s v=%d: bubble/compute = %.5f, want %.5f", tc.sched, tc.v, got, tc.want)
		}
	}
}

// TestStepIdentity checks StepSeconds = Compute + ExposedComm + Bubble and the
// contract's model FLOPs, and that Trace does not change the numbers.
func TestStepIdentity(t *testing.T) {
	m := llama3("8b")
	c := gpuCluster("h100-64", chipH100, 64, 450e9, 50e9)
	s := strategy(space.Strategy{Degree: space.Degrees{space.TP: 8, space.DP: 8}, SP: true, Zero: 1, Recompute: space.RecomputeSelective})
	s.Mesh[space.TP], s.Mesh[space.DP] = share("gpu", 8), share("node", 8)
	w := space.Workload{Batch: 64, SeqLen: 8192}
	a, err := evaluate(m, c, w, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := evaluate(m, c, w, s, Options{Trace: true})
	if !near(a.StepSeconds, a.ComputeSeconds+a.ExposedCommSeconds+a.BubbleSeconds, 1e-12) || a.StepSeconds != b.StepSeconds {
		t.Errorf("step identity broken: %+v", a)
	}
	if want := m.ModelFLOPsPerToken(8192) * 64 * 8192; !near(a.ModelFLOPs, want, 1e-12) {
		t.Errorf("model FLOPs %g, want %g", a.ModelFLOPs, want)
	}
	// Selective recompute adds 4·s·q per layer per token (docs/formulas.md §1.2).
	if want := a.ModelFLOPs + 4*8192*4096*32*64*8192.0; !near(a.HardwareFLOPs, want, 1e-12) {
		t.Errorf("hardware FLOPs %g, want %g", a.HardwareFLOPs, want)
	}
	// The trace runs as a step does: the embedding, the layers, the output.
	if len(b.Ops) == 0 || b.Ops[0].Block != "embedding" || b.Ops[len(b.Ops)-1].Block != "output" {
		t.Fatalf("trace does not run embedding first and output last: %+v", b.Ops)
	}
	var attn []Op
	for _, op := range b.Ops {
		if strings.HasPrefix(op.Block, "attention") {
			attn = append(attn, op)
		}
	}
	if len(attn) < 2 || !strings.Contains(attn[1].Text, "AllGather(tp)") {
		t.Errorf("trace missing the SP gather before the attention's first matmul: %+v", attn)
	}
	// CollectiveMatmul can only hide TP collectives.
	cm, _ := evaluate(m, c, w, s, Options{CollectiveMatmul: true})
	if cm.ExposedCommSeconds >= a.ExposedCommSeconds {
		t.Errorf("collective matmul exposed %g, default %g", cm.ExposedCommSeconds, a.ExposedCommSeconds)
	}
}

// TestSmoke evaluates mixed strategies: every estimate must be finite,
// positive and consistent, with Trace on and off agreeing.
func TestSmoke(t *testing.T) {
	moe := llama3("8b")
	moe.MoE = &model.MoE{Experts: 16, TopK: 2, ExpertFFNHidden: 4096, SharedExperts: 1, FirstDenseLayers: 1, CapacityFactor: 1.25}
	moe.Normalize()
	h64 := gpuCluster("h100-64", chipH100, 64, 450e9, 50e9)
	slices := profiles.Cluster{Name: "2xv5e-256", Chip: chipV5e, Axes: []profiles.Axis{tpuAxis("x", 16, true), tpuAxis("y", 16, true),
		{Name: "slice", Size: 2, Tier: profiles.DCN, BandwidthBytesPerS: 3.125e9, LatencySeconds: 10e-6}}}
	mk := func(s space.Strategy, mesh map[space.Dim][]space.Share) space.Strategy {
		s = strategy(s)
		for d, sh := range mesh {
			s.Mesh[d] = sh
		}
		return s
	}
	for _, tc := range []struct {
		name string
		m    model.Spec
		c    profiles.Cluster
		s    space.Strategy
	}{
		{"moe ep-from-fsdp pp uneven", moe, h64, mk(space.Strategy{Degree: space.Degrees{space.TP: 2, space.FSDP: 4, space.EP: 4, space.PP: 8}, SP: true, Recompute: space.RecomputeFull},
			map[space.Dim][]space.Share{space.TP: share("gpu", 2), space.FSDP: share("gpu", 4), space.EP: share("gpu", 4), space.PP: share("node", 8)})},
		{"cp tp sp dp zero2", llama3("8b"), h64, mk(space.Strategy{Degree: space.Degrees{space.TP: 4, space.CP: 2, space.DP: 8}, SP: true, Zero: 2, Recompute: space.RecomputeSelective},
			map[space.Dim][]space.Share{space.TP: share("gpu", 4), space.CP: share("gpu", 2), space.DP: share("node", 8)})},
		{"multislice fsdp+dp", llama3("8b"), slices, mk(space.Strategy{Degree: space.Degrees{space.FSDP: 256, space.DP: 2}},
			map[space.Dim][]space.Share{space.FSDP: {{Axis: "x", Size: 16}, {Axis: "y", Size: 16}}, space.DP: share("slice", 2)})},
		{"default placement", gpt3(), h64, strategy(space.Strategy{Degree: space.Degrees{space.TP: 8, space.PP: 8}, Schedule: space.Interleaved, V: 2})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := space.Workload{Batch: 1024, SeqLen: 4096}
			a, err := evaluate(tc.m, tc.c, w, tc.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := evaluate(tc.m, tc.c, w, tc.s, Options{Trace: true})
			if err != nil {
				t.Fatal(err)
			}
			if !(a.StepSeconds > 0) || a.StepSeconds != b.StepSeconds || a.ComputeSeconds <= 0 || a.ExposedCommSeconds < 0 || len(b.Ops) == 0 {
				t.Errorf("bad estimate %+v", a)
			}
			for _, c := range a.Collectives {
				if !(c.Seconds >= 0) || c.Count <= 0 || len(c.Axes) == 0 {
					t.Errorf("bad collective %+v", c)
				}
			}
		})
	}
}
