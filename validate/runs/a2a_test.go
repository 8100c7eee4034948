package runs

import "testing"

// TestBridgeA2AOverlap: the rows of Megatron-Bridge's performance tables
// whose release's recipe sets overlap_moe_expert_parallel_comm, and a few
// it does not (bridgeA2AOverlap's table, read from scripts/performance at
// v0.1.0rc3, v0.2.0 and v0.4.0).
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
		{src("26.04.01"), "DeepSeek-V3", "B200", false},
		{"NVIDIA/Megatron-LM@d98e8a64:examples", "DeepSeek-V3", "H100-SXM-80GB", false},
	} {
		r := Run{Source: tt.source, ModelName: tt.model, Chip: tt.chip}
		if got := r.bridgeA2AOverlap(); got != tt.want {
			t.Errorf("%s on %s from %q: %t, want %t", tt.model, tt.chip, tt.source, got, tt.want)
		}
	}
}

// TestBridgeRecompute: the recompute modules of the 25.09 DeepSeek-V3
// performance recipe (v0.1.0rc3 scripts/performance/run_script.py:88-91),
// and none for the rows whose recipe is not read.
func TestBridgeRecompute(t *testing.T) {
	src := func(release string) string {
		return "NVIDIA-NeMo/Megatron-Bridge@067f987d:docs/performance-summary-archive.md section \"" + release + " NeMo Container\""
	}
	for _, tt := range []struct {
		source, model, chip, want string
	}{
		{src("25.09"), "DeepSeek-V3 (671B, 37B active)", "H100-SXM-80GB", "mlp+mla_up_proj"},
		{src("25.09"), "DeepSeek-V3 (671B, 37B active)", "GB200", "mlp+moe_act+mla_up_proj"},
		{src("25.09"), "DeepSeek-V3 (671B, 37B active)", "B200", ""},
		{src("25.09"), "Qwen3-30B-A3B", "H100-SXM-80GB", ""},
		{src("25.11"), "DeepSeek-V3 (671B, 37B active)", "H100-SXM-80GB", ""},
		{"NVIDIA/Megatron-LM@d98e8a64:examples", "DeepSeek-V3", "H100-SXM-80GB", ""},
	} {
		r := Run{Source: tt.source, ModelName: tt.model, Chip: tt.chip}
		if got := r.bridgeRecompute(); got != tt.want {
			t.Errorf("%s on %s from %q: %q, want %q", tt.model, tt.chip, tt.source, got, tt.want)
		}
	}
}
