package runs

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/model"
)

// TestHopperFlashAttention2Rate checks the rate, measured on an H200
// (profiles.TestFlashAttention2AgainstH200: median 0.591), against the FA3
// paper's H100 figures for FA2 (head_dim 128, 16K tokens: forward 335
// causal, backward 322 TFLOP/s) over the Hopper model's own 16K rates
// (attention.csv: 611 and 514), the backward doing 2.5 times the forward's
// FLOPs: the two agree within 0.02.
func TestHopperFlashAttention2Rate(t *testing.T) {
	combined := func(fwd, bwd float64) float64 { return 3.5 / (1/fwd + 2.5/bwd) }
	fa2, model := combined(335, 322), combined(611, 514)
	// By hand: 3.5/(0.0029851 + 0.0077640) = 325.6; 3.5/(0.0016367 + 0.0048638) = 538.4.
	if math.Abs(fa2-325.6) > 0.1 || math.Abs(model-538.4) > 0.1 {
		t.Errorf("fwd+bwd rates = %.1f and %.1f TFLOP/s, want 325.6 and 538.4", fa2, model)
	}
	if got := fa2 / model; math.Abs(got-hopperFlashAttention2Rate) > 0.02 {
		t.Errorf("the paper's FA2 over the model = %.3f, want within 0.02 of the measured %.2f", got, hopperFlashAttention2Rate)
	}
}

// TestFlashAttention2 checks which rows ran FlashAttention-2 on Hopper:
// NeMo Framework releases before 24.09 (NVTE_FUSED_ATTN=0) and torchtitan
// commits before its cuDNN-first attention on an H100, and no other
// release, framework or chip.
func TestFlashAttention2(t *testing.T) {
	for _, tt := range []struct {
		framework, chip string
		want            float64
	}{
		{"NeMo (NeMo24.03.01.framework, Megatron-Core, Transformer Engine)", "H100-SXM-80GB", 0.59},
		{"NeMo 24.07", "H100-SXM-80GB", 0.59},
		{"NeMo 24.07", "H800", 0.59},
		{"NeMo 24.09", "H100-SXM-80GB", 1},
		{"NeMo (NeMo25.04.rc2, Megatron-Core, Transformer Engine)", "H100-SXM-80GB", 1},
		{"NeMo (NeMo24.03.01.framework, Megatron-Core, Transformer Engine)", "A100-SXM-80GB", 1},
		{"NeMo (NeMo24.03.01.framework, Megatron-Core, Transformer Engine)", "B200", 1},
		{"Megatron-Bridge (NeMo 25.11 container, Megatron-Core)", "H100-SXM-80GB", 1},
		{"Megatron-LM", "H100-SXM-80GB", 1},
		{"", "H100-SXM-80GB", 1},
		{"torchtitan (FSDP2 + DTensor TP, torch.compile; torch 38410cf9, torchtitan 820504e)", "H100-SXM-96GB-HBM2e (500W cap)", 0.59},
		{"torchtitan 820504e20d1149fbf0b98c567af24c4b0433b22d", "H100-SXM-80GB", 0.59},
		{"torchtitan 9dec370", "H100-SXM-80GB", 0.59},
		{"torchtitan (FSDP2, torch.compile, float8 with FSDP float8 all-gather; torchtitan e7c0cae)", "H200", 0.59},
		{"torchtitan (FSDP2 + DTensor TP, torch.compile; torch 38410cf9, torchtitan 820504e)", "B200", 1},
		{"torchtitan 73a0e69", "H100-SXM-80GB", 1},
		{"torchtitan", "H100-SXM-80GB", 1},
	} {
		r := Run{Framework: tt.framework, Chip: tt.chip}
		if got := r.AttentionRate(); got != tt.want {
			t.Errorf("AttentionRate(%q on %s) = %v, want %v", tt.framework, tt.chip, got, tt.want)
		}
		if got := r.FlashAttention2(); got != (tt.want != 1) {
			t.Errorf("FlashAttention2(%q on %s) = %v, want %v", tt.framework, tt.chip, got, tt.want != 1)
		}
	}
}

// TestFlashAttention2Options checks that the row's framework profile runs
// its attention at the FlashAttention-2 rate and leaves the rest alone.
func TestFlashAttention2Options(t *testing.T) {
	r := Run{Format: FormatPublished, Framework: "NeMo (NeMo24.03.01.framework, Megatron-Core, Transformer Engine)", Chip: "H100-SXM-80GB"}
	so, name, err := r.SearchOptions(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if name != "megatron" {
		t.Errorf("profile %q, want megatron", name)
	}
	if got := so.Program.Kernels.AttentionRate; got != 0.59 {
		t.Errorf("attention rate %v, want 0.59 (1 x 0.59)", got)
	}
	r.Chip = "B200"
	if so, _, err = r.SearchOptions(Options{}); err != nil {
		t.Fatal(err)
	}
	if got := so.Program.Kernels.AttentionRate; got != 1 {
		t.Errorf("B200 attention rate %v, want 1", got)
	}
	// Under --framework torchtitan both of its programs slow down, each
	// from its own rate.
	tt, err := framework.Load("torchtitan")
	if err != nil {
		t.Fatal(err)
	}
	base := tt.SearchOptions()
	r.Chip = "H100-SXM-80GB"
	if so, _, err = r.SearchOptions(Options{Framework: &tt}); err != nil {
		t.Fatal(err)
	}
	if so.ShardedProgram == nil || base.ShardedProgram == nil {
		t.Fatal("torchtitan without its sharded program")
	}
	for _, c := range []struct{ got, own float64 }{
		{so.Program.Kernels.AttentionRate, base.Program.Kernels.AttentionRate},
		{so.ShardedProgram.Kernels.AttentionRate, base.ShardedProgram.Kernels.AttentionRate},
	} {
		own := c.own
		if own == 0 {
			own = 1 // zero means 1 (model.Kernels.AttentionRate)
		}
		if math.Abs(c.got-0.59*own) > 1e-12 {
			t.Errorf("torchtitan attention rate %v from its own %v, want 0.59 times it", c.got, c.own)
		}
	}
}

// TestScaleAttention checks that a profile's unset (zero) attention rate
// counts as 1 and a set one is multiplied.
func TestScaleAttention(t *testing.T) {
	for _, tt := range []struct{ rate, scale, want float64 }{
		{0, 0.57, 0.57},
		{1, 0.57, 0.57},
		{0.35, 0.5, 0.175},
	} {
		k := model.Kernels{AttentionRate: tt.rate}
		scaleAttention(&k, tt.scale)
		if math.Abs(k.AttentionRate-tt.want) > 1e-12 {
			t.Errorf("scaleAttention(%v, %v) = %v, want %v", tt.rate, tt.scale, k.AttentionRate, tt.want)
		}
	}
}

// TestEagerLoss checks the torchtitan commits whose compiled runs ran the
// loss eager (Run.EagerLoss) and that their torchtitan profile takes the
// pytorch profile's loss pass: fp32 logits, 18 and 26 bytes a logit, 6
// kept and 8 transient (12 under tensor parallelism, DTensor's
// loss_parallel); a later commit keeps the compiled loss.
func TestEagerLoss(t *testing.T) {
	eager := model.PassCost{FwdBytes: 18, BwdBytes: 26, SavedBytes: 6, TransientBytes: 8}
	compiled := model.PassCost{FwdBytes: 4, BwdBytes: 4, SavedBytes: 2, TransientBytes: 2}
	for _, tt := range []struct {
		framework string
		tp        int
		eager     bool
	}{
		{"torchtitan (FSDP2 + DTensor TP, torch.compile; torchtitan 9dec370)", 1, true},
		{"torchtitan 9dec370ad26b5f8e9a7333a0e36165018262644b", 1, true},
		{"torchtitan 9dec370", 8, true},
		{"torchtitan (FSDP2 + DTensor TP, torch.compile; torch 38410cf9, torchtitan 820504e)", 1, false},
		{"torchtitan 820504e", 8, false},
		{"torchtitan", 1, false},
		{"NeMo 24.07", 1, false},
	} {
		r := Run{Format: FormatPublished, Framework: tt.framework, Chip: "H100-SXM-80GB", TP: tt.tp}
		if got := r.EagerLoss(); got != tt.eager {
			t.Errorf("EagerLoss(%q) = %v, want %v", tt.framework, got, tt.eager)
		}
		so, name, err := r.SearchOptions(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if name != "torchtitan" {
			continue
		}
		want := compiled
		if tt.eager {
			want = eager
			if tt.tp > 1 {
				// DTensor's loss_parallel backward: 12 transient bytes, not 8.
				want.TransientBytes = 12
			}
		}
		for _, k := range []model.Kernels{so.Program.Kernels, so.ShardedProgram.Kernels} {
			if got := k.Passes[model.PassLoss]; got != want {
				t.Errorf("%q: loss pass %+v, want %+v", tt.framework, got, want)
			}
		}
	}
}

// TestBF16GradSync checks the NeMo releases whose launcher examples sync
// the gradients in bf16 (Run.BF16GradSync: 24.05 to 24.12, GPT-3 and Llama
// without FSDP) and that their megatron profile keeps 2-byte gradients.
func TestBF16GradSync(t *testing.T) {
	for _, tt := range []struct {
		framework, model, fsdp string
		want                   bool
	}{
		{"NeMo (NeMo24.07, Megatron-Core, Transformer Engine)", "GPT-3-175B", "distributed optimizer", true},
		{"NeMo 24.12", "Llama-3-70B", "", true},
		{"NeMo 24.05", "Llama-2-7B", "", true},
		{"NeMo (NeMo24.03.01.framework, Megatron-Core, Transformer Engine)", "Llama-2-7B", "", false},
		{"NeMo (NeMo25.04.rc2, Megatron-Core, Transformer Engine)", "Llama-3-8B", "", false},
		{"NeMo 24.07", "Nemotron-22B", "", false},
		{"NeMo 24.07", "GPT3-5B", "FSDP 8-way", false},
		{"Megatron-Bridge (NeMo 25.11 container, Megatron-Core)", "Llama-3-8B", "", false},
	} {
		r := Run{Format: FormatPublished, Framework: tt.framework, ModelName: tt.model, ZeroOrFSDP: tt.fsdp, Chip: "H100-SXM-80GB"}
		if got := r.BF16GradSync(); got != tt.want {
			t.Errorf("BF16GradSync(%q, %q, %q) = %v, want %v", tt.framework, tt.model, tt.fsdp, got, tt.want)
		}
		so, name, err := r.SearchOptions(Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := 4.0
		if tt.want {
			want = 2
		}
		if name == "megatron" && so.Program.Precision.Grad != want {
			t.Errorf("%q %q: gradient bytes %v, want %v", tt.framework, tt.model, so.Program.Precision.Grad, want)
		}
	}
}

// TestComposerMixedPrecision checks that LLM Foundry rows run with
// Composer's mixed_precision DEFAULT get the weight copies, the gradient
// cast and the freed gradients of FSDP's mixed precision under the default
// profile, and that other rows do not.
func TestComposerMixedPrecision(t *testing.T) {
	for _, tt := range []struct {
		source, framework, fsdp string
		want                    bool
	}{
		{"mosaicml/llm-foundry@5e85bd62:scripts/train/benchmarking/README.md", "LLM Foundry (Composer, PyTorch FSDP)", "FSDP FULL_SHARD 8-way, mixed_precision DEFAULT", true},
		{"mosaicml/llm-foundry@5e85bd62:scripts/train/benchmarking/README.md", "LLM Foundry (Composer, PyTorch FSDP)", "FSDP FULL_SHARD 8-way, mixed_precision PURE", false},
		{"mosaicml/llm-foundry@5e85bd62:scripts/train/benchmarking/README.md", "LLM Foundry (Composer, PyTorch FSDP)", "FSDP FULL_SHARD 8-way", false},
		{"pytorch/torchtitan@b5bcd76c:benchmarks/x.md", "torchtitan (FSDP2)", "FSDP2 8-way, mixed_precision DEFAULT", false},
	} {
		r := Run{Format: FormatPublished, Source: tt.source, Framework: tt.framework, ModelName: "MPT-7b", ZeroOrFSDP: tt.fsdp, Chip: "H100-SXM-80GB"}
		if got := r.composerMixedPrecision(); got != tt.want {
			t.Errorf("composerMixedPrecision(%q, %q) = %v, want %v", tt.source, tt.fsdp, got, tt.want)
		}
		so, name, err := r.SearchOptions(Options{})
		if err != nil {
			t.Fatal(err)
		}
		pr := so.Program.Precision
		got := pr.WeightCopies && pr.TransientGrads && pr.GradCast
		if tt.want && name != "generic" {
			t.Errorf("%q: profile %s, want generic", tt.framework, name)
		}
		if name == "generic" && got != tt.want {
			t.Errorf("%q %q under %s: weight copies, freed gradients and gradient cast %v, want %v", tt.source, tt.fsdp, name, got, tt.want)
		}
	}
}
