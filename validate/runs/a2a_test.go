package runs

import (
	"strings"
	"testing"
)

// TestBridgeA2AOverlap: the rows of Megatron-Bridge's performance tables
// whose release's recipe sets overlap_moe_expert_parallel_comm, and a few
// it does not (bridgeA2AOverlap's table, read from scripts/performance at
// v0.1.0rc3, v0.2.0 and v0.4.0 to v0.4.2).
func TestBridgeA2AOverlap(t *testing.T) {
	src := func(release string) string {
		return "NVIDIA-NeMo/Megatron-Bridge@067f987d:docs/performance-summary-archive.md section \"" + release + " NeMo Container\""
	}
	for _, tt := range []struct {
		source, model, chip string
		want                bool
	}{
		{src("25.09"), "DeepSeek-V3", "H100-SXM-80GB", true},
		{src("25.09"), "DeepSeek-V3", "GB200", false},
		{src("25.09"), "Qwen3-30B-A3B", "H100-SXM-80GB", false},
		{src("25.11"), "Qwen3-30B-A3B", "H100-SXM-80GB", true},
		{src("25.11"), "Qwen3-30B-A3B", "GB200", false},
		{src("25.11"), "Qwen3-235B-A22B", "B200", true},
		{src("25.11"), "Qwen3-235B-A22B", "GB200", false},
		{src("25.11"), "GPT-OSS-120B", "GB200", false},
		{src("26.04.01"), "Qwen3-235B-A22B", "H100-SXM-80GB", true},
		{src("26.04.01"), "GPT-OSS-120B", "GB200", true},
		{src("26.04.01"), "GPT-OSS-120B", "B200", false},
		{src("26.04.01"), "DeepSeek-V3", "B200", true},
		{src("26.04.01"), "DeepSeek-V3", "GB200", false},
		// The later releases of the archive (bridge-archive-2602-2606.csv).
		{src("26.02"), "Qwen3-30B-A3B", "H100-SXM-80GB", true},
		{src("26.02.01"), "Qwen3-30B-A3B", "H100-SXM-80GB", false},
		{src("26.04"), "GPT-OSS-120B", "GB200", true},
		{src("26.04"), "GPT-OSS-120B", "B200", false},
		{src("26.06"), "DeepSeek-V3", "GB200", true},
		{src("26.06.01"), "Qwen3-235B-A22B", "GB200", true},
		{src("26.06"), "Qwen3-30B-A3B", "B300", true},
		{src("26.06"), "DeepSeek-V3", "B300", false},
		{src("26.06.01"), "GPT-OSS-120B", "GB300", true},
		{src("26.04.01"), "DeepSeek-V3", "GB300", false},
		{src("26.02"), "Qwen3-235B-A22B", "B300", true},
		{src("26.02.01"), "Qwen3-235B-A22B", "B300", true}, // the row's vp 4 is v0.3.0's config
		{src("26.02.01"), "Qwen3-235B-A22B", "GB300", false},
		{"NVIDIA/Megatron-LM@d98e8a64:examples", "DeepSeek-V3", "H100-SXM-80GB", false},
	} {
		r := Run{Source: tt.source, ModelName: tt.model, Chip: tt.chip}
		if got := r.bridgeA2AOverlap(); got != tt.want {
			t.Errorf("%s on %s from %q: %t, want %t", tt.model, tt.chip, tt.source, got, tt.want)
		}
	}
}

// TestBridgeRecompute: the recomputation each release's performance config
// sets for the Megatron-Bridge MoE rows (bridgeRecompute's table): Qwen3
// none everywhere, DeepSeek-V3's and GPT-OSS's module lists in the
// planner's spelling (model.LookupPolicy's order), and nothing for a row
// no config of its release matches or another source's row.
func TestBridgeRecompute(t *testing.T) {
	src := func(release string) string {
		return "NVIDIA-NeMo/Megatron-Bridge@067f987d:docs/performance-summary-archive.md section \"" + release + " NeMo Container\""
	}
	for _, tt := range []struct {
		source, model, chip string
		want                string
		ok                  bool
	}{
		{src("25.09"), "DeepSeek-V3", "H100-SXM-80GB", "mlp+mla_up_proj", true},
		{src("25.09"), "DeepSeek-V3", "GB200", "mlp+moe_act+mla_up_proj", true},
		{src("25.09"), "Qwen3-30B-A3B", "H100-SXM-80GB", "none", true},
		{src("25.11"), "DeepSeek-V3", "B200", "mla_up_proj", true},
		{src("25.11"), "DeepSeek-V3", "GB200", "", false},
		{src("25.11"), "GPT-OSS-120B", "B200", "layernorm+moe_act", true},
		{src("25.11"), "GPT-OSS-120B", "GB200", "", false},
		{src("25.11"), "GPT-OSS-120B", "H100-SXM-80GB", "", false},
		{src("25.11"), "Qwen3-235B-A22B", "GB200", "none", true},
		{src("26.04.01"), "DeepSeek-V3", "GB200", "mlp", true},
		{src("26.04.01"), "DeepSeek-V3", "B200", "mlp+mla_up_proj", true},
		{src("26.04.01"), "GPT-OSS-120B", "H100-SXM-80GB", "layernorm+moe_act", true},
		{src("26.04.01"), "Qwen3-30B-A3B", "B200", "none", true},
		{src("26.04.01"), "Llama-3-70B", "B200", "", false},
		{src("26.02"), "DeepSeek-V3", "B200", "mla_up_proj", true},
		{src("26.04"), "DeepSeek-V3", "GB200", "mlp", true},
		{src("26.02.01"), "GPT-OSS-120B", "B200", "layernorm+moe_act", true},
		{src("26.06"), "GPT-OSS-120B", "GB200", "none", true},
		{src("26.06.01"), "Qwen3-30B-A3B", "GB200", "none", true},
		{src("26.04.01"), "DeepSeek-V3", "GB300", "mla_up_proj", true},
		{src("26.06"), "DeepSeek-V3", "GB300", "none", true}, // recompute_modules=[]
		{src("26.06"), "DeepSeek-V3", "B300", "mla_up_proj", true},
		{src("26.02"), "GPT-OSS-120B", "GB300", "none", true},
		{src("26.04"), "GPT-OSS-120B", "B300", "none", true},
		{src("26.02.01"), "Qwen3-235B-A22B", "B300", "none", true},
		// Nemotron 3 Nano: the whole MoE layer and the norms on H100 (and
		// in FP8 the core attention and the expert activation), nothing on
		// Blackwell.
		{src("26.04"), "Nemotron 3 Nano", "H100-SXM-80GB", "layernorm+moe", true},
		{src("26.04"), "Nemotron 3 Nano/FP8", "H100-SXM-80GB", "core_attn+layernorm+moe_act+moe", true},
		{src("26.06"), "Nemotron 3 Nano", "GB200", "none", true},
		{"NVIDIA/Megatron-LM@d98e8a64:examples", "DeepSeek-V3", "H100-SXM-80GB", "", false},
	} {
		r := Run{Source: tt.source, ModelName: tt.model, Chip: tt.chip}
		if name, precision, ok := strings.Cut(tt.model, "/"); ok {
			r.ModelName, r.Precision = name, precision
		}
		if got, ok := r.bridgeRecompute(); got != tt.want || ok != tt.ok {
			t.Errorf("%s on %s from %q: %q, %t; want %q, %t", tt.model, tt.chip, tt.source, got, ok, tt.want, tt.ok)
		}
	}
}

// TestBridgeExpertParallel: the one 25.11 row whose table contradicts its
// release's config in expert parallelism (GPT-OSS-120B on B200: ep 64, not
// the table's 8) takes the config's; the same job in 26.04.01 (ep 8 in
// config and table), the same model on other chips, a row whose table
// already says 64, another model and another source's row keep the table's.
func TestBridgeExpertParallel(t *testing.T) {
	src := func(release string) string {
		return "NVIDIA-NeMo/Megatron-Bridge@067f987d:docs/performance-summary-archive.md section \"" + release + " NeMo Container\""
	}
	for _, tt := range []struct {
		source, model, chip string
		ep, want            int // want 0: the table's
	}{
		{src("25.11"), "GPT-OSS-120B", "B200", 8, 64},
		{src("25.11"), "GPT-OSS-120B", "B200", 64, 0},
		{src("25.11"), "GPT-OSS-120B", "GB200", 64, 0},
		{src("25.11"), "GPT-OSS-120B", "H100-SXM-80GB", 8, 0},
		{src("26.04.01"), "GPT-OSS-120B", "B200", 8, 0},
		{src("25.11"), "Qwen3-30B-A3B", "B200", 8, 0},
		{"NVIDIA/Megatron-LM@d98e8a64:examples", "GPT-OSS-120B", "B200", 8, 0},
	} {
		r := Run{Source: tt.source, ModelName: tt.model, Chip: tt.chip, EP: tt.ep}
		if got, ok := r.bridgeExpertParallel(); ok != (tt.want > 0) || got != tt.want {
			t.Errorf("%s on %s (ep %d) from %q: %d, %t; want %d", tt.model, tt.chip, tt.ep, tt.source, got, ok, tt.want)
		}
	}
}

// TestBridgeDenseRecompute: the Megatron-Bridge Llama rows whose
// release's performance config has the row's layout and recomputes
// nothing (bridgeDenseRecompute's table) are posed with none; a row of
// another layout, an FSDP row (it offloads activations instead) and
// another source's row are not.
func TestBridgeDenseRecompute(t *testing.T) {
	src := func(release string) string {
		return "NVIDIA-NeMo/Megatron-Bridge@067f987d:docs/performance-summary-archive.md section \"" + release + " NeMo Container\""
	}
	const noFSDP = "no FSDP (FSDP=0, DDP; distributed-optimizer use not stated)"
	for _, tt := range []struct {
		source, model, chip string
		tp, pp, cp, vp      int
		zero                string
		want                string
		ok                  bool
	}{
		{src("25.11"), "Llama-3.1-405B", "GB200", 4, 16, 1, 4, noFSDP, "none", true},
		{src("25.11"), "Llama-3.1-405B", "B200", 4, 8, 2, 8, noFSDP, "none", true},
		{src("25.11"), "Llama-3/3.1-8B", "GB200", 1, 1, 1, 0, noFSDP, "none", true},
		{src("25.11"), "Llama-3/3.1-8B", "B200", 1, 1, 1, 0, noFSDP, "none", true},
		{src("26.04.01"), "Llama-3/3.1-70B", "GB200", 2, 4, 0, 5, noFSDP, "none", true},
		{src("25.11"), "Llama-3/3.1-70B", "GB200", 1, 1, 1, 1, "Megatron-FSDP (shard group 64 GPUs)", "", false},
		{src("25.09"), "Llama-3.1-405B", "GB200", 2, 1, 1, 1, "Megatron-FSDP (shard group 64 GPUs)", "", false},
		{src("25.11"), "Llama-3.1-405B", "GB200", 4, 8, 2, 8, noFSDP, "", false},
		{"NVIDIA/Megatron-LM@d98e8a64:examples/llama/README.md", "Llama-3.1-405B", "GB200", 4, 16, 1, 4, "", "", false},
	} {
		r := Run{Source: tt.source, ModelName: tt.model, Chip: tt.chip, TP: tt.tp, PP: tt.pp, CP: tt.cp, InterleaveV: tt.vp, ZeroOrFSDP: tt.zero}
		if got, ok := r.bridgeDenseRecompute(); got != tt.want || ok != tt.ok {
			t.Errorf("%s on %s (tp %d pp %d cp %d vp %d) from %q: %q, %t; want %q, %t", tt.model, tt.chip, tt.tp, tt.pp, tt.cp, tt.vp, tt.source, got, ok, tt.want, tt.ok)
		}
	}
}

// TestGB200DeepSeekRecompute: the --recompute-modules of Megatron-LM's
// DeepSeek-V3 GB200 baseline and final runs (the optimization write-up's
// section 1 and section 2.2.2), none for another source or a published list.
func TestGB200DeepSeekRecompute(t *testing.T) {
	const src = "NVIDIA/Megatron-LM@eb0783b6:docs/discussions/deepseek-v3-gb200-optimization/deepseek-v3-gb200-optimization.md section 3"
	for _, tt := range []struct {
		source, recompute, notes, want string
	}{
		{src, "selective", "baseline: NCCL all-to-all dispatcher", "mlp+mla_up_proj"},
		{src, "selective", "final: HybridEP dispatcher", "mlp+moe_act"},
		{src, "selective", "an intermediate step", ""},
		{src, "full", "baseline: NCCL all-to-all dispatcher", ""},
		{"NVIDIA/Megatron-LM@d98e8a64:examples/llama/README.md", "selective", "baseline: x", ""},
	} {
		r := Run{Source: tt.source, Recompute: tt.recompute, Notes: tt.notes}
		if got := r.gb200DeepSeekRecompute(); got != tt.want {
			t.Errorf("%q %q: %q, want %q", tt.recompute, tt.notes, got, tt.want)
		}
	}
}

// TestBF16AdamMoments: a Megatron-LM row with BF16 optimizer states keeps
// two bf16 moments (4 bytes a parameter, not 8) and no fp32 copy of its
// fp32 main gradients.
func TestBF16AdamMoments(t *testing.T) {
	for _, tt := range []struct {
		zero        string
		moments     float64
		mainGradCpy bool
	}{
		{"distributed optimizer (--use-distributed-optimizer), BF16 Adam moments", 4, false},
		{"distributed optimizer (--use-distributed-optimizer)", 8, true},
	} {
		r := Run{Format: FormatPublished, Source: "NVIDIA/Megatron-LM@eb0783b6:docs/discussions/deepseek-v3-gb200-optimization/deepseek-v3-gb200-optimization.md",
			Framework: "Megatron-Core (dev branch, ~v0.15) + Transformer Engine 2.9", ZeroOrFSDP: tt.zero}
		so, fw, err := r.SearchOptions(Options{})
		if err != nil {
			t.Fatal(err)
		}
		pr := so.Program.Precision
		if fw != "megatron" || pr.Moments != tt.moments || pr.MainGradCopy != tt.mainGradCpy {
			t.Errorf("%q: %s moments %v main-grad copy %v, want megatron %v %v", tt.zero, fw, pr.Moments, pr.MainGradCopy, tt.moments, tt.mainGradCpy)
		}
	}
}

// TestMegatronLlamaBF16Grads: the rows of Megatron-LM's Llama FP8 table
// keep a bf16 gradient buffer (2 bytes, train_llama3_8b_h100_fp8.sh's
// --grad-reduce-in-bf16), other Megatron-LM rows the fp32 one.
func TestMegatronLlamaBF16Grads(t *testing.T) {
	for _, tt := range []struct {
		source string
		grad   float64
	}{
		{"NVIDIA/Megatron-LM@d98e8a64:examples/llama/README.md (table added bf6e9985, 2025-06-14)", 2},
		{"NVIDIA/Megatron-LM@eb0783b6:docs/discussions/deepseek-v3-gb200-optimization/deepseek-v3-gb200-optimization.md", 4},
	} {
		r := Run{Format: FormatPublished, Source: tt.source, Framework: "Megatron-LM / Megatron-Core"}
		so, _, err := r.SearchOptions(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := so.Program.Precision.Grad; got != tt.grad {
			t.Errorf("%s: gradient bytes %v, want %v", tt.source, got, tt.grad)
		}
	}
}

// TestBridgeDispatcher: the MoE token dispatcher each release's
// performance config runs the Megatron-Bridge MoE rows with
// (bridgeDispatcher's table, read from scripts/performance at v0.1.0rc3,
// v0.2.0 and v0.4.2), "" for another source.
func TestBridgeDispatcher(t *testing.T) {
	src := func(release string) string {
		return "NVIDIA-NeMo/Megatron-Bridge@067f987d:docs/performance-summary-archive.md section \"" + release + " NeMo Container\""
	}
	for _, tt := range []struct {
		source, model, chip string
		want                string
	}{
		{src("25.09"), "DeepSeek-V3", "H100-SXM-80GB", "deepep"},
		{src("25.09"), "DeepSeek-V3", "GB200", "alltoall"},
		{src("25.09"), "Qwen3-30B-A3B", "H100-SXM-80GB", "alltoall"},
		{src("25.11"), "DeepSeek-V3", "GB200", "hybridep"},
		{src("25.11"), "DeepSeek-V3", "B200", "alltoall"},
		{src("25.11"), "Qwen3-30B-A3B", "GB200", "hybridep"},
		{src("25.11"), "Qwen3-235B-A22B", "H100-SXM-80GB", "alltoall"},
		{src("25.11"), "GPT-OSS-120B", "GB200", "alltoall"},
		{src("26.04.01"), "Qwen3-30B-A3B", "H100-SXM-80GB", "hybridep"},
		{src("26.04.01"), "Qwen3-235B-A22B", "H100-SXM-80GB", "alltoall"},
		{src("26.04.01"), "Qwen3-235B-A22B", "GB200", "hybridep"},
		{src("26.04.01"), "DeepSeek-V3", "B200", "deepep"},
		{src("26.04.01"), "GPT-OSS-120B", "GB200", "alltoall"},
		{src("26.02"), "Qwen3-30B-A3B", "H100-SXM-80GB", "deepep"},
		{src("26.02"), "Qwen3-30B-A3B", "B200", "alltoall"},
		{src("26.02.01"), "DeepSeek-V3", "GB200", "hybridep"}, // the recipe applies its backend at its end
		// GB300 and B300 (bridge-archive-gb300-b300.csv).
		{src("26.02"), "DeepSeek-V3", "B300", "hybridep"},
		{src("26.02"), "GPT-OSS-120B", "GB300", "alltoall"},
		{src("26.02"), "GPT-OSS-120B", "B300", "alltoall"},
		{src("26.02.01"), "GPT-OSS-120B", "B300", "hybridep"}, // ep 8: v0.4.0's config
		{src("26.04"), "Qwen3-235B-A22B", "B300", "alltoall"},
		{src("26.04.01"), "Qwen3-235B-A22B", "B300", "hybridep"},
		{src("26.04.01"), "GPT-OSS-120B", "GB300", "alltoall"},
		{src("26.06"), "GPT-OSS-120B", "GB300", "hybridep"},
		{src("26.06.01"), "Qwen3-30B-A3B", "GB300", "hybridep"},
		{src("26.04"), "GPT-OSS-120B", "B200", "hybridep"},
		{src("26.04"), "GPT-OSS-120B", "H100-SXM-80GB", "alltoall"},
		{src("26.06"), "GPT-OSS-120B", "GB200", "hybridep"},
		{src("26.02.01"), "Nemotron 3 Nano", "H100-SXM-80GB", "hybridep"},
		{src("26.06.01"), "Nemotron 3 Nano", "B300", "hybridep"},
		{"NVIDIA/Megatron-LM@d98e8a64:examples", "DeepSeek-V3", "H100-SXM-80GB", ""},
	} {
		r := Run{Source: tt.source, ModelName: tt.model, Chip: tt.chip}
		if got := r.bridgeDispatcher(); got != tt.want {
			t.Errorf("%s on %s from %q: %q, want %q", tt.model, tt.chip, tt.source, got, tt.want)
		}
	}
}

// TestNotedMoE: the MoE overlap and dispatcher a Megatron-Core row's own
// notes state; nothing for a performance-summary row (posed from its
// recipe) or another framework.
func TestNotedMoE(t *testing.T) {
	perf := "NVIDIA-NeMo/Megatron-Bridge@067f987d:docs/performance-summary-archive.md section \"25.11 NeMo Container\""
	for _, tt := range []struct {
		source, framework, notes string
		overlap                  bool
		dispatcher               string
	}{
		{"NVIDIA-NeMo/Megatron-Bridge skills", "Megatron-Bridge / Megatron-Core", "Independent validation run with EP overlap on (flex dispatcher + HybridEP, force-balanced routing)", true, "hybridep"},
		{"NVIDIA-NeMo/Megatron-Bridge docs", "Megatron-Bridge / Megatron-Core", "5-step smoke run, alltoall dispatcher, moe_permute_fusion off", false, "alltoall"},
		{"NVIDIA-NeMo/Megatron-Bridge docs", "Megatron-Bridge / Megatron-Core", "DeepEP dispatcher", false, "deepep"},
		{"NVIDIA-NeMo/Megatron-Bridge docs", "Megatron-Bridge / Megatron-Core", "baseline, no MoE settings stated", false, ""},
		{perf, "Megatron-Bridge (NeMo 25.11 container, Megatron-Core)", "EP overlap on, HybridEP", false, ""},
		{"pytorch/torchtitan", "torchtitan", "EP overlap on, DeepEP", false, ""},
	} {
		r := Run{Source: tt.source, Framework: tt.framework, Notes: tt.notes, ModelName: "Qwen3-30B-A3B", Chip: "H100-SXM-80GB"}
		over, d := r.notedMoE()
		if over != tt.overlap || d != tt.dispatcher {
			t.Errorf("%q / %q: overlap %v dispatcher %q, want %v %q", tt.framework, tt.notes, over, d, tt.overlap, tt.dispatcher)
		}
	}
}
