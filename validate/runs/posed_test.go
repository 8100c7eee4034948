package runs

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
)

// readTestdata reads a testdata file with ReadFormat.
func readTestdata(t *testing.T, name string) ([]Run, Format) {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	rs, f, err := ReadFormat(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("ReadFormat(%s): %v", name, err)
	}
	return rs, f
}

// runByID returns the row of rs with that id.
func runByID(t *testing.T, rs []Run, id string) Run {
	t.Helper()
	for _, r := range rs {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no row %s", id)
	return Run{}
}

// TestReadPublishedFiles reads both published files as they are: the
// format from the header, every row, and the sources the .md files name.
func TestReadPublishedFiles(t *testing.T) {
	tests := []struct {
		file    string
		format  Format
		rows    int
		sources []string
	}{
		{"published-runs-2.csv", FormatPublished, 89, []string{"NVIDIA-NeMo/Megatron-Bridge", "NVIDIA/NeMo", "NVIDIA/Megatron-LM",
			"AI-Hypercomputer/tpu-recipes", "pytorch/torchtitan", "InternLM/InternEvo"}},
		{"published-memory.csv", FormatMemory, 42, []string{"NVIDIA/Megatron-LM", "NVIDIA-NeMo/Megatron-Bridge",
			"ISEEKYAN/mbridge", "hpcaitech/ColossalAI-Pytorch-lightning"}},
		{"published-runs.csv", FormatRuns, 77, nil},
	}
	for _, tt := range tests {
		rs, f := readTestdata(t, tt.file)
		if f != tt.format || len(rs) != tt.rows && tt.sources != nil {
			t.Errorf("%s: format %v with %d rows, want %v with %d", tt.file, f, len(rs), tt.format, tt.rows)
		}
		var got []string
		for _, r := range rs {
			if s := r.SourceName(); !contains(got, s) {
				got = append(got, s)
			}
		}
		if tt.sources != nil && !reflect.DeepEqual(got, tt.sources) {
			t.Errorf("%s: sources %q, want %q", tt.file, got, tt.sources)
		}
	}
}

// contains reports whether xs holds x.
func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestPosedModel checks the models built from the published columns:
// presets by name, MLA widths, MoE layer patterns and expert widths.
func TestPosedModel(t *testing.T) {
	rs, _ := readTestdata(t, "published-runs-2.csv")
	tests := []struct {
		id         string
		name       string
		mla        *model.MLA
		firstDense int
		experts    int
		expertFFN  int
		shared     int
		pattern    []string
		window     int
	}{
		// DeepSeek-V3: the preset, with the row's MLA 1536/512/64/128/128 and 3 dense layers.
		{"mb2509_h100_dsv3_fp8", "deepseek-v3", &model.MLA{QLoRARank: 1536, KVLoRARank: 512, QKRopeHeadDim: 64, QKNopeHeadDim: 128, VHeadDim: 128}, 3, 256, 2048, 1, nil, 0},
		// Qwen3-30B-A3B: built from the columns, all 48 layers MoE with experts of 768.
		{"mb2511_h100_qwen3_30b_fp8cs", "Qwen3-30B-A3B", nil, 0, 128, 768, 0, nil, 0},
		// GPT-OSS-120B: sliding window of 128 on every other layer, starting with layer 0.
		{"mb2511_h100_gptoss_120b_bf16", "GPT-OSS-120B", nil, 0, 128, 2880, 0, []string{"sliding", "full"}, 128},
		// Llama 3 by name.
		{"mb2511_h100_llama3_8b_fp8cs", "llama3-8b", nil, 0, 0, 0, 0, nil, 0},
		{"tpurec_v5p_llama31_405b_512", "llama3-405b", nil, 0, 0, 0, 0, nil, 0},
		{"nemols_h100_llama2_7b_4k", "llama2-7b", nil, 0, 0, 0, 0, nil, 0},
	}
	for _, tt := range tests {
		m, err := runByID(t, rs, tt.id).ModelSpec()
		if err != nil {
			t.Errorf("%s: %v", tt.id, err)
			continue
		}
		if m.Name != tt.name || !reflect.DeepEqual(m.MLA, tt.mla) || !reflect.DeepEqual(m.Pattern, tt.pattern) || m.Window != tt.window {
			t.Errorf("%s: name %s, mla %+v, pattern %v window %d; want %s, %+v, %v, %d", tt.id, m.Name, m.MLA, m.Pattern, m.Window, tt.name, tt.mla, tt.pattern, tt.window)
		}
		experts, ffn, shared, first := 0, 0, 0, 0
		if m.MoE != nil {
			experts, ffn, shared, first = m.MoE.Experts, m.MoE.ExpertFFNHidden, m.MoE.SharedExperts, m.MoE.FirstDenseLayers
		}
		if experts != tt.experts || ffn != tt.expertFFN || shared != tt.shared || first != tt.firstDense {
			t.Errorf("%s: moe %d experts of %d, %d shared, %d dense first; want %d of %d, %d, %d", tt.id, experts, ffn, shared, first,
				tt.experts, tt.expertFFN, tt.shared, tt.firstDense)
		}
	}
}

// TestPosedMTP checks which DeepSeek-V3 rows train the multi-token
// prediction module: the preset's one unless the row says "w/o MTP" or ran
// MaxText, whose base.yml sets mtp_num_layers to 0 (maxtext@3eb77db3).
func TestPosedMTP(t *testing.T) {
	rs, _ := readTestdata(t, "published-runs-2.csv")
	tests := []struct {
		id  string
		mtp int
	}{
		{"mb2511_b200_dsv3_fp8mx", 1},  // w/ MTP
		{"mb2511_gb200_dsv3_fp8mx", 0}, // w/o MTP
		{"tpurec_v5p_dsv3_512", 0},     // MaxText
	}
	for _, tt := range tests {
		m, err := runByID(t, rs, tt.id).ModelSpec()
		if err != nil {
			t.Errorf("%s: %v", tt.id, err)
			continue
		}
		if m.MTPLayers != tt.mtp {
			t.Errorf("%s: %d MTP modules, want %d", tt.id, m.MTPLayers, tt.mtp)
		}
	}
}

// TestLayerPatternAndMLA checks the two parsers on good and bad text.
func TestLayerPatternAndMLA(t *testing.T) {
	tests := []struct {
		text    string
		first   int
		pattern []string
		window  int
		bad     bool
	}{
		{"first 3 layers dense (ffn 18432) then 58 MoE layers", 3, nil, 0, false},
		{"all 94 layers MoE (no dense FFN layers)", 0, nil, 0, false},
		{"all 36 layers MoE; attention alternates sliding-window(128)/full every other layer", 0, []string{"sliding", "full"}, 128, false},
		{"every other layer MoE", 0, nil, 0, true},
	}
	for _, tt := range tests {
		first, pattern, window, err := layerPattern(tt.text)
		if (err != nil) != tt.bad || first != tt.first || !reflect.DeepEqual(pattern, tt.pattern) || window != tt.window {
			t.Errorf("layerPattern(%q) = %d, %v, %d, %v; want %d, %v, %d, error %v", tt.text, first, pattern, window, err, tt.first, tt.pattern, tt.window, tt.bad)
		}
	}
	for _, bad := range []string{"1536/512/64/128", "1536/512/x/128/128", "", "1/2/3/4/99999999"} {
		if _, err := parseMLA(bad); err == nil {
			t.Errorf("parseMLA(%q) succeeded, want an error", bad)
		}
	}
}

// TestPublishedChips checks the chip labels of the published files: the
// cluster each maps to (v5p-N counts TensorCores, N/2 chips), the 96 GB
// H100's memory, and the planner's own error for a GB200 job that is not
// whole NVLink domains.
func TestPublishedChips(t *testing.T) {
	tests := []struct {
		chip    string
		chips   int
		notes   string
		cluster string
		hbm     float64 // bytes; 0: the profile's
		err     string
	}{
		{"H100-SXM-80GB", 64, "", "h100-64", 0, ""},
		{"H100-SXM-96GB-HBM2e (500W cap)", 256, "", "h100-96gb-500w-256", 96e9, ""},
		{"H100-80GB", 32, "", "h100-32", 0, ""},
		{"B200", 8, "", "b200-8", 0, ""},
		{"A100-SXM-80GB", 8, "", "a100-8", 0, ""},
		{"A100-40GB", 4, "", "a100-40gb-4", 0, ""},
		{"TPUv6e (Trillium)", 8, "", "v6e-8", 0, ""},
		{"TPUv6e (Trillium)", 512, "config x, num_slices=2 (multi-slice over DCN)", "2xv6e-256", 0, ""},
		{"TPUv5p", 512, "", "v5p-1024", 0, ""},
		{"GB200", 64, "", "gb200-64", 0, ""}, // whole 4-GPU trays in one NVL72 domain
		{"GB200", 66, "", "", 0, "4-GPU trays"},
	}
	for _, tt := range tests {
		r := Run{Chip: tt.chip, Chips: tt.chips, Notes: tt.notes, Format: FormatPublished}
		c, err := r.ClusterOf(nil)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s x%d: error %v, want one containing %q", tt.chip, tt.chips, err, tt.err)
			}
			continue
		}
		if err != nil || c.Name != tt.cluster || c.Chips() != tt.chips {
			t.Errorf("%s x%d: cluster %s of %d chips, %v; want %s", tt.chip, tt.chips, c.Name, c.Chips(), err, tt.cluster)
			continue
		}
		if tt.hbm > 0 && c.Chip.HBMBytes != tt.hbm {
			t.Errorf("%s: %g bytes of HBM, want %g", tt.chip, c.Chip.HBMBytes, tt.hbm)
		}
	}
}

// TestPrecisionOf checks the precision mapping: fp8 recipes to fp8, fp16
// to bf16, and the formats the strategy parser does not know to its error.
func TestPrecisionOf(t *testing.T) {
	tests := []struct {
		text, want, err string
	}{
		{"BF16", "bf16", ""},
		{"BF16 (weights fp32)", "bf16", ""},
		{"bf16", "bf16", ""},
		{"fp16 AMP (Lightning precision=16)", "bf16", ""},
		{"", "bf16", ""},
		{"FP8?", "fp8", ""},
		{"FP8-CS", "fp8", ""},
		{"FP8 current scaling (FP8_CS)", "fp8", ""},
		{"FP8 tensorwise (torchao float8)", "fp8", ""},
		{"FP8 (hybrid format; scaling recipe not stated)", "fp8", ""},
		{"MXFP8", "fp8", ""},
		{"FP8-MX", "fp8", ""},
		{"INT8 (AQT; folder is named fp8)", "int8", ""},
		{"NVFP4", "fp8", ""},
		{"tf32", "", "is not bf16"},
	}
	for _, tt := range tests {
		got, err := precisionOf(tt.text)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("precisionOf(%q) = %q, %v; want an error containing %q", tt.text, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("precisionOf(%q) = %q, %v; want %q", tt.text, got, err, tt.want)
		}
	}
}

// TestFrameworkProfile checks the published framework names.
func TestFrameworkProfile(t *testing.T) {
	tests := []struct{ text, want string }{
		{"Megatron-Bridge (NeMo 25.09 container, Megatron-Core)", "megatron"},
		{"NeMo (NeMo25.04.rc2, Megatron-Core, Transformer Engine)", "megatron"},
		{"Megatron-LM / Megatron-Core (core_r0.12.0 checkout in the README; PyTorch 25.03 container)", "megatron"},
		{"MaxText (JAX/XLA), tpu-recipes-v0.1.4 (9f1820b4)", "maxtext"},
		{"torchtitan (FSDP2 + DTensor TP, torch.compile; torch 38410cf9, torchtitan 820504e)", "torchtitan"},
		{"InternEvo / InternLM (PyTorch, flash-attention, Hybrid ZeRO)", "generic"},
		{"PyTorch Lightning + DeepSpeed", "deepspeed"},
		{"PyTorch Lightning DDP", "pytorch"},
		{"PyTorch Lightning + ColossalAI (Gemini, placement cuda)", "generic"},
		{"megatron", "megatron"},
		{"my stack.yaml", "my stack.yaml"},
	}
	for _, tt := range tests {
		if got := frameworkProfile(tt.text); got != tt.want {
			t.Errorf("frameworkProfile(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestFLOPConventions checks the FLOPs per token of each convention on
// hand-computed values (docs/published-runs-2.md "FLOP conventions").
func TestFLOPConventions(t *testing.T) {
	llama8b, err := model.Load("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	internlm := model.Spec{Name: "internlm-7b", Layers: 32, Hidden: 4096, Heads: 32, FFNHidden: 11008, FFN: model.SwiGLU, Vocab: 103168}
	internlm.Normalize()
	tests := []struct {
		name string
		conv Convention
		m    model.Spec
		seq  int
		want float64
	}{
		// Llama3-8B at 8K: 6 x 6.9796e9 non-embedding parameters
		// (32 x (2x4096² + 2x4096x1024 + 3x4096x14336 + 2x4096) + 4096)
		// + 12x32x4096x8192 + 6x4096x128256 = 41.878e9 + 12.885e9 + 3.152e9
		// = 57.91e9 un-halved ("57.9"), and 57.91e9 - 12.885e9/2 = 51.47e9
		// causal-halved ("51.5").
		{"llama3-8b contract", ConventionContract, llama8b, 8192, 57.9145e9},
		{"llama3-8b causal", ConventionCausal, llama8b, 8192, 51.4720e9},
		// InternLM-7B at 2048, SC21: 96x32x4096²x(1 + 2048/(6x4096) +
		// 103168/(16x32x4096)) = 58.37e9 ("58.4"); 72x32x4096²x(1 + 2048/24576
		// + 103168/(12x32x4096)) = 44.41e9 ("44.4").
		{"internlm hfu", ConventionMegatronHFU, internlm, 2048, 58.3703e9},
		{"internlm mfu", ConventionMegatronMFU, internlm, 2048, 44.4113e9},
	}
	for _, tt := range tests {
		got, err := tt.conv.FLOPsPerToken(tt.m, tt.seq)
		if err != nil || relErr(got, tt.want) > 1e-4 {
			t.Errorf("%s: %.6g FLOPs per token, %v; want %.6g", tt.name, got, err, tt.want)
		}
	}
}

// relErr is |a/b - 1|.
func relErr(a, b float64) float64 {
	d := a/b - 1
	if d < 0 {
		return -d
	}
	return d
}

// TestConventionOfBasis checks that each flops_basis text of the
// published file selects its convention, and that a TFLOP/s-only figure
// converts through it: Megatron-Bridge's 744 TF for Llama3-8B is
// 744e12 / 51.47e9 = 14454 tok/s against the 14451 it prints.
func TestConventionOfBasis(t *testing.T) {
	rs, _ := readTestdata(t, "published-runs-2.csv")
	tests := []struct {
		id   string
		want Convention
	}{
		{"mb2511_h100_llama3_8b_fp8cs", ConventionCausal},
		{"mlmllama_llama3_8b_fp8_8", ConventionContract},
		{"nemols_b200_llama3_8b_8k", ConventionContract},
		{"tpurec_v6e_llama31_8b_8", ConventionMaxText2024},
		{"tpurec_v5p_llama31_405b_512", ConventionCausal},
		{"internevo_a100_7b_8_mb8_mn1_ckpt", ConventionMegatronHFU},
		{"internevo_a100_7b_8_mb2_mn4_nockpt", ConventionMegatronMFU},
		{"mlm_dsv3_gb200_mxfp8_baseline", ConventionCausal},
	}
	for _, tt := range tests {
		if got := runByID(t, rs, tt.id).convention(); got != tt.want {
			t.Errorf("%s: convention %s, want %s", tt.id, got, tt.want)
		}
	}
	r := runByID(t, rs, "mb2511_h100_llama3_8b_fp8cs")
	r.MeasuredTokensPerSPerChip = 0 // leave the TFLOP/s figure only
	m, err := r.ModelSpec()
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Measured(m, 8, 128, 8192)
	if err != nil || relErr(got.TokensPerSPerChip, 744e12/51.4720e9) > 1e-4 {
		t.Errorf("Measured(744 TF, causal) = %.1f tok/s, %v; want %.1f", got.TokensPerSPerChip, err, 744e12/51.4720e9)
	}
}

// TestPublishedMemoryRows checks the memory comparison: GiB to bytes, the
// error, the fit verdict against the published outcome, and that an
// out-of-memory row has no memory error.
func TestPublishedMemoryRows(t *testing.T) {
	rs, f := readTestdata(t, "published-memory.csv")
	var pick []Run
	for _, id := range []string{"cl_gpt2_12b_8gpu_ds_zero3_bs1", "mbr_l3_70b_sft_tp4pp4vp5_coreattn_oom", "mbr_lora_qwen3_8b_tp2"} {
		pick = append(pick, runByID(t, rs, id))
	}
	rep := ValidatePublished(pick, f, nil, Options{})
	if len(rep.Rows) != 2 || len(rep.NotPosable) != 1 {
		t.Fatalf("%d rows, %d not posable (%v); want 2 and 1", len(rep.Rows), len(rep.NotPosable), rep.NotPosable)
	}
	zero3 := rep.Rows[0]
	// 29.054 GiB = 29.054 x 2^30 bytes = 3.11965e10 bytes.
	if relErr(zero3.MeasuredPeakBytes, 3.11965e10) > 1e-5 || zero3.MemoryError == nil || zero3.OOM == nil || *zero3.OOM {
		t.Errorf("%s: measured %g bytes, memory error %v, oom %v; want 3.11965e10, an error, false", zero3.ID, zero3.MeasuredPeakBytes, zero3.MemoryError, zero3.OOM)
	} else if got := zero3.PredictedPeakBytes/zero3.MeasuredPeakBytes - 1; got != *zero3.MemoryError {
		t.Errorf("%s: memory error %g, want %g", zero3.ID, *zero3.MemoryError, got)
	}
	oom := rep.Rows[1]
	if oom.MemoryError != nil || oom.OOM == nil || !*oom.OOM || oom.FitRight == nil || *oom.FitRight != !oom.Fits {
		t.Errorf("%s: memory error %v, oom %v, fit right %v with fits %v; want none, true, !fits", oom.ID, oom.MemoryError, oom.OOM, oom.FitRight, oom.Fits)
	}
	if rep.All.MemoryRows != 1 || rep.All.FitRight+rep.All.FitWrong != 2 {
		t.Errorf("summary %+v: want 1 memory row and 2 verdicts", rep.All)
	}
}

// TestReadBounds checks that Read refuses input over MaxFileBytes, even
// from a pipe-like reader, and lists at most 20 row problems.
func TestReadBounds(t *testing.T) {
	header := "id,model,cluster,batch,seq,strategy,measured_step_s\n"
	big := strings.NewReader(header + strings.Repeat("x", MaxFileBytes))
	if _, err := Read(struct{ *strings.Reader }{big}); err == nil || !strings.Contains(err.Error(), "over 16 MiB") {
		t.Errorf("Read(16 MiB + header) = %v, want the size error", err)
	}
	var b strings.Builder
	b.WriteString(header)
	for i := range 25 {
		b.WriteString("r" + string(rune('a'+i)) + ",llama3-8b,h100-8,8,8192,dp=8,slow\n")
	}
	_, err := Read(strings.NewReader(b.String()))
	if err == nil || !strings.Contains(err.Error(), "25 problems") || !strings.HasSuffix(err.Error(), "and 5 more") {
		t.Errorf("Read(25 bad rows) = %v, want 25 problems ending in \"and 5 more\"", err)
	}
}

// TestMaxTextOffload maps the tpu-recipes' custom offload lists to the
// planner's MaxText offload policies, and leaves any other list to the
// strategy parser.
func TestMaxTextOffload(t *testing.T) {
	for _, tt := range []struct {
		text, want string
		ok         bool
	}{
		{"custom: decoder_layer_input offloaded to host", model.RecomputeOffloadInput, true},
		{"custom: decoder_layer_input + q/k/v proj offloaded to host", model.RecomputeOffloadInputQKV, true},
		{"custom: decoder_layer_input + q/k/v/out proj offloaded to host", model.RecomputeOffloadInputQKVO, true},
		{"custom: decoder_layer_input + out_proj offloaded to host", model.RecomputeOffloadInputOut, true},
		{"custom: context + mlpwo offloaded to host", model.RecomputeOffloadContextWo, true},
		{"custom: context offloaded to host", "", false},
		{"full", "", false},
	} {
		got, ok := maxTextOffload(strings.ToLower(tt.text))
		if got != tt.want || ok != tt.ok {
			t.Errorf("maxTextOffload(%q) = %q, %v; want %q, %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFP8RecipeName(t *testing.T) {
	tests := []struct{ precision, want string }{
		{"FP8-CS", "tensorwise"},
		{"FP8 tensorwise (torchao float8)", "torchao"},
		{"FP8 current scaling", "tensorwise"},
		{"FP8", ""},
		{"MXFP8", "mxfp8"},
		{"MXFP8?", "mxfp8"},
		{"FP8-MX", "mxfp8"},
		{"BF16", ""},
	}
	for _, tt := range tests {
		if got := (Run{Precision: tt.precision}).FP8RecipeName(); got != tt.want {
			t.Errorf("FP8RecipeName(%q) = %q, want %q", tt.precision, got, tt.want)
		}
	}
}
