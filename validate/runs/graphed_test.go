package runs

import "testing"

// TestBridgeGraphedMoE: the Megatron-Bridge performance-summary MoE rows
// whose release's config runs a fused grouped MLP under a full-iteration
// CUDA graph are the 26.06 and 26.06.01 MXFP8 rows of DeepSeek-V3,
// GPT-OSS-120B and both Qwen3 on GB200 and GB300, and Qwen3-30B-A3B on
// B300 in 26.06 (v0.5.0 and v0.5.1's FP8_MX configs), and no other: not
// an earlier release, another precision, a B200, B300 DeepSeek-V3 or H100
// row, a dense model or another source.
func TestBridgeGraphedMoE(t *testing.T) {
	src := func(release string) string {
		return "NVIDIA-NeMo/Megatron-Bridge@067f987d:docs/performance-summary-archive.md section \"" + release + " NeMo Container\""
	}
	for _, tt := range []struct {
		source, model, chip, precision string
		want                           bool
	}{
		{src("26.06"), "Qwen3-30B-A3B", "GB200", "MXFP8", true},
		{src("26.06.01"), "DeepSeek-V3", "GB200", "MXFP8", true},
		{src("26.06"), "GPT-OSS-120B", "GB200", "MXFP8", true},
		{src("26.06.01"), "Qwen3-235B-A22B", "GB200", "MXFP8", true},
		{src("26.04.01"), "Qwen3-30B-A3B", "GB200", "MXFP8", false},
		{src("26.06"), "Qwen3-30B-A3B", "GB200", "BF16", false},
		{src("26.06"), "Qwen3-30B-A3B", "H100-SXM-80GB", "FP8", false},
		{src("26.06"), "Qwen3-30B-A3B", "B200", "MXFP8", false},
		{src("26.06.01"), "DeepSeek-V3", "GB300", "MXFP8", true},
		{src("26.06"), "Qwen3-30B-A3B", "B300", "MXFP8", true},
		{src("26.06"), "DeepSeek-V3", "B300", "MXFP8", false},
		{src("26.04.01"), "GPT-OSS-120B", "GB300", "BF16", false},
		{src("26.06"), "Llama-3.1-405B", "GB200", "MXFP8", false},
		{"NVIDIA/Megatron-LM@eb0783b6:docs/discussions", "DeepSeek-V3", "GB200", "MXFP8", false},
	} {
		r := Run{Source: tt.source, ModelName: tt.model, Chip: tt.chip, Precision: tt.precision}
		if got := r.bridgeGraphedMoE(); got != tt.want {
			t.Errorf("%s %s on %s from %q: %v, want %v", tt.model, tt.precision, tt.chip, tt.source, got, tt.want)
		}
	}
}

// TestGraphedLayers: the rows whose configs capture each layer but its
// routed experts in CUDA graphs (the attention with the router and the
// preprocessing, bridgeGraphedLayers, or 25.09's per-layer graphs): not a
// config that graphs the router and the preprocessing alone (Qwen3-30B-A3B
// on GB200 in 26.04.01, DeepSeek-V3 on GB200 in 25.11), nor one without
// graphs (H100, Qwen3-235B-A22B on B200), nor a full-iteration graph
// (bridgeGraphedMoE's). Nemotron 3 Nano, which bridgePerfRow does not key,
// from 26.02.01 on GB200, on B200 from 26.04.01, never on H100. Outside the
// performance summaries, a Megatron row whose notes say "partial CUDA
// graphs".
func TestGraphedLayers(t *testing.T) {
	src := func(release string) string {
		return "NVIDIA-NeMo/Megatron-Bridge@067f987d:docs/performance-summary-archive.md section \"" + release + " NeMo Container\""
	}
	const bridge = "Megatron-Bridge (NeMo container, Megatron-Core)"
	for _, tt := range []struct {
		source, framework, model, chip, precision, notes string
		want                                             bool
	}{
		{src("26.04.01"), bridge, "DeepSeek-V3", "GB200", "MXFP8", "", true},
		{src("26.04.01"), bridge, "DeepSeek-V3", "B200", "MXFP8", "", true},
		{src("26.04"), bridge, "DeepSeek-V3", "B200", "MXFP8", "", false},
		{src("26.04.01"), bridge, "Qwen3-30B-A3B", "B200", "MXFP8", "", true},
		{src("26.02"), bridge, "Qwen3-30B-A3B", "B200", "MXFP8", "", false},
		{src("26.04.01"), bridge, "Qwen3-30B-A3B", "GB200", "MXFP8", "", false},
		{src("26.04.01"), bridge, "Qwen3-30B-A3B", "H100-SXM-80GB", "FP8", "", false},
		{src("26.04.01"), bridge, "Qwen3-235B-A22B", "GB200", "MXFP8", "", true},
		{src("26.04.01"), bridge, "Qwen3-235B-A22B", "B200", "MXFP8", "", false},
		{src("25.11"), bridge, "DeepSeek-V3", "GB200", "FP8-MX", "", false},
		{src("25.11"), bridge, "Qwen3-235B-A22B", "GB200", "BF16", "", true},
		{src("25.09"), bridge, "Qwen3-235B-A22B", "GB200", "FP8?", "", true},
		{src("26.06"), bridge, "Qwen3-30B-A3B", "GB200", "MXFP8", "", false},
		{src("26.06"), bridge, "GPT-OSS-120B", "B300", "MXFP8", "", true},
		{src("26.02.01"), bridge, "Nemotron 3 Nano", "GB200", "MXFP8", "", true},
		{src("26.02.01"), bridge, "Nemotron 3 Nano", "B200", "MXFP8", "", false},
		{src("26.04.01"), bridge, "Nemotron 3 Nano", "B200", "MXFP8", "", true},
		{src("26.04.01"), bridge, "Nemotron 3 Nano", "H100-SXM-80GB", "FP8", "", false},
		{src("26.02"), bridge, "Nemotron 3 Nano", "GB200", "MXFP8", "", false},
		{"NVIDIA/Megatron-LM@eb0783b6:docs/discussions", "Megatron-Core", "DeepSeek-V3", "GB200", "MXFP8", "final: HybridEP dispatcher, partial CUDA graphs", true},
		{"NVIDIA/Megatron-LM@eb0783b6:docs/discussions", "Megatron-Core", "DeepSeek-V3", "GB200", "MXFP8", "baseline: no CUDA graphs", false},
		{"pytorch/torchtitan@b5bcd76c", "torchtitan", "Llama-3.1-8B", "H100", "BF16", "partial CUDA graphs", false},
	} {
		r := Run{Source: tt.source, Framework: tt.framework, ModelName: tt.model, Chip: tt.chip, Precision: tt.precision, Notes: tt.notes}
		if got := r.graphedLayers(); got != tt.want {
			t.Errorf("%s %s on %s from %q: %v, want %v", tt.model, tt.precision, tt.chip, tt.source, got, tt.want)
		}
	}
}
