package model

import (
	"slices"
	"strings"
	"testing"
)

// TestDeepSeekParams pins the parameter counts of the MLA models by hand
// (docs/formulas.md §1.1 with MLA's projections, DeepSeek-V2 §2.1.2-2.1.3).
func TestDeepSeekParams(t *testing.T) {
	// DeepSeek-V3 (arXiv:2412.19437 §4.2 and its Hugging Face config):
	// h 7168, 128 heads, r_q 1536, r_kv 512, nope 128, rope 64, v 128, V 129280.
	//   MLA projections 7168·1536 + 1536·128·192 + 7168·512 + 512·128·256
	//     + 7168·64 + 128·128·7168 = 187,105,280; latent norms 1536 + 512:
	//     attention 187,107,328 per layer.
	//   dense layer 187,107,328 + 3·7168·18432 + 2·7168 = 583,496,704
	//   MoE layer 187,107,328 + 14,336 + router 7168·256 = 1,835,008
	//     + shared 3·7168·2048 = 44,040,192 + 256·44,040,192 = 11,274,289,152:
	//     11,507,286,016 (active, 8 experts: 585,318,400)
	//   total 3·583,496,704 + 58·11,507,286,016 + 2·129280·7168 + 7168
	//     = 671,026,404,352: the report's 671B;
	//   active 3·583,496,704 + 58·585,318,400 + 1,853,358,080 + 7168
	//     = 37,552,282,624: the report's 37B activated.
	//   MTP module 3·7168 + 2·7168² + one MoE layer = 11,610,067,968
	//     (active 688,100,352). Hugging Face's checkpoint stores its own
	//     copies of the embedding and the head with it (model.layers.61):
	//     11,610,067,968 + 1,853,358,080 = 13,463,426,048, the "14B of the
	//     MTP module", and 671,026,404,352 + 13,463,426,048 = 684,489,830,400,
	//     the "685B" of the model card (rounded; the FP8 scales and the 14,848
	//     expert biases of aux-loss-free balancing are not counted here).
	v3 := Counts{Total: 671026404352, Active: 37552282624, Embedding: 1853358080,
		NonEmbedding: 669173046272, ActiveNonEmbedding: 35698924544, MTP: 11610067968, ActiveMTP: 688100352}
	// DeepSeek-V2-Lite (arXiv:2405.04434 Appendix B and its Hugging Face
	// config, q_lora_rank null): h 2048, 16 heads, 27 layers (1 dense, 26
	// MoE of 64 experts of 1408, top-6, 2 shared), V 102400, no MTP.
	//   attention 2048·16·192 + 2048·512 + 512·16·256 + 2048·64
	//     + 16·128·2048 + 512 = 13,763,072
	//   dense layer 13,763,072 + 3·2048·10944 + 4096 = 81,010,688
	//   MoE layer 13,763,072 + 4096 + 2048·64 + 2·8,650,752 + 64·8,650,752
	//     = 584,837,632 (active 13,763,072 + 4096 + 131,072 + 8·8,650,752
	//     = 83,104,256)
	//   total 81,010,688 + 26·584,837,632 + 2·102400·2048 + 2048
	//     = 15,706,484,224: the paper's 15.7B;
	//   active 81,010,688 + 26·83,104,256 + 419,430,400 + 2048 = 2,661,150,208
	//     (the paper's 2.4B leaves out embeddings: 2.24B without both, 2.45B
	//     without the input one).
	v2lite := Counts{Total: 15706484224, Active: 2661150208, Embedding: 419430400,
		NonEmbedding: 15287053824, ActiveNonEmbedding: 2241719808}
	v3yaml := Spec{Layers: 61, Hidden: 7168, Heads: 128, FFNHidden: 18432, FFN: SwiGLU, Vocab: 129280,
		MoE:       &MoE{Experts: 256, TopK: 8, ExpertFFNHidden: 2048, SharedExperts: 1, FirstDenseLayers: 3},
		MLA:       &MLA{QLoRARank: 1536, KVLoRARank: 512, QKNopeHeadDim: 128, QKRopeHeadDim: 64, VHeadDim: 128},
		MTPLayers: 1}
	v3yaml.Normalize()
	v3preset, err := Preset("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	v3file, err := Load("testdata/deepseek-v3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		spec Spec
		want Counts
	}{
		{"deepseek-v3 preset", v3preset, v3},
		{"deepseek-v3 YAML (docs/contract.md's keys)", v3file, v3},
		{"deepseek-v3 spec", v3yaml, v3},
		{"deepseek-v3 config.json", loadHF(t, "testdata/deepseek-v3.config.json"), v3},
		{"deepseek-v2-lite config.json", loadHF(t, "testdata/deepseek-v2-lite.config.json"), v2lite},
	}
	for _, tt := range tests {
		if got := tt.spec.Counts(); got != tt.want {
			t.Errorf("%s: counts %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if got := v3preset.MTPModuleParams(false) + v3.Embedding; got != 13463426048 {
		t.Errorf("DeepSeek-V3 MTP module with Hugging Face's copies of the embedding and head: %d, want 13,463,426,048", got)
	}
}

// TestMLAFLOPsPerToken pins the contract's model FLOPs of DeepSeek-V3 at
// sequence length 4096 by hand (docs/formulas.md §1.2; the MTP module as
// Megatron-LM's num_floating_point_operations counts it).
func TestMLAFLOPsPerToken(t *testing.T) {
	s, err := Preset("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	// 6·(Ψ_active_nonembedding + Ψ_mtp_active) = 6·(35,698,924,544 + 688,100,352)
	//   = 218,322,149,376
	// scores, full square: 12·(61 + 1)·s·128·(192 + 128)/2 = 12·62·4096·20480
	//   = 62,411,243,520
	// logits, main head and the MTP module's: 6·7168·129280·2 = 11,120,148,480
	// sum 291,853,541,376.
	const want = 291853541376.0
	if got := s.ModelFLOPsPerToken(4096); got != want {
		t.Errorf("ModelFLOPsPerToken(4096) = %.0f, want %.0f", got, want)
	}
	if got := s.CoreWidth(); got != 20480 {
		t.Errorf("CoreWidth = %v, want 128·(192+128)/2 = 20480", got)
	}
}

// einsumFLOPs is 2·Work·Π(sizes of the union of A's and B's dimensions).
func einsumFLOPs(p *Program, o *Op, sz *[NumDim]float64) float64 {
	var dims uint32
	for _, t := range []int{o.A, o.B} {
		tt := &p.Tensors[t]
		for i := 0; i < tt.Rank; i++ {
			dims |= 1 << tt.Dims[i]
		}
	}
	fl := 2 * o.Work
	for d := Dim(0); d < NumDim; d++ {
		if dims&(1<<d) != 0 {
			fl *= sz[d]
		}
	}
	return fl
}

// attentionFLOPs returns the forward FLOPs of one sequence of seq tokens
// through the attention block of p, split into projections and core.
func attentionFLOPs(p *Program, seq float64) (proj, core float64) {
	sz := p.Sizes(1, seq)
	blk := &p.Blocks[p.Kinds[0].Blocks[0]]
	for i := range blk.Fwd {
		o := &blk.Fwd[i]
		if o.Kind != Einsum {
			continue
		}
		if o.Group == GroupCore {
			core += einsumFLOPs(p, o, &sz)
		} else {
			proj += einsumFLOPs(p, o, &sz)
		}
	}
	return proj, core
}

// TestMLAProgramFLOPs pins the forward FLOPs of DeepSeek-V3's attention
// block in the layer program by hand, at s = 4096 tokens: the projections
// at their own widths and the core at its own head widths, causal.
func TestMLAProgramFLOPs(t *testing.T) {
	s, _ := Preset("deepseek-v3")
	p := MustProgram(s, ProgramOptions{})
	const seq = 4096.0
	proj, core := attentionFLOPs(p, seq)
	// Projections, 2·s·(7168·1536 + 1536·128·192 + 7168·512 + 512·128·256
	//   + 7168·64 + 128·128·7168) = 2·4096·187,105,280 = 1,532,766,453,760
	//   (q_down 90.2G, q_up 309G, kv_down 30.1G, kv_up 137G, k_rope 3.76G,
	//   out 962G).
	if want := 1532766453760.0; proj != want {
		t.Errorf("projection FLOPs %.0f, want %.0f", proj, want)
	}
	// Core, causal flash kernel (half the square): scores 2·0.5·s²·128·192
	//   = 412,316,860,416 and attention over V 2·0.5·s²·128·128
	//   = 274,877,906,944: 687,194,767,360.
	if want := 687194767360.0; core != want {
		t.Errorf("core FLOPs %.0f, want %.0f", core, want)
	}
}

// TestGQAStandInUndercount shows the attention-core FLOPs the GQA stand-in
// of DeepSeek-V3's MLA (128 query heads, 8 KV heads of width 96, the same
// projection parameters; the preset before MLA was modelled) left out: its
// core works at q = 128·96 = 12,288 against MLA's 128·(192+128)/2 = 20,480,
// 60%: an undercount of 40% (issue 13).
func TestGQAStandInUndercount(t *testing.T) {
	mla, _ := Preset("deepseek-v3")
	gqa := mla
	gqa.MLA, gqa.KVHeads, gqa.HeadDim, gqa.MTPLayers = nil, 8, 96, 0
	const seq = 4096.0
	_, coreGQA := attentionFLOPs(MustProgram(gqa, ProgramOptions{}), seq)
	_, coreMLA := attentionFLOPs(MustProgram(mla, ProgramOptions{}), seq)
	if got := coreGQA / coreMLA; got != 0.6 {
		t.Errorf("GQA stand-in's core FLOPs / MLA's = %v, want 0.6", got)
	}
	if got := gqa.CoreWidth() / mla.CoreWidth(); got != 0.6 {
		t.Errorf("GQA stand-in's model-FLOP core width / MLA's = %v, want 0.6", got)
	}
	// The stand-in matched MLA's projection parameters within 0.1%:
	// 2·7168·96·(128+8) = 187,170,816 against 187,105,280.
	if got := gqa.AttentionParams(); got != 187170816 {
		t.Errorf("stand-in attention params %d, want 187,170,816", got)
	}
}

// TestMLASaved pins what DeepSeek-V3's attention block keeps for its
// backward pass, per token, in bytes (bf16 activations, fp32 log-sum-exp).
func TestMLASaved(t *testing.T) {
	s, _ := Preset("deepseek-v3")
	p := MustProgram(s, ProgramOptions{})
	attn := p.Kinds[0].Blocks[0]
	perToken := func(pol string) float64 {
		sz := p.Sizes(1, 1)
		total := 0.0
		for _, t := range p.Saved([]int{attn}, policy(t, pol)) {
			total += p.FullBytes(t, &sz)
		}
		return total
	}
	// none: x and xn (7168 each: norm1's input; the input of q_down,
	// kv_down and k_rope), cq and cqn (1536 each), ckv and ckvn (512 each),
	// q and k (128·192 each), v and o (128·128 each): 100,352 bf16 values,
	// 200,704 bytes, and the fp32 log-sum-exp per head, 512 bytes: 201,216.
	// selective re-runs the core: less the log-sum-exp, 200,704.
	// full keeps the block's input x: 14,336.
	tests := []struct {
		policy string
		want   float64
	}{
		{RecomputeNone, 201216},
		{RecomputeSelective, 200704},
		{RecomputeFull, 14336},
	}
	for _, tt := range tests {
		if got := perToken(tt.policy); got != tt.want {
			t.Errorf("%s: %v bytes per token, want %v", tt.policy, got, tt.want)
		}
	}
	// Without a flash kernel the softmax output is kept instead of the
	// log-sum-exp: one bf16 score per head and key, 2·128·4096 bytes per
	// token at 4096 tokens [KORT §4.1].
	q := MustProgram(s, ProgramOptions{Kernels: Kernels{Attention: AttentionMaterialized}})
	const seq = 4096.0
	sz := q.Sizes(1, seq)
	var got float64
	for _, t := range q.Saved([]int{q.Kinds[0].Blocks[0]}, policy(t, RecomputeNone)) {
		got += q.FullBytes(t, &sz)
	}
	if want := seq * (200704 + 2*128*seq); got != want {
		t.Errorf("materialised scores: %v bytes per sequence, want %v", got, want)
	}
}

// TestMTPProgram checks the multi-token-prediction module in the layer
// program: a kind of its own (its block, then the stack's last layer) run
// MTPLayers times after the stack, whose weights are Counts().MTP, and one
// more run of the output block each.
func TestMTPProgram(t *testing.T) {
	s, _ := Preset("deepseek-v3")
	p := MustProgram(s, ProgramOptions{})
	if p.MTP.Count != 1 || p.Kinds[p.MTP.Kind].Name != "mtp" || p.OutputRuns() != 2 {
		t.Fatalf("MTP run %+v, kind %q, output runs %v", p.MTP, p.Kinds[p.MTP.Kind].Name, p.OutputRuns())
	}
	kind := p.Kinds[p.MTP.Kind]
	moe := p.Kinds[p.Stack[len(p.Stack)-1].Kind]
	if !slices.Equal(kind.Blocks[1:], moe.Blocks) || p.Blocks[kind.Blocks[0]].Name != "mtp" {
		t.Errorf("MTP kind blocks %v, want the mtp block and the MoE layer's %v", kind.Blocks, moe.Blocks)
	}
	if p.NumLayers() != 61 {
		t.Errorf("stack has %d layers, want 61 (the MTP module is not in it)", p.NumLayers())
	}
	sz := p.Sizes(1, 1)
	var params float64
	for _, b := range kind.Blocks {
		for _, w := range p.Blocks[b].Weights {
			params += p.Params(w, &sz)
		}
	}
	if want := float64(s.Counts().MTP); params != want {
		t.Errorf("MTP kind weights %.0f, want Counts().MTP %.0f", params, want)
	}
	// The module's transformer layer reads the projection's output.
	mtp := &p.Blocks[kind.Blocks[0]]
	last := mtp.Fwd[len(mtp.Fwd)-1]
	if last.Name != "mtp_proj" || last.C != p.Blocks[kind.Blocks[1]].Input {
		t.Errorf("the mtp block ends with %s writing %s, want mtp_proj writing the layer's input", last.Name, p.Tensors[last.C].Name)
	}
	// Without MTP the program has no such kind and runs the output once.
	s.MTPLayers = 0
	if q := MustProgram(s, ProgramOptions{}); len(q.Kinds) != 2 || q.MTP.Count != 0 || q.OutputRuns() != 1 {
		t.Errorf("without MTP: %d kinds, MTP %+v", len(q.Kinds), q.MTP)
	}
}

// TestMLAValidate checks that each broken MLA or MTP field is named in one
// sentence.
func TestMLAValidate(t *testing.T) {
	base := func() Spec {
		return Spec{Layers: 4, Hidden: 256, Heads: 4, Vocab: 1000, FFN: SwiGLU,
			MLA: &MLA{QLoRARank: 64, KVLoRARank: 32, QKNopeHeadDim: 32, QKRopeHeadDim: 16, VHeadDim: 32}}
	}
	if err := base().Validate(); err != nil {
		t.Fatalf("base spec: %v", err)
	}
	tests := []struct {
		name   string
		change func(*Spec)
		want   string
	}{
		{"kv_lora_rank", func(s *Spec) { s.MLA.KVLoRARank = 0 }, "model: mla.kv_lora_rank is 0; it must be between 1 and"},
		{"q_lora_rank", func(s *Spec) { s.MLA.QLoRARank = -1 }, "model: mla.q_lora_rank is -1; it must be between 0 and"},
		{"v_head_dim", func(s *Spec) { s.MLA.VHeadDim = 0 }, "model: mla.v_head_dim is 0; it must be between 1 and"},
		{"nope", func(s *Spec) { s.MLA.QKNopeHeadDim = -2 }, "model: mla.qk_nope_head_dim is -2"},
		{"rope", func(s *Spec) { s.MLA.QKRopeHeadDim = 70000 }, "model: mla.qk_rope_head_dim is 70000"},
		{"zero qk", func(s *Spec) { s.MLA.QKNopeHeadDim, s.MLA.QKRopeHeadDim = 0, 0 }, "model: mla.qk_nope_head_dim and mla.qk_rope_head_dim are both 0"},
		{"kv_heads", func(s *Spec) { s.KVHeads = 2 }, "model: kv_heads is 2; with mla every head has its own keys and values"},
		{"head_dim", func(s *Spec) { s.HeadDim = 64 }, "model: head_dim is 64; with mla it is qk_nope_head_dim + qk_rope_head_dim (48)"},
		{"bias", func(s *Spec) { s.Bias = true }, "model: bias is true; multi-head latent attention is modelled without biases"},
		{"mtp_layers", func(s *Spec) { s.MTPLayers = -1 }, "model: mtp_layers is -1; it must be between 0 and 100"},
	}
	for _, tt := range tests {
		s := base()
		tt.change(&s)
		err := s.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one sentence starting %q", tt.name, err, tt.want)
		}
	}
	// A head count that does not divide hidden is no problem with MLA:
	// head_dim is the latent attention's own.
	s := base()
	s.Heads = 3
	if err := s.Validate(); err != nil {
		t.Errorf("3 heads of width 48 over hidden 256: %v", err)
	}
}

// TestMLAYAML reads the mla mapping and mtp_layers of the YAML form.
func TestMLAYAML(t *testing.T) {
	s, err := ParseYAML([]byte(`name: tiny-mla
layers: 2
hidden: 256
heads: 4
vocab: 1000
ffn: swiglu
mtp_layers: 1
mla:
  q_lora_rank: 0
  kv_lora_rank: 32
  qk_nope_head_dim: 32
  qk_rope_head_dim: 16
  v_head_dim: 32
`))
	if err != nil {
		t.Fatal(err)
	}
	want := MLA{KVLoRARank: 32, QKNopeHeadDim: 32, QKRopeHeadDim: 16, VHeadDim: 32}
	if s.MLA == nil || *s.MLA != want || s.MTPLayers != 1 || s.KVHeads != 4 || s.HeadDim != 48 {
		t.Errorf("parsed %+v (mla %+v)", s, s.MLA)
	}
	_, err = ParseYAML([]byte("layers: 2\nhidden: 256\nheads: 4\nvocab: 1000\nmla:\n  kv_lora_rnak: 32\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown key "mla.kv_lora_rnak" at line 6 (did you mean "mla.kv_lora_rank"?)`) {
		t.Errorf("unknown mla key: %v", err)
	}
	_, err = ParseYAML([]byte("layers: 2\nhidden: 256\nheads: 4\nvocab: 1000\nmla: 3\n"))
	if err == nil || !strings.Contains(err.Error(), `key "mla" at line 5 is a scalar "3"; it must be a mapping`) {
		t.Errorf("scalar mla: %v", err)
	}
}

// TestDeepSeekPolicy pins the DeepSeek-V3 recompute policy (§3.2.3:
// RMSNorms, MLA's up-projections and the SwiGLU output re-run; §3.3.2:
// what is kept at which precision) against none and full, per token of a
// dense and an MoE layer, in bytes.
func TestDeepSeekPolicy(t *testing.T) {
	s, _ := Preset("deepseek-v3")
	p := MustProgram(s, ProgramOptions{})
	// none, dense: attention 201,216 (TestMLASaved) plus the MLP: its
	// input and normed input (2·7168 bf16 each), gate, up and SwiGLU output
	// (3·18432 bf16 each): 201,216 + 28,672 + 110,592 = 340,480.
	// deepseek keeps what no re-run op makes: the layer input x (14,336),
	// the latents cq and ckv (3,072 and 1,024), the log-sum-exp (512), the
	// attention output o (128·128·2 = 32,768), the MLP's input x2 (14,336)
	// and its gate and up outputs h (2·18432·2 = 73,728): 139,776. An MoE
	// layer keeps, besides the attention part and x2, the router's
	// probabilities (256·4 = 1,024), the 8 routed copies of its input
	// (114,688) and their gate and up outputs (8·2·2048·2 = 65,536), and the
	// shared expert's gate and up (8,192): 255,488. The experts weigh their
	// SwiGLU output by the routing probabilities, so the combine keeps no
	// copy of their outputs (8·7168·2 = 114,688 fewer; Policy.Unsaved).
	// Under the blockwise fp8 recipe the fp8 inputs of the projections a
	// norm feeds (xn, cqn, ckvn, xn2) are re-quantised from the re-run
	// norms, not kept (§3.2.3), and o is kept once in E5M6 (128·128·1.5 =
	// 24,576 for o and its fp8 copy, 32,768 + 16,384): 139,776 - 8,192 =
	// 131,584 for a dense layer. An MoE layer's routed copies arrive in fp8
	// (57,344 instead of 114,688) and its SwiGLU inputs are kept in fp8
	// (32,768 routed, 4,096 shared): 255,488 - 8,192 - 57,344 - 32,768 -
	// 4,096 = 153,088. The multi-token-prediction module keeps its two
	// inputs, the embedding of the tokens one further ahead and the
	// previous depth's hidden state (14,336 bf16 each: its norms re-run,
	// and their concatenation's fp8 copy with them), and the token ids (8),
	// besides its MoE layer: 28,680 + 153,088 = 181,768.
	tests := []struct {
		policy string
		kind   int
		want   float64
	}{
		{RecomputeNone, 0, 340480},
		{RecomputeNone, 1, 570880},
		{RecomputeDeepSeek, 0, 139776},
		{RecomputeDeepSeek, 1, 255488},
		{RecomputeFull, 0, 14336},
		{RecomputeFull, 1, 14336},
	}
	for _, tt := range tests {
		if got := savedBytes(p, tt.kind, 1, policy(t, tt.policy)); got != tt.want {
			t.Errorf("%s kind %d: %v bytes per token, want %v", tt.policy, tt.kind, got, tt.want)
		}
	}
	r, _ := LookupFP8Recipe(FP8Blockwise)
	q := MustProgram(s, ProgramOptions{FP8: &r})
	for kind, want := range []float64{131584, 153088, 181768} {
		if got := savedBytes(q, kind, 1, policy(t, RecomputeDeepSeek)); got != want {
			t.Errorf("fp8 deepseek kind %d: %v bytes per token, want %v", kind, got, want)
		}
	}
}
