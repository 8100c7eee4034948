package model

// moePresets are the mixture-of-experts models of the public runs
// (published-runs-2.csv: Qwen3 and gpt-oss under Megatron-Bridge) and Llama
// 4, each as its Hugging Face config.json reads (ParseHF;
// TestConfigPresets holds each equal to its config in testdata).
func moePresets() []Spec {
	return []Spec{
		qwen3MoE("qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B", 48, 2048, 32, 6144, 768),
		qwen3MoE("qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B", 94, 4096, 64, 12288, 1536),
		gptOSS("gpt-oss-20b", 24, 32),
		gptOSS("gpt-oss-120b", 36, 128),
		llama4("llama4-scout", "meta-llama/Llama-4-Scout-17B-16E", "every layer 16 routed experts of 8192, top-1, plus one shared",
			16, []string{ChunkedAttention + "/moe", ChunkedAttention + "/moe", ChunkedAttention + "/moe", FullAttention + "/moe"}),
		llama4("llama4-maverick", "meta-llama/Llama-4-Maverick-17B-128E", "every other layer 128 routed experts of 8192, top-1, plus one shared, the others a dense SwiGLU of 16384",
			128, []string{ChunkedAttention + "/dense", ChunkedAttention + "/moe", ChunkedAttention + "/dense", FullAttention + "/moe"}),
	}
}

// qwen3MoE is a Qwen3 mixture of experts (the Qwen3 technical report,
// arXiv:2505.09388, Table 2, and the Hugging Face config of repo): every
// layer 128 experts, top-8, no shared expert, GQA with 4 KV heads of 128,
// per-head q/k norms, RMSNorm, vocab 151936 untied; ffn is the config's
// dense intermediate_size, which no layer uses.
func qwen3MoE(name, repo string, layers, hidden, heads, ffn, expertFFN int) Spec {
	return Spec{
		Name: name,
		Description: "Qwen3 mixture of experts (Qwen team 2025, arXiv:2505.09388, Table 2, and the Hugging Face config of " + repo +
			"): every layer 128 SwiGLU experts, top-8, no shared expert, GQA with 4 KV heads of 128, q/k norms, RMSNorm, vocab 151936 untied; " +
			"seq 8192 (the config allows 40960)",
		Layers: layers, Hidden: hidden, Heads: heads, KVHeads: 4, HeadDim: 128, FFNHidden: ffn, FFN: SwiGLU,
		Vocab: 151936, SeqLen: 8192, Norm: RMSNorm, QKNorm: true,
		MoE: &MoE{Experts: 128, TopK: 8, ExpertFFNHidden: expertFFN},
	}
}

// gptOSS is an OpenAI gpt-oss model (its model card, arXiv:2508.10925, and
// the Hugging Face config of openai/<name>): layers alternate
// sliding-window (128) and full attention, 64 query heads and 8 KV heads of
// 64 with biases, experts of 2880 with biases and a clamped SwiGLU (limit
// 7), top-4, YaRN; the attention sinks (64 scalars a layer) are not
// counted.
func gptOSS(name string, layers, experts int) Spec {
	return Spec{
		Name: name,
		Description: "OpenAI " + name + " (model card arXiv:2508.10925 and the Hugging Face config of openai/" + name + "): alternating sliding-window (128) " +
			"and full attention, 64 heads and 8 KV heads of 64 with biases, SwiGLU experts of 2880 with biases clamped at 7, top-4, YaRN, " +
			"RMSNorm, vocab 201088 untied; attention sinks not counted; seq 8192 (the config allows 131072)",
		Layers: layers, Hidden: 2880, Heads: 64, KVHeads: 8, HeadDim: 64, FFNHidden: 2880, FFN: SwiGLU,
		Vocab: 201088, SeqLen: 8192, Norm: RMSNorm, QKVBias: true, OutBias: true, YaRN: true,
		Window: 128, Pattern: []string{SlidingAttention, FullAttention},
		MoE: &MoE{Experts: experts, TopK: 4, ExpertFFNHidden: 2880, Bias: true, SwiGLULimit: 7},
	}
}

// llama4 is a Llama 4 text model (Meta's model card and the Hugging Face
// config's text_config of its repo): three chunked-attention layers (chunks
// of 8192) to one full-attention layer, 40 heads and 8 KV heads of 128,
// routed experts of 8192, top-1, and one shared expert, RMSNorm, vocab
// 202048 untied; the q/k norms change no count.
func llama4(name, repo, experts string, n int, pattern []string) Spec {
	return Spec{
		Name: name,
		Description: "Llama 4 (Meta's model card and the Hugging Face config's text_config of " + repo + "): 48 layers, " + experts +
			"; three chunked-attention layers (chunks of 8192) to one full, 40 heads and 8 KV heads of 128, RMSNorm, vocab 202048 untied; seq 8192",
		Layers: 48, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, FFNHidden: 16384, FFN: SwiGLU,
		Vocab: 202048, SeqLen: 8192, Norm: RMSNorm, Chunk: 8192, Pattern: pattern,
		MoE: &MoE{Experts: n, TopK: 1, ExpertFFNHidden: 8192, SharedExperts: 1},
	}
}
