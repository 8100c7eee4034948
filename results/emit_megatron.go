package results

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/model"
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
	var modules []string // a --recompute-modules list (model.IsModuleList)
	switch {
	case s.Recompute == space.RecomputeNone, s.Recompute == space.RecomputeSelective, s.Recompute == space.RecomputeFull:
	case model.IsModuleList(s.Recompute):
		modules = strings.Split(s.Recompute, "+")
		bad = append(bad, moduleListProblems(e, modules)...)
	default:
		bad = append(bad, fmt.Sprintf("recompute=%s: Megatron-LM recomputes the core attention (selective), a --recompute-modules list (core_attn+mlp, moe, ...) or whole layers (full)", s.Recompute))
	}
	if s.Zero > 1 {
		bad = append(bad, fmt.Sprintf("zero=%d: Megatron-LM's distributed optimizer shards the optimizer state and keeps a full-size gradient buffer on every rank (ZeRO-1); search with --fix zero=1", s.Zero))
	}
	if s.Int8() {
		bad = append(bad, "precision=int8: Megatron-LM trains in bf16 or fp8, not int8; search with --fix precision=fp8 or bf16")
	}
	if s.BF16Weights() {
		bad = append(bad, "weights=bf16: Megatron-LM's --bf16 keeps fp32 main parameters and Adam moments in its optimizer; search with --fix weights=fp32")
	}
	if s.Degree[space.PP] > 1 {
		switch s.Schedule {
		case space.GPipe:
			bad = append(bad, "schedule=gpipe: Megatron-LM runs 1F1B or interleaved 1F1B pipelines")
		case space.ZBH1, space.ZBV, space.DualPipe, space.DualPipeV:
			bad = append(bad, fmt.Sprintf("schedule=%s: mainline Megatron-Core runs 1F1B or interleaved 1F1B pipelines, with no zero-bubble or DualPipe schedule; search with --fix schedule=1f1b", s.Schedule))
		}
	}
	if err := s.Split.Check(L, s.Degree[space.PP]); err != nil {
		bad = append(bad, err.Error())
	}
	split := megatronSplit(s, L, e.Model.MTPLayers)
	if len(bad) > 0 {
		return "", &EmitError{Framework: Megatron, Parts: bad}
	}
	var b strings.Builder
	emitHeader(&b, "#", Megatron, "Megatron-LM launch flags", e)
	fmt.Fprintf(&b, "# data-parallel size %d = %d GPUs / (tp %d x pp %d x cp %d), derived by Megatron-LM\n",
		s.Replicas(), e.Cluster.Chips(), s.Degree[space.TP], s.Degree[space.PP], s.Degree[space.CP])
	fmt.Fprintf(&b, "# placement: %s (Megatron-LM orders ranks tp, cp, ep, dp, pp from the innermost: megatron/training/initialize.py:395)\n", meshText(s))
	switch {
	case s.Degree[space.FSDP] > 1:
		// Megatron-FSDP asserts the variable is not 1
		// (megatron/training/arguments.py:1166); with tp or cp on Hopper
		// it only warns that they prefer 1 (arguments.py:1452-1465).
		b.WriteString("# leave CUDA_DEVICE_MAX_CONNECTIONS unset (Megatron-FSDP refuses 1)\n")
	case s.Degree[space.TP] > 1 || s.Degree[space.CP] > 1:
		b.WriteString("# set CUDA_DEVICE_MAX_CONNECTIONS=1 in the environment (validate_args asserts it for tp or cp)\n")
	}
	flags := [][2]string{
		{"--tensor-model-parallel-size", strconv.Itoa(s.Degree[space.TP])},
		{"--pipeline-model-parallel-size", strconv.Itoa(s.Degree[space.PP])},
	}
	flags = append(flags, split...)
	if e.Model.MTPLayers > 0 {
		flags = append(flags, [2]string{"--mtp-num-layers", strconv.Itoa(e.Model.MTPLayers)})
	}
	flags = append(flags, [2]string{"--context-parallel-size", strconv.Itoa(s.Degree[space.CP])})
	if s.Degree[space.EP] > 1 {
		flags = append(flags, [2]string{"--expert-model-parallel-size", strconv.Itoa(s.Degree[space.EP])})
		if s.Degree[space.TP] > 1 {
			// The experts split over tp or whole (space.Strategy.ETP).
			flags = append(flags, [2]string{"--expert-tensor-parallel-size", strconv.Itoa(s.ExpertTP())})
		}
		if s.A2AOverlap {
			// The all-to-all of one micro-batch under another's compute,
			// with the weight gradients delayed so that they fill the gap,
			// as Megatron-Bridge's MoE performance recipes set them
			// (space.Strategy.A2AOverlap; Megatron-LM@d98e8a64's MoE README in
			// megatron/core/transformer/moe, "EP A2A Overlap").
			flags = append(flags, [2]string{"--overlap-moe-expert-parallel-comm", ""}, [2]string{"--delay-wgrad-compute", ""})
		}
		switch s.Dispatcher {
		case space.DispatcherAllToAll:
			flags = append(flags, [2]string{"--moe-token-dispatcher-type", "alltoall"})
		case space.DispatcherDeepEP, space.DispatcherHybridEP:
			// The flex dispatcher with its backend (space.Strategy.Dispatcher;
			// Megatron-LM@d98e8a64 megatron/core/transformer/transformer_config.py:891-898).
			flags = append(flags, [2]string{"--moe-token-dispatcher-type", "flex"}, [2]string{"--moe-flex-dispatcher-backend", s.Dispatcher})
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
	default:
		if len(modules) > 0 {
			// The modules the row's policy re-runs (transformer_config.py:560-563).
			flags = append(flags, [2]string{"--recompute-granularity", "selective"}, [2]string{"--recompute-modules", strings.Join(modules, " ")})
			if slices.Contains(modules, model.ModuleMoEAct) {
				flags = append(flags, [2]string{"--moe-grouped-gemm", ""})
			}
		}
	}
	if s.Degree[space.FSDP] > 1 {
		// Megatron-FSDP over the whole data-parallel group (the profile
		// keeps dp at 1 beside it: space.Limits.FSDPAlone): parameters,
		// gradients and optimizer state sharded (optim_grads_params), as
		// the plan's fsdp; v1 turns the distributed optimizer on itself and
		// needs the fsdp_dtensor checkpoints (arguments.py:1118-1170). The
		// plan overlaps the gathers and reductions with compute.
		flags = append(flags, [2]string{"--use-megatron-fsdp", ""},
			[2]string{"--data-parallel-sharding-strategy", "optim_grads_params"},
			[2]string{"--ckpt-format", "fsdp_dtensor"},
			[2]string{"--overlap-grad-reduce", ""}, [2]string{"--overlap-param-gather", ""})
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
	if s.ActOffload > 0 {
		// The first layers' activations in host memory through Transformer
		// Engine's CPU offload; the flag turns --cpu-offloading on
		// (space.Strategy.ActOffload; megatron/training/arguments.py:1950-1951,
		// core/transformer/transformer_block.py:303-318).
		flags = append(flags, [2]string{"--cpu-offloading-num-layers", strconv.Itoa(s.ActOffload)})
	}
	if s.Zero == 1 {
		// ZeRO-1: the optimizer state sharded over dp, a full-size gradient
		// buffer on every rank (param_and_grad_buffer.py:1190-1192).
		flags = append(flags, [2]string{"--use-distributed-optimizer", ""})
	}
	flags = append(flags, [2]string{"--bf16", ""})
	if s.BF16Moments() {
		// Adam's two moments in bf16 beside the fp32 main parameters and
		// gradients (space.Strategy.Weights; megatron/training/arguments.py:3667, 3675-3680).
		flags = append(flags, [2]string{"--use-precision-aware-optimizer", ""},
			[2]string{"--exp-avg-dtype", "bf16"}, [2]string{"--exp-avg-sq-dtype", "bf16"})
	}
	switch {
	case s.FP8() && e.fp8Recipe() == model.FP4NV:
		// NVFP4: E2M1 values under Transformer Engine's NVFP4BlockScaling,
		// the weights kept and gathered in fp4 as Megatron-Bridge's
		// bf16_with_nvfp4_mixed runs them (Megatron-LM@d98e8a64
		// megatron/core/transformer/transformer_config.py:673-686;
		// Megatron-Bridge@067f987d src/megatron/bridge/training/mixed_precision.py:405-417).
		flags = append(flags, [2]string{"--fp4-format", "e2m1"}, [2]string{"--fp4-recipe", model.FP4NV}, [2]string{"--fp4-param-gather", ""})
	case s.FP8():
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

// megatronSplit returns Megatron-LM's flags for the split of L decoder
// layers (and mtp multi-token-prediction modules, on the last stage) over
// the pipeline of s, exactly as the cost model splits them (space.Split):
// none for equal stages; --num-layers-per-virtual-pipeline-stage for equal
// chunks; --decoder-first-pipeline-num-layers and
// --decoder-last-pipeline-num-layers (with
// --num-virtual-stages-per-pipeline-rank when interleaved) when the middle
// stages hold the same layers and every stage's layers divide into its v
// chunks; else --pipeline-model-parallel-layout, one virtual stage per
// chunk [MEG-UNEVEN].
func megatronSplit(s space.Strategy, L, mtp int) [][2]string {
	pp := s.Degree[space.PP]
	if pp < 2 {
		return nil
	}
	v := 1
	if s.Schedule == space.Interleaved {
		v = max(s.V, 1)
	}
	counts := make([]int, pp)
	for r := range counts {
		_, counts[r] = s.Split.StageLayers(L, pp, r)
	}
	even, middleEven, chunksEven := true, true, true
	for r, c := range counts {
		even = even && c == counts[0]
		middleEven = middleEven && (r == 0 || r == pp-1 || c == counts[1])
		chunksEven = chunksEven && c%v == 0
	}
	switch {
	case even && chunksEven && v == 1:
		return nil
	case even && chunksEven:
		return [][2]string{{"--num-layers-per-virtual-pipeline-stage", strconv.Itoa(counts[0] / v)}}
	case middleEven && chunksEven:
		var flags [][2]string
		if pp == 2 || counts[0] != counts[1] {
			flags = append(flags, [2]string{"--decoder-first-pipeline-num-layers", strconv.Itoa(counts[0])})
		}
		if pp == 2 || counts[pp-1] != counts[1] {
			flags = append(flags, [2]string{"--decoder-last-pipeline-num-layers", strconv.Itoa(counts[pp-1])})
		}
		if v > 1 {
			flags = append(flags, [2]string{"--num-virtual-stages-per-pipeline-rank", strconv.Itoa(v)})
		}
		return flags
	}
	return [][2]string{{"--pipeline-model-parallel-layout", "'" + megatronLayout(s.Split, L, pp, v, mtp) + "'"}}
}

// megatronLayout writes Megatron-Core's --pipeline-model-parallel-layout
// for L decoder layers and mtp multi-token-prediction modules over pp
// ranks of v chunks under split: the pp*v virtual stages in order (chunk j
// of rank r is stage j*pp+r), "|" between stages, E the embedding, t a
// decoder layer, m an MTP module and L the loss, "t*n" n decoder layers
// and "(...|)*k" k equal stages in a row (parse_str_to_list [MEG-UNEVEN]).
func megatronLayout(split space.Split, L, pp, v, mtp int) string {
	n := pp * v
	stages := make([]string, n)
	for i := range stages {
		j, r := i/pp, i%pp
		var b strings.Builder
		if i == 0 {
			b.WriteString("E")
		}
		if c := split.ChunkLayers(L, pp, v, r, j); c == 1 {
			b.WriteString("t")
		} else if c > 1 {
			fmt.Fprintf(&b, "t*%d", c)
		}
		if i == n-1 {
			b.WriteString(strings.Repeat("m", mtp) + "L")
		}
		stages[i] = b.String()
	}
	var b strings.Builder
	for i := 0; i < n; {
		k := 1
		for i+k < n && stages[i+k] == stages[i] {
			k++
		}
		switch {
		case k > 1:
			fmt.Fprintf(&b, "(%s|)*%d", stages[i], k)
		case i+k < n:
			b.WriteString(stages[i] + "|")
		default:
			b.WriteString(stages[i])
		}
		i += k
	}
	return b.String()
}

// moduleListProblems reports what Megatron-Core's TransformerConfig refuses
// of a --recompute-modules list for e (NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553:
// megatron/core/transformer/transformer_config.py:1964-2012): a module the
// model lacks (model.CheckModules), and moe_act or layernorm under fp8's
// delayed scaling. moe_act's grouped GEMM is emitted with it.
func moduleListProblems(e Evaluation, modules []string) []string {
	var bad []string
	if err := model.CheckModules(e.Strategy.Recompute, &e.Model); err != nil {
		bad = append(bad, err.Error())
	}
	if e.Strategy.FP8() && e.fp8Recipe() == model.FP8Delayed && (slices.Contains(modules, model.ModuleMoEAct) || slices.Contains(modules, model.ModuleLayernorm)) {
		bad = append(bad, fmt.Sprintf("recompute=%s with fp8 delayed scaling: Megatron-Core refuses moe_act and layernorm recompute under delayed scaling (transformer_config.py:2001-2006)", e.Strategy.Recompute))
	}
	return bad
}
