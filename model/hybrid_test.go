package model

import (
	"math"
	"path/filepath"
	"slices"
	"testing"
)

// TestMamba2MixerParams: one Nemotron-H-8B Mamba-2 mixer by hand
// (mamba_ssm modules/mamba2.py): d_inner 8192 = 128 heads x 64, 8 groups,
// d_state 128; in_proj 4096 x (2·8192 + 2·8·128 + 128) = 76,021,760;
// conv 4 x 10,240 + 10,240 bias = 51,200; dt_bias, A_log, D 3 x 128 = 384;
// gated norm 8,192; out_proj 8,192 x 4,096 = 33,554,432.
func TestMamba2MixerParams(t *testing.T) {
	s, err := Preset("nemotron-h-8b")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  int64
		want int64
	}{
		{"in-projection width", s.SSMInProjWidth(MixMamba2), 18560},
		{"conv channels", s.SSMConvWidth(MixMamba2), 10240},
		{"mixer", s.MixerParams(MixMamba2), 76021760 + 51200 + 384 + 8192 + 33554432},
		// 24 x (mixer + norm 4096) + 24 x (2·4096·21504 + 4096) +
		// 4 x (2·4096·4096 + 2·4096·1024 + 4096) + 2·131072·4096 + 4096.
		{"total", s.Counts().Total, 24*109640064 + 24*176164864 + 4*41947136 + 1073741824 + 4096},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

// TestGDNMixerParams: one Qwen3-Next-80B-A3B Gated DeltaNet mixer by hand
// (transformers Qwen3NextGatedDeltaNet): key_dim 16 x 128 = 2048, value_dim
// 32 x 128 = 4096; in_proj_qkvz 2048 x (2·2048 + 2·4096) = 25,165,824;
// in_proj_ba 2048 x 64 = 131,072; conv 4 x (2·2048 + 4096) = 32,768;
// dt_bias, A_log 2 x 32 = 64; norm 128; out_proj 4096 x 2048 = 8,388,608.
func TestGDNMixerParams(t *testing.T) {
	s := Spec{Hidden: 2048, SSM: &SSM{ValueHeads: 32, ValueHeadDim: 128, KeyHeads: 16, KeyDim: 128, ConvKernel: 4}}
	if got, want := s.MixerParams(MixGDN), int64(25165824+131072+32768+64+128+8388608); got != want {
		t.Errorf("gated deltanet mixer: %d, want %d", got, want)
	}
}

// TestPublishedParamCounts pins the parameter counts of the hybrid presets
// and of the configs the loaders read against the totals their model cards
// and reports publish (rounded figures), within 2%. Published active
// counts differ in whether they include the embeddings; each row says
// which count it compares.
func TestPublishedParamCounts(t *testing.T) {
	load := func(name string) Spec {
		t.Helper()
		s, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	preset := func(name string) Spec {
		t.Helper()
		s, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	td := func(f string) string { return filepath.Join("testdata", f) }
	tests := []struct {
		name          string
		s             Spec
		total, active float64 // published, 0 when not published
		activeOf      func(Counts) int64
		source        string
	}{
		{"nemotron-h-8b", preset("nemotron-h-8b"), 8e9, 0, nil,
			"arXiv:2504.03624 (Nemotron-H), the 8B model; Nemotron-H-8B-Base-8K model card"},
		{"nemotron-h-56b", preset("nemotron-h-56b"), 56e9, 0, nil,
			"arXiv:2504.03624 (Nemotron-H), the 56B model; Nemotron-H-56B-Base-8K model card"},
		{"nemotron-3-nano", preset("nemotron-3-nano"), 31.6e9, 3.6e9, func(c Counts) int64 { return c.Active },
			"NVIDIA-Nemotron-3-Nano-30B-A3B model card: 31.6B total, about 3.6B active including embeddings"},
		{"nemotron-3-nano config", load(td("nemotron-3-nano-30b-a3b.config.json")), 31.6e9, 3.6e9, func(c Counts) int64 { return c.Active },
			"as above, read from its config.json"},
		{"qwen3-next-80b-a3b", preset("qwen3-next-80b-a3b"), 80e9, 0, nil,
			"Qwen3-Next-80B-A3B model card: 80B in total, 3B activated (active pinned apart: TestQwen3NextActive)"},
		{"qwen3-next config", load(td("qwen3-next-80b-a3b.config.json")), 80e9, 0, nil, "as above, read from its config.json"},
		{"jamba-1.5-mini", preset("jamba-1.5-mini"), 52e9, 12e9, func(c Counts) int64 { return c.Active },
			"Jamba 1.5 report arXiv:2408.12570 Table 1: Jamba-1.5-Mini 52B total, 12B active"},
		{"jamba config", load(td("jamba-v0.1.config.json")), 52e9, 12e9, func(c Counts) int64 { return c.Active },
			"Jamba arXiv:2403.19887: 52B total, 12B active (Jamba v0.1, the same shape)"},
		{"glm-4.5-air", load(td("glm-4.5-air.config.json")), 106e9, 12e9, func(c Counts) int64 { return c.ActiveNonEmbedding },
			"GLM-4.5 report arXiv:2508.06471 Table 1: 106B total, 12B activated (without embeddings; MTP apart)"},
		{"olmoe-1b-7b", load(td("olmoe-1b-7b.config.json")), 6.9e9, 1.3e9, func(c Counts) int64 { return c.Active },
			"OLMoE arXiv:2409.02060 Table 1: 6.9B total, 1.3B active"},
		{"qwen3-30b-a3b config", load(td("qwen3-30b-a3b.config.json")), 30.5e9, 3.3e9, func(c Counts) int64 { return c.Active },
			"Qwen3-30B-A3B model card: 30.5B in total, 3.3B activated"},
		{"qwen3-235b-a22b config", load(td("qwen3-235b-a22b.config.json")), 235e9, 22e9, func(c Counts) int64 { return c.Active },
			"Qwen3-235B-A22B model card: 235B in total, 22B activated"},
		{"kimi-k2", load(td("kimi-k2.config.json")), 1.04e12, 32e9, func(c Counts) int64 { return c.Active - c.Embedding/2 },
			"Kimi K2 report arXiv:2507.20534: 1.04T total, 32B activated (the output head counted, the input lookup not)"},
		{"falcon-h1-7b", preset("falcon-h1-7b"), 7.59e9, 0, nil,
			"huggingface.co/tiiuae/Falcon-H1-7B-Instruct: 7.59B params, the Hub's count of its safetensors weights (the report arXiv:2507.22448 and the card name it 7B)"},
		{"falcon-h1-7b config", load(td("falcon-h1-7b.config.json")), 7.59e9, 0, nil, "as above, read from its config.json"},
		{"zamba2-2.7b config", load(td("zamba2-2.7b.config.json")), 2.7e9, 0, nil,
			"Zamba2 report arXiv:2411.15242, abstract: the 1.2B, 2.7B and 7.4B models (shared blocks counted once)"},
		{"zamba2-7b config", load(td("zamba2-7b.config.json")), 7.4e9, 0, nil,
			"Zamba2 report arXiv:2411.15242, abstract: 7.4B (shared blocks counted once)"},
	}
	for _, tt := range tests {
		c := tt.s.Counts()
		if d := math.Abs(float64(c.Total)/tt.total - 1); d > 0.02 {
			t.Errorf("%s: total %d, published %.4g (%s): off by %.1f%%", tt.name, c.Total, tt.total, tt.source, 100*d)
		}
		if tt.active == 0 {
			continue
		}
		if d := math.Abs(float64(tt.activeOf(c))/tt.active - 1); d > 0.02 {
			t.Errorf("%s: active %d, published %.4g (%s): off by %.1f%%", tt.name, tt.activeOf(c), tt.active, tt.source, 100*d)
		}
	}
}

// TestHybridStackText: `plan models` names the blocks of a hybrid stack.
func TestHybridStackText(t *testing.T) {
	tests := []struct{ preset, want string }{
		{"nemotron-h-8b", "52 layers: 24 mamba2 + 24 mlp + 4 attention"},
		{"falcon-h1-7b", "44 layers: 44 attention+mamba2 + 44 mlp"},
		{"jamba-1.5-mini", "32 layers: 28 mamba + 16 mlp + 16 moe + 4 attention, MoE 16x top-2"},
		{"qwen3-next-80b-a3b", "48 layers: 36 gated deltanet + 48 moe + 12 attention, MoE 512x top-10 + 1 shared"},
		{"nemotron-h-56b", "118 layers: 54 mamba2 + 54 mlp + 10 attention"},
		{"nemotron-3-nano", "52 layers: 23 mamba2 + 23 moe + 6 attention, MoE 128x top-6 + 1 shared"},
		{"zamba2-2.7b", "54 layers: 54 mamba2 + 9 shared attention+mlp (2 blocks)"},
	}
	for _, tt := range tests {
		s, err := Preset(tt.preset)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.PatternText(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.preset, got, tt.want)
		}
	}
}

// TestHybridProgramParams: the layer program's weights, summed over the
// stack, are Counts' total: cost and memory see the same model.
func TestHybridProgramParams(t *testing.T) {
	for _, name := range []string{"nemotron-h-8b", "nemotron-3-nano", "falcon-h1-7b", "qwen3-next-80b-a3b", "jamba-1.5-mini"} {
		s, _ := Preset(name)
		p := MustProgram(s, ProgramOptions{})
		sz := p.Sizes(1, float64(s.SeqLen))
		var tot float64
		add := func(b, n int) {
			for _, w := range p.Blocks[b].Weights {
				tot += float64(n) * p.Params(w, &sz)
			}
		}
		for _, r := range p.Stack {
			for _, b := range p.Kinds[r.Kind].Blocks {
				add(b, r.Count)
			}
		}
		add(p.Embedding, 1)
		add(p.Output, 1)
		if want := float64(s.Counts().Total); math.Abs(tot/want-1) > 1e-9 {
			t.Errorf("%s: program weights %.0f, Counts %.0f", name, tot, want)
		}
	}
}

// TestSSMScanFLOPs: the scan's forward FLOPs per token by hand for
// Nemotron-H-8B at 8192 tokens, chunk 128: intra-chunk 2·64·(1024 + 8192)
// = 1,179,648, states in and out 4·8192·128 = 4,194,304.
func TestSSMScanFLOPs(t *testing.T) {
	s, _ := Preset("nemotron-h-8b")
	tests := []struct {
		seq, want float64
	}{
		{8192, 1179648 + 4194304},
		{64, 2*32*(1024+8192) + 4194304}, // a chunk is the whole sequence
	}
	for _, tt := range tests {
		if got := s.SSMScanFLOPsPerToken(MixMamba2, tt.seq); got != tt.want {
			t.Errorf("seq %v: %v, want %v", tt.seq, got, tt.want)
		}
	}
}

// TestQwen3NextActive: Qwen3-Next-80B-A3B's active parameters by hand,
// against the model card's "3B activated", a figure rounded to one digit
// (the count is 8% above 3B; within the rounding of "3B"): per layer the
// router 2048·512 and 11 gated experts of 512, 11·3·2048·512; 36 DeltaNet
// mixers of 33,718,464 (TestGDNMixerParams); 12 gated attentions of
// 2048·(2·4096 + 2·512) + 4096·2048 + 2·256; 96 norms of 2048 and the
// final one; embeddings 2·151936·2048 apart.
func TestQwen3NextActive(t *testing.T) {
	s, _ := Preset("qwen3-next-80b-a3b")
	want := int64(48*(2048*512+11*3*2048*512) + 36*33718464 + 12*(2048*(2*4096+2*512)+4096*2048+512) + 97*2048)
	c := s.Counts()
	if c.ActiveNonEmbedding != want {
		t.Errorf("active non-embedding %d, want %d", c.ActiveNonEmbedding, want)
	}
	if a := float64(c.ActiveNonEmbedding); a < 2.5e9 || a >= 3.5e9 {
		t.Errorf("active non-embedding %.4g does not round to the published 3B", a)
	}
}

// TestFalconH1Params: Falcon-H1-7B by hand, per layer: attention
// 3072·1536 + 2·3072·256 + 1536·3072 = 11,010,048; Mamba-2 in_proj
// 3072·(2·3072 + 2·256 + 24) = 20,520,960, conv 4·3584 + 3584 = 17,920,
// dt_bias/A_log/D 72, the gated norm (mamba_rms_norm true) 3072, out_proj
// 3072·3072 = 9,437,184; one shared input norm 3072; gated MLP
// 3·3072·12288 = 113,246,208 and its norm 3072; embeddings 2·130048·3072
// and the final norm: 7,585,648,736, the 7.59B TestPublishedParamCounts
// compares.
func TestFalconH1Params(t *testing.T) {
	want := int64(44*(11010048+20520960+17920+72+3072+9437184+3072+113246208+3072) + 2*130048*3072 + 3072)
	for _, s := range []Spec{mustPreset(t, "falcon-h1-7b"), mustLoad(t, filepath.Join("testdata", "falcon-h1-7b.config.json"))} {
		if got := s.Counts().Total; got != want {
			t.Errorf("%s: %d, want %d", s.Name, got, want)
		}
	}
}

func mustPreset(t *testing.T, name string) Spec {
	t.Helper()
	s, err := Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustLoad(t *testing.T, path string) Spec {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMamba1MixerParams: one Jamba Mamba mixer by hand (transformers
// JambaMambaMixer): in_proj 4096 x 16384 = 67,108,864; conv 4 x 8192 +
// 8192 = 40,960; x_proj 8192 x (256 + 32) = 2,359,296; dt_proj 256 x 8192
// + 8192 = 2,105,344; A_log 8192 x 16 = 131,072; D 8192; out_proj 8192 x
// 4096 = 33,554,432; dt, B and C norms 256 + 32.
func TestMamba1MixerParams(t *testing.T) {
	s := mustPreset(t, "jamba-1.5-mini")
	if got, want := s.MixerParams(MixMamba1), int64(67108864+40960+2359296+2105344+131072+8192+33554432+288); got != want {
		t.Errorf("mamba mixer: %d, want %d", got, want)
	}
}

// TestNanoSavedPerToken: the activations Nemotron 3 Nano's blocks keep per
// token, by hand, in elements. Mamba-2 under Megatron-Core: the layer input
// and the fused norm's output (2·2688), the in-projection's output zxbcdt
// (2·4096 + 2·8·128 + 64 = 10,304) and the scan's output before the gate
// (4,096), both saved by mamba_split_conv1d_scan_combined, the gated
// product the separate norm keeps (4,096) and the out-projection's input
// (4,096): 27,968. A MoE block under recompute=moe keeps its input and the
// norm's output, the checkpoint's input (2·2688); layernorm+moe re-makes
// the norm output too (2688).
func TestNanoSavedPerToken(t *testing.T) {
	s := mustPreset(t, "nemotron-3-nano")
	p := MustProgram(s, ProgramOptions{Precision: MixedPrecision()})
	sz := p.Sizes(1, 1)
	perToken := func(kind, policy string) float64 {
		pol, ok := LookupPolicy(policy)
		if !ok {
			t.Fatalf("no policy %s", policy)
		}
		for _, k := range p.Kinds {
			if k.Name != kind {
				continue
			}
			var bytes float64
			for _, ti := range p.Saved(k.Blocks, pol) {
				bytes += p.FullBytes(ti, &sz)
			}
			return bytes / 2
		}
		t.Fatalf("no layer kind %s", kind)
		return 0
	}
	tests := []struct {
		kind, policy string
		want         float64
	}{
		{"mamba2", RecomputeNone, 2*2688 + 10304 + 3*4096},
		{"mamba2", RecomputeMoE, 2*2688 + 10304 + 3*4096},
		{"mlp-only moe", RecomputeMoE, 2 * 2688},
		{"mlp-only moe", RecomputeMoENorm, 2688},
	}
	for _, tt := range tests {
		if got := perToken(tt.kind, tt.policy); got != tt.want {
			t.Errorf("%s under %s: %v elements per token, want %v", tt.kind, tt.policy, got, tt.want)
		}
	}
}

// TestZamba2Params: Zamba2-2.7B and -7B by hand (transformers
// modeling_zamba2.py). 2.7B, per Mamba-2 layer: in_proj 2560 x (2·5120 +
// 2·64 + 80) = 26,746,880, conv (5120 + 128) x 5 = 26,240, dt_bias/A_log/D
// 240, gated norm 5120, out_proj 5120 x 2560 = 13,107,200, its norm 2560:
// 39,888,240. A shared block: norm 5120, q/k/v 5120 x 3·5120 = 78,643,200,
// o 5120 x 2560 = 13,107,200, norm 2560, MLP 3 x 2560 x 10240 = 78,643,200:
// 170,401,280, counted once for each of the 2 blocks. Per invocation: the
// linear 2560² = 6,553,600 and the MLP adapter 2560·128 + 128·20480 =
// 2,949,120. 7B: Mamba-2 layer 3584 x (2·7168 + 2·2·64 + 112) + (7168 +
// 256) x 5 + 336 + 7168 + 7168 x 3584 + 3584 = 78,437,456; shared block
// 7168 + 7168 x 3·7168 + 7168 x 3584 + 3584 + 3 x 3584 x 14336 =
// 333,982,208; per invocation 3584² + 3584·128 + 128·28672 = 16,973,824.
// Embeddings tied. Counting the shared blocks at every invocation instead
// would give 3.86B and 11.0B.
func TestZamba2Params(t *testing.T) {
	tests := []struct {
		file, stack                     string
		wantBlock, wantInvocation, want int64
	}{
		{file: "zamba2-2.7b.config.json", stack: "54 layers: 54 mamba2 + 9 shared attention+mlp (2 blocks)",
			wantBlock: 170401280, wantInvocation: 6553600 + 2949120,
			want: 54*39888240 + 2*170401280 + 9*(6553600+2949120) + 32000*2560 + 2560},
		{file: "zamba2-7b.config.json", stack: "81 layers: 81 mamba2 + 13 shared attention+mlp (2 blocks)",
			wantBlock: 333982208, wantInvocation: 16973824,
			want: 81*78437456 + 2*333982208 + 13*16973824 + 32000*3584 + 3584},
	}
	for _, tt := range tests {
		s := mustLoad(t, filepath.Join("testdata", tt.file))
		if got := s.SharedBlockParams(); got != tt.wantBlock {
			t.Errorf("%s: shared block %d, want %d", tt.file, got, tt.wantBlock)
		}
		if got := s.SharedInvocationParams(); got != tt.wantInvocation {
			t.Errorf("%s: per invocation %d, want %d", tt.file, got, tt.wantInvocation)
		}
		if got := s.Counts().Total; got != tt.want {
			t.Errorf("%s: total %d, want %d", tt.file, got, tt.want)
		}
		if got := s.PatternText(); got != tt.stack {
			t.Errorf("%s: stack %q, want %q", tt.file, got, tt.stack)
		}
		if tt.file == "zamba2-2.7b.config.json" {
			if got := mustPreset(t, "zamba2-2.7b").Counts().Total; got != tt.want {
				t.Errorf("preset zamba2-2.7b: total %d, want %d", got, tt.want)
			}
		}
		// The program's weights: the layers' own per layer, the shared
		// blocks' once per block, summing to Counts.
		p := MustProgram(s, ProgramOptions{})
		sz := p.Sizes(1, float64(s.SeqLen))
		var own, shared float64
		seen := map[int]bool{}
		for _, r := range p.Stack {
			for _, b := range p.Kinds[r.Kind].Blocks {
				for _, w := range p.Blocks[b].Weights {
					switch {
					case !p.Tensors[w].Shared:
						own += float64(r.Count) * p.Params(w, &sz)
					case !seen[w]:
						seen[w] = true
						shared += p.Params(w, &sz)
					}
				}
			}
		}
		for _, b := range []int{p.Embedding, p.Output} {
			for _, w := range p.Blocks[b].Weights {
				own += p.Params(w, &sz)
			}
		}
		if math.Abs(own+shared-float64(tt.want)) > 0.5 || math.Abs(shared-2*float64(tt.wantBlock)) > 0.5 {
			t.Errorf("%s: program weights %.0f + shared %.0f, want %d with shared %d", tt.file, own, shared, tt.want, 2*tt.wantBlock)
		}
	}
}

// TestZamba2FLOPs: Zamba2-2.7B's model FLOPs per token at 4096 tokens by
// hand: 6 x (the non-embedding parameters, 2,580,294,560, plus the 7
// invocations that run a block already counted, 7 x 170,401,280); 54
// Mamba-2 scans of 3 x (2·128·(64 + 5120) + 4·5120·64) (chunk 256); 9
// shared attentions of 12·4096·5120 (q is 2·hidden wide); the output
// layer 6·2560·32000.
func TestZamba2FLOPs(t *testing.T) {
	s := mustLoad(t, filepath.Join("testdata", "zamba2-2.7b.config.json"))
	want := 6*float64(2580294560+7*170401280) + 54*3*(2*128*(64+5120)+4*5120*64) + 9*12*4096*5120 + 6*2560*32000
	if got := s.ModelFLOPsPerToken(4096); math.Abs(got-want) > 1 {
		t.Errorf("model FLOPs per token %.0f, want %.0f", got, want)
	}
}

// TestZamba2SharedBlockIndex: the hybrid layers invoke the shared blocks
// round-robin (transformers Zamba2Model cycles them), one layer kind per
// block.
func TestZamba2SharedBlockIndex(t *testing.T) {
	s := mustLoad(t, filepath.Join("testdata", "zamba2-2.7b.config.json"))
	var got []int
	for i, lt := range s.LayerTypes() {
		if lt.Mixer == MixShared {
			got = append(got, i, lt.SharedBlock)
		}
	}
	want := []int{6, 0, 12, 1, 18, 0, 24, 1, 30, 0, 36, 1, 42, 0, 47, 1, 51, 0}
	if !slices.Equal(got, want) {
		t.Errorf("hybrid layers and their blocks %v, want %v", got, want)
	}
}
