package results

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// emitMaxText writes MaxText's YAML keys for e, by the rules of
// AI-Hypercomputer/maxtext@e591f30cbbf217ed67ef71263ec0538239f9c3b8
// (src/maxtext/configs/base.yml, configs/types.py;
// results/testdata/emit/maxtext-keys.txt holds its keys).
func emitMaxText(e Evaluation) (string, error) {
	s := e.Strategy
	L := e.Model.Layers
	var bad []string
	switch s.Recompute {
	case space.RecomputeNone, space.RecomputeSelective:
		bad = append(bad, fmt.Sprintf("recompute=%s: MaxText has no such remat_policy (its \"none\" still wraps every layer in nn.remat, i.e. recomputes it whole: src/maxtext/layers/decoders.py:346-350, 541-566); search with its own policies, e.g. --fix recompute=minimal", s.Recompute))
	}
	if s.FP8() && e.fp8Recipe() == model.FP4NV {
		bad = append(bad, "precision=fp8 with the nvfp4 recipe: MaxText's quantization setting has no NVFP4 training recipe; search with a profile whose fp8_recipe is an fp8 one")
	}
	if s.Zero > 0 && s.Degree[space.DP] > 1 {
		bad = append(bad, fmt.Sprintf("zero=%d on dp=%d: MaxText shards optimizer state only along its fsdp axis; search with --fix zero=0 or use fsdp", s.Zero, s.Degree[space.DP]))
	}
	if s.Degree[space.PP] > 1 {
		switch s.Schedule {
		case space.OneFOneB:
			bad = append(bad, "schedule=1f1b: MaxText's pipeline runs GPipe-like or circular (interleaved) schedules; search with --fix schedule=gpipe")
		case space.GPipe:
			if L%s.Degree[space.PP] != 0 {
				bad = append(bad, fmt.Sprintf("pp=%d with %d layers: MaxText needs the layers to divide over the stages", s.Degree[space.PP], L))
			}
		case space.Interleaved:
			if L%(s.Degree[space.PP]*s.V) != 0 {
				bad = append(bad, fmt.Sprintf("schedule=interleaved,v=%d with %d layers over pp=%d: MaxText needs pp x v = %d to divide the layers", s.V, L, s.Degree[space.PP], s.Degree[space.PP]*s.V))
			}
		case space.ZBH1, space.ZBV, space.DualPipe, space.DualPipeV:
			bad = append(bad, fmt.Sprintf("schedule=%s: MaxText's pipeline runs GPipe-like or circular (interleaved) schedules, with no zero-bubble or DualPipe schedule; search with --fix schedule=gpipe", s.Schedule))
		}
	}
	if s.Degree[space.TP] > 1 && !s.SP {
		bad = append(bad, "sp=false: MaxText's tensor axis also shards the activations between layers (logical rule activation_embed -> tensor); search with --fix sp=true")
	}
	fast, slow := tierDegrees(s, e.Cluster)
	if s.Degree[space.CP] > 1 && e.Model.MoE != nil {
		// base.yml:587-588 and 605-606 shard the embed dimension of every
		// weight over fsdp x context (x expert): the maxtext profile prices
		// a dense model's weights that way (model.ProgramOptions.WeightsOverCP),
		// not the experts'.
		bad = append(bad, fmt.Sprintf("cp=%d: MaxText shards the experts over its context axis too (base.yml's embed_moe rule), which the row does not price; search with --fix cp=1", s.Degree[space.CP]))
	}
	// Expert parallelism is its own MaxText axis: take it out of the fsdp
	// degree of the same links, so that the embed rule's fsdp x expert is
	// the row's fsdp (base.yml:605-606) and the experts' embed_moe rule's
	// fsdp is the row's efsdp (base.yml:587-588).
	for _, deg := range []*[space.NumDims]int{&fast, &slow} {
		ep := deg[space.EP]
		if ep <= 1 {
			continue
		}
		if deg[space.FSDP]%ep != 0 {
			bad = append(bad, fmt.Sprintf("ep=%d: its chips are not fsdp chips on every link tier, and MaxText shards the dense weights over fsdp x expert, the row over fsdp only", s.Degree[space.EP]))
			break
		}
		deg[space.FSDP] /= ep
	}
	if pp := s.Degree[space.PP]; pp > 1 {
		// types.py:3612-3615: num_pipeline_microbatches % num_stages == 0.
		if nmb := s.NumMicrobatches(e.Workload); nmb%pp != 0 {
			bad = append(bad, fmt.Sprintf("pp=%d with %d micro-batches: MaxText needs the pipeline's micro-batches to divide over its stages (num_pipeline_microbatches %% num_stages == 0); search with another mb or batch", pp, nmb))
		}
	}
	if s.BF16Moments() {
		// optax's AdamW takes the first moment's dtype only (mu_dtype,
		// AI-Hypercomputer/maxtext@e591f30cbbf217ed67ef71263ec0538239f9c3b8:src/maxtext/configs/base.yml:993).
		bad = append(bad, "weights=bf16-moments: MaxText's AdamW sets the first moment's dtype only (mu_dtype) and keeps the second like the parameters; search with --fix weights=fp32")
	}
	if len(bad) > 0 {
		return "", &EmitError{Framework: MaxText, Parts: bad}
	}
	var b strings.Builder
	emitHeader(&b, "#", MaxText, "MaxText parallelism keys", e)
	if !isTPU(e.Cluster) {
		// base.yml:521 defaults to tpu, which takes the TPU start-up path.
		b.WriteString("hardware: gpu\n")
	}
	b.WriteString("# ici_* is the part of a degree inside a slice (ICI or NVLink), dcn_* the part across slices or nodes\n")
	for _, k := range []struct {
		name string
		d    space.Dim
	}{{"data", space.DP}, {"fsdp", space.FSDP}, {"tensor", space.TP}, {"context", space.CP}, {"pipeline", space.PP}, {"expert", space.EP}} {
		fmt.Fprintf(&b, "ici_%s_parallelism: %d\n", k.name, fast[k.d])
	}
	for _, k := range []struct {
		name string
		d    space.Dim
	}{{"data", space.DP}, {"fsdp", space.FSDP}, {"tensor", space.TP}, {"context", space.CP}, {"pipeline", space.PP}, {"expert", space.EP}} {
		fmt.Fprintf(&b, "dcn_%s_parallelism: %d\n", k.name, slow[k.d])
	}
	chips := e.Cluster.Chips()
	nmb := s.NumMicrobatches(e.Workload)
	perDevice := float64(e.Workload.Batch) / float64(chips)
	if s.Degree[space.PP] > 1 {
		v := 1
		if s.Schedule == space.Interleaved {
			v = s.V
		}
		fmt.Fprintf(&b, "num_pipeline_microbatches: %d\n", nmb)
		fmt.Fprintf(&b, "num_layers_per_pipeline_stage: %d\n", L/(s.Degree[space.PP]*v))
	} else if nmb > 1 {
		perDevice /= float64(nmb)
		fmt.Fprintf(&b, "gradient_accumulation_steps: %d\n", nmb)
	}
	fmt.Fprintf(&b, "per_device_batch_size: %s\n", strconv.FormatFloat(perDevice, 'f', -1, 64))
	fmt.Fprintf(&b, "max_target_length: %d\n", e.Workload.SeqLen)
	// MaxText's remat policies carry their own names (layers/decoders.py's
	// get_remat_policy); the layer input kept in host memory is the custom
	// policy with decoder_layer_input offloaded (base.yml:361).
	switch s.Recompute {
	case model.RecomputeOffloadInput:
		b.WriteString("remat_policy: custom\ndecoder_layer_input: offload\n")
	case model.RecomputeOffloadInputQKV, model.RecomputeOffloadInputQKVO:
		// MaxText's custom policy names each offloaded tensor; the rest remat.
		b.WriteString("remat_policy: custom\ndecoder_layer_input: offload\nquery_proj: offload\nkey_proj: offload\nvalue_proj: offload\n")
		if s.Recompute == model.RecomputeOffloadInputQKVO {
			b.WriteString("out_proj: offload\n")
		}
	case model.RecomputeOffloadInputOut:
		b.WriteString("remat_policy: custom\ndecoder_layer_input: offload\nout_proj: offload\n")
	case model.RecomputeOffloadContextWo:
		// decoder_layer_input stays at base.yml's 'device'.
		b.WriteString("remat_policy: custom\ncontext: offload\nmlpwo: offload\n")
	default:
		fmt.Fprintf(&b, "remat_policy: %s\n", s.Recompute)
	}
	switch {
	case s.FP8():
		b.WriteString("quantization: fp8\n")
	case s.Int8():
		b.WriteString("quantization: int8\n") // AQT's int8 matmuls
	}
	if s.BF16Weights() {
		// Parameters in bf16; mu_dtype empty follows weight_dtype
		// (AI-Hypercomputer/maxtext@e591f30cbbf217ed67ef71263ec0538239f9c3b8:src/maxtext/configs/types.py:3296-3298).
		b.WriteString("weight_dtype: bfloat16\n")
	}
	return b.String(), nil
}
