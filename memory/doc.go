// Package memory estimates the peak memory of one chip for a training
// strategy: model states, saved activations and buffers, and whether they fit
// in the chip's usable HBM.
//
// [Estimate] evaluates the first and the last pipeline stage (the only
// candidates for the busiest chip: the first holds the most micro-batches in
// flight and the embedding, the last the output layer and the logits) and
// returns the larger as a [Breakdown]. Every stage is assumed to hold
// ceil(L/pp) layers. Sources are tagged as in
// ../shared/reference/formulas.md (§9 lists them); [derived] marks our own
// algebra from cited facts. Notation: s sequence length, b micro-batch size
// (Strategy.MB), h hidden, q = heads·head_dim, kv = kv_heads·head_dim, F MLP
// width, V vocabulary, E/k/F_e routed experts, experts per token and expert
// width, CF capacity factor; t, p, c, v are the TP, PP, CP degrees and virtual
// chunks, dp and fsdp the data-parallel degrees, ep the expert-parallel degree.
//
// # Model states: ParamsBytes, GradsBytes, OptimizerBytes
//
// The recipe is the ZeRO paper's mixed-precision Adam, 16 bytes per
// parameter: bf16 weights (2), bf16 gradients (2), fp32 master weights and
// two fp32 Adam moments (12) (formulas.md §2.1 [ZERO §3, §5]); Options
// overrides each (Megatron's fp32 gradient buffer makes it 18). Each
// parameter is divided by the axes that shard it ("most loaded shard",
// formulas.md §2.1 [MEG-MEM]):
//
//   - t: attention projections, the dense MLP and shared experts; K/V over
//     min(t, kv_heads) because Megatron replicates KV heads beyond that;
//     norms and the MoE router are replicated. Routed experts are not split
//     by t (expert tensor parallelism 1, the conservative choice).
//   - ep: routed experts, E·P_expert/ep per layer.
//   - p: the stage's ceil(L/p) layers. The first stage also holds the
//     embedding V·h/t; the last the final norm and the output layer V·h/t,
//     also when tied but p > 1 (Megatron keeps a copy of the tied embedding
//     there). With p = 1 one chip holds both, the tied matrix once.
//   - fsdp (ZeRO-3): weights, gradients and optimizer state /fsdp.
//   - ZeRO-1 (zero=1): optimizer state /dp; ZeRO-2 (zero=2): gradients too.
//   - Routed experts shard over the expert-data-parallel group dp·fsdp/ep
//     [MEG-DDP]: EP is carved out of fsdp first, so their fully sharded
//     degree is fsdp/gcd(fsdp, ep) and the rest acts as dp for ZeRO.
//   - c: CP ranks hold identical weights (not sharded over c, conservative;
//     Megatron's distributed optimizer may also shard over DP×CP).
//
// So weights = 2·P/fsdp, gradients = 2·P/(fsdp·dp₂), optimizer =
// 12·P/(fsdp·dp₁), with dp₁ = dp for ZeRO ≥ 1 and dp₂ = dp for ZeRO 2, else 1
// (formulas.md §2.1 [ZERO]: Ψ = 7.5B, N_d = 64 gives 120, 31.4, 16.6, 1.9 GB).
//
// # Activations: ActivationsBytes
//
// Bytes a layer saves for the backward pass per micro-batch
// ([LayerActivationBytes]), with bf16 tensors (2 bytes) and s replaced by s/c
// (formulas.md §2.2 [KORT §4.1][MEG-CP]):
//
//   - 8·s·b·h for the two norms' inputs and outputs (the QKV and MLP inputs),
//     sharded by t only with sequence parallelism;
//   - 4·s·b·q/t + 4·s·b·kv/t for Q, K, V and the attention output;
//   - the MLP: 4·s·b·F/t for GELU (activation and down-projection inputs),
//     6·s·b·F/t for SwiGLU (gate, up and their product);
//   - a GPT block (Options.Block, by default inferred from LayerNorm with
//     biases) adds 1-byte dropout masks: 2·s·b·h after the attention and MLP
//     blocks (also sharded only by SP) and, without a fused attention kernel,
//     on the attention probabilities. Modern models have no dropout and the
//     modern block has none. The GPT block reproduces Korthikanti's
//     34·s·b·h (+5·a·s²·b);
//   - attention scores: with a fused kernel (FlashAttention; the default) the
//     a·s² tensors never exist and only the fp32 log-sum-exp, 4·s·b·a/t, is
//     saved; with Options.NoFlashAttention recompute=none also keeps the
//     softmax output, 2·a·s²·b/t (5·a·s²·b/t in a GPT block, with its dropout
//     mask and output);
//   - an MoE layer replaces the MLP by the fp32 router logits 4·s·b·E, and for
//     each of the k routed copies of a token, times CF, the expert input and
//     output (2h each) and the expert MLP's activations; shared experts count
//     as MLPs over t. Routed tokens are those of this chip (s·b/t with SP):
//     balanced routing gives every EP rank as many copies as it sends
//     (formulas.md §2.2 [derived]).
//
// Recompute policies (formulas.md §2.2 [KORT §5]): none keeps the above;
// selective recomputes the core attention, dropping the scores and the
// log-sum-exp (so with a fused kernel it barely differs from none); full
// keeps only the layer input, 2·s·b·h (/t with SP).
//
// Micro-batches in flight ([MicrobatchesInFlight], formulas.md §2.3): with
// p = 1 gradient accumulation holds one micro-batch; GPipe holds all m; 1F1B
// holds min(m, p) micro-batches of the stage's layers on the first stage and
// one on the last [KORT §4.3]; interleaved multiplies the first stage's by
// [InterleaveFactor] 1+(p-1)/(p·v) [KORT][MEG-SCHED]. m = batch/(dp·fsdp·mb)
// (contract.md). [StageActivationBytes] is this product for the first stage,
// the quantity of Korthikanti's Fig. 1.
//
// # Buffers: BuffersBytes
//
// Terms that persist through the step:
//
//   - FSDP: two gathered units (the current and the prefetched layer, or the
//     embedding when larger) in weight bytes plus one unit's unsharded
//     gradients (formulas.md §2.4 [TORCH-FSDP], [derived]);
//   - gradient reduction over dp > 1: one bucket of max(4e7, 1e6·dp)
//     parameters of gradients, at most the stage's (formulas.md §2.4 [MEG-DDP]);
//   - pipeline send and receive buffers, 2 × 2·s·b·h (/t with SP) [derived];
//   - first stage: token ids, 8·s·b, and in a GPT block the embedding
//     dropout mask s·b·h (/t with SP), per micro-batch in flight
//     (formulas.md §2.2 [MEG-MEM][KORT §4.3]);
//   - last stage: the final-norm and output-layer inputs, 4·s·b·h (/t with
//     SP), and the fp32 logits saved for the cross-entropy, 4·s·b·V/t, per
//     micro-batch in flight on that stage (formulas.md §2.2 [MEG-MEM]).
//
// plus the larger of two transient phases that are never live together:
//
//   - the loss: the fp32 logits' gradient, 4·s·b·V/t (formulas.md §2.4);
//   - a layer's backward: under full recompute one layer's activations as
//     under none (the working set; under selective without a fused kernel,
//     the recomputed scores), plus the TP+SP all-gathered input s·b·h
//     [MEG-TP], the CP all-gathered K and V 2·s·b·kv/t (the all-gather
//     variant, which bounds ring attention's two chunks) [LLAMA3], and the
//     MoE dispatch and combine buffers 2·CF·(s·b/t)·k·h (formulas.md §2.4).
//
// Gradients of activations flowing through backward (a few s·b·h), optimizer
// step temporaries and the CUDA/XLA context are left to the reserve.
//
// # Usable memory
//
// [UsableBytes] is the chip's HBM minus [DefaultReservedFraction] (8%) for
// allocator fragmentation, the runtime context and NCCL/collective scratch
// buffers, which formulas cannot derive (formulas.md §2.4; Megatron pads
// activations by 5% [MEG-MEM]). It is a planning convention;
// Options.ReservedFraction overrides it. [Fits] compares a Breakdown with it
// and [Dominant] names its largest component.
package memory
