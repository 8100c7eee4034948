package results

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestEmitSchedules checks each emitter on the zero-bubble and DualPipe
// schedules by itself (without the framework profile's limits): torchtitan
// names ZBVZeroBubble and DualPipeV with two stages per rank; every other
// case is refused naming the schedule.
func TestEmitSchedules(t *testing.T) {
	m, err := model.Preset("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	c, err := profiles.Parse("h100-64")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 64, SeqLen: 8192}
	for _, tc := range []struct {
		framework string
		schedule  space.Schedule
		want      string // in the output, or in the error when refused
		refused   bool
	}{
		{TorchTitan, space.ZBV, `pipeline_parallel_schedule = "ZBVZeroBubble"`, false},
		{TorchTitan, space.DualPipeV, `pipeline_parallel_schedule = "DualPipeV"`, false},
		{TorchTitan, space.ZBH1, "schedule=zb-h1: torchtitan's zero-bubble schedules", true},
		{TorchTitan, space.DualPipe, "schedule=dualpipe: torchtitan runs DualPipe's V-shaped half", true},
		{Megatron, space.ZBH1, "schedule=zb-h1: mainline Megatron-Core", true},
		{Megatron, space.ZBV, "schedule=zb-v: mainline Megatron-Core", true},
		{Megatron, space.DualPipe, "schedule=dualpipe: mainline Megatron-Core", true},
		{Megatron, space.DualPipeV, "schedule=dualpipev: mainline Megatron-Core", true},
		{MaxText, space.ZBV, "schedule=zb-v: MaxText's pipeline", true},
		{MaxText, space.DualPipe, "schedule=dualpipe: MaxText's pipeline", true},
	} {
		s, err := space.Parse("tp=8,pp=8,schedule=" + string(tc.schedule))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(m, c, w); err != nil {
			t.Fatal(err)
		}
		if s, err = s.Place(c); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		err = Emit(&b, tc.framework, Evaluation{Model: m, Cluster: c, Workload: w, Strategy: s})
		switch {
		case tc.refused && (err == nil || !IsEmitError(err) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s, %s: error %v, want one naming %q", tc.framework, tc.schedule, err, tc.want)
		case !tc.refused && (err != nil || !strings.Contains(b.String(), tc.want)):
			t.Errorf("%s, %s: error %v, output\n%s\nwant %q", tc.framework, tc.schedule, err, b.String(), tc.want)
		case !tc.refused && !strings.Contains(b.String(), "pipeline_parallel_layers_per_stage = 2\n"):
			t.Errorf("%s, %s: want 32 layers / (pp 8 x 2 stages) = 2 layers per stage in\n%s", tc.framework, tc.schedule, b.String())
		}
	}
}

// emitAnswer is one framework's expected answer to an emission: a text its
// output holds, or, refused, one its error names.
type emitAnswer struct {
	framework, want string
	refused         bool
}

// placedEvaluation is the evaluation of strategy placed on cluster for
// preset with the workload, as Emit reads it.
func placedEvaluation(t *testing.T, preset, cluster, strategy string, w space.Workload) Evaluation {
	t.Helper()
	m, err := model.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	c, err := profiles.Parse(cluster)
	if err != nil {
		t.Fatal(err)
	}
	s, err := space.Parse(strategy)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.Place(c); err != nil {
		t.Fatal(err)
	}
	return Evaluation{Model: m, Cluster: c, Workload: w, Strategy: s}
}

// checkEmits places strategy on cluster for preset with the workload and
// checks every framework's emission against its case.
func checkEmits(t *testing.T, preset, cluster, strategy string, w space.Workload, cases []emitAnswer) {
	t.Helper()
	e := placedEvaluation(t, preset, cluster, strategy, w)
	for _, tc := range cases {
		var b strings.Builder
		err := Emit(&b, tc.framework, e)
		switch {
		case tc.refused && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one naming %q", tc.framework, err, tc.want)
		case !tc.refused && (err != nil || !strings.Contains(b.String(), tc.want)):
			t.Errorf("%s: error %v, output\n%s\nwant %q", tc.framework, err, b.String(), tc.want)
		}
	}
}

// TestEmitInt8 checks that MaxText's config runs precision=int8 as AQT's
// quantization: int8 and that the GPU frameworks refuse it.
func TestEmitInt8(t *testing.T) {
	checkEmits(t, "llama3-8b", "v6e-64", "fsdp=64,recompute=full,precision=int8", space.Workload{Batch: 64, SeqLen: 8192}, []emitAnswer{
		{MaxText, "quantization: int8\n", false},
		{Megatron, "precision=int8: Megatron-LM trains in bf16 or fp8", true},
		{TorchTitan, "precision=int8: torchtitan's converters train in float8", true},
		{DeepSpeed, "precision=int8: a DeepSpeed config has no int8", true},
	})
}

// TestEmitCustomOffload checks that MaxText's custom offload policies come
// out as remat_policy: custom with each offloaded tensor named.
func TestEmitCustomOffload(t *testing.T) {
	m, err := model.Preset("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	c, err := profiles.Parse("v6e-8")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 24, SeqLen: 8192}
	qkv := "remat_policy: custom\ndecoder_layer_input: offload\nquery_proj: offload\nkey_proj: offload\nvalue_proj: offload\n"
	for _, tc := range []struct {
		policy, want string
		outProj      bool
	}{
		{model.RecomputeOffloadInputQKV, qkv, false},
		{model.RecomputeOffloadInputQKVO, qkv + "out_proj: offload\n", true},
		{model.RecomputeOffloadInputOut, "remat_policy: custom\ndecoder_layer_input: offload\nout_proj: offload\n", true},
		{model.RecomputeOffloadContextWo, "remat_policy: custom\ncontext: offload\nmlpwo: offload\n", false},
	} {
		s, err := space.Parse("fsdp=8,recompute=" + tc.policy)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = s.Place(c); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		err = Emit(&b, MaxText, Evaluation{Model: m, Cluster: c, Workload: w, Strategy: s})
		if err != nil || !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), "out_proj") != tc.outProj {
			t.Errorf("%s: error %v, output\n%s\nwant %q", tc.policy, err, b.String(), tc.want)
		}
	}
}

// TestEmitBF16Weights checks that MaxText's config runs weights=bf16 as
// weight_dtype: bfloat16 and that the GPU frameworks, which keep fp32
// master weights, refuse it.
func TestEmitBF16Weights(t *testing.T) {
	checkEmits(t, "llama3-70b", "v6e-32", "fsdp=32,mb=2,recompute=offload_input_qkv,weights=bf16", space.Workload{Batch: 64, SeqLen: 8192}, []emitAnswer{
		{MaxText, "weight_dtype: bfloat16\n", false},
		{Megatron, "weights=bf16: Megatron-LM's --bf16 keeps fp32 main parameters", true},
		{TorchTitan, "weights=bf16: torchtitan keeps fp32 parameters", true},
		{DeepSpeed, "weights=bf16: DeepSpeed's bf16 optimizer keeps fp32 master weights", true},
	})
}

// TestEmitBF16Moments checks that Megatron-LM runs weights=bf16-moments
// with its precision-aware optimizer's bf16 moments and that the
// frameworks whose Adam keeps fp32 moments refuse it.
func TestEmitBF16Moments(t *testing.T) {
	checkEmits(t, "llama3-8b", "h100-8", "dp=8,zero=1,weights=bf16-moments", space.Workload{Batch: 64, SeqLen: 8192}, []emitAnswer{
		{Megatron, "--use-precision-aware-optimizer \\\n--exp-avg-dtype bf16 \\\n--exp-avg-sq-dtype bf16", false},
		{MaxText, "weights=bf16-moments: MaxText's AdamW sets the first moment's dtype only", true},
		{TorchTitan, "weights=bf16-moments: torchtitan's AdamW keeps its moments", true},
		{DeepSpeed, "weights=bf16-moments: DeepSpeed's optimizers keep fp32 moments", true},
	})
}

// TestEmitA2AOverlap checks that a2a_overlap comes out as Megatron-Core's
// --overlap-moe-expert-parallel-comm with --delay-wgrad-compute, and that
// the frameworks that cannot run it refuse it.
func TestEmitA2AOverlap(t *testing.T) {
	w := space.Workload{Batch: 64, SeqLen: 4096}
	checkEmits(t, "mixtral-8x7b", "h100-16", "dp=16,zero=1,ep=8,a2a_overlap=true", w, []emitAnswer{
		{Megatron, "--overlap-moe-expert-parallel-comm", false},
		{Megatron, "--delay-wgrad-compute", false},
	})
	checkEmits(t, "mixtral-8x7b", "h100-16", "fsdp=16,ep=8,a2a_overlap=true", w, []emitAnswer{
		{TorchTitan, "torchtitan cannot express a2a_overlap", true},
	})
}

// TestStrategyA2AOverlapJSON: RESULT's strategy says a2a_overlap only when
// it is on (docs/contract.md, issue 39).
func TestStrategyA2AOverlapJSON(t *testing.T) {
	for _, tt := range []struct {
		spec string
		want bool
	}{{"dp=8,ep=8,a2a_overlap=true", true}, {"dp=8,ep=8", false}} {
		s, err := space.Parse(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(NewStrategy(s, space.Workload{Batch: 64, SeqLen: 4096}))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), `"a2a_overlap":true`); got != tt.want {
			t.Errorf("%s: %s, want a2a_overlap %t", tt.spec, b, tt.want)
		}
	}
}

// TestEmitDispatcher checks that the dispatcher comes out as Megatron-Core's
// --moe-token-dispatcher-type (flex with --moe-flex-dispatcher-backend for
// DeepEP and HybridEP) and torchtitan's expert_parallel_comm_backend, that
// RESULT's strategy names it, and that a framework that does not run it
// refuses it.
func TestEmitDispatcher(t *testing.T) {
	w := space.Workload{Batch: 64, SeqLen: 4096}
	checkEmits(t, "mixtral-8x7b", "h100-16", "dp=16,zero=1,ep=8,dispatcher=hybridep", w, []emitAnswer{
		{Megatron, "--moe-token-dispatcher-type flex", false},
		{Megatron, "--moe-flex-dispatcher-backend hybridep", false},
	})
	checkEmits(t, "mixtral-8x7b", "h100-16", "fsdp=16,ep=8,dispatcher=hybridep", w, []emitAnswer{
		{TorchTitan, "torchtitan cannot express dispatcher=hybridep", true},
	})
	checkEmits(t, "mixtral-8x7b", "h100-16", "dp=16,zero=1,ep=8,dispatcher=alltoall", w, []emitAnswer{
		{Megatron, "--moe-token-dispatcher-type alltoall", false},
	})
	checkEmits(t, "mixtral-8x7b", "h100-16", "fsdp=16,ep=8,dispatcher=deepep", w, []emitAnswer{
		{TorchTitan, `expert_parallel_comm_backend = "deepep"`, false},
	})
	s, err := space.Parse("dp=8,ep=8,dispatcher=deepep")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(NewStrategy(s, w))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"dispatcher":"deepep"`) {
		t.Errorf("RESULT strategy %s, want dispatcher deepep", b)
	}
}

// TestEmitNVFP4 checks that precision=fp8 under the nvfp4 recipe comes out
// as Megatron-Core's --fp4-format e2m1 --fp4-recipe nvfp4 with the weights
// gathered in fp4, as Megatron-Bridge's bf16_with_nvfp4_mixed runs it, and
// no fp8 flag; MaxText and torchtitan have no NVFP4 training recipe.
func TestEmitNVFP4(t *testing.T) {
	e := placedEvaluation(t, "llama3-70b", "gb200-64", "dp=8,zero=1,tp=2,pp=4,precision=fp8", space.Workload{Batch: 512, SeqLen: 8192})
	e.FP8Recipe = model.FP4NV
	var b strings.Builder
	if err := Emit(&b, Megatron, e); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "--fp4-format e2m1 \\\n--fp4-recipe nvfp4 \\\n--fp4-param-gather") || strings.Contains(out, "--fp8-format") {
		t.Errorf("megatron flags:\n%s\nwant --fp4-format e2m1 --fp4-recipe nvfp4 --fp4-param-gather and no --fp8-format", out)
	}
	for fw, want := range map[string]string{MaxText: "no NVFP4 training recipe", TorchTitan: "with the nvfp4 recipe"} {
		if err := Emit(&strings.Builder{}, fw, e); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one naming %q", fw, err, want)
		}
	}
}

// TestEmitActOffload: an activation offload is Megatron-LM's
// --cpu-offloading-num-layers (which turns --cpu-offloading on), beside
// Megatron-FSDP and no recomputation flags; torchtitan and DeepSpeed
// refuse it in their limits' words (MaxText already refuses the layers'
// recompute none that it needs).
func TestEmitActOffload(t *testing.T) {
	e := placedEvaluation(t, "llama3-70b", "gb200-64", "fsdp=64,mb=2,act_offload=40", space.Workload{Batch: 256, SeqLen: 8192})
	var b strings.Builder
	if err := Emit(&b, Megatron, e); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "--cpu-offloading-num-layers 40 \\\n") || strings.Contains(out, "--recompute-granularity") {
		t.Errorf("megatron flags:\n%s\nwant --cpu-offloading-num-layers 40 and no recomputation", out)
	}
	for _, fw := range []string{TorchTitan, DeepSpeed} {
		if err := Emit(&strings.Builder{}, fw, e); err == nil || !strings.Contains(err.Error(), "act_offload=40") {
			t.Errorf("%s: error %v, want one naming act_offload=40", fw, err)
		}
	}
}
