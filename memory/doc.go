// Package memory estimates the peak memory of one chip for a training
// strategy: model states, saved activations and buffers, and whether they fit
// in the chip's usable HBM.
//
// Everything is derived from the layer program (model.Program) that package
// cost also prices, so the two models agree by construction: the weights
// (and their sizes under the strategy's sharding) are the program's weight
// tensors, the activations a layer saves are the tensors its ops' backward
// passes need under the recompute policy (model.Program.Saved), and element
// sizes come from the program's one precision table (model.Precision).
// [NewModel] derives what each layer kind, the embedding and the output
// layer keep once; [Model.Estimate] evaluates every pipeline rank (the first
// holds the most micro-batches in flight and the embedding, the last the
// output layer and the logits, a middle one may hold more layers) and
// returns the busiest as a [Breakdown]. Sources are tagged as in
// docs/formulas.md (§9 lists them); [derived] marks our own algebra from
// cited facts. Notation: s sequence length, b micro-batch size (Strategy.MB),
// h hidden, q = heads·head_dim, kv = kv_heads·head_dim, F MLP width, V
// vocabulary, E/k/F_e routed experts, experts per token and expert width, CF
// capacity factor; t, p, c, v are the TP, PP, CP degrees and virtual chunks,
// dp and fsdp the data-parallel degrees, ep the expert-parallel degree.
//
// # Model states: ParamsBytes, GradsBytes, OptimizerBytes
//
// The default precision is Megatron's mixed precision, 18 bytes per
// parameter: bf16 weights (2), fp32 gradients (4), fp32 master weights and
// two fp32 Adam moments (12) (docs/formulas.md §2.1 [MEG-MEM]; Korthikanti
// et al. 2022 Fig. 1); model.ProgramOptions.Precision overrides it (the ZeRO
// paper's 16 bytes has bf16 gradients). Each tensor is divided by the roles
// that shard its dimensions, each role once ("most loaded shard",
// docs/formulas.md §2.1 [MEG-MEM]):
//
//   - t: attention projections, the dense MLP, shared and routed experts
//     (expert tensor parallelism equal to t, Megatron-Core's default); K/V
//     over min(t, kv_heads) because Megatron replicates KV heads beyond
//     that; norms and the MoE router are replicated;
//   - ep: routed experts;
//   - p: the rank's layers (space.StageLayers). The first rank also holds
//     the embedding V·h/t; the last the final norm and the output layer
//     V·h/t, also when tied but p > 1 (Megatron keeps a copy of the tied
//     embedding there). With p = 1 one chip holds both, the tied matrix once;
//   - fsdp (ZeRO-3): weights, gradients and optimizer state; routed experts
//     over efsdp, what is left of fsdp after EP's carving (space.Mesh);
//   - ZeRO-1 (zero=1): optimizer state /dp (/edp for routed experts; /dp·c
//     with model.Precision.ShardOverCP, Megatron's distributed optimizer);
//     ZeRO-2 (zero=2): gradients too;
//   - c: CP ranks hold identical weights (not sharded over c, conservative).
//
// Weights an fp8 matmul reads add their fp8 copy and its transpose, 1 byte
// each, or the copy alone for a per-tensor recipe on a chip whose fp8
// matmuls take any layout (Blackwell: model.FP8Recipe.PerTensor,
// profiles.Chip.FP8AnyLayout); with fp8 primary weights (model.FP8Recipe.Params, Megatron's
// --fp8-param-gather under the distributed optimizer) those replace the
// bf16 weight.
//
// So with the default layout weights = 2·P/fsdp, gradients = 4·P/(fsdp·dp₂), optimizer =
// 12·P/(fsdp·dp₁), with dp₁ = dp for ZeRO ≥ 1 and dp₂ = dp for ZeRO 2, else 1
// (docs/formulas.md §2.1 [ZERO]: with the paper's 16 bytes, Ψ = 7.5B,
// N_d = 64 gives 120, 31.4, 16.6, 1.9 GB).
//
// # Activations: ActivationsBytes
//
// What a layer saves for the backward pass per micro-batch is what its ops'
// backward passes need: a matmul its non-weight operands, a norm its input, an
// activation function its input, the softmax its output, dropout its 1-byte
// mask, the flash kernel its fp32 log-sum-exp. For Korthikanti's GPT block
// this is 34·s·b·h + 5·a·s²·b without a fused attention kernel (2·a·s²·b
// without dropout) [KORT §4.1], for a modern block s·b·(8h + 4q + 4kv + 6F)
// [derived], for an MoE layer the norms and attention, the fp32 router
// probabilities 4·s·b·E and, per routed copy of a token (× CF), the expert
// input and output (2h each; the output not where the experts weigh it by the
// routing probabilities themselves, model.Kernels.WeightedExperts, as
// Megatron-Core does) and the expert MLP's activations. Each tensor is
// divided by its roles (s by c, the residual stream's s by t with SP),
// except that under a DTensor plan (model.ProgramOptions.SavesGathered) the
// inputs of the column-parallel matmuls (model.Program.SPGathered) are
// kept as the matmul read them, all-gathered over t.
//
// Recompute policies (docs/formulas.md §2.2 [KORT §5]): none keeps the above;
// selective re-runs the attention core, dropping the score square, its masks
// and the log-sum-exp; full re-runs the whole layer and keeps only its input,
// 2·s·b·h (/t with SP). The layers' activations are multiplied by the
// micro-batches the rank holds in flight (space.Schedule.InFlight,
// docs/formulas.md §2.3): 1 without a pipeline; all m with GPipe; min(m, p-r)
// on rank r with 1F1B and ZB-H1; min(m·v, 2(p-r-1)+(v-1)p+1)/v interleaved
// [KORT][MEG-SCHED]; p on every rank with ZB-V [ZB §6]; p+1 chunks of one
// stage with DualPipe, p-r of rank r's stage r and r+1 of its stage p-1-r
// (DualPipe's dualpipe.py, steps 1-4), and 2p+1 of half a rank's layers
// with DualPipeV [DSV3 Table 2]. A policy may keep some tensors narrower
// than their class under fp8 (model.Policy.Narrow: DeepSeek-V3's E5M6
// attention output and fp8 SwiGLU inputs). The V-shaped schedules (ZB-V, DualPipeV) put about half
// of linear ranks r and p-1-r's layers on rank r and the embedding and the
// output layer on rank 0; DualPipe's rank r holds both stages r and p-1-r:
// two copies of the parameters, gradients and optimizer state (the ends on
// ranks 0 and p-1), space.Placement. The output layer's rank keeps one
// micro-batch of logits under them (space.Rules.HeadInFlight).
//
// # Buffers: BuffersBytes
//
// Terms that persist through the step:
//
//   - FSDP: two gathered units (the current and the prefetched layer, or the
//     embedding or output layer when larger) in weight bytes plus one unit's
//     unsharded gradients (docs/formulas.md §2.4 [TORCH-FSDP], [derived]);
//   - gradient reduction over dp > 1: one bucket of max(4e7, 1e6·dp)
//     parameters of gradients, at most the stage's (docs/formulas.md §2.4 [MEG-DDP]);
//   - pipeline send and receive buffers, two residual-stream shards [derived];
//   - first rank: what the embedding saves (token ids, 8·s·b, and in a GPT
//     block the embedding dropout mask), per micro-batch in flight
//     (docs/formulas.md §2.2 [MEG-MEM][KORT §4.3]);
//   - last rank: what the output layer saves (the final-norm and output-layer
//     inputs, and the fp32 logits 4·s·b·V/t), per micro-batch in flight on
//     that rank (docs/formulas.md §2.2 [MEG-MEM]); one under the interleaved
//     schedule, whose last rank runs the output layer's chunk forward and
//     backward back to back after its warm-up (space.Rules.HeadInFlight).
//
// plus the largest of the transient phases that are never live together:
//
//   - the loss: the fp32 logits' gradient, 4·s·b·V/t (docs/formulas.md §2.4;
//     the framework's model.PassLoss TransientBytes, 2 under MaxText);
//   - a layer's backward: what the policy recomputes (live again), plus the
//     TP+SP all-gathered input s·b·h [MEG-TP], the CP all-gathered K and V
//     (the all-gather variant, which bounds ring attention's two chunks)
//     [LLAMA3], and the MoE dispatch and combine buffers, the routed copies
//     each way (docs/formulas.md §2.4).
//
// Under XLA (model.Precision.TensorUnits), which assigns buffers by
// liveness over one compiled step, the FSDP term that persists is the
// layers' largest tensor's; the output layer's one gathered copy and
// unsharded gradient beyond it join the loss phase, the embedding's form a
// phase of their own, and the optimizer step, which follows the backward
// pass in the same program, holds none of the gathered units nor what the
// embedding and the output layer saved (docs/frameworks.md, [derived]).
//
// The collective communicators' buffers, one per parallel group a chip
// belongs to (profiles.Chip.CommunicatorBytes, docs/runtime-memory.md),
// persist. Gradients of activations flowing through backward (a few s·b·h)
// and optimizer step temporaries are left to the allocator's slack.
//
// # Phases
//
// The peak is the larger of two phases (docs/measured-h100.md): the end of
// the forward pass, with every activation in flight and the transient
// buffers, and the optimizer step, with every gradient and no activation.
// With model.Precision.WeightCopies (autocast, FSDP2) the parameters are
// the master copy and their Weight-sized copies exist only in the forward
// phase (per FSDP unit under FSDP); with TransientGrads the gradients are
// absent from the forward phase of a step of one micro-batch (zero_grad
// frees them; the first backward pass makes them). Activations a recompute
// policy keeps in host memory (model.Policy.Offload) are not in HBM; they
// return for their layer's backward pass.
//
// # Usable memory
//
// [UsableBytes] is the HBM the runtime reports (CUDA's total, JAX's
// bytes_limit) less what the runtime holds before any tensor (the CUDA
// context, profiles.Chip.RuntimeReserveBytes) and the allocator's
// fragmentation (AllocatorSlackFraction, or the framework's,
// Options.AllocatorSlackFraction), per chip in docs/runtime-memory.md;
// Options.ReservedFraction replaces both by one fraction. [Fits] compares a
// Breakdown with it and [Dominant] names its largest component.
//
// # Fast paths
//
// [Estimator] (terms kept between strategies that share degrees, role
// degrees and sequence parallelism; flight terms per schedule and states
// per ZeRO stage kept) is the fast twin of [Model.Estimate]: the
// breakdowns are equal bit for bit, held by TestEstimatorMatchesEstimate
// (random walks of real spaces) and TestEstimatorExact (every strategy of
// small spaces). The space's shortcuts it relies on have their own twins:
// space.Strategy.RoleDegrees against space.Mesh.Resolve
// (space.TestRoleDegreesMatchResolve) and space.Space.DecodeInner against
// Decode (space.TestDecodeInnerMatchesDecode). search's memory key
// (two placements with equal keys have equal memory) is held by
// search.TestMemoryKey.
package memory
