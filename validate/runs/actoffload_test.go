package runs

import "testing"

// TestBridgeActOffload: the cpu_offloading_num_layers of the
// Megatron-Bridge FSDP recipes (bridgeActOffload's table, read from
// scripts/performance at v0.1.0rc3, v0.2.0 and v0.3.0 to v0.4.2), and
// nothing for a row without Megatron-FSDP, another model or another
// source.
func TestBridgeActOffload(t *testing.T) {
	src := func(release string) string {
		return "NVIDIA-NeMo/Megatron-Bridge@067f987d:docs/performance-summary-archive.md section \"" + release + " NeMo Container\""
	}
	const fsdp, ddp = "Megatron-FSDP (shard group 64 GPUs)", "no FSDP (FSDP=0, DDP; distributed-optimizer use not stated)"
	for _, tt := range []struct {
		source, model, chip, precision, zero string
		want                                 int
		ok                                   bool
	}{
		{src("25.09"), "Llama-3.1-405B", "GB200", "FP8?", fsdp, 95, true},
		{src("25.11"), "Llama-3/3.1-70B", "GB200", "FP8-CS", fsdp, 40, true},
		{src("26.02"), "Llama-3/3.1-70B", "GB300", "FP8", fsdp, 20, true},
		{src("26.04"), "Llama-3/3.1-70B", "GB200", "BF16", fsdp, 20, true},
		{src("26.04"), "Llama-3/3.1-70B", "B200", "FP8-CS", fsdp, 5, true},
		{src("26.04.01"), "Llama-3.1-405B", "GB200", "FP8-CS", fsdp, 92, true},
		{src("26.04.01"), "Llama-3.1-405B", "GB300", "BF16", fsdp, 40, true},
		{src("25.11"), "Llama-3/3.1-70B", "GB200", "FP8-MX", ddp, 0, false},
		{src("25.11"), "Llama-3/3.1-8B", "H100-SXM-80GB", "FP8-CS", fsdp, 0, false},
		{"NVIDIA/Megatron-LM@d98e8a64:examples", "Llama-3/3.1-70B", "GB200", "FP8", fsdp, 0, false},
	} {
		r := Run{Source: tt.source, ModelName: tt.model, Chip: tt.chip, Precision: tt.precision, ZeroOrFSDP: tt.zero}
		if got, ok := r.bridgeActOffload(); got != tt.want || ok != tt.ok {
			t.Errorf("%s %s %s on %s from %q: %d, %t; want %d, %t", tt.model, tt.precision, tt.zero, tt.chip, tt.source, got, ok, tt.want, tt.ok)
		}
	}
}
