// Package model describes decoder-only transformers for the planner: their
// shape (Spec), their parameter and FLOP counts, the built-in presets, and the
// loaders for the contract's YAML form and for Hugging Face config.json files.
//
// # Specs
//
// A Spec holds the shape of a model: layers, width, attention heads (MHA, GQA
// or MQA through KVHeads, or DeepSeek's multi-head latent attention through
// MLA), the MLP form (GELU with two matrices or SwiGLU with three), the
// vocabulary, the default training sequence length, an optional mixture of
// experts and optional multi-token-prediction modules (MTPLayers). Zero optional fields take the defaults
// documented on each field; Normalize fills them in and Validate reports every
// violated rule at once, one sentence per rule.
//
// # Counts
//
// Counts and ModelFLOPsPerToken follow docs/formulas.md §1.1-1.3 (the Megatron
// theoretical-memory and FLOP formulas, the scaling book's transformer
// chapter and PaLM appendix B). Learned position embeddings, per-head Q/K
// norms and the small bias vectors some families carry on a subset of their
// layers are not counted; each preset's Description says what it leaves out.
//
// # The layer program
//
// [NewProgram] writes a model as a [Program]: a short program of einsums over
// named dimensions ([Dim]: B, S, T, D, Q, N, K, H, F, E, C, R, V, ...),
// elementwise passes with the bytes they move, and layout changes (the MoE
// dispatch and combine), grouped into [Block]s (attention or multi-head latent
// attention, MLP, mixture of experts, embedding, output layer, multi-token
// prediction) with the backward pass derived by transposition; a [LayerKind]
// is the blocks one layer runs and the Stack the layers in order
// (Program.MTP, the multi-token-prediction modules, run after it on the last
// pipeline stage). Each tensor dimension says what it holds ([Logical]), so
// that package space can say which parallel dimension shards it; each tensor
// has a [Class] whose element size comes from the one [Precision] table; each
// op lists what its backward pass needs (Op.Saves). A recompute [Policy]
// (none, selective, full) says which ops the backward pass re-runs, and
// [Program.Saved] derives what a layer keeps from it. Package cost derives
// FLOPs, bytes and collectives from the program; package memory derives the
// weights, gradients, optimizer state and saved activations from the same
// program, so the two cannot disagree. docs/layers.md describes it in full.
//
// # Presets
//
// Names lists the built-in presets, Preset looks one up (case-insensitively,
// with aliases such as llama70b for llama2-70b), and Presets returns them all.
// Each preset's Description names the paper, model card or configuration its
// figures come from.
//
// # Loading
//
// Load takes what a user passes to --model: a preset name, a YAML file in the
// contract's form, or a Hugging Face config.json. ParseYAML is strict: an
// unknown key is an error that names the nearest known key. ParseHF reads the
// 33 model_type values HFModelTypes lists: bloom, deepseek_v2, deepseek_v3,
// falcon, falcon_h1,
// gemma, gemma2, gemma3, gemma3_text, glm4_moe, gpt2, gpt_neox, gpt_oss,
// granite, jamba, kimi_k2, llama, llama4, llama4_text, mistral, mixtral, mpt,
// nemotron_h, olmo2, olmoe, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe, qwen3_next, starcoder2 and zamba2. A config.json says
// how long a sequence the model can take, not how long it was trained on, so
// ParseHF sets SeqLen to min(max_position_embeddings, MaxHFSeqLen) tokens,
// that is at most 8192; pass --seq to plan for another length.
//
// BLOOM (bloom), MPT (mpt, unless its attn_config.alibi is false) and
// Falcon-RW (falcon with alibi) load with Spec.ALiBi: no rotary pass, and an
// attention kernel that only Transformer Engine's cuDNN path runs at the
// flash rate.
//
// DeepSeek's configs (deepseek_v2, deepseek_v3) load as multi-head latent
// attention (q_lora_rank null or absent meaning no query compression, as in
// DeepSeek-V2-Lite) with num_nextn_predict_layers multi-token-prediction
// modules.
//
// Nemotron-H (nemotron_h) loads as a hybrid stack of one block per layer
// (Spec.Pattern entries mamba2/nomlp, full/nomlp, nomixer/dense,
// nomixer/moe) with its Mamba-2 mixer in Spec.SSM; Qwen3-Next
// (qwen3_next) as Gated DeltaNet and gated attention layers (gdn/moe,
// full/moe) with the DeltaNet's sizes in Spec.SSM; Falcon-H1 (falcon_h1)
// as layers of attention and Mamba-2 in parallel (full+mamba2/dense); Jamba
// (jamba) as Mamba (selective-scan, mamba1) and attention layers with
// experts every other layer; Zamba2 (zamba2) as Mamba-2 layers
// (mamba2/nomlp) of which the hybrid ones (shared+mamba2/nomlp) first run
// one of Spec.Shared's transformer blocks, whose weights count once.
//
// Every error the package returns is a lowercase sentence prefixed "model:",
// naming the offending field or value; bad input never panics.
package model
