package model

import "fmt"

// sharedAttention writes the attention half of shared block k (Zamba2,
// Spec.Shared; transformers Zamba2AttentionDecoderLayer and
// Zamba2Attention): the residual stream concatenated with the input
// embeddings, x_emb[B, S, D2] (D2 = 2·hidden), its RMSNorm, the fused q,
// k, v projection from D2, the attention core over heads of head_dim
// (2·hidden/heads), and o back to hidden. With AttnAdapters, the
// invocation's q, k and v adapters (2·hidden x rank x 2·hidden each) add
// to the projection's output. The block's own weights are Shared: held
// once per pipeline stage however many of the stage's layers invoke it;
// the adapters are the invocation's. The embeddings it reads are kept
// from the embedding block for the whole stack (the carrying of them to
// later pipeline stages is not priced).
func (b *builder) sharedAttention(k int) int {
	s := &b.p.Spec
	b.begin(fmt.Sprintf("shared attention %d", k))
	b.blk.Attention = AttnFull
	tok, res := dm(DimB, TokenBatch), dm(DimS, ResidualSeq)
	x := b.residual("x")
	b.blk.Input = x
	cat := b.act("x_emb", tok, res, dm(DimD2, Replicated))
	xn := b.act("xn", tok, res, dm(DimD2, Replicated))
	wqkv := b.weight("Wqkv", false, dm(DimD2, WeightEmbed), dm(DimH, Width))
	qkv := b.act("qkv", tok, dm(DimS, Seq), dm(DimH, Width))
	q := b.act("q", tok, dm(DimS, Seq), dm(DimN, Width))
	kk := b.act("k", tok, dm(DimT, Seq), dm(DimN, Width))
	v := b.act("v", tok, dm(DimT, Seq), dm(DimN, Width))
	b.p.Tensors[kk].Count[2], b.p.Tensors[v].Count[2] = DimK, DimK
	score := []dimOf{tok, dm(DimN, Width), dm(DimS, Seq), dm(DimT, Seq)}
	sc := b.act("P", score...)
	o := b.act("o", tok, dm(DimS, Seq), dm(DimN, Width))
	wo := b.weight("Wo", false, dm(DimN, Width), dm(DimD, WeightEmbed))
	y := b.act("y_attn", tok, res, dm(DimD, Replicated))
	b.normOver("norm1_w", DimD2)
	// Read the residual stream and the embeddings, write their
	// concatenation (2 + 2 units of x); backward, the reverse.
	b.op(Op{Kind: Elementwise, Name: "concat", A: x, C: cat, Bytes: 4, BwdBytes: 4, Group: GroupOther})
	b.kernelPass("norm1", PassNorm, GroupNorm, cat, xn, 1, cat)
	b.einsum("qkv", GroupProjection, xn, wqkv, qkv, 1)
	sharedWeights := len(b.blk.Weights)
	if s.Shared.AttnAdapters {
		// modeling_zamba2.py Zamba2Attention: q, k, v adapters of 2·hidden·rank + rank·2·hidden each, 12·hidden·rank in all.
		h, r, hw := float64(s.Hidden), float64(s.Shared.AdapterRank), b.p.Size[DimH]
		wa := b.weight("Wqkv_adapters", false, dm(DimD2, WeightEmbed), dm(DimH, Width))
		share := 12 * h * r / (2 * h * hw)
		b.p.Tensors[wa].Scale = share
		b.einsum("qkv_adapters", GroupProjection, xn, wa, qkv, share)
	}
	q32, kv32 := float64(s.QDim()), float64(s.KVDim())
	i := b.kernelPass("rope", PassRope, GroupOther, qkv, qkv, (q32+kv32)/(q32+2*kv32))
	b.blk.Fwd[i].Writes = append(b.blk.Fwd[i].Writes, q, kk, v)
	b.core(q, kk, v, sc, o, score, dm(DimN, Width), 1/float64(s.HeadDim), AttnFull)
	b.einsum("out", GroupProjection, o, wo, y, 1)
	b.markShared(sharedWeights, wqkv, wo)
	return b.end()
}

// sharedMLP writes the MLP half of shared block k (transformers
// Zamba2MLP): the norm of the attention's output (no residual add between
// them), the gated gate and up projection plus the invocation's adapter
// (hidden x rank x 2·ffn), the activation, the down projection; then the
// invocation's own hidden x hidden linear projection (Zamba2HybridLayer
// linear), whose output the layer adds to its Mamba-2 mixer's input before
// the mixer's norm (Zamba2MambaDecoderLayer, transformer_hidden_states).
func (b *builder) sharedMLP(k int) int {
	s := &b.p.Spec
	b.begin(fmt.Sprintf("shared mlp %d", k))
	tok, res := dm(DimB, TokenBatch), dm(DimS, ResidualSeq)
	x := b.act("y_attn", tok, res, dm(DimD, Replicated))
	b.blk.Input = x
	xn := b.act("xn2", tok, res, dm(DimD, Replicated))
	win := b.weight("Win", false, dm(DimD, WeightEmbed), dm(DimF2, Width))
	h := b.act("h", tok, dm(DimS, Seq), dm(DimF2, Width))
	a := b.act("a", tok, dm(DimS, Seq), dm(DimF, Width))
	wout := b.weight("Wout", false, dm(DimF, Width), dm(DimD, WeightEmbed))
	y := b.act("y_mlp", tok, res, dm(DimD, Replicated))
	// The linear's output, hidden wide, written over D2 at half scale.
	t := b.act("t", tok, res, dm(DimD2, Replicated))
	b.p.Tensors[t].Scale = 0.5
	b.norm("norm2_w")
	b.kernelPass("norm2", PassNorm, GroupNorm, x, xn, 1, x)
	b.einsum("ffn_in", GroupProjection, xn, win, h, 1)
	shared := len(b.blk.Weights)
	hid, r, up := float64(s.Hidden), float64(s.Shared.AdapterRank), float64(s.mlpUpWidth())
	// modeling_zamba2.py Zamba2MLP: gate_up adapter nn.Linear(hidden, rank), nn.Linear(rank, 2·intermediate).
	wa := b.weight("Win_adapter", false, dm(DimD, WeightEmbed), dm(DimF2, Width))
	share := r * (hid + up) / (hid * up)
	b.p.Tensors[wa].Scale = share
	b.einsum("ffn_in_adapter", GroupProjection, xn, wa, h, share)
	b.kernelPass("act", PassAct, GroupActivation, h, a, 1, h)
	b.einsum("ffn_out", GroupProjection, a, wout, y, 1)
	// modeling_zamba2.py Zamba2Model: linear_layers, nn.Linear(hidden, hidden) per hybrid layer, kept replicated.
	wl := b.weight("W_linear", false, dm(DimD, Replicated), dm(DimD2, Replicated))
	b.p.Tensors[wl].Scale = 0.5
	b.einsum("linear", GroupProjection, y, wl, t, 0.5)
	// Added to the Mamba-2 layer's input: read t and the stream, write it.
	b.pass("add_to_mixer_input", GroupOther, t, t, 3)
	b.markShared(shared, win, wout)
	return b.end()
}

// markShared marks the current block's first n weights, and the given
// weights, as Shared.
func (b *builder) markShared(n int, ws ...int) {
	for _, w := range b.blk.Weights[:n] {
		b.p.Tensors[w].Shared = true
	}
	for _, w := range ws {
		b.p.Tensors[w].Shared = true
	}
}
