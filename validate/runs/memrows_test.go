package runs

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestMemoryRowReaders checks how the published-memory columns map to the
// strategy: recompute module lists, host offload, and the published
// configurations that fill blank shape columns.
func TestMemoryRowReaders(t *testing.T) {
	for text, want := range map[string]string{
		"selective: core_attn":                   space.RecomputeSelective,
		"selective: mlp + core_attn":             "core_attn+mlp",
		"selective: core_attn + layernorm":       "core_attn+layernorm",
		"selective: layernorm + moe_act":         "layernorm+moe_act",
		"selective: mla_up_proj + mlp":           "mlp+mla_up_proj",
		"selective: moe":                         "moe",
		"not restated (baseline used core_attn)": "",
		"selective":                              "",
		"selective: bogus":                       "",
	} {
		got, ok := moduleList(text)
		if got != want || ok != (want != "") {
			t.Errorf("moduleList(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
	for text, want := range map[string]string{
		"DeepSpeed ZeRO-3 with parameter + optimizer CPU offload":                      space.OffloadParamsOptimizer,
		"ColossalAI Gemini, placement_policy=auto (CPU/GPU), gpu_margin_mem_ratio 0.9": space.OffloadParamsOptimizer,
		"ColossalAI Gemini, placement_policy=cuda":                                     "",
		"DeepSpeed ZeRO-2 with optimizer CPU offload":                                  space.OffloadOptimizer,
		"DeepSpeed ZeRO-3": "",
	} {
		if got, _ := hostOffload(text); got != want {
			t.Errorf("hostOffload(%q) = %q, want %q", text, got, want)
		}
	}
	if r, ok := geminiMargin("ColossalAI Gemini, placement_policy=auto (CPU/GPU), gpu_margin_mem_ratio 0.9"); !ok || r != 0.9 {
		t.Errorf("geminiMargin = %v, %v; want 0.9", r, ok)
	}
	// 7 GB floor on 40 GB usable: 7 + 0.9·33 = 36.7 GB, unless the
	// optimizer state is smaller (5 GB: 12 GB).
	if got := geminiAutoPeak(7e9, 40e9, 0.9, 1e12); got != 7e9+0.9*33e9 {
		t.Errorf("geminiAutoPeak = %g, want %g", got, 7e9+0.9*33e9)
	}
	if got := geminiAutoPeak(7e9, 40e9, 0.9, 5e9); got != 12e9 {
		t.Errorf("geminiAutoPeak bounded = %g, want 12e9", got)
	}
	for name, layers := range map[string]int{"Moonlight 16B (1 dense + 26 MLA+MoE layers)": 27, "GPT-OSS-120B": 36, "GPT-OSS-120B (LoRA)": 36} {
		m, src, ok := publishedConfig(name)
		if !ok || m.Layers != layers || src == "" {
			t.Errorf("publishedConfig(%q) = %d layers, %q, %v; want %d layers and a source", name, m.Layers, src, ok, layers)
		}
	}
	m, _, _ := publishedConfig("Moonlight 16B")
	if m.MoE == nil || m.MoE.Experts != 64 || m.MoE.TopK != 6 || m.MoE.SharedExperts != 2 || m.MLA == nil || m.MLA.QLoRARank != 0 || m.Vocab != 163840 {
		t.Errorf("Moonlight config %+v, MoE %+v, MLA %+v: want 64 experts top-6, 2 shared, MLA without a query latent, vocab 163840", m, m.MoE, m.MLA)
	}
	if _, _, ok := publishedConfig("Mixtral-8x2B-like, reduced to 4 layers"); ok {
		t.Error("publishedConfig knows an unpublished model")
	}
}

// TestBridgeRecipes checks the Megatron-Bridge recipe each published row
// ran (bridgeRecipe) and the unit of its peak (peakUnitBytes: the logger's
// decimal GB).
func TestBridgeRecipes(t *testing.T) {
	const bridge = "NVIDIA-NeMo/Megatron-Bridge skills/x/card.yaml @600d069b"
	perf := bridgeRecipe{bf16Grads: true, fusedLoss: true}
	tests := []struct {
		name string
		r    Run
		want bridgeRecipe
		ok   bool
	}{
		{"moonlight", Run{Source: bridge, ModelName: "Moonlight 16B (1 dense + 26 MLA+MoE layers)"},
			bridgeRecipe{bf16Grads: true, precisionAware: true, fusedLoss: true}, true},
		{"llama sft", Run{Source: bridge, ModelName: "Llama 3 70B (SFT)"}, perf, true},
		{"qwen ep16", Run{Source: "NVIDIA-NeMo/Megatron-Bridge skills/nemo-mbridge-perf-expert-parallel-overlap/SKILL.md", ModelName: "Qwen3-30B-A3B"}, perf, true},
		{"perf recipe notes", Run{Source: bridge, ModelName: "Nemotron 3 Nano", Notes: "16-H100 perf recipe, HybridEP"}, perf, true},
		{"lora", Run{Source: bridge, ModelName: "Qwen3-30B-A3B (LoRA)"}, bridgeRecipe{}, false},
		{"other source", Run{Source: "NVIDIA/Megatron-LM PR #482", ModelName: "Llama 3 70B (SFT)"}, bridgeRecipe{}, false},
	}
	for _, tt := range tests {
		got, ok := tt.r.bridgeRecipe()
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: bridgeRecipe = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
	// What SearchOptions makes of the recipes under the megatron profile:
	// bytes per parameter of the gradient buffer and the moments, the
	// optimizer's fp32 gradient copy, and the loss's bytes per logit.
	for _, tt := range []struct {
		name                string
		r                   Run
		grad, moments       float64
		copy                bool
		lossSaved, lossTemp float64
	}{
		{"moonlight: precision-aware, bf16 moments", tests[0].r, 2, 4, false, 2, 0},
		{"llama sft: bf16 buffer, fp32 copy in the step", tests[1].r, 2, 8, true, 2, 0},
		// Megatron's own loss: the fp32 softmax kept, the gradient made in
		// it in place, and a bf16 copy for the output layer.
		{"other source: fp32 buffer", tests[5].r, 4, 8, true, 4, 2},
	} {
		meg, err := framework.Load("megatron")
		if err != nil {
			t.Fatal(err)
		}
		so, _, err := tt.r.SearchOptions(Options{Framework: &meg})
		if err != nil {
			t.Fatal(err)
		}
		pr, loss := so.Program.Precision, so.Program.Kernels.Passes[model.PassLoss]
		if pr.Grad != tt.grad || pr.Moments != tt.moments || pr.MainGradCopy != tt.copy || loss.SavedBytes != tt.lossSaved || loss.TransientBytes != tt.lossTemp {
			t.Errorf("%s: grad %v, moments %v, copy %v, loss %v + %v; want %v, %v, %v, %v + %v", tt.name,
				pr.Grad, pr.Moments, pr.MainGradCopy, loss.SavedBytes, loss.TransientBytes,
				tt.grad, tt.moments, tt.copy, tt.lossSaved, tt.lossTemp)
		}
	}
	// Moonlight's control row: 36.618 GB is 36.618e9 bytes, not 39.32e9.
	if got := (Run{Source: bridge}).peakUnitBytes() * 36.618; got != 36.618e9 {
		t.Errorf("Megatron-Bridge peak = %g bytes, want 36.618e9", got)
	}
	if got := (Run{Source: "hpcaitech/ColossalAI-Pytorch-lightning benchmark"}).peakUnitBytes(); got != 1<<30 {
		t.Errorf("ColossalAI peak unit = %g bytes, want 2^30", got)
	}
}

// TestLightningFP16Engine checks which ColossalAI-Pytorch-lightning rows
// run an fp16 model (DeepSpeed, Gemini) and what their loss keeps.
func TestLightningFP16Engine(t *testing.T) {
	const src = "hpcaitech/ColossalAI-Pytorch-lightning benchmark/gpt/README.md @6a82b8015e06"
	for _, tt := range []struct {
		zero, want string
	}{
		{"DeepSpeed ZeRO-3", "deepspeed"},
		{"ColossalAI Gemini (ZeRO-3-like), placement_policy=cuda", "gemini"},
		{"none (DDP)", ""},
	} {
		r := Run{Source: src, ZeroOrFSDP: tt.zero}
		if got := r.lightningFP16Engine(); got != tt.want {
			t.Errorf("lightningFP16Engine(%q) = %q, want %q", tt.zero, got, tt.want)
		}
	}
	if got := (Run{Source: "NVIDIA-NeMo/Megatron-Bridge x", ZeroOrFSDP: "DeepSpeed ZeRO-3"}).lightningFP16Engine(); got != "" {
		t.Errorf("another source's row = %q, want none", got)
	}
	r := Run{Source: src, ZeroOrFSDP: "ColossalAI Gemini, placement_policy=cuda"}
	generic, err := framework.Load(framework.Default)
	if err != nil {
		t.Fatal(err)
	}
	so, _, err := r.SearchOptions(Options{Framework: &generic})
	if err != nil {
		t.Fatal(err)
	}
	// fp16 logits: 2 bytes kept (log_softmax's output), 4 transient.
	if loss := so.Program.Kernels.Passes[model.PassLoss]; loss.SavedBytes != 2 || loss.TransientBytes != 4 {
		t.Errorf("loss keeps %v and %v bytes a logit, want 2 and 4", loss.SavedBytes, loss.TransientBytes)
	}
	if !so.Program.Precision.GradInWeight {
		t.Error("Gemini row without its gradients in the parameters' chunks")
	}
}

// TestLightningKeepsGrads checks which rows run Lightning's own optimizer
// loop on PyTorch before 2.0 (zero_grad keeps the gradients) and what the
// GPT2-XL DDP row then holds in its forward pass: the fp32 gradients of
// every parameter beside the fp32 parameters and their fp16 autocast
// copies. By hand, P = 48·(12·1600² + 13·1600) + 50257·1600 + 1024·1600
// + 2·1600 = 1,557,611,200 parameters, so 4·P = 6.230 GB of gradients and
// 6·P of parameters (4 fp32 + 2 fp16).
func TestLightningKeepsGrads(t *testing.T) {
	const src = "hpcaitech/ColossalAI-Pytorch-lightning benchmark/gpt/README.md @6a82b8015e06"
	for _, tt := range []struct {
		r    Run
		want bool
	}{
		{Run{Source: src, ZeroOrFSDP: "none (DDP)"}, true},
		{Run{Source: src, ZeroOrFSDP: "DeepSpeed ZeRO-3"}, false},
		{Run{Source: src, ZeroOrFSDP: "ColossalAI Gemini, placement_policy=cuda"}, false},
		{Run{Source: "NVIDIA-NeMo/Megatron-Bridge x", ZeroOrFSDP: "none (DDP)"}, false},
	} {
		if got := tt.r.lightningKeepsGrads(); got != tt.want {
			t.Errorf("lightningKeepsGrads(%q, %q) = %v, want %v", tt.r.Source, tt.r.ZeroOrFSDP, got, tt.want)
		}
	}
	rs, _ := readTestdata(t, "published-memory.csv")
	var ddp Run
	for _, r := range rs {
		if r.ID == "cl_gpt2xl_4gpu_ddp_bs6" {
			ddp = r
		}
	}
	if ddp.ID == "" {
		t.Fatal("no cl_gpt2xl_4gpu_ddp_bs6 row")
	}
	so, fw, err := ddp.SearchOptions(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fw != "pytorch" || so.Program.Precision.TransientGrads {
		t.Fatalf("framework %q, transient gradients %v; want pytorch with kept gradients", fw, so.Program.Precision.TransientGrads)
	}
	p, err := ddp.predict(nil, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const params = 1557611200.0
	b := p.best.mem
	if got, want := b.GradsBytes, 4*params; math.Abs(got/want-1) > 0.002 {
		t.Errorf("gradients %.4g bytes, want 4·P = %.4g", got, want)
	}
	if got, want := b.ParamsBytes, 6*params; math.Abs(got/want-1) > 0.002 {
		t.Errorf("parameters %.4g bytes, want 6·P = %.4g", got, want)
	}
}
