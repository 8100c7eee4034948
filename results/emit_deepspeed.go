package results

import (
	"encoding/json"
	"fmt"

	"github.com/meshplan/meshplan/space"
)

// emitDeepSpeed writes DeepSpeed's JSON config for e, by the rules of
// deepspeedai/DeepSpeed@edaa7221267243c7be7fb49c5d5f5c4fb97b4641
// (results/testdata/emit/deepspeed-keys.txt holds its keys).
func emitDeepSpeed(e Evaluation) (string, error) {
	s := e.Strategy
	var bad []string
	for _, d := range []struct {
		key, why string
		v        int
	}{
		{"tp", "tensor parallelism lives in the model code (Megatron-DeepSpeed does not take --emit megatron's flags)", s.Degree[space.TP]},
		{"pp", "pipeline parallelism needs a PipelineModule in the model code (Megatron-DeepSpeed does not take --emit megatron's flags)", s.Degree[space.PP]},
		{"cp", "context parallelism is not a DeepSpeed config setting (Ulysses sequence parallelism is set up in the model code)", s.Degree[space.CP]},
		{"ep", "expert parallelism is set per MoE layer in the model code (deepspeed.moe ep_size)", s.Degree[space.EP]},
	} {
		if d.v > 1 {
			bad = append(bad, fmt.Sprintf("%s=%d: %s", d.key, d.v, d.why))
		}
	}
	if s.Recompute != space.RecomputeNone {
		// Its activation_checkpointing section only configures
		// deepspeed.checkpointing.checkpoint(), which the model code must
		// call (deepspeedai/DeepSpeed@edaa7221267243c7be7fb49c5d5f5c4fb97b4641:deepspeed/runtime/activation_checkpointing/checkpointing.py:1058, 1162).
		bad = append(bad, fmt.Sprintf("recompute=%s: a DeepSpeed config alone recomputes nothing (activation_checkpointing only configures deepspeed.checkpointing.checkpoint(), which the model code must call); search with --fix recompute=none", s.Recompute))
	}
	if s.FP8() {
		bad = append(bad, "precision=fp8: a DeepSpeed config has no FP8 matmuls (Transformer Engine is set up in the model code); search with --fix precision=bf16")
	}
	if s.Int8() {
		bad = append(bad, "precision=int8: a DeepSpeed config has no int8 training matmuls; search with --fix precision=bf16")
	}
	if s.BF16Moments() {
		bad = append(bad, "weights=bf16-moments: DeepSpeed's optimizers keep fp32 moments beside the fp32 master weights; search with --fix weights=fp32")
	}
	if s.BF16Weights() {
		bad = append(bad, "weights=bf16: DeepSpeed's bf16 optimizer keeps fp32 master weights and moments; search with --fix weights=fp32")
	}
	if len(bad) > 0 {
		return "", &EmitError{Framework: DeepSpeed, Parts: bad}
	}
	zero := map[string]any{"stage": s.Zero}
	switch {
	case s.Degree[space.FSDP] > 1 && s.Degree[space.DP] > 1:
		zero = map[string]any{"stage": 3, "mics_shard_size": s.Degree[space.FSDP]}
	case s.Degree[space.FSDP] > 1:
		zero = map[string]any{"stage": 3}
	case s.Zero > 0:
		// The plan hides the gradient reduce-scatter under the backward
		// pass; stages 1 and 2 overlap it only when asked
		// (runtime/zero/config.py's overlap_comm, off below stage 3).
		zero["overlap_comm"] = true
	}
	cfg := map[string]any{
		"train_batch_size":               e.Workload.Batch,
		"train_micro_batch_size_per_gpu": s.MB,
		"gradient_accumulation_steps":    s.NumMicrobatches(e.Workload),
		"bf16":                           map[string]any{"enabled": true},
		"zero_optimization":              zero,
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", fmt.Errorf("results: writing the DeepSpeed config: %w", err)
	}
	return string(data) + "\n", nil
}
