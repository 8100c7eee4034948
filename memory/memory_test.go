package memory

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

const gib = 1 << 30

// within reports whether got is within rel (a fraction) of want.
func within(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// gptSpec is a Korthikanti/Megatron GPT model: MHA, F = 4h, GELU, LayerNorm,
// biases, vocab 51,200, seq 2048 (docs/published-runs.md §3.2, Table 3).
func gptSpec(layers, hidden, heads int) model.Spec {
	m := model.Spec{
		Name: "gpt", Layers: layers, Hidden: hidden, Heads: heads,
		FFN: model.GELU, Vocab: 51200, SeqLen: 2048, TiedEmbeddings: true,
		Norm: model.LayerNorm, Bias: true,
	}
	m.Normalize()
	return m
}

// llama70B is Llama-3-70B: GQA 64/8, SwiGLU 28672, RMSNorm, untied, V = 128256.
func llama70B() model.Spec {
	return model.Spec{
		Name: "llama3-70b", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128,
		FFNHidden: 28672, FFN: model.SwiGLU, Vocab: 128256, SeqLen: 8192, Norm: model.RMSNorm,
	}
}

// mixtral is a Mixtral-8x7B-like MoE: 32 layers, h 4096, GQA 32/8, 8 experts, top-2.
func mixtral() model.Spec {
	return model.Spec{
		Name: "mixtral", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		FFNHidden: 14336, FFN: model.SwiGLU, Vocab: 32000, SeqLen: 4096, Norm: model.RMSNorm,
		MoE: &model.MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 14336, CapacityFactor: 1, SharedFFNHidden: 14336},
	}
}

// h100 is n H100s: up to 8 per NVLink node, then nodes.
func h100(n int) profiles.Cluster {
	axes := []profiles.Axis{{Name: "gpu", Size: min(n, 8), Tier: profiles.NVLink}}
	if n > 8 {
		axes = append(axes, profiles.Axis{Name: "node", Size: n / 8, Tier: profiles.InfiniBand})
	}
	return profiles.Cluster{Name: "h100", Chip: profiles.Chip{Name: "h100", HBMBytes: 80e9}, Axes: axes}
}

// strat fills the defaults of the contract's strategy string.
func strat(s space.Strategy) space.Strategy {
	for d := range s.Degree {
		if s.Degree[d] == 0 {
			s.Degree[d] = 1
		}
	}
	for _, p := range []*int{&s.MB, &s.V} {
		if *p == 0 {
			*p = 1
		}
	}
	if s.Schedule == "" {
		s.Schedule = space.OneFOneB
	}
	if s.Recompute == "" {
		s.Recompute = space.RecomputeNone
	}
	return s
}

// estimateBoth places s (with strat's defaults) on c and estimates it with
// mm and with its Estimator e, failing t on an error and reporting any
// difference between the two: the Model's breakdown.
func estimateBoth(t testing.TB, mm *Model, e *Estimator, c profiles.Cluster, w space.Workload, s space.Strategy) Breakdown {
	t.Helper()
	placed, err := strat(s).Place(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := mm.Estimate(c, w, placed)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.Estimate(placed); err != nil || got != b {
		t.Errorf("%s: Estimator %+v, %v; Model %+v", placed, got, err, b)
	}
	return b
}

// est estimates s for m built with o on the cluster of s's chips.
func est(t testing.TB, m model.Spec, o model.ProgramOptions, w space.Workload, s space.Strategy) Breakdown {
	t.Helper()
	s = strat(s)
	p, err := model.NewProgram(m, o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Estimate(p, h100(s.Chips()), w, s)
	if err != nil {
		t.Fatalf("Estimate(%s): %v", s, err)
	}
	return b
}

// noFlash materialises the attention scores.
var noFlash = model.ProgramOptions{Kernels: model.Kernels{Attention: model.AttentionMaterialized}}

// zeroPaper is the ZeRO paper's 16 bytes per parameter: bf16 weights and
// gradients, 12 bytes of fp32 optimizer state.
var zeroPaper = model.ProgramOptions{Precision: model.Precision{Weight: 2, Grad: 2, Master: 4, Moments: 8, Activation: 2}}

func TestModelStatesZeRO(t *testing.T) {
	// Ψ = 100 layers × (12·2500² + 2·2500) + 2500 = 7.5005e9 parameters, no embedding.
	m := model.Spec{Name: "zero-7.5b", Layers: 100, Hidden: 2500, Heads: 20, FFN: model.GELU, SeqLen: 1024}
	m.Normalize()
	psi := float64(m.Counts().Total)
	w := space.Workload{Batch: 64, SeqLen: 1024}
	// ZeRO paper Fig. 1 / docs/formulas.md §2.1: Ψ = 7.5B, N_d = 64, K = 12 gives
	// 120, 31.4, 16.6, 1.9 GB (the paper's rounding of the exact values below).
	tests := []struct {
		name string
		s    space.Strategy
		want float64 // bytes of weights + gradients + optimizer
	}{
		{"dp", strat(space.Strategy{Degree: space.Degrees{space.DP: 64}}), 16 * psi},                      // (2+2+12)Ψ = 120.0 GB
		{"zero1", strat(space.Strategy{Degree: space.Degrees{space.DP: 64}, Zero: 1}), 4*psi + 12*psi/64}, // 31.4 GB
		{"zero2", strat(space.Strategy{Degree: space.Degrees{space.DP: 64}, Zero: 2}), 2*psi + 14*psi/64}, // 16.6 GB
		{"zero3", strat(space.Strategy{Degree: space.Degrees{space.FSDP: 64}}), 16 * psi / 64},            // 1.875 GB
		{"paper-dp", strat(space.Strategy{Degree: space.Degrees{space.DP: 64}}), 120e9},                   // [ZERO] 120 GB
		{"paper-zero1", strat(space.Strategy{Degree: space.Degrees{space.DP: 64}, Zero: 1}), 31.4e9},      // [ZERO] 31.4 GB
		{"paper-zero2", strat(space.Strategy{Degree: space.Degrees{space.DP: 64}, Zero: 2}), 16.6e9},      // [ZERO] 16.6 GB
		{"paper-zero3", strat(space.Strategy{Degree: space.Degrees{space.FSDP: 64}}), 1.9e9},              // [ZERO] 1.9 GB (rounded)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := est(t, m, zeroPaper, w, tt.s)
			got := b.ParamsBytes + b.GradsBytes + b.OptimizerBytes
			t.Logf("model states %.4g GB, want %.4g GB", got/1e9, tt.want/1e9)
			if !within(got, tt.want, 0.015) {
				t.Errorf("model states = %.4g GB, want %.4g GB", got/1e9, tt.want/1e9)
			}
		})
	}
}

// Korthikanti et al. 2022 Table 3 configurations (docs/published-runs.md §3.2):
// t = 8, DP = 1, s = 2048, micro-batch 1 (22B: 4), batch = GPUs (22B: 4).
var korthikanti = []struct {
	name           string
	m              model.Spec
	s              space.Strategy
	batch          int
	statesGiB      float64 // Fig. 1 params+grads+optimizer, 18 B/param over 12·L·h²/(t·p)
	tpOnlyGiB      float64 // Fig. 1 activations, TP only, no recompute
	spSelectiveGiB float64 // Fig. 1 activations, SP + selective recompute
	layersInFlight float64 // layers' worth of activations on the first stage
}{
	{"22B", gptSpec(48, 6144, 64), space.Strategy{Degree: space.Degrees{space.TP: 8}, MB: 4}, 4, 45.56, 59.25, 9.56, 48},
	// 96·(1 + 7/24) = 124 layers in flight with interleaving v = 3.
	{"175B", gptSpec(96, 12288, 96), space.Strategy{Degree: space.Degrees{space.TP: 8, space.PP: 8}, Schedule: space.Interleaved, V: 3}, 64, 45.56, 66.84, 12.35, 124},
	// 105·(1 + 34/105) = 139.
	{"530B", gptSpec(105, 20480, 128), space.Strategy{Degree: space.Degrees{space.TP: 8, space.PP: 35}, Schedule: space.Interleaved, V: 3}, 280, 31.64, 114.02, 23.08, 139},
	{"1T", gptSpec(128, 25600, 160), space.Strategy{Degree: space.Degrees{space.TP: 8, space.PP: 64}}, 512, 32.96, 131.25, 26.56, 128},
}

func TestKorthikantiFig1(t *testing.T) {
	for _, k := range korthikanti {
		w := space.Workload{Batch: k.batch, SeqLen: 2048}
		t.Run(k.name, func(t *testing.T) {
			sel := k.s
			sel.SP, sel.Recompute = true, space.RecomputeSelective
			sel = strat(sel)
			// ActivationsBytes is the layers' term of the busiest stage (the
			// embedding terms are buffers), Fig. 1's quantity.
			selAct := est(t, k.m, model.ProgramOptions{}, w, sel).ActivationsBytes
			tp := strat(k.s)
			tp.Recompute = space.RecomputeNone
			tpAct := est(t, k.m, noFlash, w, tp).ActivationsBytes // Korthikanti's baseline materialises a·s²
			t.Logf("SP+selective %.3f GiB (want %.2f), TP-only %.3f GiB (want %.2f)", selAct/gib, k.spSelectiveGiB, tpAct/gib, k.tpOnlyGiB)
			if got := selAct / gib; !within(got, k.spSelectiveGiB, 0.05) {
				t.Errorf("SP+selective activations = %.2f GiB, want %.2f GiB", got, k.spSelectiveGiB)
			}
			// Exact: 34·s·b·h/t per layer × layers in flight.
			exact := 34 * 2048 * float64(sel.MB) * float64(k.m.Hidden) / 8 * k.layersInFlight
			if !within(selAct, exact, 1e-9) {
				t.Errorf("SP+selective activations = %.6g B, want %.6g B", selAct, exact)
			}
			if got := tpAct / gib; !within(got, k.tpOnlyGiB, 0.05) {
				t.Errorf("TP-only activations = %.2f GiB, want %.2f GiB", got, k.tpOnlyGiB)
			}

			// Fig. 1 counts 18 B/param (fp32 gradients, the default precision)
			// and no embeddings: the first stage without its embedding.
			b := est(t, k.m, model.ProgramOptions{}, w, sel)
			p := model.MustProgram(k.m, model.ProgramOptions{})
			emb := 18 * p.Params(p.Blocks[p.Embedding].Weights[0], new(p.Sizes(1, 1))) / 8
			b.ParamsBytes -= emb * 2 / 18
			b.GradsBytes -= emb * 4 / 18
			b.OptimizerBytes -= emb * 12 / 18
			t.Logf("params+grads+optimizer %.3f GiB (want %.2f)", (b.ParamsBytes+b.GradsBytes+b.OptimizerBytes)/gib, k.statesGiB)
			if got := (b.ParamsBytes + b.GradsBytes + b.OptimizerBytes) / gib; !within(got, k.statesGiB, 0.01) {
				t.Errorf("params+grads+optimizer = %.2f GiB, want %.2f GiB", got, k.statesGiB)
			}
		})
	}
}

func TestLayerActivationBytes(t *testing.T) {
	gpt3 := gptSpec(96, 12288, 96)
	const sbh = 2048 * 12288.0 // s·b·h for GPT-3, s = 2048, b = 1
	mix := mixtral()
	tests := []struct {
		name string
		m    model.Spec
		seq  int
		s    space.Strategy
		moe  bool
		o    model.ProgramOptions
		want float64
	}{
		// Korthikanti Table 2 (docs/formulas.md §2.2), GPT-3 175B, t = 8.
		{"gpt3 sp selective", gpt3, 2048, space.Strategy{Degree: space.Degrees{space.TP: 8}, SP: true, Recompute: space.RecomputeSelective}, false, model.ProgramOptions{}, 34 * sbh / 8},
		{"gpt3 sp full", gpt3, 2048, space.Strategy{Degree: space.Degrees{space.TP: 8}, SP: true, Recompute: space.RecomputeFull}, false, model.ProgramOptions{}, 2 * sbh / 8},
		{"gpt3 tp full", gpt3, 2048, space.Strategy{Degree: space.Degrees{space.TP: 8}, Recompute: space.RecomputeFull}, false, model.ProgramOptions{}, 2 * sbh},
		// s·b·h·(10 + 24/t + 5·a·s/(h·t)), 5as/h = 80.
		{"gpt3 tp none", gpt3, 2048, space.Strategy{Degree: space.Degrees{space.TP: 8}, Recompute: space.RecomputeNone}, false, noFlash, sbh * (10 + 3 + 10)},
		{"gpt3 tp selective", gpt3, 2048, space.Strategy{Degree: space.Degrees{space.TP: 8}, Recompute: space.RecomputeSelective}, false, model.ProgramOptions{}, sbh * (10 + 3)},
		// s·b·h·(34 + 5as/h) with no parallelism.
		{"gpt3 none", gpt3, 2048, space.Strategy{Recompute: space.RecomputeNone}, false, noFlash, sbh * (34 + 80)},
		{"gpt3 sp none", gpt3, 2048, space.Strategy{Degree: space.Degrees{space.TP: 8}, SP: true, Recompute: space.RecomputeNone}, false, noFlash, sbh / 8 * (34 + 80)},
		// With a fused kernel, none = selective + the fp32 LSE 4·s·b·a/t.
		{"gpt3 sp none flash", gpt3, 2048, space.Strategy{Degree: space.Degrees{space.TP: 8}, SP: true, Recompute: space.RecomputeNone}, false, model.ProgramOptions{}, 34*sbh/8 + 4*2048*96/8},
		// CP halves s: 34·(s/2)·b·h/t.
		{"gpt3 sp cp2 selective", gpt3, 2048, space.Strategy{Degree: space.Degrees{space.TP: 8, space.CP: 2}, SP: true, Recompute: space.RecomputeSelective}, false, model.ProgramOptions{}, 17 * sbh / 8},
		// Modern block (docs/formulas.md §2.2 [derived]): s·b·(8h + 4q + 4kv + 6F), Llama-3-70B
		// s = 8192, b = 1: 8192·(65536 + 32768 + 4096 + 172032) = 2,248,146,944 B (≈ 2.25 GB).
		{"llama70b selective", llama70B(), 8192, space.Strategy{Recompute: space.RecomputeSelective}, false, model.ProgramOptions{}, 2248146944},
		{"llama70b tp8 sp selective", llama70B(), 8192, space.Strategy{Degree: space.Degrees{space.TP: 8}, SP: true, Recompute: space.RecomputeSelective}, false, model.ProgramOptions{}, 2248146944.0 / 8},
		// Modern block without a fused kernel: + softmax output 2·a·s²·b = 2·64·8192² = 8,589,934,592.
		{"llama70b none noflash", llama70B(), 8192, space.Strategy{Recompute: space.RecomputeNone}, false, noFlash, 2248146944 + 8589934592},
		// MoE layer, s = 4096, b = 1, t = 1 (docs/formulas.md §2.2 [derived]):
		// norms 8·s·h = 134,217,728; attention 4·s·(q+kv) = 83,886,080;
		// router 4·s·E = 131,072; routed k·s·(4h + 6F_e) = 2·4096·102400 = 838,860,800.
		{"mixtral moe selective", mix, 4096, space.Strategy{Degree: space.Degrees{space.DP: 8, space.EP: 8}, Recompute: space.RecomputeSelective}, true, model.ProgramOptions{}, 134217728 + 83886080 + 131072 + 838860800},
		// Experts that weigh their own output (model.Kernels.WeightedExperts,
		// Megatron-Core) leave the combine nothing to keep: the routed term
		// loses the output copies, k·s·(2h + 6F_e) = 2·4096·94208 = 771,751,936.
		{"mixtral moe weighted experts", mix, 4096, space.Strategy{Degree: space.Degrees{space.DP: 8, space.EP: 8}, Recompute: space.RecomputeSelective}, true,
			model.ProgramOptions{Kernels: model.Kernels{WeightedExperts: true}}, 134217728 + 83886080 + 131072 + 771751936},
		// Capacity factor 1.25 pads the routed term.
		{"mixtral moe cf1.25", withCF(mix, 1.25), 4096, space.Strategy{Recompute: space.RecomputeSelective}, true, model.ProgramOptions{}, 134217728 + 83886080 + 131072 + 1.25*838860800},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One micro-batch of one sequence in flight: a layer's bytes are
			// the activations over the layers.
			s := strat(tt.s)
			w := space.Workload{Batch: s.Replicas(), SeqLen: tt.seq}
			got := est(t, tt.m, tt.o, w, s).ActivationsBytes / float64(tt.m.Layers)
			if !within(got, tt.want, 1e-9) {
				t.Errorf("layer activations = %.6g, want %.6g (ratio %.4f)", got, tt.want, got/tt.want)
			}
		})
	}
}

func withCF(m model.Spec, cf float64) model.Spec {
	e := *m.MoE
	e.CapacityFactor = cf
	m.MoE = &e
	return m
}

// TestMonotonic checks that memory does not grow when a sharding degree,
// the ZeRO stage or the recompute policy grows (docs/go-style.md §3.5).
func TestMonotonic(t *testing.T) {
	type step struct {
		name string
		m    model.Spec
		w    space.Workload
		o    model.ProgramOptions
		seq  []space.Strategy
	}
	l70 := llama70B()
	w70 := space.Workload{Batch: 256, SeqLen: 8192}
	mix := mixtral()
	wmix := space.Workload{Batch: 256, SeqLen: 4096}
	gpt := gptSpec(96, 12288, 96)
	wgpt := space.Workload{Batch: 512, SeqLen: 2048}
	var steps []step
	add := func(name string, m model.Spec, w space.Workload, o model.ProgramOptions, base space.Strategy, vary func(*space.Strategy, int), vals []int) {
		st := step{name: name, m: m, w: w, o: o}
		for _, v := range vals {
			s := base
			vary(&s, v)
			st.seq = append(st.seq, strat(s))
		}
		steps = append(steps, st)
	}
	tp := func(s *space.Strategy, v int) { s.Degree[space.TP], s.SP = v, v > 1 }
	pp := func(s *space.Strategy, v int) { s.Degree[space.PP] = v }
	fsdp := func(s *space.Strategy, v int) { s.Degree[space.FSDP] = v }
	zero := func(s *space.Strategy, v int) { s.Zero = v }
	cp := func(s *space.Strategy, v int) { s.Degree[space.CP] = v }
	ep := func(s *space.Strategy, v int) { s.Degree[space.EP] = v }
	policies := []string{space.RecomputeNone, space.RecomputeSelective, space.RecomputeFull}
	rc := func(s *space.Strategy, v int) { s.Recompute = policies[v] }
	for _, m := range []struct {
		name string
		m    model.Spec
		w    space.Workload
	}{{"llama70b", l70, w70}, {"mixtral", mix, wmix}, {"gpt3", gpt, wgpt}} {
		base := space.Strategy{Degree: space.Degrees{space.DP: 8, space.FSDP: 8}, Recompute: space.RecomputeSelective}
		add(m.name+"/tp", m.m, m.w, model.ProgramOptions{}, base, tp, []int{1, 2, 4, 8})
		add(m.name+"/pp", m.m, m.w, model.ProgramOptions{}, space.Strategy{Degree: space.Degrees{space.DP: 8, space.TP: 8}, SP: true}, pp, []int{1, 2, 4, 8})
		add(m.name+"/fsdp", m.m, m.w, model.ProgramOptions{}, space.Strategy{Degree: space.Degrees{space.TP: 8}, SP: true}, fsdp, []int{1, 2, 4, 8, 16, 32})
		add(m.name+"/zero", m.m, m.w, model.ProgramOptions{}, space.Strategy{Degree: space.Degrees{space.DP: 16, space.TP: 8, space.PP: 4}, SP: true}, zero, []int{0, 1, 2})
		add(m.name+"/cp", m.m, m.w, model.ProgramOptions{}, space.Strategy{Degree: space.Degrees{space.FSDP: 8, space.TP: 8}, SP: true}, cp, []int{1, 2, 4})
		add(m.name+"/recompute", m.m, m.w, model.ProgramOptions{}, space.Strategy{Degree: space.Degrees{space.FSDP: 8, space.TP: 8}, SP: true}, rc, []int{0, 1, 2})
		add(m.name+"/recompute-noflash", m.m, m.w, noFlash, space.Strategy{Degree: space.Degrees{space.FSDP: 8, space.TP: 8}, SP: true}, rc, []int{0, 1, 2})
	}
	add("mixtral/ep", mix, wmix, model.ProgramOptions{}, space.Strategy{Degree: space.Degrees{space.DP: 2, space.FSDP: 8, space.TP: 2}, SP: true}, ep, []int{1, 2, 4, 8})
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			prev := math.Inf(1)
			for _, s := range st.seq {
				got := est(t, st.m, st.o, st.w, s).TotalBytes()
				if got > prev*(1+1e-12) {
					t.Errorf("%+v: total %.4g GB > %.4g GB of the previous step", s, got/1e9, prev/1e9)
				}
				prev = got
			}
		})
	}
}

func TestEstimateTerms(t *testing.T) {
	m := llama70B()
	w := space.Workload{Batch: 64, SeqLen: 8192}
	s := strat(space.Strategy{Degree: space.Degrees{space.FSDP: 8, space.TP: 8}, SP: true, Recompute: space.RecomputeSelective})
	b := est(t, m, model.ProgramOptions{}, w, s)
	psi := float64(llama70BParams)
	// Everything sharded over tp·fsdp = 64, except the replicated norms and K/V shared by
	// min(t, kv heads) = 8 = t: weights ≈ 2Ψ/64 (norms are ~0.002% of Ψ).
	if !within(b.ParamsBytes, 2*psi/64, 0.001) {
		t.Errorf("ParamsBytes = %.4g, want %.4g", b.ParamsBytes, 2*psi/64)
	}
	if !within(b.OptimizerBytes, 12*psi/64, 0.001) {
		t.Errorf("OptimizerBytes = %.4g, want %.4g", b.OptimizerBytes, 12*psi/64)
	}
	// pp = 1: one micro-batch of 80 layers of s·b·(8h+4q+4kv+6F)/t.
	if want := 80 * 2248146944.0 / 8; !within(b.ActivationsBytes, want, 1e-9) {
		t.Errorf("ActivationsBytes = %.6g, want %.6g", b.ActivationsBytes, want)
	}
	// Buffers: FSDP 2 gathered units of bf16 weights + 1 unit of fp32 grads,
	// the unit being the output layer, V·h/t and the final norm h (131M > a
	// layer's 107M): 8·(V·h/8 + h);
	// token ids 8·s; final-norm and output inputs 4·s·h/t; fp32 logits
	// 4·s·V/t saved; then the larger of the logit gradient 4·s·V/t and the
	// TP+SP gather 2·s·h (plus the recomputed fp32 log-sum-exp 4·s·a/t).
	const V, h, sq = 128256.0, 8192.0, 8192.0
	want := 8*(V*h/8+h) + 8*sq + 4*sq*h/8 + 4*sq*V/8 + max(4*sq*V/8, 2*sq*h+4*sq*64/8)
	if !within(b.BuffersBytes, want, 1e-9) {
		t.Errorf("BuffersBytes = %.6g, want %.6g", b.BuffersBytes, want)
	}
	if d := Dominant(b); d != Activations {
		t.Errorf("Dominant = %q, want %q", d, Activations)
	}
}

// llama70BParams is Llama-3-70B's count (docs/formulas.md §8: 70.55e9).
var llama70BParams = func() int64 { m := llama70B(); return m.Counts().Total }()

func TestLlamaParamCount(t *testing.T) {
	if !within(float64(llama70BParams), 70.55e9, 0.001) {
		t.Errorf("params = %d, want 70.55e9", llama70BParams)
	}
}

func TestMoEStates(t *testing.T) {
	m := mixtral()
	w := space.Workload{Batch: 64, SeqLen: 4096}
	// dp = 2, fsdp = 4, ep = 8: EP takes all of fsdp, so routed experts are
	// sharded only by ep (fsdp/gcd(4, 8) = 1) and ZeRO-1 shards their optimizer
	// state over the expert-DP group dp·fsdp/ep = 1.
	s := strat(space.Strategy{Degree: space.Degrees{space.DP: 2, space.FSDP: 4, space.EP: 8}, Zero: 1, Recompute: space.RecomputeFull})
	b := est(t, m, model.ProgramOptions{}, w, s)
	expert := 32 * 8 * float64(m.ExpertParams()) / 8 // routed experts per chip
	dense := float64(m.Counts().Total) - 32*8*float64(m.ExpertParams())
	wantW := 2 * (dense/4 + expert)
	wantO := 12 * (dense/4/2 + expert)
	if !within(b.ParamsBytes, wantW, 1e-9) {
		t.Errorf("ParamsBytes = %.6g, want %.6g", b.ParamsBytes, wantW)
	}
	if !within(b.OptimizerBytes, wantO, 1e-9) {
		t.Errorf("OptimizerBytes = %.6g, want %.6g", b.OptimizerBytes, wantO)
	}
}

// TestWholeExperts checks etp=1 (model.ProgramOptions.ExpertsWhole) under
// dp = 16, tp = 4, ep = 8 on 64 chips: each chip holds its 32·8/8 routed
// experts whole, 4x the split experts' bytes, so the weights (2 bytes) and
// the unsharded gradients (4 bytes) grow by 3x the split experts'; ZeRO-1
// shards the experts' optimizer state over edp x tp = 2 x 4 chips, as it
// shards the split ones over edp's 2: the same bytes.
func TestWholeExperts(t *testing.T) {
	m := mixtral()
	w := space.Workload{Batch: 256, SeqLen: 4096}
	s := strat(space.Strategy{Degree: space.Degrees{space.DP: 16, space.TP: 4, space.EP: 8}, SP: true, Zero: 1, ETP: 4})
	split := est(t, m, model.ProgramOptions{}, w, s)
	s.ETP = 1
	whole := est(t, m, model.ProgramOptions{ExpertsWhole: true}, w, s)
	expert := 32 * 8 * float64(m.ExpertParams()) / 8 / 4 // split routed experts per chip
	if d := whole.ParamsBytes - split.ParamsBytes; !within(d, 3*2*expert, 1e-9) {
		t.Errorf("whole experts add %.6g parameter bytes, want %.6g", d, 3*2*expert)
	}
	if d := whole.GradsBytes - split.GradsBytes; !within(d, 3*4*expert, 1e-9) {
		t.Errorf("whole experts add %.6g gradient bytes, want %.6g", d, 3*4*expert)
	}
	if !within(whole.OptimizerBytes, split.OptimizerBytes, 1e-9) {
		t.Errorf("optimizer state %.6g whole, %.6g split: ZeRO-1 over edp x tp gives the same shard", whole.OptimizerBytes, split.OptimizerBytes)
	}
}

// TestWeightsOverCP checks the dense weights sharded over fsdp x cp
// (model.ProgramOptions.WeightsOverCP: torchtitan's dp_shard x cp mesh):
// with fsdp=4 and cp=2 every weight, its gradient and its optimizer state
// take half the bytes they take over fsdp alone; activations do not move.
func TestWeightsOverCP(t *testing.T) {
	m := llama70B()
	w := space.Workload{Batch: 32, SeqLen: 8192}
	s := strat(space.Strategy{Degree: space.Degrees{space.FSDP: 4, space.CP: 2}})
	fsdp := est(t, m, model.ProgramOptions{}, w, s)
	both := est(t, m, model.ProgramOptions{WeightsOverCP: true}, w, s)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"parameters", both.ParamsBytes, fsdp.ParamsBytes / 2},
		{"gradients", both.GradsBytes, fsdp.GradsBytes / 2},
		{"optimizer", both.OptimizerBytes, fsdp.OptimizerBytes / 2},
	} {
		if !within(c.got, c.want, 1e-9) {
			t.Errorf("%s: %.6g bytes over fsdp x cp, want %.6g (half of fsdp's)", c.name, c.got, c.want)
		}
	}
	if !within(both.ActivationsBytes, fsdp.ActivationsBytes, 1e-9) {
		t.Errorf("activations %.6g over fsdp x cp, %.6g over fsdp: want equal", both.ActivationsBytes, fsdp.ActivationsBytes)
	}
}

func TestPipelineStages(t *testing.T) {
	// Tied embedding with pp > 1: the last stage keeps a copy, so both stages
	// carry V·h/t; with 1F1B the first holds p micro-batches and is the busier.
	m := gptSpec(96, 12288, 96)
	w := space.Workload{Batch: 64, SeqLen: 2048}
	s := strat(space.Strategy{Degree: space.Degrees{space.TP: 8, space.PP: 8}, SP: true, Recompute: space.RecomputeSelective})
	b := est(t, m, model.ProgramOptions{}, w, s)
	layer := float64(m.DenseLayerParams()) / 8 // replicated norms are ~2e-4 of a layer: checked to 0.1%
	wantW := 2 * (12*layer + float64(m.EmbeddingParams())/8)
	if !within(b.ParamsBytes, wantW, 0.001) {
		t.Errorf("ParamsBytes = %.6g, want %.6g", b.ParamsBytes, wantW)
	}
	if want := 8 * 12 * 34 * 2048 * 12288.0 / 8; !within(b.ActivationsBytes, want, 1e-9) {
		t.Errorf("ActivationsBytes = %.6g, want %.6g (first stage)", b.ActivationsBytes, want)
	}
	// GPipe holds all m = 64 micro-batches.
	s.Schedule = space.GPipe
	if got, want := est(t, m, model.ProgramOptions{}, w, s).ActivationsBytes, 64*12*34*2048*12288.0/8; !within(got, want, 1e-9) {
		t.Errorf("GPipe ActivationsBytes = %.6g, want %.6g", got, want)
	}
}

// TestPipelineSchedules pins the zero-bubble and DualPipe schedules'
// activations in flight and parameter copies on GPT-3 175B, tp=8 with
// selective recompute (34·s·b·h/t per layer [KORT]), pp=8 (12 layers a
// rank), 64 micro-batches, on the busiest rank (the first, which holds
// the tied embedding).
func TestPipelineSchedules(t *testing.T) {
	m := gptSpec(96, 12288, 96)
	w := space.Workload{Batch: 64, SeqLen: 2048}
	layerAct := 34 * 2048 * 12288.0 / 8
	layer := float64(m.DenseLayerParams()) / 8
	emb := float64(m.EmbeddingParams()) / 8
	for _, tt := range []struct {
		s        space.Schedule
		inFlight float64 // layers × micro-batches of activations
		layers   float64 // layers of parameters
	}{
		// 1F1B's p = 8 micro-batches of 12 layers [KORT §4.3].
		{space.OneFOneB, 8 * 12, 12},
		// ZB-H1 and ZB-V hold 1F1B's [ZB][ZB-HF]; ZB-V's rank 0 runs half
		// of two linear ranks' layers and both ends (one tied matrix).
		{space.ZBH1, 8 * 12, 12},
		{space.ZBV, 8 * 12, 12},
		// DualPipe: PP+1 = 9 chunks of one 12-layer stage, two stages of
		// parameters [DSV3 Table 2].
		{space.DualPipe, 9 * 12, 24},
		// DualPipeV: 2p+1 = 17 chunks of 6 layers, one copy.
		{space.DualPipeV, 17 * 6, 12},
	} {
		s := strat(space.Strategy{Degree: space.Degrees{space.TP: 8, space.PP: 8}, SP: true, Recompute: space.RecomputeSelective, Schedule: tt.s})
		b := est(t, m, model.ProgramOptions{}, w, s)
		if want := tt.inFlight * layerAct; !within(b.ActivationsBytes, want, 1e-9) {
			t.Errorf("%s: ActivationsBytes = %.6g, want %.6g (%v layer-micro-batches)", tt.s, b.ActivationsBytes, want, tt.inFlight)
		}
		if want := 2 * (tt.layers*layer + emb); !within(b.ParamsBytes, want, 0.001) {
			t.Errorf("%s: ParamsBytes = %.6g, want %.6g (%v layers and the embedding)", tt.s, b.ParamsBytes, want, tt.layers)
		}
		if want := 2 * b.ParamsBytes; !within(b.GradsBytes, want, 1e-9) {
			t.Errorf("%s: GradsBytes = %.6g, want %.6g (bf16 weights, fp32 gradients)", tt.s, b.GradsBytes, want)
		}
	}
}

func TestUsableAndFits(t *testing.T) {
	c := h100(8)
	// The measured H100's 85,017,493,504 bytes less a 0.5 GiB context and 5%
	// allocator slack (docs/runtime-memory.md).
	c.Chip.HBMBytes, c.Chip.RuntimeReserveBytes, c.Chip.AllocatorSlackFraction = 85017493504, 1<<29, 0.05
	tests := []struct {
		o    Options
		want float64
	}{
		{Options{}, 85017493504 - 536870912 - 0.05*85017493504},
		{Options{ReservedFraction: 0.1}, 0.9 * 85017493504},
		{Options{ReservedFraction: -1}, 85017493504},
	}
	for _, tt := range tests {
		if got := UsableBytes(c, tt.o); !within(got, tt.want, 1e-12) {
			t.Errorf("UsableBytes(%+v) = %v, want %v", tt.o, got, tt.want)
		}
	}
	if !Fits(Breakdown{ParamsBytes: 70e9}, c, Options{}) {
		t.Error("Fits(70 GB) = false, want true")
	}
	if Fits(Breakdown{ParamsBytes: 70e9, BuffersBytes: 10.3e9}, c, Options{}) {
		t.Error("Fits(80.3 GB) = true, want false")
	}
}

func TestDominant(t *testing.T) {
	tests := []struct {
		b    Breakdown
		want string
	}{
		{Breakdown{}, Params},
		{Breakdown{ParamsBytes: 1, GradsBytes: 2}, Grads},
		{Breakdown{ParamsBytes: 1, OptimizerBytes: 6, GradsBytes: 1}, Optimizer},
		{Breakdown{ActivationsBytes: 9, OptimizerBytes: 6}, Activations},
		{Breakdown{ActivationsBytes: 9, BuffersBytes: 10}, Buffers},
	}
	for _, tt := range tests {
		if got := Dominant(tt.b); got != tt.want {
			t.Errorf("Dominant(%+v) = %q, want %q", tt.b, got, tt.want)
		}
	}
}

func TestUnnormalizedSpec(t *testing.T) {
	raw := model.Spec{Name: "raw", Layers: 32, Hidden: 4096, Heads: 32, FFN: model.SwiGLU, FFNHidden: 14336,
		Vocab: 32000, SeqLen: 4096, MoE: &model.MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 14336}}
	norm := raw
	e := *raw.MoE
	norm.MoE = &e
	norm.Normalize()
	w := space.Workload{Batch: 32, SeqLen: 4096}
	s := strat(space.Strategy{Degree: space.Degrees{space.FSDP: 8, space.EP: 8}, Recompute: space.RecomputeSelective})
	if got, want := est(t, raw, model.ProgramOptions{}, w, s), est(t, norm, model.ProgramOptions{}, w, s); got != want {
		t.Errorf("Estimate(unnormalized) = %+v, want %+v", got, want)
	}
	if raw.MoE.CapacityFactor != 0 {
		t.Errorf("Estimate wrote the caller's MoE: CapacityFactor = %v", raw.MoE.CapacityFactor)
	}
}

func TestEstimateNoAllocs(t *testing.T) {
	m := mixtral()
	w := space.Workload{Batch: 256, SeqLen: 4096}
	s := strat(space.Strategy{Degree: space.Degrees{space.DP: 2, space.FSDP: 4, space.TP: 2, space.PP: 4, space.EP: 8}, SP: true, Schedule: space.Interleaved, V: 2, Recompute: space.RecomputeFull})
	c := h100(64)
	mm := NewModel(model.MustProgram(m, model.ProgramOptions{}))
	placed, err := s.Place(c)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = mm.Estimate(c, w, placed) }); n != 0 {
		t.Errorf("Estimate allocates %v times per call, want 0", n)
	}
	placed.Schedule, placed.V = space.DualPipe, 1
	if n := testing.AllocsPerRun(100, func() { _, _ = mm.Estimate(c, w, placed) }); n != 0 {
		t.Errorf("Estimate allocates %v times per call under dualpipe, want 0", n)
	}
}

func BenchmarkEstimate(b *testing.B) {
	cases := []struct {
		name string
		m    model.Spec
		w    space.Workload
		s    space.Strategy
	}{
		{"llama70b", llama70B(), space.Workload{Batch: 256, SeqLen: 8192},
			strat(space.Strategy{Degree: space.Degrees{space.FSDP: 16, space.TP: 8, space.PP: 4}, SP: true, Schedule: space.Interleaved, V: 5, Recompute: space.RecomputeSelective})},
		{"mixtral", mixtral(), space.Workload{Batch: 256, SeqLen: 4096},
			strat(space.Strategy{Degree: space.Degrees{space.DP: 2, space.FSDP: 4, space.TP: 2, space.PP: 4, space.EP: 8}, SP: true, Recompute: space.RecomputeFull})},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c := h100(tc.s.Chips())
			mm := NewModel(model.MustProgram(tc.m, model.ProgramOptions{}))
			s, err := tc.s.Place(c)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := mm.Estimate(c, tc.w, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFP8Copies pins the fp8 weight copies (model.FP8Recipe): the weight
// and its transpose at 1 byte each for every projection an fp8 matmul
// reads, 2 bytes per parameter. Llama 3 8B's 32 layers hold
// 4096·6144 + 4096² + 3·4096·14336 = 218,103,808 such parameters each:
// 13.96 GB of copies on one chip; under fsdp=8 one layer's gathered
// copies, 436 MB, sit in the buffers instead.
func TestFP8Copies(t *testing.T) {
	m := llama70B()
	m.Name, m.Layers, m.Hidden, m.Heads, m.FFNHidden = "llama3-8b", 32, 4096, 32, 14336
	r, _ := model.LookupFP8Recipe(model.FP8Delayed)
	w := space.Workload{Batch: 8, SeqLen: 8192}
	const perLayer = 218103808.0
	for _, tc := range []struct {
		name         string
		s            space.Strategy
		params, bufs float64
	}{
		{"one chip", space.Defaults(), 2 * 32 * perLayer, 0},
		{"fsdp=8", space.Defaults().With(space.FSDP, 8), 0, 2 * perLayer},
	} {
		bf := est(t, m, model.ProgramOptions{}, w, tc.s)
		f8 := est(t, m, model.ProgramOptions{FP8: &r}, w, tc.s)
		if d := f8.ParamsBytes - bf.ParamsBytes; !within(d, tc.params, 1e-9) && !(tc.params == 0 && d == 0) {
			t.Errorf("%s: fp8 adds %.6g parameter bytes, want %.6g", tc.name, d, tc.params)
		}
		// The buffers also hold fp8 transients of the layer's backward (its
		// recomputed fp8 inputs); the copies are at least tc.bufs.
		if d := f8.BuffersBytes - bf.BuffersBytes; d < tc.bufs-1 {
			t.Errorf("%s: fp8 adds %.6g buffer bytes, want at least %.6g", tc.name, d, tc.bufs)
		}
		if f8.ActivationsBytes >= bf.ActivationsBytes {
			t.Errorf("%s: fp8 keeps %.6g activation bytes, not fewer than bf16's %.6g", tc.name, f8.ActivationsBytes, bf.ActivationsBytes)
		}
	}
}

// TestFP8CopiesAnyLayout pins the fp8 copies per weight on a chip whose
// fp8 matmuls take any layout (profiles.Chip.FP8AnyLayout, Blackwell): a
// per-tensor recipe (delayed, tensorwise) keeps the copy alone, 1 byte a
// parameter, where block scales (blockwise, mxfp8) keep the rowwise and
// the columnwise copy, 2 bytes, as on Hopper. Llama 3 8B on one chip:
// 32 · 218,103,808 = 6,979,321,856 parameters with copies
// (TestFP8Copies), so 6.98 GB or 13.96 GB; under fsdp=8 one gathered
// layer's, 218 MB or 436 MB in the buffers.
func TestFP8CopiesAnyLayout(t *testing.T) {
	m := llama70B()
	m.Name, m.Layers, m.Hidden, m.Heads, m.FFNHidden = "llama3-8b", 32, 4096, 32, 14336
	w := space.Workload{Batch: 8, SeqLen: 8192}
	const perLayer = 218103808.0
	for _, tc := range []struct {
		recipe    string
		anyLayout bool
		copies    float64
	}{
		{model.FP8Delayed, false, 2},
		{model.FP8Delayed, true, 1},
		{model.FP8Tensorwise, true, 1},
		{model.FP8Blockwise, true, 2},
		{model.FP8MX, true, 2},
		{model.FP8MX, false, 2},
	} {
		r, ok := model.LookupFP8Recipe(tc.recipe)
		if !ok {
			t.Fatalf("no recipe %s", tc.recipe)
		}
		for _, sc := range []struct {
			name         string
			s            space.Strategy
			params, bufs float64
		}{
			{"one chip", space.Defaults(), tc.copies * 32 * perLayer, 0},
			{"fsdp=8", space.Defaults().With(space.FSDP, 8), 0, tc.copies * perLayer},
		} {
			s := strat(sc.s)
			c := h100(s.Chips())
			c.Chip.FP8AnyLayout = tc.anyLayout
			breakdown := func(o model.ProgramOptions) Breakdown {
				p, err := model.NewProgram(m, o)
				if err != nil {
					t.Fatal(err)
				}
				b, err := Estimate(p, c, w, s)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			bf, f8 := breakdown(model.ProgramOptions{}), breakdown(model.ProgramOptions{FP8: &r})
			if d := f8.ParamsBytes - bf.ParamsBytes; !within(d, sc.params, 1e-9) && !(sc.params == 0 && d == 0) {
				t.Errorf("%s any layout %v, %s: fp8 adds %.6g parameter bytes, want %.6g", tc.recipe, tc.anyLayout, sc.name, d, sc.params)
			}
			// The buffers also hold the backward's fp8 transients, the same
			// under every recipe: compare against the two-copy recipe's.
			if sc.bufs > 0 {
				two, _ := model.LookupFP8Recipe(model.FP8Blockwise)
				two.Dispatch = false
				ref := breakdown(model.ProgramOptions{FP8: &two})
				if d := ref.BuffersBytes - f8.BuffersBytes; !within(d, (2-tc.copies)*perLayer, 1e-9) && !(tc.copies == 2 && d == 0) {
					t.Errorf("%s any layout %v, %s: %.6g buffer bytes fewer than two copies, want %.6g", tc.recipe, tc.anyLayout, sc.name, d, (2-tc.copies)*perLayer)
				}
			}
		}
	}
}

// TestParts checks that the parts of every component add up to Estimate's
// figure, over dense, MoE, MLA/MTP, pipelined, FSDP, fp8 and recompute
// strategies, and names the MoE parts the explain output lists.
func TestParts(t *testing.T) {
	ds, _ := model.Preset("deepseek-v3")
	mix, _ := model.Preset("mixtral-8x7b")
	r, _ := model.LookupFP8Recipe(model.FP8Blockwise)
	cases := []struct {
		name string
		m    model.Spec
		o    model.ProgramOptions
		c    profiles.Cluster
		w    space.Workload
		s    string
		want []string
	}{
		{"llama dp", llama70B(), model.ProgramOptions{}, h100(64), space.Workload{Batch: 64, SeqLen: 8192}, "dp=8,tp=8", []string{"attention", "dense MLP", "gradient bucket"}},
		{"llama fsdp pp", llama70B(), model.ProgramOptions{}, h100(64), space.Workload{Batch: 64, SeqLen: 8192}, "fsdp=8,pp=8,recompute=full", []string{"FSDP gathered weights and gradients"}},
		{"mixtral ep", mix, model.ProgramOptions{}, h100(64), space.Workload{Batch: 64, SeqLen: 4096}, "dp=8,tp=8,ep=8,zero=1", []string{"routed experts", "router and norm", "routed experts (dispatched copies)", "loss gradient (transient)"}},
		{"deepseek fp8 pp", ds, model.ProgramOptions{FP8: &r}, h100(2048), space.Workload{Batch: 1024, SeqLen: 4096}, "dp=128,zero=1,pp=16,ep=64", []string{"attention (MLA)", "shared experts", "routed experts", "MoE dispatch and combine (transient)"}},
		{"deepseek one stage", ds, model.ProgramOptions{}, h100(2048), space.Workload{Batch: 2048, SeqLen: 4096}, "dp=2048,zero=1,ep=64", []string{"multi-token prediction", "embedding", "output layer"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := model.NewProgram(tc.m, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			mm := NewModel(p)
			s, err := space.Parse(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			b, err := mm.Estimate(tc.c, tc.w, s)
			if err != nil {
				t.Fatal(err)
			}
			parts, err := mm.Parts(tc.c, tc.w, s)
			if err != nil {
				t.Fatal(err)
			}
			sums := map[string]float64{}
			var names []string
			for _, q := range parts {
				sums[q.Component] += q.Bytes
				names = append(names, q.Name)
			}
			for comp, want := range map[string]float64{Params: b.ParamsBytes, Grads: b.GradsBytes, Optimizer: b.OptimizerBytes, Activations: b.ActivationsBytes, Buffers: b.BuffersBytes} {
				if !within(sums[comp], want, 1e-9) && !(want == 0 && sums[comp] == 0) {
					t.Errorf("%s parts add up to %.6g, Estimate says %.6g", comp, sums[comp], want)
				}
			}
			for _, w := range tc.want {
				found := false
				for _, n := range names {
					found = found || n == w
				}
				if !found {
					t.Errorf("no part %q in %v", w, names)
				}
			}
		})
	}
}

// TestXLAPhases pins the buffers of MaxText's precision (tensor units,
// XLA's liveness) for Llama 3 70B on v6e-64, fsdp=64, 2 sequences of 8192
// per chip, the tpu-recipes' layout: the layers' largest tensor (the MLP
// input projection, 8192 x 57344) gathered twice in bf16 with its fp32
// gradient persists; the output layer (8192 x 128256) gathered once with
// its fp32 gradient joins the loss phase beyond that; the loss keeps the
// bf16 logits (2 bytes) and its backward the bf16 gradient (2 bytes).
func TestXLAPhases(t *testing.T) {
	c, err := profiles.Parse("v6e-64")
	if err != nil {
		t.Fatal(err)
	}
	pr := model.MixedPrecision()
	pr.WeightCopies, pr.TransientGrads, pr.TensorUnits = true, true, true
	k := model.FusedKernels()
	k.Passes[model.PassLoss] = model.PassCost{FwdBytes: 4, BwdBytes: 4, SavedBytes: 2, TransientBytes: 2}
	const (
		win    = 8192.0 * 2 * 28672 // the fused gate and up projection
		wlm    = 8192.0 * 128256    // the output layer
		logits = 2.0 * 8192 * 128256
		xf     = 2.0 * 8192 * 8192 * 2 // the final norm's input, bf16
	)
	for _, tc := range []struct {
		name string
		pr   model.Precision
		want map[string]float64
	}{
		{"fp32 weights", pr, map[string]float64{
			"FSDP gathered weights and gradients":                   (2*2 + 4) * win,
			"output layer inputs and logits":                        2*xf + 2*logits,
			"loss gradient (transient)":                             2 * logits,
			"output layer gathered weight and gradient (transient)": (2+4)*wlm - (2*2+4)*win,
		}},
		{"bf16 weights", pr.BF16Weights(), map[string]float64{
			"FSDP gathered weights and gradients":                   (2*2 + 2) * win,
			"output layer gathered weight and gradient (transient)": (2+2)*wlm - (2*2+2)*win,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := model.NewProgram(llama70B(), model.ProgramOptions{Precision: tc.pr, Kernels: k})
			if err != nil {
				t.Fatal(err)
			}
			s, err := space.Parse("fsdp=64,mb=2,recompute=offload_input_qkv")
			if err != nil {
				t.Fatal(err)
			}
			parts, err := NewModel(p).Parts(c, space.Workload{Batch: 128, SeqLen: 8192}, s)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, q := range parts {
				got[q.Name] += q.Bytes
			}
			for name, want := range tc.want {
				if !within(got[name], want, 1e-9) {
					t.Errorf("%s = %.6g bytes, want %.6g", name, got[name], want)
				}
			}
		})
	}
}

// TestMainGradCopy checks the optimizer step's fp32 copy of a bf16
// gradient buffer's shard (model.Precision.MainGradCopy, Megatron-LM's
// shard_main_param.grad = shard_model_grad.float()): Ψ = 7.5005e9
// parameters (TestModelStatesZeRO's model) and a workload of a few tokens,
// so the optimizer step is the peak where it holds the copy (and the
// gradients are the same in both phases where it does not).
func TestMainGradCopy(t *testing.T) {
	m := model.Spec{Name: "zero-7.5b", Layers: 100, Hidden: 2500, Heads: 20, FFN: model.GELU, SeqLen: 8}
	m.Normalize()
	psi := float64(m.Counts().Total)
	w := space.Workload{Batch: 64, SeqLen: 8}
	bf16 := model.Precision{Weight: 2, Grad: 2, Master: 4, Moments: 8, Activation: 2, MainGradCopy: true}
	fp32 := bf16
	fp32.Grad = 4
	aware := bf16
	aware.MainGradCopy = false
	dp := strat(space.Strategy{Degree: space.Degrees{space.DP: 64}})
	zero1 := strat(space.Strategy{Degree: space.Degrees{space.DP: 64}, Zero: 1})
	tests := []struct {
		name string
		pr   model.Precision
		s    space.Strategy
		want float64 // GradsBytes of the optimizer step
	}{
		{"bf16 buffer, distributed optimizer", bf16, zero1, 2*psi + 4*psi/64}, // 15.0 + 0.469 GB
		{"bf16 buffer, no ZeRO", bf16, dp, 2*psi + 4*psi},                     // 15.0 + 30.0 GB
		{"fp32 buffer: the cast is a no-op", fp32, zero1, 4 * psi},            // 30.0 GB
		{"precision-aware optimizer", aware, zero1, 2 * psi},                  // 15.0 GB
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := est(t, m, model.ProgramOptions{Precision: tt.pr}, w, tt.s)
			if !within(b.GradsBytes, tt.want, 1e-9) {
				t.Errorf("gradients = %.6g GB, want %.6g GB", b.GradsBytes/1e9, tt.want/1e9)
			}
		})
	}
}

// TestGradInWeight checks ColossalAI Gemini's gradients written into the
// fp16 parameters' chunks (model.Precision.GradInWeight): Ψ = 7.5005e9
// parameters over fsdp = 4 keep 2 + 12 bytes each, no gradients, where
// the ZeRO-3 layout keeps 2 + 4 + 12.
func TestGradInWeight(t *testing.T) {
	m := model.Spec{Name: "zero-7.5b", Layers: 100, Hidden: 2500, Heads: 20, FFN: model.GELU, SeqLen: 8}
	m.Normalize()
	psi := float64(m.Counts().Total)
	w := space.Workload{Batch: 4, SeqLen: 8}
	s := strat(space.Strategy{Degree: space.Degrees{space.FSDP: 4}})
	for _, tt := range []struct {
		name     string
		inWeight bool
		states   float64 // params + gradients + optimizer
	}{
		{"zero3", false, 18 * psi / 4},
		{"gemini", true, 14 * psi / 4}, // 26.3 GB against 33.8
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := model.MixedPrecision()
			pr.GradInWeight = tt.inWeight
			b := est(t, m, model.ProgramOptions{Precision: pr}, w, s)
			got := b.ParamsBytes + b.GradsBytes + b.OptimizerBytes
			if !within(got, tt.states, 1e-9) {
				t.Errorf("model states = %.6g GB, want %.6g GB", got/1e9, tt.states/1e9)
			}
			if tt.inWeight && b.GradsBytes != 0 {
				t.Errorf("gradients = %g, want 0 (in the parameters' chunks)", b.GradsBytes)
			}
		})
	}
}

// TestShardOverCP checks ZeRO over the dp x cp group
// (model.Precision.ShardOverCP, Megatron-Core's distributed optimizer):
// Ψ = 7.5005e9 parameters with dp = 4 and cp = 2 keep 12·Ψ/8 bytes of
// optimizer state (11.25 GB) where ZeRO over dp alone keeps 12·Ψ/4
// (22.5 GB); ZeRO-2's gradients follow, 4·Ψ/8.
func TestShardOverCP(t *testing.T) {
	m := model.Spec{Name: "zero-7.5b", Layers: 100, Hidden: 2500, Heads: 20, FFN: model.GELU, SeqLen: 8}
	m.Normalize()
	psi := float64(m.Counts().Total)
	w := space.Workload{Batch: 64, SeqLen: 8}
	over := model.MixedPrecision()
	over.ShardOverCP = true
	zero1 := space.Strategy{Degree: space.Degrees{space.DP: 4, space.CP: 2}, Zero: 1}
	zero2 := zero1
	zero2.Zero = 2
	noCP := space.Strategy{Degree: space.Degrees{space.DP: 4}, Zero: 1}
	tests := []struct {
		name       string
		pr         model.Precision
		s          space.Strategy
		opt, grads float64
	}{
		{"zero-1 over dp x cp", over, zero1, 12 * psi / 8, 4 * psi},
		{"zero-1 over dp", model.MixedPrecision(), zero1, 12 * psi / 4, 4 * psi},
		{"zero-2 over dp x cp", over, zero2, 12 * psi / 8, 4 * psi / 8},
		{"no cp: dp alone", over, noCP, 12 * psi / 4, 4 * psi},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := est(t, m, model.ProgramOptions{Precision: tt.pr}, w, tt.s)
			if !within(b.OptimizerBytes, tt.opt, 1e-9) || !within(b.GradsBytes, tt.grads, 1e-9) {
				t.Errorf("optimizer %.6g GB, gradients %.6g GB; want %.6g and %.6g GB",
					b.OptimizerBytes/1e9, b.GradsBytes/1e9, tt.opt/1e9, tt.grads/1e9)
			}
		})
	}
}
