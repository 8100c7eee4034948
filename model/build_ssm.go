package model

// ssm writes the block of a Mamba-2 (SSD) or Gated DeltaNet mixer for the
// residual stream x[B_{dp,fsdp}, S_{cp(,tp)}, D] (Spec.SSM):
//
//   - norm, then the in-projection to z, x, B, C and dt (Mamba-2,
//     mamba_ssm modules/mamba2.py) or q, k, v, z, beta and a (Gated
//     DeltaNet, transformers Qwen3NextGatedDeltaNet);
//   - the short depthwise causal conv1d over x, B, C (q, k, v): a
//     memory-bound pass (2·kernel FLOPs per channel, negligible);
//   - the chunked scan as matmuls (arXiv:2405.21060 §7 Listing 1): within
//     each chunk of Q tokens the scores C·Bᵀ ("scores", kept on chip and
//     recomputed by the backward kernel, as mamba_ssm's
//     MambaChunkScanCombinedFn does), their decay mask per head and their
//     product with x ("attend"), both over the causal half of each Q×Q block
//     (Op.Local AttnChunked with Span Q); the chunk states Bᵀ·x of
//     heads·head_dim·d_state per chunk, the state pass between chunks, and
//     the states read out by C; Gated DeltaNet adds the within-chunk k·kᵀ
//     and the WY products (fla chunk_gated_delta_rule);
//   - the gated RMSNorm y·silu(z) and the out-projection.
//
// Tensor parallelism splits the heads and the groups (Megatron-Core's
// MambaMixer: d_inner and nheads over tp, ngroups over tp up to its count);
// the out-projection's partial sums are reduced as attention's are.
func (b *builder) ssm(mix Mixer) int {
	if mix == MixMamba1 {
		return b.mamba1()
	}
	return b.ssmBlock(mix, false)
}

// mamba1 writes the block of a Mamba (selective-scan) layer (Gu & Dao
// 2023, arXiv:2312.00752 §3; transformers JambaMambaMixer): norm, the
// in-projection to x and z, the causal conv over x, x_proj to dt, B and C
// (normed in Jamba), dt_proj, the selective scan, y·silu(z) and the
// out-projection. The scan is one memory-bound pass (mamba_ssm's
// selective_scan_fn reads x, dt, z, B and C and writes y; its backward
// recomputes the states): its FLOPs are not priced, an approximation of a
// kernel that is memory-bound. x_proj contracts d_inner, so tensor
// parallelism all-reduces its output.
func (b *builder) mamba1() int {
	m := b.p.Spec.SSM
	b.begin("mamba")
	x := b.residual("x")
	b.blk.Input = x
	bs := func(d Dim, l Logical) []dimOf { return []dimOf{dm(DimB, TokenBatch), dm(DimS, Seq), dm(d, l)} }
	xn := b.act("xn", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))
	win := b.weight("W_in_proj", false, dm(DimD, WeightEmbed), dm(DimLz, Width))
	xz := b.act("xz", bs(DimLz, Width)...)
	xs := b.act("x_conv", bs(DimLv, Width)...)
	wx := b.weight("W_x_proj", false, dm(DimLv, Width), dm(DimLk, Replicated))
	dbc := b.act("dt_B_C", bs(DimLk, Replicated)...)
	wdt := b.weight("W_dt_proj", false, dm(DimLk, Replicated), dm(DimLv, Width))
	r, n := float64(m.DTRank), float64(m.KeyDim)
	b.p.Tensors[wdt].Scale = r / (r + 2*n) // dt_rank of x_proj's output columns
	dt := b.act("dt", bs(DimLv, Width)...)
	y := b.act("y_scan", bs(DimLv, Width)...)
	wout := b.weight("W_out_proj", false, dm(DimLv, Width), dm(DimD, WeightEmbed))
	out := b.act("y", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))
	b.norm("norm_w")
	conv := float64(m.ConvKernel)
	if m.ConvBias {
		conv++
	}
	b.param("conv1d_w", false, conv, dm(DimLc, Width))
	// dt_proj's bias, A_log (d_state a channel) and D.
	b.param("dt_bias_A_D", false, n+2, dm(DimLv, Width))
	b.param("dt_B_C_norms", false, 1, dm(DimLk, Replicated))
	if m.ProjBias {
		b.param("b_in_proj", false, 1, dm(DimLz, Width))
		b.param("b_out_proj", false, 1, dm(DimD, WeightEmbed))
	}
	b.kernelPass("norm1", PassNorm, GroupNorm, x, xn, 1, x)
	b.einsum("in_proj", GroupProjection, xn, win, xz, 1)
	b.op(Op{Kind: Elementwise, Name: "conv1d", A: xz, C: xs, Bytes: 1, BwdBytes: 2, Group: GroupOther, Saves: []int{xz}})
	b.einsum("x_proj", GroupProjection, xs, wx, dbc, 1)
	b.einsum("dt_proj", GroupProjection, dbc, wdt, dt, r/(r+2*n))
	// The selective scan: reads x, dt and z (3 d_inner-wide) and B, C,
	// writes y (one): 4 passes of x's bytes; backward twice that.
	b.op(Op{Kind: Elementwise, Name: "selective_scan", A: xs, C: y, Bytes: 4, BwdBytes: 8, Group: GroupCore, Scan: true,
		Saves: []int{xs, dt, dbc, xz}})
	b.einsum("out_proj", GroupProjection, y, wout, out, 1)
	b.dropoutPass("dropout1", out)
	b.postNorm("post_norm1", out)
	b.kernelPass("residual1", PassResidual, GroupOther, out, b.mid, 1)
	return b.end()
}

// ssmBlock writes the mixer block; parallel marks the Mamba-2 half of a
// layer of attention and Mamba-2 side by side (MixParallel), which shares
// the attention's input norm: it has no norm weights of its own (its norm
// pass stands for re-reading the shared normed input).
func (b *builder) ssmBlock(mix Mixer, parallel bool) int {
	m := b.p.Spec.SSM
	name := Mamba2Mixer
	if mix == MixGDN {
		name = GDNMixer
	}
	if parallel {
		name = "mamba2 (parallel)"
	}
	b.begin(name)
	x := b.residual("x")
	b.blk.Input = x
	bs := func(d Dim, l Logical) []dimOf { return []dimOf{dm(DimB, TokenBatch), dm(DimS, l), dm(d, Width)} }
	xn := b.act("xn", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))
	win := b.weight("W_in_proj", false, dm(DimD, WeightEmbed), dm(DimLz, Width))
	zx := b.act("zxbcdt", bs(DimLz, Seq)...)
	xbc := b.act("xBC", bs(DimLc, Seq)...)
	xs := b.act("x_ssm", bs(DimLv, Seq)...)
	xt := b.act("x_ssm_T", dm(DimB, TokenBatch), dm(DimT, Seq), dm(DimLv, Width))
	cm := b.act("C", bs(DimLk, Seq)...)
	bm := b.act("B_T", dm(DimB, TokenBatch), dm(DimT, Seq), dm(DimLk, Width))
	bsm := b.act("B", bs(DimLk, Seq)...)
	q, g := float64(m.Chunk), float64(m.KeyHeads)
	// Scores per group (one per d_state), then per head after the decay
	// mask: on chip, like flash attention's.
	cb := b.act("CB", dm(DimB, TokenBatch), dm(DimLk, Width), dm(DimS, Seq), dm(DimT, Seq))
	lm := b.act("L_CB", dm(DimB, TokenBatch), dm(DimLv, Width), dm(DimS, Seq), dm(DimT, Seq))
	for _, t := range []int{cb, lm} {
		tt := &b.p.Tensors[t]
		tt.OnChip, tt.NoComm = true, true
	}
	b.p.Tensors[cb].Scale = 1 / float64(m.KeyDim)
	b.p.Tensors[lm].Scale = 1 / float64(m.ValueHeadDim)
	y := b.act("y_ssm", bs(DimLv, Seq)...)
	// Chunk states: heads·head_dim·d_state per chunk, i.e. per Q tokens;
	// Lk·Lv counts groups times too many.
	st := b.act("states", dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimLk, Width), dm(DimLv, Width))
	b.p.Tensors[st].Scale = 1 / (q * g)
	yoff := b.act("y_states", dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimLk, Width), dm(DimLv, Width))
	b.p.Tensors[yoff].Scale = 1 / float64(m.KeyWidth())
	yn := b.act("y_norm", bs(DimLv, Seq)...)
	wout := b.weight("W_out_proj", false, dm(DimLv, Width), dm(DimD, WeightEmbed))
	out := b.act("y", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))

	if !parallel {
		b.norm("norm_w")
	}
	conv := float64(m.ConvKernel)
	if m.ConvBias && mix == MixMamba2 {
		conv++
	}
	b.param("conv1d_w", false, conv, dm(DimLc, Width))
	// dt_bias, A_log and D per head (Mamba-2); dt_bias and A_log (Gated
	// DeltaNet); the gated norm's weight: d_inner (Mamba-2), one head's
	// width (Gated DeltaNet, shared by the heads).
	hv := float64(m.ValueHeads)
	if mix == MixGDN {
		b.param("dt_A", false, 2/float64(m.ValueHeadDim), dm(DimLv, Width))
		b.param("norm_gated_w", false, 1/hv, dm(DimLv, Replicated))
	} else {
		b.param("dt_A_D", false, 3/float64(m.ValueHeadDim), dm(DimLv, Width))
		if !m.NoGatedNorm {
			b.param("norm_gated_w", false, 1, dm(DimLv, Width))
		}
	}
	if m.ProjBias && mix == MixMamba2 {
		b.param("b_in_proj", false, 1, dm(DimLz, Width))
		b.param("b_out_proj", false, 1, dm(DimD, WeightEmbed))
	}
	b.kernelPass("norm1", PassNorm, GroupNorm, x, xn, 1, x)
	b.einsum("in_proj", GroupProjection, xn, win, zx, 1)
	// The causal conv1d and its activation over x, B and C: read the
	// channels and write them (causal_conv1d_fn), keeping its input.
	sz := b.p.Size
	b.op(Op{Kind: Elementwise, Name: "conv1d", A: zx, C: xbc, Bytes: 2 * sz[DimLc] / sz[DimLz], BwdBytes: 4 * sz[DimLc] / sz[DimLz],
		Group: GroupOther, Writes: []int{xs, xt, cm, bm, bsm}, Saves: []int{zx}})
	local := AttnChunked
	// What the scan keeps for its backward pass. Mamba-2's fused training
	// kernel (mamba_split_conv1d_scan_combined, which Megatron-Core's
	// MambaMixer._ssm_training calls: NVIDIA/Megatron-LM@d98e8a64
	// megatron/core/ssm/mamba_mixer.py:707) saves only the in-projection's
	// output zxbcdt and the scan's output before the gate, out_x; its
	// backward re-runs the conv1d and re-makes the chunk states from them
	// (state-spaces/mamba@e9594ce mamba_ssm/ops/triton/ssd_combined.py:888-889,
	// :921). Gated DeltaNet's chunked kernel keeps q, k, v and its WY
	// intermediates (fla chunk_gated_delta_rule).
	keep := func(t ...int) []int {
		if mix == MixMamba2 {
			return nil
		}
		return t
	}
	b.op(Op{Kind: Einsum, Name: "scores", A: cm, B: bm, C: cb, Work: causalWork, Group: GroupCore, Saves: keep(cm, bm), Local: local, Span: q})
	if mix == MixGDN {
		// k·kᵀ within each chunk for the WY form (fla chunk_scaled_dot_kkt).
		b.op(Op{Kind: Einsum, Name: "kkt", A: bsm, B: bm, C: cb, Work: causalWork, Group: GroupCore, Saves: []int{bsm, bm}, Local: local, Span: q})
	}
	b.op(Op{Kind: Elementwise, Name: "decay_mask", A: cb, C: lm, Group: GroupCore})
	b.op(Op{Kind: Einsum, Name: "attend", A: lm, B: xt, C: y, Work: causalWork, Group: GroupCore, Saves: append(keep(xt), y), Local: local, Span: q})
	if mix == MixGDN {
		// u = T·(β v) and w = T·(β k) within each chunk (fla recompute_w_u).
		b.op(Op{Kind: Einsum, Name: "wy", A: lm, B: xt, C: y, Work: causalWork, Group: GroupCore, Saves: []int{xt}, Local: local, Span: q})
	}
	b.op(Op{Kind: Einsum, Name: "chunk_states", A: bsm, B: xs, C: st, Work: 1 / g, Group: GroupCore, Saves: keep(bsm, xs)})
	b.pass("state_pass", GroupCore, st, st, 2)
	b.op(Op{Kind: Einsum, Name: "state_out", A: cm, B: st, C: yoff, Work: 1 / g, Group: GroupCore, Saves: keep(cm, st)})
	b.pass("add_states", GroupCore, yoff, y, 3)
	for i := range b.blk.Fwd {
		b.blk.Fwd[i].Scan = b.blk.Fwd[i].Group == GroupCore
	}
	normIn := []int{y, zx}
	if mix == MixMamba2 && !m.NoGatedNorm {
		// Megatron-Core gates in the scan kernel (its output is
		// y·silu(z), ssd_combined.py:855) and normalises after it in a
		// module of its own (mamba_mixer.py:730-731, self.norm(y)), which
		// keeps the gated product, its input: one more d_inner-wide
		// tensor per token.
		yg := b.act("y_gated", bs(DimLv, Seq)...)
		normIn = []int{y, zx, yg}
		b.blk.Fwd[len(b.blk.Fwd)-1].Writes = append(b.blk.Fwd[len(b.blk.Fwd)-1].Writes, yg)
	}
	b.kernelPass("gated_norm", PassNorm, GroupNorm, y, yn, 2, normIn...)
	b.einsum("out_proj", GroupProjection, yn, wout, out, 1)
	b.dropoutPass("dropout1", out)
	b.postNorm("post_norm1", out)
	b.kernelPass("residual1", PassResidual, GroupOther, out, b.mid, 1)
	return b.end()
}
