// Package cost predicts the step time of a parallel training strategy and
// lists the communication it causes, derived rather than written per strategy
// (docs/design.md "Communication is derived, not hard-coded").
//
// # The program
//
// A model is its layer program (model.Program, built once by model.NewProgram
// and shared with package memory): einsums over named dimensions (B batch, S
// sequence, T key/value sequence, D model, Q/N query heads·head_dim, K kv
// heads·head_dim, F ffn, E experts, C expert slots, V vocabulary):
// attention (fused QKV with GQA, flash-attention core QKᵀ and AV whose FLOPs
// scale with q, output projection), the MLP (gelu: two matrices, swiglu: fused
// gate+up and down) or the MoE block (router, dispatch, expert matmuls with
// capacity factor, combine, shared experts), the embedding lookup and the
// output layer with the vocab-parallel loss. [NewModel] prepares what the
// rules need of it once. Every tensor dimension says what it holds
// (model.Logical), which space.ClassRoles maps to roles — the algebra's mesh
// axes dp, fsdp, tp, cp, ep and, in the MoE region, edp and efsdp (dp·fsdp
// with the ep shares taken out, resolved once in space.Mesh):
// x[B_{dp,fsdp}, S_{cp(,tp with SP)}, D], W_in[D_{fsdp}, F_{tp}],
// W_e[E_{ep}, D_{efsdp}, F_{tp}]. Key/value heads stop splitting at their
// count (model.Program.Cap).
//
// For every einsum and every role, the rules of docs/design.md decide: leave each
// operand or AllGather it; the product then holds the role on a dim, as a
// partial sum U, or not at all; moving that to the layout the next op needs
// costs an AllReduce or ReduceScatter (U), an AllGather or AllToAll (another
// dim) or a free slice. The cheapest legal choice wins, gathered operands are
// reused within a pass. The backward pass is derived by transposition
// (dA = dC·Bᵀ, dB = Aᵀ·dC, a reshard by its inverse) under the same rules, so
// AllGather and ReduceScatter swap; a weight gradient may stay partial over the
// roles that replicate the weight (dp, cp) until the once-per-step reduction,
// so nothing is reduced twice. Data-parallel AllReduce, ZeRO-1/2 (RS + AG once
// per step; ZeRO-2 reduce-scatters per micro-batch, docs/formulas.md §3.1), FSDP
// (AG forward, AG backward, RS per micro-batch), Megatron TP (2+2 AllReduce)
// and SP (AG+RS pairs plus the re-gather), CP's K/V exchange, EP's AllToAll
// and full recompute's replayed collectives all fall out; the tests pin them.
//
// # Collectives
//
// AllGatherSeconds and friends cost a collective on axis groups: TPU ICI rings
// (⌈(n-1)/2⌉ shard steps with wraparound, n-1 on a line or a partial axis;
// several axes add bandwidths; max with the per-hop latency floor), GPU
// NVLink (S(n-1)/n/W) and network tiers in hierarchical form (each network
// level carries S/g per chip through its own NIC, g the group's chips inside
// one instance of the level), DCN like a network tier. See collective.go.
//
// # Compute
//
// Each op is priced by its kernel, on rates measured on an H100
// (docs/measured-h100.md) held per chip family in profiles.Efficiency:
//
//   - a matmul of x FLOPs per chip takes (x + MatmulHalfFLOPs)/(MatmulFraction
//     · peak), against HBM bytes/(HBM bw · HBMFraction) (a roofline); the
//     fixed part is the tail of small calls (fitted on 162 measured GEMMs);
//   - a flash attention kernel (the score square stays on chip) takes its
//     matmuls at AttentionFwdFraction (Bwd) of peak plus a time per score
//     element for the softmax's exponential, times (1 + half/T) for a key
//     loop of T tokens per call (profiles.Efficiency.AttentionSeconds), divided
//     by the framework's model.Kernels.AttentionRate; a materialised core runs
//     its batched matmuls at 0.7 of the GEMM rate ([FA2]); both do half the
//     score square (causal);
//   - an elementwise pass moves the bytes the framework's kernels move
//     (model.Kernels: one fused kernel per pass, or eager PyTorch's op by op),
//     at the HBM bandwidth;
//   - per micro-batch, autocast's bf16 copies of the master weights and the
//     cast of the weight gradients (model.Precision.WeightCopies, GradCast);
//   - the optimizer step moves model.Precision.StepBytes per parameter of the
//     chip's shard (fused AdamW's 28, the weight copy, clipping's passes).
//
// In a job of more than one chip every rate is SustainedFraction of the
// single-chip one (fitted on public multi-chip runs). The recompute policy
// (model.Policy) says which forward ops the backward pass re-runs, with
// their collectives; flash attention's backward recomputes QKᵀ. Estimate
// splits ComputeSeconds into MatmulSeconds, AttentionSeconds,
// MemoryBoundSeconds and OptimizerSeconds.
//
// # Step time
//
// StepSeconds = ComputeSeconds + ExposedCommSeconds + BubbleSeconds for the
// busiest pipeline stage (first: embedding, last: output layer; layers need not
// divide evenly, space.StageLayers; each distinct stage composition is
// costed). ComputeSeconds is M micro-batches of forward+backward plus the
// optimizer. Exposure follows docs/formulas.md §6:
//
//   - tp/sp/cp/ep activation collectives are on the critical path, except that
//     in backward the dX reduction hides under the dW GEMM and the re-gather
//     under the dX GEMM (Megatron), ring attention hides the K/V exchange under
//     OverlapFraction of the core, and Options.CollectiveMatmul hides tp/cp
//     collectives under their own matmul;
//   - per-micro-batch weight traffic (FSDP gathers, gradient reduce-scatters)
//     is exposed by max(one layer's gather and reduction, M·comm −
//     OverlapFraction·compute) (prefetch, [TORCH-FSDP]);
//   - an overlapped collective's kernels hold collectiveSMShare of the SMs
//     (NCCL's channels), so the weight traffic, the gradient reduction, the
//     parameter gather and the pipeline sends hide only 1-share of what
//     they would; the rest is Estimate.CollectiveSMSeconds, in
//     ExposedCommSeconds;
//   - the once-per-step gradient reduction overlaps OverlapFraction of the last
//     micro-batch's backward, the ZeRO parameter gather the first forward, at
//     least the last bucket exposed: one layer's and the embedding's, whose
//     gradient the backward computes last (buckets fill in reverse order of
//     the parameters), as the first gather waits for the embedding ([MEG-DDP]);
//   - Options.Comm may replace the overlap of the weight traffic and of the
//     gradient reduction (DeepSpeed's ZeRO-3 of 2021 fetched synchronously),
//     run collectives as one flat ring ((n-1)·α of latency) and pay one
//     collective per parameter tensor;
//   - activations a recompute policy keeps in host memory cross the host
//     link twice per micro-batch, hidden under OverlapFraction of the
//     compute;
//   - pipeline sends cross every axis of the pipeline's groups: the ramp-up
//     and ramp-down walks over the pp-1 stage boundaries, each on the axis it
//     crosses, are exposed, and (1-OverlapFraction) of the 2·M·v
//     steady-state sends, each bounded by the slowest hop
//     ([PipelineSendSeconds]);
//   - a schedule that runs a forward and a backward chunk of two
//     micro-batches as one pair (DualPipe, DualPipeV:
//     space.OverlapExpertA2A) hides each chunk's MoE dispatch and combine
//     under the other's compute, up to OverlapFraction of it, on the pairs
//     it runs (space.Rules.OverlappedMicrobatches); Estimate.ExposedA2ASeconds
//     is what stays exposed.
//
// BubbleSeconds is the schedule's bubble (space.Rules.Bubble) over one
// micro-batch's passes on the busiest rank: pp-1 stage times for GPipe and
// 1F1B, (pp-1)/v interleaved ([NARA §2.2]), so (pp-1)/M of the ideal
// compute; the zero-bubble and DualPipe schedules weigh the forward pass
// T_F, the weight-gradient matmuls T_W (the backward ops whose result is a
// weight's gradient) and the rest of the backward pass T_B (recompute
// included) apart, each with its exposed critical communication, and an
// overlapped pair as T_F+T_B+T_W less what it hides: ZB-H1
// (pp-1)(T_F+T_B-T_W), ZB-V half of it, DualPipe (pp/2-1)(F&B+B-3W)
// ([ZB], [DSV3 Table 2], docs/formulas.md §5). The V-shaped schedules (ZB-V,
// DualPipeV) run about half of linear ranks r and pp-1-r's layers on rank
// r, the embedding and the output layer on rank 0, and send twice per
// micro-batch and boundary; DualPipe's rank runs stage r for half the
// micro-batches and stage pp-1-r for the other half and updates both
// stages' parameters (space.Placement). ModelFLOPs follows the contract
// (model.Spec.ModelFLOPsPerToken × tokens, full-square attention);
// HardwareFLOPs adds the recompute policy's FLOPs (docs/formulas.md §1.2).
//
// Coefficients come from profiles.Cluster.Efficiency; zero fields fall back to
// profiles.DefaultEfficiency for the chip family.
//
// # Fast paths
//
// Every fast path has a reference twin that computes the same thing the
// plain way, and a test that holds the two equal, bit for bit unless
// stated; change either side only with its guard test green:
//
//   - [Evaluator] (incremental: block costs kept between strategies, op
//     outcomes memoised per gathered state, resolved meshes and collective
//     models kept per named placement) against [Model.Evaluate] (a fresh
//     evaluation): TestEvaluatorMatchesModel and its variants
//     (TestEvaluatorReprices, TestMoveTo);
//   - the rules' role choice by bit operations (chooseRole, a resolution in
//     one word) against trying every choice: TestChooseRoleMatchesEveryChoice
//     and TestResolutionLanes;
//   - [Bounder] (a lower bound on the step time without pricing every op)
//     against the evaluation it bounds: TestLowerBound and
//     TestDispatchBoundTellsPlacements;
//   - search's walk of the space (one Evaluator reused across a layout
//     class) against a fresh evaluation of every strategy:
//     search.TestWalkMatchesFresh (search.BenchmarkWalkMatchesFresh over
//     the large spaces), and its branch and bound against brute force
//     (search.TestBranchAndBoundExact, search.TestExhaustiveMatchesBruteForce).
//
// The memo invariants (memo.go): an op's outcome depends, for one forward
// key and evaluator generation, only on the roles its operands were
// gathered over, the pass, and ZeRO-2's sharding of a weight-gradient
// accumulator; through the mesh only on the collective models of the role
// sets it priced (opMemo.dep at its placement epoch). A replay appends the
// same emissions and adds the same seconds and FLOPs in the same order, so
// estimates are bit-identical; anything an op's cost comes to depend on
// must enter its key or its dep, or the guard tests fail.
package cost
