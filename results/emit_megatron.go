package results

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/space"
)

// emitMegatron writes Megatron-LM's flags for e, by the rules of
// NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553
// (megatron/training/arguments.py; results/testdata/emit/megatron-flags.txt
// holds its flags and choices).
func emitMegatron(e Evaluation) (string, error) {
	s := e.Strategy
	L := e.Model.Layers
	var bad []string
	switch s.Recompute {
	case space.RecomputeNone, space.RecomputeSelective, space.RecomputeFull:
	default:
		bad = append(bad, fmt.Sprintf("recompute=%s: Megatron-LM recomputes the core attention (selective) or whole layers (full); its --recompute-modules re-run MoE activations only with --moe-grouped-gemm, never a dense MLP's", s.Recompute))
	}
	if s.Zero > 1 {
		bad = append(bad, fmt.Sprintf("zero=%d: Megatron-LM's distributed optimizer shards the optimizer state and keeps a full-size gradient buffer on every rank (ZeRO-1); search with --fix zero=1", s.Zero))
	}
	if s.Degree[space.PP] > 1 {
		switch s.Schedule {
		case space.GPipe:
			bad = append(bad, "schedule=gpipe: Megatron-LM runs 1F1B or interleaved 1F1B pipelines")
		case space.ZBH1, space.ZBV, space.DualPipe, space.DualPipeV:
			bad = append(bad, fmt.Sprintf("schedule=%s: mainline Megatron-Core runs 1F1B or interleaved 1F1B pipelines, with no zero-bubble or DualPipe schedule; search with --fix schedule=1f1b", s.Schedule))
		}
	}
	var split [][2]string
	if s.Degree[space.PP] > 1 {
		switch {
		case s.Schedule == space.Interleaved && L%(s.Degree[space.PP]*s.V) != 0:
			bad = append(bad, fmt.Sprintf("schedule=interleaved,v=%d with %d layers over pp=%d: the interleaved schedule needs the layers to divide into pp x v = %d equal chunks", s.V, L, s.Degree[space.PP], s.Degree[space.PP]*s.V))
		case s.Schedule == space.Interleaved:
			split = append(split, [2]string{"--num-layers-per-virtual-pipeline-stage", strconv.Itoa(L / (s.Degree[space.PP] * s.V))})
		case L%s.Degree[space.PP] != 0:
			first, last, ok := unevenSplit(L, s.Degree[space.PP])
			if !ok {
				bad = append(bad, fmt.Sprintf("pp=%d with %d layers: Megatron-LM cannot split them with at most %d layers per stage", s.Degree[space.PP], L, space.MaxStageLayers(L, s.Degree[space.PP])))
			} else {
				split = append(split, [2]string{"--decoder-first-pipeline-num-layers", strconv.Itoa(first)},
					[2]string{"--decoder-last-pipeline-num-layers", strconv.Itoa(last)})
			}
		}
	}
	if len(bad) > 0 {
		return "", &EmitError{Framework: Megatron, Parts: bad}
	}
	var b strings.Builder
	emitHeader(&b, "#", Megatron, "Megatron-LM launch flags", e)
	fmt.Fprintf(&b, "# data-parallel size %d = %d GPUs / (tp %d x pp %d x cp %d), derived by Megatron-LM\n",
		s.Replicas(), e.Cluster.Chips(), s.Degree[space.TP], s.Degree[space.PP], s.Degree[space.CP])
	fmt.Fprintf(&b, "# placement: %s (Megatron-LM orders ranks tp, cp, ep, dp, pp from the innermost: megatron/training/initialize.py:395)\n", meshText(s))
	if s.Degree[space.TP] > 1 || s.Degree[space.CP] > 1 {
		b.WriteString("# set CUDA_DEVICE_MAX_CONNECTIONS=1 in the environment (validate_args asserts it for tp or cp)\n")
	}
	flags := [][2]string{
		{"--tensor-model-parallel-size", strconv.Itoa(s.Degree[space.TP])},
		{"--pipeline-model-parallel-size", strconv.Itoa(s.Degree[space.PP])},
	}
	flags = append(flags, split...)
	flags = append(flags, [2]string{"--context-parallel-size", strconv.Itoa(s.Degree[space.CP])})
	if s.Degree[space.EP] > 1 {
		flags = append(flags, [2]string{"--expert-model-parallel-size", strconv.Itoa(s.Degree[space.EP])})
		if s.Degree[space.TP] > 1 {
			// The experts split over tp or whole (space.Strategy.ETP).
			flags = append(flags, [2]string{"--expert-tensor-parallel-size", strconv.Itoa(s.ExpertTP())})
		}
	}
	if s.SP && s.Degree[space.TP] > 1 {
		flags = append(flags, [2]string{"--sequence-parallel", ""})
	}
	flags = append(flags,
		[2]string{"--micro-batch-size", strconv.Itoa(s.MB)},
		[2]string{"--global-batch-size", strconv.Itoa(e.Workload.Batch)},
		[2]string{"--seq-length", strconv.Itoa(e.Workload.SeqLen)},
	)
	switch s.Recompute {
	case space.RecomputeSelective:
		// The core attention (Megatron's default --recompute-modules).
		flags = append(flags, [2]string{"--recompute-granularity", "selective"})
	case space.RecomputeFull:
		flags = append(flags, [2]string{"--recompute-granularity", "full"}, [2]string{"--recompute-method", "uniform"}, [2]string{"--recompute-num-layers", "1"})
	}
	if s.Degree[space.DP] > 1 {
		// The plan hides the data-parallel gradient reduction (and with the
		// distributed optimizer the parameter all-gather) under compute;
		// both are off by default (megatron/training/arguments.py:3121,
		// 3148), and the gather needs the reduction (arguments.py:1024-1029).
		flags = append(flags, [2]string{"--overlap-grad-reduce", ""})
		if s.Zero == 1 {
			flags = append(flags, [2]string{"--overlap-param-gather", ""})
		}
	}
	if s.Zero == 1 {
		// ZeRO-1: the optimizer state sharded over dp, a full-size gradient
		// buffer on every rank (param_and_grad_buffer.py:1190-1192).
		flags = append(flags, [2]string{"--use-distributed-optimizer", ""})
	}
	flags = append(flags, [2]string{"--bf16", ""})
	if s.FP8() {
		// Transformer Engine's E4M3 forward and E5M2 backward formats, the
		// profile's scaling recipe.
		flags = append(flags, [2]string{"--fp8-format", "hybrid"}, [2]string{"--fp8-recipe", e.fp8Recipe()})
	}
	for i, f := range flags {
		line := f[0]
		if f[1] != "" {
			line += " " + f[1]
		}
		if i < len(flags)-1 {
			line += " \\"
		}
		b.WriteString(line + "\n")
	}
	return b.String(), nil
}

// unevenSplit splits layers over pp stages as Megatron-LM allows when they
// do not divide: the middle stages take ceil(layers/pp) each and the first
// and last stages the rest, each at most that.
func unevenSplit(layers, pp int) (first, last int, ok bool) {
	if pp < 2 {
		return 0, 0, false
	}
	c := (layers + pp - 1) / pp
	r := layers - (pp-2)*c
	if r < 2 || r > 2*c {
		return 0, 0, false
	}
	last = min(c, r-1)
	return r - last, last, true
}
