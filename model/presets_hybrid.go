package model

// hybridPattern turns a Megatron-Core / Nemotron-H hybrid layer pattern
// (hybrid_override_pattern: "M" Mamba-2, "*" attention, "-" MLP, "E"
// mixture of experts, one character per layer) into the shortest repeating
// Spec.Pattern.
func hybridPattern(p string) []string {
	entries := make([]string, 0, len(p))
	for _, ch := range p {
		switch ch {
		case 'M':
			entries = append(entries, Mamba2Mixer+"/"+NoMLP)
		case '*':
			entries = append(entries, FullAttention+"/"+NoMLP)
		case '-':
			entries = append(entries, NoMixer+"/dense")
		case 'E':
			entries = append(entries, NoMixer+"/moe")
		}
	}
	return compactPattern(entries)
}

// Layer patterns of the Nemotron-H presets.
const (
	// nemotronH8BPattern is Nemotron-H-8B-Base-8K's hybrid_override_pattern
	// (its Hugging Face config; Megatron-LM d98e8a64
	// examples/post_training/modelopt/conf/nvidia/Nemotron-H-8B-Base-8K.sh).
	nemotronH8BPattern = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"
	// nemotronH56BPattern is Nemotron-H-56B-Base-8K's (Megatron-LM d98e8a64
	// examples/post_training/modelopt/conf/nvidia/Nemotron-H-56B-Base-8K.sh).
	nemotronH56BPattern = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"
	// nemotron3NanoPattern is NVIDIA-Nemotron-3-Nano-30B-A3B's (its
	// Hugging Face config).
	nemotron3NanoPattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
)

// hybridPresets are the state-space and linear-attention hybrids.
func hybridPresets() []Spec {
	return []Spec{
		{
			Name: "nemotron-h-8b",
			Description: "Nemotron-H-8B-Base-8K (NVIDIA 2025, arXiv:2504.03624, Table 1, and its Hugging Face config): 52 layers, 24 Mamba-2 " +
				"(128 heads x 64, 8 groups, d_state 128, conv 4, chunk 128), 4 attention (32 heads, 8 kv), 24 squared-ReLU MLPs of 21504 " +
				"(counted as the two-matrix gelu form), RMSNorm, vocab 131072 untied, no position embeddings, seq 8192",
			Layers: 52, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFNHidden: 21504, FFN: GELU,
			Vocab: 131072, SeqLen: 8192, Norm: RMSNorm,
			Pattern: hybridPattern(nemotronH8BPattern),
			SSM:     &SSM{ValueHeads: 128, ValueHeadDim: 64, KeyHeads: 8, KeyDim: 128, ConvKernel: 4, Chunk: 128, ConvBias: true},
		},
		{
			Name: "nemotron-h-56b",
			Description: "Nemotron-H-56B-Base-8K (NVIDIA 2025, arXiv:2504.03624, Table 1; Megatron-LM's Nemotron-H-56B-Base-8K.sh): 118 layers, " +
				"54 Mamba-2 (256 heads x 64, 8 groups, d_state 256, conv 4, chunk 128), 10 attention (64 heads, 8 kv), 54 squared-ReLU MLPs of 32768, " +
				"RMSNorm, vocab 131072 untied, seq 8192",
			Layers: 118, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128, FFNHidden: 32768, FFN: GELU,
			Vocab: 131072, SeqLen: 8192, Norm: RMSNorm,
			Pattern: hybridPattern(nemotronH56BPattern),
			SSM:     &SSM{ValueHeads: 256, ValueHeadDim: 64, KeyHeads: 8, KeyDim: 256, ConvKernel: 4, Chunk: 128, ConvBias: true},
		},
		{
			Name: "nemotron-3-nano",
			Description: "NVIDIA-Nemotron-3-Nano-30B-A3B (NVIDIA 2025 model card and Hugging Face config): 52 layers, 23 Mamba-2 (64 heads x 64, " +
				"8 groups, d_state 128, conv 4, chunk 128), 6 attention (32 heads, 2 kv, head_dim 128), 23 MoE layers of 128 squared-ReLU experts " +
				"of 1856, top-6, plus one shared of 3712, RMSNorm, vocab 131072 untied, seq 8192",
			Layers: 52, Hidden: 2688, Heads: 32, KVHeads: 2, HeadDim: 128, FFNHidden: 1856, FFN: GELU,
			Vocab: 131072, SeqLen: 8192, Norm: RMSNorm,
			Pattern: hybridPattern(nemotron3NanoPattern),
			MoE:     &MoE{Experts: 128, TopK: 6, ExpertFFNHidden: 1856, SharedExperts: 1, SharedFFNHidden: 3712},
			SSM:     &SSM{ValueHeads: 64, ValueHeadDim: 64, KeyHeads: 8, KeyDim: 128, ConvKernel: 4, Chunk: 128, ConvBias: true},
		},
		{
			Name: "falcon-h1-7b",
			Description: "Falcon-H1-7B-Base (TII 2025, arXiv:2507.22448, and its Hugging Face config): 44 layers, each full attention (12 heads, " +
				"2 kv, head_dim 128) and Mamba-2 (24 heads x 128, 1 group, d_state 256, conv 4, chunk 256, gated norm) in parallel on one normed input, " +
				"then a gated MLP of 12288; RMSNorm, vocab 130048 untied, seq 8192; the µP multipliers change no count",
			Layers: 44, Hidden: 3072, Heads: 12, KVHeads: 2, HeadDim: 128, FFNHidden: 12288, FFN: SwiGLU,
			Vocab: 130048, SeqLen: 8192, Norm: RMSNorm,
			Pattern: []string{ParallelMixer + "/dense"},
			SSM:     &SSM{ValueHeads: 24, ValueHeadDim: 128, KeyHeads: 1, KeyDim: 256, ConvKernel: 4, Chunk: 256, ConvBias: true},
		},
		{
			Name: "zamba2-2.7b",
			Description: "Zamba2-2.7B (Zyphra 2024, arXiv:2411.15242; zyphra.com/post/zamba2-small; transformers' Zamba2Config defaults): 54 Mamba-2 " +
				"layers (80 heads x 64, 1 group, d_state 64, conv 4, chunk 256), 9 of them (every 6th from layer 6) after one of 2 shared blocks " +
				"used ABAB: attention over 2 x hidden (32 heads, head_dim 160) and a gated MLP of 10240, each invocation with its own " +
				"2560 x 2560 linear and a rank-128 adapter on the MLP; the shared blocks' weights counted once; RMSNorm, vocab 32000 tied, seq 4096",
			Layers: 54, Hidden: 2560, Heads: 32, KVHeads: 32, HeadDim: 160, FFNHidden: 10240, FFN: SwiGLU,
			Vocab: 32000, SeqLen: 4096, Norm: RMSNorm, TiedEmbeddings: true,
			Pattern: zamba2Pattern(zamba2Types()),
			SSM:     &SSM{ValueHeads: 80, ValueHeadDim: 64, KeyHeads: 1, KeyDim: 64, ConvKernel: 4, Chunk: 256, ConvBias: true},
			Shared:  &SharedBlocks{Blocks: 2, AdapterRank: 128},
		},
		{
			Name: "jamba-1.5-mini",
			Description: "Jamba-1.5-Mini (AI21 2024, arXiv:2408.12570, Table 1, and the Jamba Hugging Face config): 32 layers, attention every 8th " +
				"from layer 4 (32 heads, 8 kv), Mamba (selective scan, d_inner 8192, d_state 16, dt_rank 256, conv 4) elsewhere; every 2nd layer " +
				"from 1 a mixture of 16 gated experts of 14336, top-2, the others a gated MLP of 14336; RMSNorm, vocab 65536 untied, seq 8192",
			Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFNHidden: 14336, FFN: SwiGLU,
			Vocab: 65536, SeqLen: 8192, Norm: RMSNorm,
			Pattern: []string{"mamba1/dense", "mamba1/moe", "mamba1/dense", "mamba1/moe", "full/dense", "mamba1/moe", "mamba1/dense", "mamba1/moe"},
			MoE:     &MoE{Experts: 16, TopK: 2, ExpertFFNHidden: 14336},
			SSM:     &SSM{ValueHeads: 8192, ValueHeadDim: 1, KeyHeads: 1, KeyDim: 16, ConvKernel: 4, DTRank: 256, ConvBias: true},
		},
		{
			Name: "qwen3-next-80b-a3b",
			Description: "Qwen3-Next-80B-A3B (Qwen team 2025, model card and Hugging Face config): 48 layers, 36 Gated DeltaNet (32 value heads, " +
				"16 key heads, head dims 128, conv 4, chunk 64) and 12 gated full attention (16 heads, 2 kv, head_dim 256, q/k norms, output gate), " +
				"every layer 512 gated experts of 512, top-10, plus one shared of 512 (its scalar gate not counted), RMSNorm, vocab 151936 untied, seq 8192",
			Layers: 48, Hidden: 2048, Heads: 16, KVHeads: 2, HeadDim: 256, FFNHidden: 5120, FFN: SwiGLU,
			Vocab: 151936, SeqLen: 8192, Norm: RMSNorm, QKNorm: true, AttnGate: true,
			Pattern: []string{GDNMixer + "/moe", GDNMixer + "/moe", GDNMixer + "/moe", FullAttention + "/moe"},
			MoE:     &MoE{Experts: 512, TopK: 10, ExpertFFNHidden: 512, SharedExperts: 1, SharedFFNHidden: 512},
			SSM:     &SSM{ValueHeads: 32, ValueHeadDim: 128, KeyHeads: 16, KeyDim: 128, ConvKernel: 4, Chunk: 64},
		},
	}
}

// zamba2Pattern turns Zamba2's layers_block_type ("mamba", "hybrid") into
// the shortest repeating Spec.Pattern: mamba2/nomlp and shared+mamba2/nomlp.
// Other types read as mamba (ParseHF refuses them first).
func zamba2Pattern(types []string) []string {
	entries := make([]string, len(types))
	for i, t := range types {
		entries[i] = Mamba2Mixer + "/" + NoMLP
		if t == "hybrid" {
			entries[i] = SharedMixer + "/" + NoMLP
		}
	}
	return compactPattern(entries)
}
