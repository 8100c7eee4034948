package cost

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// tinyDeepSeek is a DeepSeek-V3-shaped model small enough for tests: MLA,
// one dense layer then MoE layers with a shared expert, mtp modules.
func tinyDeepSeek(mtp int) model.Spec {
	m := model.Spec{Name: "tiny-deepseek", Layers: 4, Hidden: 512, Heads: 8, FFNHidden: 1024, FFN: model.SwiGLU,
		Vocab: 32000, SeqLen: 1024, Norm: model.RMSNorm,
		MoE:       &model.MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 256, SharedExperts: 1, FirstDenseLayers: 1},
		MLA:       &model.MLA{QLoRARank: 96, KVLoRARank: 64, QKNopeHeadDim: 32, QKRopeHeadDim: 16, VHeadDim: 32},
		MTPLayers: mtp}
	m.Normalize()
	return m
}

// TestMTPOnLastStage checks that the multi-token-prediction module runs
// where the output layer runs: on the last pipeline stage, which runs its
// own block and one more MoE layer, and the output block once more; and
// that full recompute re-runs its layer like the stack's.
func TestMTPOnLastStage(t *testing.T) {
	m := tinyDeepSeek(1)
	p := program(m, model.ProgramOptions{})
	kind := p.Kinds[p.MTP.Kind]
	mtp, attn, moe := kind.Blocks[0], kind.Blocks[1], kind.Blocks[2]
	var st evalState
	st.planStages(p, 2, 1, space.Split{})
	if len(st.stages) != 2 {
		t.Fatalf("%d stage plans, want 2", len(st.stages))
	}
	for _, sp := range st.stages {
		// 4 layers over 2 ranks: 2 each; rank 0 holds the dense layer.
		want := map[int]float64{mtp: 0, attn: 2, moe: 1, p.Output: 0, p.Embedding: 1}
		if sp.head {
			want = map[int]float64{mtp: 1, attn: 3, moe: 3, p.Output: 2, p.Embedding: 0}
		}
		for b, n := range want {
			if sp.mult[b] != n {
				t.Errorf("head %v: block %s runs %v times per micro-batch, want %v", sp.head, p.Blocks[b].Name, sp.mult[b], n)
			}
		}
	}

	// Full recompute re-runs the module's layer: its projection
	// 2·(2h)·h = 1,048,576 FLOPs per token more than an MoE layer's.
	cm := NewModel(p)
	full, _ := cm.policy(space.RecomputeFull)
	rr := cm.rerunFLOPsPerToken(1024)[full]
	if got, want := rr[p.MTP.Kind]-rr[p.Stack[1].Kind], 2.0*1024*512; got != want {
		t.Errorf("MTP layer re-runs %v FLOPs per token more than an MoE layer, want %v", got, want)
	}
	c := gpuCluster("h100-8", chipH100, 8, 450e9, 50e9)
	w := space.Workload{Batch: 8, SeqLen: 1024}
	s := strategy(space.Strategy{Degree: space.Degrees{space.DP: 8}, Recompute: space.RecomputeFull})
	with, err := Evaluate(p, c, w, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	without, err := evaluate(tinyDeepSeek(0), c, w, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tokens := 8.0 * 1024
	if got, want := with.ModelFLOPs, tokens*m.ModelFLOPsPerToken(1024); got != want {
		t.Errorf("model FLOPs %v, want %v", got, want)
	}
	if got, want := (with.HardwareFLOPs-with.ModelFLOPs)-(without.HardwareFLOPs-without.ModelFLOPs), tokens*rr[p.MTP.Kind]; !near(got, want, 1e-12) {
		t.Errorf("the MTP module adds %v re-run FLOPs, want %v", got, want)
	}
	if !(with.ComputeSeconds > without.ComputeSeconds) {
		t.Errorf("compute %v s with the MTP module, %v s without", with.ComputeSeconds, without.ComputeSeconds)
	}
}

// TestMLALatentGather checks that, under sequence parallelism, MLA's
// up-projections all-gather the latents (and the shared rotary key after
// its projection), not the residual stream, and that the down-projections'
// weight gradients stay partial over tp until the step's reduction
// (Megatron-Core's MLA with duplicated down-projections).
func TestMLALatentGather(t *testing.T) {
	m := tinyDeepSeek(0)
	c := gpuCluster("h100-8", chipH100, 8, 450e9, 50e9)
	s := strategy(space.Strategy{Degree: space.Degrees{space.TP: 8}, SP: true})
	est, err := evaluate(m, c, space.Workload{Batch: 8, SeqLen: 1024}, s, Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	// One sequence of 1024 tokens, bf16: the q latent 1024·96·2 = 196,608
	// bytes, the kv latent 1024·64·2 = 131,072, the rotary key 1024·16·2 =
	// 32,768; the residual stream would be 1024·512·2 = 1,048,576.
	want := map[string]float64{"q_up: gather cqn": 196608, "kv_up: gather ckvn": 131072, "k_rope: gather k_rope": 32768}
	found := map[string]bool{}
	for _, col := range est.Collectives {
		for prefix, bytes := range want {
			if len(col.Why) >= len(prefix) && col.Why[:len(prefix)] == prefix {
				found[prefix] = true
				if col.Op != AllGather || col.Bytes != bytes {
					t.Errorf("%s: %s of %v bytes, want AllGather of %v", prefix, col.Op, col.Bytes, bytes)
				}
			}
		}
		if col.Why == "q_up: gather xn" || col.Why == "kv_down: gather xn" {
			t.Errorf("the residual stream is gathered: %s", col.Why)
		}
	}
	for prefix := range want {
		if !found[prefix] {
			t.Errorf("no collective %q", prefix)
		}
	}
}
