package results

import (
	"fmt"
	"strings"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// emitTorchTitan writes torchtitan's TOML job config for e, by the rules
// of torchtitan v0.2.2 (pytorch/torchtitan@73a0e6979dd10b6b1904098eb3c8f62c18ab87ce:
// torchtitan/config/job_config.py; results/testdata/emit/torchtitan-keys.txt
// holds its keys).
func emitTorchTitan(e Evaluation) (string, error) {
	s := e.Strategy
	L := e.Model.Layers
	var bad []string
	if s.Zero > 0 && s.Degree[space.DP] > 1 {
		bad = append(bad, fmt.Sprintf("zero=%d on dp=%d: torchtitan shards optimizer state only through FSDP (data_parallel_shard_degree); search with --fix zero=0 or use fsdp", s.Zero, s.Degree[space.DP]))
	}
	if cp := s.Degree[space.CP]; cp > 1 && e.Model.MoE != nil {
		// torchtitan's fsdp mesh is dp_shard x cp (v0.2.2:
		// torchtitan/distributed/parallel_dims.py:82-84, 137, 151-152):
		// the torchtitan profile prices a dense model's weights that way
		// (model.ProgramOptions.WeightsOverCP), not the experts'.
		bad = append(bad, fmt.Sprintf("cp=%d: torchtitan shards the experts over dp_shard x cp = %d ranks, which the row does not price; search with --fix cp=1", cp, max(s.Degree[space.FSDP], 1)*cp))
	}
	if s.Degree[space.TP] > 1 && !s.SP {
		bad = append(bad, "sp=false: torchtitan's tensor parallelism always shards the sequence in norms and dropout")
	}
	if err := s.Split.Check(L, s.Degree[space.PP]); err != nil {
		bad = append(bad, err.Error())
	} else if pp := s.Degree[space.PP]; pp > 1 && L%(pp*s.VirtualStages()) != 0 && titanStages(s, L, s.VirtualStages()) == "" {
		bad = append(bad, fmt.Sprintf("pp=%d with %d stages per rank and %d layers: torchtitan's V-shaped schedules need the layers in %d equal stages", pp, s.VirtualStages(), L, pp*s.VirtualStages()))
	}
	if s.Int8() {
		bad = append(bad, "precision=int8: torchtitan's converters train in float8, not int8; search with --fix precision=fp8 or bf16")
	}
	if s.BF16Moments() {
		bad = append(bad, "weights=bf16-moments: torchtitan's AdamW keeps its moments like the fp32 parameters; search with --fix weights=fp32")
	}
	if s.BF16Weights() {
		bad = append(bad, "weights=bf16: torchtitan keeps fp32 parameters and hands FSDP2 a bf16 compute dtype only; search with --fix weights=fp32")
	}
	if s.Recompute != space.RecomputeNone && s.Recompute != space.RecomputeFull && s.Recompute != model.RecomputeSelectiveOp {
		bad = append(bad, fmt.Sprintf("recompute=%s: torchtitan's activation checkpointing is full, every n-th layer, or per-op selective, which saves every other matmul's output and the attention output and recomputes the rest (torchtitan/models/llama3/infra/parallelize.py:36-51); search with --fix recompute=full, selective_op or none", s.Recompute))
	}
	if r := e.fp8Recipe(); s.FP8() && r != model.FP8Torchao && r != model.FP8Tensorwise {
		bad = append(bad, fmt.Sprintf("precision=fp8 with the %s recipe: torchtitan's float8 converter scales per tensor or per row (a framework profile with fp8_recipe: torchao)", r))
	}
	stages := s.VirtualStages() // torchtitan's stages per rank
	if pp := s.Degree[space.PP]; pp > 1 {
		switch s.Schedule {
		case space.ZBH1:
			bad = append(bad, "schedule=zb-h1: torchtitan's zero-bubble schedules (InterleavedZeroBubble, ZBVZeroBubble) run two or more stages per rank; search with --fix schedule=zb-v")
		case space.DualPipe:
			bad = append(bad, "schedule=dualpipe: torchtitan runs DualPipe's V-shaped half (DualPipeV, one copy of the parameters), not its two directions; search with --fix schedule=dualpipev")
		}
	}
	if len(bad) > 0 {
		return "", &EmitError{Framework: TorchTitan, Parts: bad}
	}
	var b strings.Builder
	emitHeader(&b, "#", TorchTitan, "torchtitan job config", e)
	b.WriteString("# TOML for torchtitan's --job.config_file; releases after v0.2.2 take Python config modules instead\n")
	fmt.Fprintf(&b, "# placement: %s (torchtitan orders ranks pp, dp_replicate, dp_shard, cp, tp from the outermost)\n\n", meshText(s))
	b.WriteString("[parallelism]\n")
	fmt.Fprintf(&b, "data_parallel_replicate_degree = %d\n", s.Degree[space.DP])
	fmt.Fprintf(&b, "data_parallel_shard_degree = %d\n", s.Degree[space.FSDP])
	fmt.Fprintf(&b, "tensor_parallel_degree = %d\n", s.Degree[space.TP])
	fmt.Fprintf(&b, "context_parallel_degree = %d\n", s.Degree[space.CP])
	fmt.Fprintf(&b, "pipeline_parallel_degree = %d\n", s.Degree[space.PP])
	if s.Degree[space.EP] > 1 {
		fmt.Fprintf(&b, "expert_parallel_degree = %d\n", s.Degree[space.EP])
		if s.Degree[space.TP] > 1 {
			// The experts split over tp or whole (space.Strategy.ETP).
			fmt.Fprintf(&b, "expert_tensor_parallel_degree = %d\n", s.ExpertTP())
		}
		if s.Dispatcher == space.DispatcherDeepEP {
			// DeepEP's dispatch and combine (space.Strategy.Dispatcher;
			// torchtitan/config/job_config.py:474 at v0.2.2).
			b.WriteString("expert_parallel_comm_backend = \"deepep\"\n")
		}
	}
	replicas := s.Replicas()
	local := s.MB
	if s.Degree[space.PP] > 1 {
		sched := map[space.Schedule]string{space.GPipe: "GPipe", space.OneFOneB: "1F1B", space.Interleaved: "Interleaved1F1B",
			space.ZBV: "ZBVZeroBubble", space.DualPipeV: "DualPipeV"}[s.Schedule]
		if s.Schedule == space.ZBV || s.Schedule == space.DualPipeV {
			b.WriteString("# torch.distributed.pipelining runs the split backward of ZBVZeroBubble and DualPipeV only on stages without torch.compile\n")
		}
		fmt.Fprintf(&b, "pipeline_parallel_schedule = %q\n", sched)
		fmt.Fprintf(&b, "pipeline_parallel_microbatch_size = %d\n", s.MB)
		// torchtitan counts ceil((layers + first + last) / layers_per_stage)
		// stages, the first and last stage weights 1 by default
		// (torchtitan/distributed/pipeline_parallel.py:71-108): 0 here, so
		// that the stages are the row's equal ones.
		if fqns := titanStages(s, L, stages); fqns != "" {
			// Stages of different sizes: each stage's modules by name.
			b.WriteString(fqns)
		} else {
			fmt.Fprintf(&b, "pipeline_parallel_layers_per_stage = %d\n", L/(s.Degree[space.PP]*stages))
			b.WriteString("pipeline_parallel_first_stage_less_layers = 0\n")
			b.WriteString("pipeline_parallel_last_stage_less_layers = 0\n")
		}
		local = e.Workload.Batch / replicas
	}
	b.WriteString("\n[training]\n")
	fmt.Fprintf(&b, "local_batch_size = %d\n", local)
	fmt.Fprintf(&b, "global_batch_size = %d\n", e.Workload.Batch)
	fmt.Fprintf(&b, "seq_len = %d\n", e.Workload.SeqLen)
	b.WriteString("mixed_precision_param = \"bfloat16\"\n")
	if s.FP8() {
		// The converter registry's name and its config section
		// (torchtitan/components/quantization/float8.py:238).
		b.WriteString("\n[model]\nconverters = [\"quantize.linear.float8\"]\n\n[quantize.linear.float8]\nrecipe_name = \"tensorwise\"\n")
	}
	b.WriteString("\n[activation_checkpoint]\n")
	if s.Recompute == model.RecomputeSelectiveOp {
		// Per-op selective AC (torchtitan/config/job_config.py:655 at v0.2.2).
		b.WriteString("mode = \"selective\"\nselective_ac_option = \"op\"\n")
	} else {
		fmt.Fprintf(&b, "mode = %q\n", s.Recompute)
	}
	return b.String(), nil
}

// titanStages returns torchtitan's module_fqns_per_model_part (v0.2.2:
// the modules of each virtual stage in model order; pipeline_module_split
// gives rank r the stages r, r+pp, ... of a looped schedule and the stages
// r and 2pp-1-r of a V-shaped one, torchtitan/distributed/pipeline_parallel.py:451-469)
// for the split of L layers over the pipeline of s with stages chunks per
// rank, when its stages do not all hold the same layers; "" when they do
// (pipeline_parallel_layers_per_stage says it).
func titanStages(s space.Strategy, L, stages int) string {
	pp := s.Degree[space.PP]
	if pp < 2 {
		return ""
	}
	n := pp * stages
	counts := make([]int, n)
	switch s.Schedule.Rules().Placement() {
	case space.PlaceLinear:
		for i := range counts {
			counts[i] = s.Split.ChunkLayers(L, pp, stages, i%pp, i/pp)
		}
	case space.PlaceV:
		// The planner's V rank r holds half of linear stages r and
		// pp-1-r each (space.PlaceV, [ZB §6]): model stage k < pp takes
		// the larger half of linear stage k, stage pp+k the smaller half,
		// so that rank r (stages r and 2pp-1-r) holds the two halves.
		for k := range pp {
			_, c := s.Split.StageLayers(L, pp, k)
			counts[k], counts[pp+k] = c-c/2, c/2
		}
	default:
		return ""
	}
	even := true
	for _, c := range counts {
		even = even && c == counts[0]
	}
	if even {
		return ""
	}
	var b strings.Builder
	b.WriteString("module_fqns_per_model_part = [\n")
	layer := 0
	for i, c := range counts {
		b.WriteString("  [")
		var mods []string
		if i == 0 {
			mods = append(mods, `"tok_embeddings"`)
		}
		for range c {
			mods = append(mods, fmt.Sprintf(`"layers.%d"`, layer))
			layer++
		}
		if i == n-1 {
			mods = append(mods, `"norm"`, `"output"`)
		}
		b.WriteString(strings.Join(mods, ", "))
		b.WriteString("],\n")
	}
	b.WriteString("]\n")
	return b.String()
}
