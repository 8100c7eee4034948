package results

import (
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/text"
	"io"
	"slices"
	"strings"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Frameworks for [Emit], as --emit spells them.
const (
	Megatron   = "megatron"
	MaxText    = "maxtext"
	TorchTitan = "torchtitan"
	DeepSpeed  = "deepspeed"
)

// Frameworks returns the frameworks [Emit] knows, in --emit's order.
func Frameworks() []string { return []string{Megatron, MaxText, TorchTitan, DeepSpeed} }

// EmitError reports the parts of a strategy a framework cannot express.
type EmitError struct {
	// Framework is the --emit value.
	Framework string
	// Parts are the strategy items that cannot be expressed (e.g.
	// "fsdp=8"), each with the reason after a colon.
	Parts []string
}

// Error names the framework and every part it cannot express.
func (e *EmitError) Error() string {
	return fmt.Sprintf("%s cannot express %s", frameworkName(e.Framework), strings.Join(e.Parts, "; "))
}

func frameworkName(f string) string {
	switch f {
	case Megatron:
		return "Megatron-LM"
	case MaxText:
		return "MaxText"
	case TorchTitan:
		return "torchtitan"
	case DeepSpeed:
		return "a DeepSpeed config"
	}
	return f
}

// Emit writes the strategy of e as the launch configuration of a training
// framework, for the release Releases names (the text outputs say it in
// their header). The framework's built-in profile (framework.Builtin) is
// held first: a strategy outside its limits or placed where the framework
// would put its ranks elsewhere is refused, as is a GPU-only framework on
// a TPU cluster, so that what is emitted runs the strategy the row costed.
//
//   - megatron: Megatron-LM command-line flags, one per line with shell
//     continuations: --tensor-model-parallel-size, --pipeline-model-parallel-size,
//     --num-layers-per-virtual-pipeline-stage (interleaved), --context-parallel-size,
//     --expert-model-parallel-size, --sequence-parallel, --micro-batch-size,
//     --global-batch-size, --seq-length, --recompute-granularity/--recompute-method,
//     --overlap-grad-reduce (dp > 1), --use-distributed-optimizer and
//     --overlap-param-gather (zero 1; Megatron keeps full-size gradients,
//     so zero 2 is refused) and, when the layers do not divide over the
//     stages, --decoder-first/last-pipeline-num-layers. The data-parallel
//     size is what Megatron derives (world size over tp x pp x cp). FSDP and
//     the GPipe schedule cannot be expressed. Megatron-DeepSpeed does not
//     take these flags (it has no --context-parallel-size, for one).
//   - maxtext: MaxText YAML keys hardware (gpu on GPU clusters),
//     ici_*_parallelism and dcn_*_parallelism (data, fsdp, tensor, context,
//     pipeline, expert; a degree's part on data-centre or scale-out links
//     goes to dcn_*), per_device_batch_size, gradient_accumulation_steps or
//     num_pipeline_microbatches, num_layers_per_pipeline_stage,
//     max_target_length and remat_policy by MaxText's own names
//     (offload_layer_input -> custom with decoder_layer_input: offload).
//     MaxText has no "keep everything" policy, ZeRO on pure data
//     parallelism nor the 1F1B schedule; expert parallelism is taken out of
//     the fsdp (else data) degree of the same links.
//   - torchtitan: v0.2.2 TOML tables [parallelism] (data_parallel_replicate_degree =
//     dp, data_parallel_shard_degree = fsdp, tensor, context, pipeline and
//     expert degrees, pipeline_parallel_schedule 1F1B, GPipe,
//     Interleaved1F1B, ZBVZeroBubble or DualPipeV, microbatch size, layers
//     per stage with no first or last stage weights), [training] (local and
//     global batch, seq_len) and [activation_checkpoint] mode (none or
//     full), and the float8 converter for fp8. ZeRO on pure data
//     parallelism, tensor parallelism without sequence parallelism and
//     selective recomputation cannot be expressed.
//   - deepspeed: a DeepSpeed JSON config (train_batch_size,
//     train_micro_batch_size_per_gpu, gradient_accumulation_steps, bf16,
//     zero_optimization.stage: the zero stage, or 3 for fsdp, with
//     mics_shard_size when fsdp and dp are combined, which only zero 0
//     may; activation_checkpointing for full recomputation, which the model
//     code must still call). A plain DeepSpeed config cannot express
//     tensor, pipeline, context or expert parallelism (those live in the
//     model code), nor selective recomputation.
//
// A strategy the framework cannot express is an *[EmitError] naming the
// parts, and nothing is written.
func Emit(w io.Writer, framework string, e Evaluation) error {
	if !slices.Contains(Frameworks(), framework) {
		return fmt.Errorf("results: unknown framework %q (want %s)", framework, strings.Join(Frameworks(), ", "))
	}
	var out string
	var err error
	switch framework {
	case Megatron:
		out, err = emitMegatron(e)
	case MaxText:
		out, err = emitMaxText(e)
	case TorchTitan:
		out, err = emitTorchTitan(e)
	case DeepSpeed:
		out, err = emitDeepSpeed(e)
	default:
		return fmt.Errorf("results: unknown framework %q (want %s)", framework, strings.Join(Frameworks(), ", "))
	}
	if err != nil {
		return err
	}
	if parts := profileParts(framework, e); len(parts) > 0 {
		return &EmitError{Framework: framework, Parts: parts}
	}
	_, err = io.WriteString(w, out)
	return err
}

// Release is the release of a framework an emitter writes for: its
// flags or keys were read from that source (the tests' tables in
// results/testdata/emit hold them).
type Release struct {
	// Framework is the --emit value.
	Framework string
	framework.Release
}

// Releases returns the release each emitter targets, in --emit's order:
// the built-in profile's (framework.Profile.Release).
func Releases() []Release {
	var out []Release
	for _, f := range Frameworks() {
		out = append(out, releaseOf(f))
	}
	return out
}

// releaseOf returns the release framework f's emitter targets.
func releaseOf(f string) Release {
	p, err := framework.Builtin(f)
	if err != nil {
		return Release{Framework: f}
	}
	return Release{Framework: f, Release: p.Release}
}

// profileParts returns the parts of e's strategy that the framework's
// built-in profile (framework.Builtin) cannot run as placed: the rules the
// search honours, held again here so that a strategy from anywhere
// (explain, evaluate, another profile) emits only when the framework runs
// it as costed.
func profileParts(f string, e Evaluation) []string {
	p, err := framework.Builtin(f)
	if err != nil {
		return nil
	}
	err = p.Limits.Check(e.Strategy, e.Model.Layers)
	if err == nil {
		err = p.Limits.CheckPlacement(e.Strategy, e.Cluster)
	}
	if err == nil {
		return nil
	}
	// EmitError's message names the framework already.
	return []string{strings.TrimPrefix(err.Error(), p.Limits.Framework+" cannot express ")}
}

// emitHeader is the comment lines every text output starts with.
func emitHeader(b *strings.Builder, prefix, framework, what string, e Evaluation) {
	fmt.Fprintf(b, "%s %s for %s on %s (%d x %s)\n", prefix, what, text.Squash(e.Model.Name), text.Squash(e.Cluster.Name), e.Cluster.Chips(), text.Squash(e.Cluster.Chip.Name))
	fmt.Fprintf(b, "%s for %s\n", prefix, releaseOf(framework))
	fmt.Fprintf(b, "%s strategy: %s\n", prefix, e.Strategy.String())
	fmt.Fprintf(b, "%s batch: %d sequences of %d tokens per step; generated by meshplan\n", prefix, e.Workload.Batch, e.Workload.SeqLen)
}

// fp8Recipe is the recipe name of e's fp8 matmuls, delayed scaling when
// the evaluation does not say.
func (e Evaluation) fp8Recipe() string {
	if e.FP8Recipe == "" {
		return model.FP8Delayed
	}
	return e.FP8Recipe
}

// meshText is the strategy's mesh, "tp:gpu;dp:node", or "-".
func meshText(s space.Strategy) string {
	str := s.String()
	if i := strings.Index(str, "mesh="); i >= 0 {
		return str[i+len("mesh="):]
	}
	return "-"
}

// tierDegrees splits each parallel degree of s into its part on fast links
// (ICI, NVLink) and its part on the data-centre or scale-out network.
func tierDegrees(s space.Strategy, c profiles.Cluster) (fast, slow [space.NumDims]int) {
	m, _ := s.Resolve(c)
	for d := range space.NumDims {
		fast[d], slow[d] = 1, 1
		for _, g := range m.DimGroups(d) {
			switch g.Axis.Tier {
			case profiles.ICI, profiles.NVLink:
				fast[d] *= g.Size
			default:
				slow[d] *= g.Size
			}
		}
	}
	return fast, slow
}

// EmitNotes returns what a launch of e's strategy with framework's
// configuration needs beyond it, one sentence each, for stderr (a JSON
// config has no comments): the release it targets where the output has no
// header, and setup that lives in the model code.
func EmitNotes(framework string, e Evaluation) []string {
	if framework != DeepSpeed {
		return nil
	}
	s := e.Strategy
	notes := []string{"the DeepSpeed config is for " + releaseOf(DeepSpeed).String()}
	if s.Degree[space.FSDP] > 1 && s.Degree[space.DP] > 1 {
		notes = append(notes, "mics_shard_size needs the model built under deepspeed.zero.MiCS_Init (runtime/zero/mics.py:385-389)")
	}
	return notes
}

// isTPU reports whether c is a TPU cluster: one with ICI or DCN axes.
func isTPU(c profiles.Cluster) bool {
	for _, a := range c.Axes {
		if a.Tier == profiles.ICI || a.Tier == profiles.DCN {
			return true
		}
	}
	return false
}

// IsEmitError reports whether err says a framework cannot express a strategy.
func IsEmitError(err error) bool {
	var ee *EmitError
	return errors.As(err, &ee)
}
