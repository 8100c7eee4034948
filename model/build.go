package model

import (
	"errors"
	"fmt"
)

// Dropout says whether the layers apply dropout, which saves a 1-byte mask
// per element for the backward pass [KORT §4.1].
type Dropout uint8

// Dropout settings of ProgramOptions.
const (
	// DropoutAuto applies dropout to GPT-style models (LayerNorm and
	// biases: GPT-2/3, Megatron GPT, the Korthikanti models) and not to
	// modern ones (Llama, Mistral, DeepSeek, ...).
	DropoutAuto Dropout = iota
	// DropoutOn applies dropout after the attention probabilities, after
	// the attention and MLP blocks and after the embedding.
	DropoutOn
	// DropoutOff applies none.
	DropoutOff
)

// ProgramOptions select how the layer program runs on the hardware: the
// framework's kernels, precision and optimizer step.
type ProgramOptions struct {
	// Kernels are the framework's elementwise passes and attention kernel;
	// the zero value is FusedKernels with a flash attention kernel ([FA2]).
	Kernels Kernels
	// Dropout selects the dropout layers; the zero value is DropoutAuto.
	Dropout Dropout
	// Precision is the table of element sizes and the layout of the model
	// states; zero sizes take MixedPrecision's.
	Precision Precision
	// Optimizer is the optimizer step's passes; the zero value is fused
	// AdamW without gradient clipping.
	Optimizer Optimizer
	// FP8, when not nil, runs the projections in fp8 under this recipe;
	// nil is bf16 throughout.
	FP8 *FP8Recipe
	// ExpertsWhole keeps each expert's matrices whole on every tensor-parallel
	// chip (expert-tensor parallel degree 1, Megatron-Core's
	// --expert-tensor-parallel-size 1): under sequence parallelism each tp
	// chip runs its own tokens' slots through whole experts, and the tp
	// chips hold replicas of the experts, whose gradients they sum. False
	// splits the experts' FFN width over tp like the dense layers (etp = tp).
	ExpertsWhole bool
	// WeightsOverCP shards every dense weight's model dimension over the
	// context-parallel ranks as well as the fsdp ones, and with it the
	// gradients and optimizer state, as frameworks whose FSDP mesh spans
	// cp do (torchtitan's dp_shard x cp, pytorch/torchtitan@73a0e6979dd10b6b1904098eb3c8f62c18ab87ce:
	// torchtitan/distributed/parallel_dims.py:137,151-152; MaxText's
	// logical rule embed -> fsdp, context, AI-Hypercomputer/maxtext@e591f30cbbf217ed67ef71263ec0538239f9c3b8:
	// src/maxtext/configs/base.yml:587-588): space.ClassRoles adds cp to
	// the weight embedding's roles.
	WeightsOverCP bool
	// SavesGathered keeps the all-gathered input of a column-parallel
	// matmul (Program.SPGathered) for its weight gradient, as autograd
	// does under PyTorch's DTensor plan (ColwiseParallel after a
	// sequence-parallel norm: the matmul's input is the all-gather's
	// output, pytorch/torchtitan@820504e20d1149fbf0b98c567af24c4b0433b22d
	// torchtitan/models/llama3/parallelize_llama.py apply_tp), where
	// Megatron's linear layers keep the sequence-parallel shard and gather
	// it again in the backward pass ([MEG-TP]). Package memory counts a
	// kept input whole over tp (it matters without recompute: a full
	// checkpoint keeps only the layer's input, and torchtitan's per-op
	// policy re-makes the all-gather).
	SavesGathered bool
}

// dropout reports whether the program of s applies dropout.
func (o ProgramOptions) dropout(s Spec) bool {
	switch o.Dropout {
	case DropoutOn:
		return true
	case DropoutOff:
		return false
	}
	return s.Norm == LayerNorm && s.Bias
}

// causalWork is the fraction of the score square a causal flash kernel
// computes: it skips the masked blocks ([FA2]; [MEG-FLOP] halves the core
// for the causal mask).
const causalWork = 0.5

// NewProgram builds the layer program of s (normalised first): a pre-norm
// decoder block (attention with fused QKV and grouped-query heads, a flash
// or materialised attention core, the output projection; a GELU or SwiGLU
// MLP with fused gate and up projections, or a mixture of experts with its
// router, dispatch, experts, combine and shared experts), the embedding and
// the output layer with the vocabulary-parallel loss ([SHOE], [KORT],
// [MEG-TP], docs/formulas.md §1-3). Every op lists what its backward pass
// needs, and the backward pass is derived by transposition.
func NewProgram(s Spec, o ProgramOptions) (*Program, error) {
	if s.MoE != nil {
		e := *s.MoE // Normalize fills defaults: never write the caller's MoE
		s.MoE = &e
	}
	s.Normalize()
	if s.Layers <= 0 || s.Hidden <= 0 || s.Heads <= 0 || s.HeadDim <= 0 || s.Vocab < 0 {
		return nil, errors.New("model: the layer program needs layers, hidden, heads and head_dim above zero")
	}
	if s.MoE != nil && s.MoE.Experts > 0 && (s.MoE.TopK <= 0 || s.MoE.ExpertFFNHidden <= 0 || s.MoELayers() <= 0) {
		return nil, fmt.Errorf("model: the mixture of experts of %s needs top_k, expert_ffn_hidden and at least one MoE layer", s.Name)
	}
	if m := s.MLA; m != nil && (m.QLoRARank < 0 || m.KVLoRARank <= 0 || m.QKNopeHeadDim < 0 || m.QKRopeHeadDim < 0 || m.QKHeadDim() <= 0 || m.VHeadDim <= 0) {
		return nil, fmt.Errorf("model: the latent attention of %s needs kv_lora_rank, v_head_dim and qk_nope_head_dim + qk_rope_head_dim above zero", s.Name)
	}
	if s.SharedInvocations() > 0 && (s.Shared == nil || s.Shared.Blocks <= 0 || s.SSM == nil) {
		return nil, fmt.Errorf("model: the shared+mamba2 layers of %s need shared (blocks above zero) and ssm", s.Name)
	}
	o.Precision = o.Precision.withDefaults()
	if err := o.Precision.Validate(); err != nil {
		return nil, err
	}
	o.Kernels = o.Kernels.withDefaults(s)
	if err := o.Kernels.Validate(); err != nil {
		return nil, err
	}
	if err := o.Optimizer.Validate(); err != nil {
		return nil, err
	}
	if o.FP8 != nil {
		r := *o.FP8 // never share the caller's recipe
		if err := r.Validate(); err != nil {
			return nil, err
		}
		o.FP8 = &r
	}
	p := &Program{Spec: s, Options: o}
	b := &builder{p: p, dropout: o.dropout(s), flash: o.Kernels.Attention == AttentionFlash}
	b.sizes()
	// The residual stream between a layer's attention and its MLP, shared
	// so that a recompute policy sees the layer as one program.
	b.mid = b.residual("x2")
	// One attention block per variant the stack uses, one MLP and one
	// mixture of experts; a layer kind per distinct (attention, MLP) pair:
	// full dense first and full MoE second, as the stack of a model without
	// a pattern has them, then the others in the order the stack meets them.
	attn := [numAttention]int{-1, -1, -1}
	attnOf := func(a Attention) int {
		if attn[a] < 0 {
			if s.MLA != nil {
				attn[a] = b.mlaAttention(a)
			} else {
				attn[a] = b.attention(a)
			}
		}
		return attn[a]
	}
	attnOf(AttnFull)
	mlp := b.mlp()
	moe := -1
	if s.MoELayers() > 0 {
		moe = b.moe()
	}
	mixers := [MixMamba1 + 1]int{-1, -1, -1, -1, -1, -1}
	parallel := -1
	var shared [][2]int // the attention and MLP blocks of each shared block
	kindOf := func(t LayerType) int {
		for k, kind := range p.Kinds {
			if kind.Attention == t.Attention && kind.MoE == t.MoE && kind.Mixer == t.Mixer && kind.NoMLP == t.NoMLP && kind.SharedBlock == t.SharedBlock {
				return k
			}
		}
		name, mb := "dense", mlp
		if t.MoE {
			name, mb = "moe", moe
		}
		if t.Mixer == MixAttention && t.Attention != AttnFull {
			name = t.Attention.String() + " " + name
		}
		var blocks []int
		switch t.Mixer {
		case MixAttention:
			blocks = append(blocks, attnOf(t.Attention))
		case MixMamba2, MixGDN, MixMamba1:
			if mixers[t.Mixer] < 0 {
				mixers[t.Mixer] = b.ssm(t.Mixer)
			}
			blocks = append(blocks, mixers[t.Mixer])
			name = p.Blocks[mixers[t.Mixer]].Name + " " + name
		case MixNone:
			name = "mlp-only " + name
		case MixParallel:
			if parallel < 0 {
				parallel = b.ssmBlock(MixMamba2, true)
			}
			blocks = append(blocks, attnOf(AttnFull), parallel)
			name = "attention+mamba2 " + name
		case MixShared:
			if mixers[MixMamba2] < 0 {
				mixers[MixMamba2] = b.ssm(MixMamba2)
			}
			for len(shared) <= t.SharedBlock {
				shared = append(shared, [2]int{-1, -1})
			}
			if shared[t.SharedBlock][0] < 0 {
				shared[t.SharedBlock] = [2]int{b.sharedAttention(t.SharedBlock), b.sharedMLP(t.SharedBlock)}
			}
			blocks = append(blocks, shared[t.SharedBlock][0], shared[t.SharedBlock][1], mixers[MixMamba2])
			name = fmt.Sprintf("shared %d+mamba2 %s", t.SharedBlock, name)
		}
		if t.NoMLP {
			name = p.Blocks[blocks[0]].Name
			if t.Mixer == MixAttention && t.Attention != AttnFull {
				name = t.Attention.String() + " " + name
			}
			if t.Mixer == MixShared {
				name = fmt.Sprintf("shared %d+mamba2", t.SharedBlock)
			}
		} else {
			blocks = append(blocks, mb)
		}
		p.Kinds = append(p.Kinds, LayerKind{Name: name, Blocks: blocks, Attention: t.Attention, MoE: t.MoE, Mixer: t.Mixer, NoMLP: t.NoMLP, SharedBlock: t.SharedBlock})
		return len(p.Kinds) - 1
	}
	kindOf(LayerType{})
	if moe >= 0 {
		kindOf(LayerType{MoE: true})
	}
	for i := 0; i < s.Layers; i++ {
		k := kindOf(s.LayerTypeAt(i))
		if n := len(p.Stack); n > 0 && p.Stack[n-1].Kind == k {
			p.Stack[n-1].Count++
			continue
		}
		p.Stack = append(p.Stack, Run{Kind: k, Count: 1})
	}
	p.countRuns()
	lastKind := p.Kinds[p.Stack[len(p.Stack)-1].Kind]
	p.Embedding = b.embedding()
	p.Output = b.output()
	if s.MTPLayers > 0 {
		// A module's transformer layer is of the stack's last kind, as
		// Megatron-LM counts it (num_floating_point_operations).
		mtp := b.mtp(p.Blocks[attn[AttnFull]].Input)
		p.Kinds = append(p.Kinds, LayerKind{Name: KindMTP, Blocks: append([]int{mtp}, lastKind.Blocks...),
			Attention: lastKind.Attention, MoE: lastKind.MoE, Mixer: lastKind.Mixer, NoMLP: lastKind.NoMLP})
		p.MTP = Run{Kind: len(p.Kinds) - 1, Count: s.MTPLayers}
	}
	return p, nil
}

// cumRuns is the number of runs from which CountLayers uses prefix counts.
const cumRuns = 8

// countRuns fills the prefix counts of a stack of many runs.
func (p *Program) countRuns() {
	p.layers = p.NumLayers()
	if len(p.Stack) < cumRuns {
		return
	}
	nk := len(p.Kinds)
	p.cum = make([]int32, (p.layers+1)*nk)
	at := 0
	for _, r := range p.Stack {
		for i := 0; i < r.Count; i++ {
			copy(p.cum[(at+1)*nk:(at+2)*nk], p.cum[at*nk:(at+1)*nk])
			p.cum[(at+1)*nk+r.Kind]++
			at++
		}
	}
}

// MustProgram is NewProgram for specs known to be valid (presets, tests); it
// panics on an error.
func MustProgram(s Spec, o ProgramOptions) *Program {
	p, err := NewProgram(s, o)
	if err != nil {
		panic(err)
	}
	return p
}

// builder writes a program.
type builder struct {
	p       *Program
	dropout bool
	flash   bool
	blk     *Block
	mid     int // the residual stream between attention and MLP
	// quantized maps a tensor to its fp8 copy in the current block.
	quantized map[int]int
}

// sizes fills the model dimensions and the key/value caps.
func (b *builder) sizes() {
	s, p := &b.p.Spec, b.p
	q, kv := float64(s.QDim()), float64(s.KVDim())
	mats := 1.0
	if s.FFN == SwiGLU {
		mats = 2
	}
	p.Size = [NumDim]float64{DimD: float64(s.Hidden), DimQ: q, DimN: q, DimK: kv, DimH: q + 2*kv,
		DimF: float64(s.FFNHidden), DimF2: mats * float64(s.FFNHidden), DimV: float64(s.Vocab), DimE: 1, DimEr: 1, DimR: 1}
	if s.AttnGate {
		p.Size[DimH] += q // the query projection also writes the output gate
	}
	// K/V heads are replicated once tensor parallelism exceeds their count
	// [MEG-TP]: K is all key/value, H = q + 2kv has 2kv of it.
	p.Cap[DimK], p.CapPart[DimK] = s.KVHeads, kv
	p.Cap[DimH], p.CapPart[DimH] = s.KVHeads, 2*kv
	if m := s.MLA; m != nil {
		p.Size[DimA] = float64(s.Heads)
		p.Size[DimCq], p.Size[DimCkv] = float64(m.QLoRARank), float64(m.KVLoRARank)
		p.Size[DimDqk], p.Size[DimDv] = float64(m.QKHeadDim()), float64(m.VHeadDim)
		p.Size[DimDkv], p.Size[DimDr] = float64(m.QKNopeHeadDim+m.VHeadDim), float64(m.QKRopeHeadDim)
	}
	if s.MTPLayers > 0 || s.Shared != nil {
		p.Size[DimD2] = 2 * float64(s.Hidden)
	}
	if m := s.SSM; m != nil {
		mix := s.ssmMixer()
		k := float64(m.KeyWidth())
		p.Size[DimLz], p.Size[DimLc] = float64(s.SSMInProjWidth(mix)), float64(s.SSMConvWidth(mix))
		p.Size[DimLv], p.Size[DimLk] = float64(m.ValueWidth()), k
		// Megatron-Core's MambaMixer splits d_inner, the heads and the
		// groups over tp (ngroups_local_tp = ngroups / tp): the groups,
		// like key/value heads, stop splitting at their count.
		if mix == MixMamba1 {
			// x_proj's output: dt_rank + 2·d_state, replicated.
			p.Size[DimLk] = float64(m.DTRank + 2*m.KeyDim)
		} else {
			p.Cap[DimLk], p.CapPart[DimLk] = m.KeyHeads, k
			p.Cap[DimLz], p.CapPart[DimLz] = m.KeyHeads, 2*k
			p.Cap[DimLc], p.CapPart[DimLc] = m.KeyHeads, 2*k
		}
	}
	if e := s.MoE; e != nil && e.Experts > 0 {
		p.Size[DimE], p.Size[DimEr] = float64(e.Experts), float64(e.Experts)
		p.Size[DimR] = e.CapacityFactor * float64(e.TopK)
		p.Size[DimFe], p.Size[DimFe2] = float64(e.ExpertFFNHidden), mats*float64(e.ExpertFFNHidden)
		p.Size[DimFs] = float64(e.SharedExperts * e.SharedFFNHidden)
		p.Size[DimFs2] = mats * p.Size[DimFs]
	}
}

// dimOf pairs a dimension with what it holds.
type dimOf struct {
	d Dim
	l Logical
}

func dm(d Dim, l Logical) dimOf { return dimOf{d, l} }

// tensor adds a tensor of class c with the given dimensions.
func (b *builder) tensor(name string, c Class, dims ...dimOf) int {
	t := Tensor{Name: name, Rank: len(dims), Class: c, Scale: 1, Grad: -1, Primal: -1}
	for i, x := range dims {
		t.Dims[i], t.Count[i], t.Logical[i] = x.d, x.d, x.l
	}
	b.p.Tensors = append(b.p.Tensors, t)
	return len(b.p.Tensors) - 1
}

// act adds an activation tensor.
func (b *builder) act(name string, dims ...dimOf) int {
	return b.tensor(name, ClassActivation, dims...)
}

// weight adds a parameter of the current block.
func (b *builder) weight(name string, expert bool, dims ...dimOf) int {
	id := b.tensor(name, ClassWeight, dims...)
	b.p.Tensors[id].Weight = true
	b.p.Tensors[id].Expert = expert
	b.blk.Weights = append(b.blk.Weights, id)
	return id
}

// param adds a parameter that no matmul reads (norm weights, biases): it
// counts in the weights, gradients and optimizer state; scale multiplies its
// elements (LayerNorm has a weight and a bias per norm).
func (b *builder) param(name string, expert bool, scale float64, dims ...dimOf) {
	id := b.weight(name, expert, dims...)
	b.p.Tensors[id].Scale, b.p.Tensors[id].Bucketed = scale, true
	b.gradOf(id)
}

// norm adds the weights of one normalisation layer (docs/formulas.md §1.1):
// h for RMSNorm, 2h for LayerNorm; FSDP shards them, tensor parallelism
// replicates them [MEG-MEM].
func (b *builder) norm(name string) {
	b.normOver(name, DimD)
}

// normOver adds the weights of a normalisation layer over dimension d (the
// model width, or an MLA latent).
func (b *builder) normOver(name string, d Dim) {
	scale := 1.0
	if b.p.Spec.Norm == LayerNorm {
		scale = 2
	}
	b.param(name, false, scale, dm(d, WeightEmbed))
}

// begin starts a block.
func (b *builder) begin(name string) {
	b.p.Blocks = append(b.p.Blocks, Block{Name: name, Input: -1})
	b.blk = &b.p.Blocks[len(b.p.Blocks)-1]
	b.quantized = map[int]int{}
}

// end derives the backward pass of the current block and returns its index.
func (b *builder) end() int {
	b.derive(b.blk)
	return len(b.p.Blocks) - 1
}

// op appends a forward op to the current block.
func (b *builder) op(o Op) {
	o.Sibling, o.SiblingIn = -1, -1
	if o.Kind != Einsum {
		o.B = -1
	}
	b.blk.Fwd = append(b.blk.Fwd, o)
}

// einsum adds C = A·B; its backward needs the operands that are not
// weights (dA = dC·Bᵀ needs B, dB = Aᵀ·dC needs A). Under an FP8 recipe a
// projection reads the fp8 copy of its input (and keeps that for its
// backward), and its output's gradient is quantised in the backward pass.
func (b *builder) einsum(name string, g Group, a, bb, c int, work float64, extra ...int) {
	if !b.fp8Eligible(name, g, bb) {
		b.op(Op{Kind: Einsum, Name: name, A: a, B: bb, C: c, Work: work, Group: g, Saves: append([]int{a, bb}, extra...)})
		return
	}
	q := b.fp8Input(a)
	b.p.Tensors[bb].FP8Copy = true
	saves := append([]int{q, bb}, extra...)
	if b.p.Options.FP8.HighPrecisionInput && q != a {
		// The quantisation keeps the bf16 input instead (fp8Input).
		saves = append([]int{bb}, extra...)
	}
	b.op(Op{Kind: Einsum, Name: name, A: q, B: bb, C: c, Work: work, Group: g, FP8: true, Saves: saves})
	// The backward quantises the output's gradient before both backward
	// matmuls read it (gradQuantizeBytes per element of dC).
	b.op(Op{Kind: Elementwise, Name: "quantize_d" + b.p.Tensors[c].Name, A: c, C: c,
		BwdBytes: b.p.Options.FP8.gradQuantizeBytes() / b.p.ElemBytes(c), Group: GroupOther})
}

// pass adds a memory-bound elementwise pass from a to c that moves bytes
// times a's bytes (twice that in the backward pass) and saves the given
// tensors for its backward pass.
func (b *builder) pass(name string, g Group, a, c int, bytes float64, saves ...int) {
	b.op(Op{Kind: Elementwise, Name: name, A: a, C: c, Bytes: bytes, BwdBytes: 2 * bytes, Group: g, Saves: saves})
}

// kernelPass adds the framework pass k from a to c: its bytes per element
// of a (times share, the part of a's elements it touches) from the
// program's Kernels, and, when the framework keeps intermediates of its
// own, a tensor of SavedBytes per element that the pass writes and saves.
// It returns the op's index in the block.
func (b *builder) kernelPass(name string, k Pass, g Group, a, c int, share float64, saves ...int) int {
	pc := b.p.Options.Kernels.Passes[k]
	elem := b.p.ElemBytes(a)
	o := Op{Kind: Elementwise, Name: name, A: a, C: c, Bytes: share * pc.FwdBytes / elem,
		BwdBytes: share * pc.BwdBytes / elem, Group: g, Saves: saves}
	if pc.SavedBytes > 0 {
		kept := b.like(name+"_kept", ClassRaw, a)
		b.p.Tensors[kept].Scale = share * pc.SavedBytes
		b.p.Tensors[kept].NoGrad, b.p.Tensors[kept].NoComm = true, true
		o.Writes = append(o.Writes, kept)
		o.Saves = append(o.Saves, kept)
	}
	b.op(o)
	return len(b.blk.Fwd) - 1
}

// ropePass is the rotary embedding's pass: YaRN's (Spec.YaRN) or plain.
func (b *builder) ropePass() Pass {
	if b.p.Spec.YaRN {
		return PassRopeYaRN
	}
	return PassRope
}

// projectionCopies adds, for a framework with SplitProjections, the casts
// of normalised input xn that n separate projections make under eager
// autocast (docs/formulas.md §1.4 [derived]): each reads the
// Residual-sized input and writes and keeps an Activation-sized copy, of
// which the program's xn is one; backward, each copy's gradient is cast
// back and the n gradients summed in Residual precision.
func (b *builder) projectionCopies(xn int, n float64) {
	if !b.p.Options.Kernels.SplitProjections || n <= 1 {
		return
	}
	pr := b.p.Options.Precision
	elem := b.p.ElemBytes(xn)
	copies := b.like(b.p.Tensors[xn].Name+"_copies", ClassRaw, xn)
	b.p.Tensors[copies].Scale = (n - 1) * pr.Activation
	b.p.Tensors[copies].NoGrad, b.p.Tensors[copies].NoComm = true, true
	fwd := n * (pr.Residual + pr.Activation)
	bwd := n*(pr.Activation+pr.Residual) + (n-1)*3*pr.Residual
	b.op(Op{Kind: Elementwise, Name: "casts", A: xn, C: xn, Bytes: fwd / elem, BwdBytes: bwd / elem,
		Group: GroupOther, Writes: []int{copies}, Saves: []int{copies}})
}

// separate marks the current block's einsum name as n separate matmuls on
// one input (Op.Calls) for a framework with SeparateProjections.
func (b *builder) separate(name string, n int) {
	k := b.p.Options.Kernels
	if !k.SeparateProjections || k.SplitProjections {
		return
	}
	for i := range b.blk.Fwd {
		if o := &b.blk.Fwd[i]; o.Kind == Einsum && o.Name == name {
			o.Calls = n
		}
	}
}

// like adds a tensor of class c with t's dimensions.
func (b *builder) like(name string, c Class, t int) int {
	id := b.tensor(name, c)
	tt, n := b.p.Tensors[t], &b.p.Tensors[id]
	n.Rank, n.Dims, n.Count, n.Logical = tt.Rank, tt.Dims, tt.Count, tt.Logical
	return id
}

// residual adds a tensor of the residual stream [B, S, D].
func (b *builder) residual(name string) int {
	return b.tensor(name, ClassResidual, dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))
}

// dropoutPass adds a dropout after t when the program has dropout: fused
// into the bias-dropout-add kernel (no extra pass, [MEG-TP]), it saves a
// 1-byte mask per element of t [KORT §4.1].
func (b *builder) dropoutPass(name string, t int) {
	if !b.dropout {
		return
	}
	mask := b.like(name+"_mask", ClassMask, t)
	m := &b.p.Tensors[mask]
	m.Scale, m.NoGrad = b.p.Tensors[t].Scale, true
	b.op(Op{Kind: Elementwise, Name: name, A: t, C: t, Group: GroupOther, Writes: []int{mask}, Saves: []int{mask}})
}

// attention writes the attention block. x[B_{dp,fsdp}, S_{cp(,tp)}, D] is
// the residual stream.
func (b *builder) attention(variant Attention) int {
	s := &b.p.Spec
	b.begin("attention")
	b.blk.Attention = variant
	x := b.residual("x")
	b.blk.Input = x
	xn := b.act("xn", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))
	wqkv := b.weight("Wqkv", false, dm(DimD, WeightEmbed), dm(DimH, Width))
	qkv := b.act("qkv", dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimH, Width))
	q := b.act("q", dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimN, Width))
	k := b.act("k", dm(DimB, TokenBatch), dm(DimT, Seq), dm(DimN, Width))
	v := b.act("v", dm(DimB, TokenBatch), dm(DimT, Seq), dm(DimN, Width))
	b.p.Tensors[k].Count[2], b.p.Tensors[v].Count[2] = DimK, DimK // GQA: k and v are kv wide
	score := []dimOf{dm(DimB, TokenBatch), dm(DimN, Width), dm(DimS, Seq), dm(DimT, Seq)}
	perHead := 1 / float64(s.HeadDim) // N spans heads·head_dim; one score per head
	sc := b.act("P", score...)
	o := b.act("o", dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimN, Width))
	wo := b.weight("Wo", false, dm(DimN, Width), dm(DimD, WeightEmbed))
	y := b.act("y", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))
	out := b.mid

	b.norm("norm1_w")
	if s.Bias || s.QKVBias {
		b.param("b_qkv", false, 1, dm(DimH, Width))
	}
	if s.Bias || s.OutBias {
		b.param("b_o", false, 1, dm(DimD, WeightEmbed))
	}
	b.kernelPass("norm1", PassNorm, GroupNorm, x, xn, 1, x)
	b.projectionCopies(xn, 3)
	b.einsum("qkv", GroupProjection, xn, wqkv, qkv, 1)
	b.separate("qkv", 3)
	// q, k and v are views of qkv's columns; the core einsums see them as
	// heads. The rotary embedding touches q and k, not v.
	q32, kv32 := float64(s.QDim()), float64(s.KVDim())
	hw := q32 + 2*kv32
	if s.AttnGate {
		hw += q32 // the output gate's columns
	}
	if s.QKNorm {
		// Per-head RMSNorm of q and k (transformers' Qwen3Attention): 2·head_dim
		// weights; the pass keeps its input, qkv (v's columns, kv/(q+2kv)
		// of it, included).
		b.param("qk_norm_w", false, 2*float64(s.HeadDim)/float64(s.Hidden), dm(DimD, WeightEmbed))
		b.kernelPass("qk_norm", PassNorm, GroupNorm, qkv, qkv, (q32+kv32)/hw, qkv)
	}
	rotated := (q32 + kv32) / hw
	if s.ALiBi {
		// ALiBi rotates nothing: the bias is added inside the attention
		// kernel (Spec.ALiBi), so the pass only splits qkv into its views.
		rotated = 0
	}
	i := b.kernelPass("rope", b.ropePass(), GroupOther, qkv, qkv, rotated)
	b.blk.Fwd[i].Writes = append(b.blk.Fwd[i].Writes, q, k, v)
	// P's N dimension spans heads·head_dim so that its einsums count the
	// right FLOPs; it holds one score per head.
	b.core(q, k, v, sc, o, score, dm(DimN, Width), perHead, variant)
	if s.AttnGate {
		// o·sigmoid(gate) (transformers Qwen3NextAttention): reads o and
		// the gate, writes o; keeps both for its backward.
		b.pass("output_gate", GroupOther, o, o, 3, o, qkv)
	}
	b.einsum("out", GroupProjection, o, wo, y, 1)
	b.dropoutPass("dropout1", y)
	b.postNorm("post_norm1", y)
	b.kernelPass("residual1", PassResidual, GroupOther, y, out, 1)
	return b.end()
}

// postNorm adds, for a model with PostNorms, the norm on a block's output
// y before its residual add (Gemma 2's sandwich norms,
// transformers' Gemma2DecoderLayer): its weights and a norm pass that
// keeps its input.
func (b *builder) postNorm(name string, y int) {
	if !b.p.Spec.PostNorms {
		return
	}
	b.norm(name + "_w")
	b.kernelPass(name, PassNorm, GroupNorm, y, y, 1, y)
}

// core writes the attention core o = softmax(q·kᵀ)·v over the score
// tensor sc of dimensions score, whose elements are scale scores
// (1/head_dim when a dimension spans heads·head_dim); heads is the
// dimension of the heads in the log-sum-exp. A flash kernel of a
// sliding-window or chunked variant computes the band of the square its
// span covers (Op.WorkAt) and saves what the full kernel saves (q, k, v, o
// and the log-sum-exp: the window changes which blocks run, not the
// tensors [FA2]); a materialised core computes and keeps the whole square
// and masks it, as eager implementations do.
func (b *builder) core(q, k, v, sc, o int, score []dimOf, heads dimOf, scale float64, variant Attention) {
	if b.flash {
		local, span := variant, float64(b.p.Spec.Span(variant))
		if span <= 0 {
			local = AttnFull
		}
		// The fused kernel keeps the scores on chip and saves the fp32
		// log-sum-exp per query and head [FA2].
		st := &b.p.Tensors[sc]
		st.NoComm, st.OnChip, st.Scale = true, true, scale
		lse := b.tensor("lse", ClassStat, dm(DimB, TokenBatch), dm(DimS, Seq), heads)
		b.p.Tensors[lse].Scale, b.p.Tensors[lse].NoGrad = scale, true
		b.op(Op{Kind: Einsum, Name: "scores", A: q, B: k, C: sc, Work: causalWork, Group: GroupCore, Writes: []int{lse}, Saves: []int{q, k, lse},
			Local: local, Span: span})
		// Its backward also reads the output O (D = rowsum(dO∘O), [FA2]),
		// which the output projection keeps too unless it reads an fp8 copy.
		b.einsum("attend", GroupCore, sc, v, o, causalWork, o)
		if span > 0 {
			at := &b.blk.Fwd[len(b.blk.Fwd)-1]
			at.Local, at.Span = local, span
		}
		return
	}
	// Without FlashAttention the score square is materialised in HBM and
	// computed in full (the causal mask is applied by the softmax). Softmax
	// reads and writes the scores; dropout reads them and writes its output
	// and a 1-byte mask: 4.5 score-sized passes in all ([KORT §4.1]:
	// softmax output 2as²b, dropout mask as²b, dropout output 2as²b).
	b.p.Tensors[sc].Scale = scale
	b.einsum("scores", GroupCore, q, k, sc, 1)
	sm := b.act("P_softmax", score...)
	b.p.Tensors[sm].Scale = scale
	b.pass("softmax", GroupCore, sc, sm, 2, sm)
	probs := sm
	if b.dropout {
		pd := b.act("P_dropout", score...)
		b.p.Tensors[pd].Scale = scale
		mask := b.tensor("P_mask", ClassMask, score...)
		b.p.Tensors[mask].Scale, b.p.Tensors[mask].NoGrad = scale, true
		b.op(Op{Kind: Elementwise, Name: "dropout_P", A: sm, C: pd, Bytes: 2.5, BwdBytes: 5, Group: GroupCore, Writes: []int{mask}, Saves: []int{mask}})
		probs = pd
	}
	b.einsum("attend", GroupCore, probs, v, o, 1)
}

// mlaAttention writes the attention block of multi-head latent attention
// (DeepSeek-V2 arXiv:2405.04434 §2.1; Megatron-Core's MLASelfAttention)
// for the residual stream x[B_{dp,fsdp}, S_{cp(,tp)}, D]. The
// down-projections to the query and key/value latents and the shared
// rotary key's projection are replicated over tensor parallelism, as
// Megatron-Core runs them, on the residual stream's layout: under sequence
// parallelism each chip projects its own tokens, and the up-projections,
// which tensor parallelism splits by heads, all-gather the latents, not the
// residual stream. The core runs at its own head widths: the scores over
// qk_nope + qk_rope, the attention over v_head_dim.
func (b *builder) mlaAttention(variant Attention) int {
	s := &b.p.Spec
	m := s.MLA
	b.begin("attention")
	b.blk.Attention = variant
	tok, res, seq := dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimS, Seq)
	heads, kvSeq := dm(DimA, Width), dm(DimT, Seq)
	x := b.residual("x")
	b.blk.Input = x
	xn := b.act("xn", tok, res, dm(DimD, Replicated))
	q := b.act("q", tok, seq, heads, dm(DimDqk, Replicated))
	ckv := b.act("ckv", tok, res, dm(DimCkv, Replicated))
	ckvn := b.act("ckvn", tok, res, dm(DimCkv, Replicated))
	kv := b.act("kv", tok, seq, heads, dm(DimDkv, Replicated))
	k := b.act("k", tok, kvSeq, heads, dm(DimDqk, Replicated))
	v := b.act("v", tok, kvSeq, heads, dm(DimDv, Replicated))
	score := []dimOf{tok, heads, seq, kvSeq}
	sc := b.act("P", score...)
	o := b.act("o", tok, seq, heads, dm(DimDv, Replicated))
	y := b.act("y", tok, res, dm(DimD, Replicated))
	b.norm("norm1_w")
	b.kernelPass("norm1", PassNorm, GroupNorm, x, xn, 1, x)
	// Two projections read the normalised input (Hugging Face's q_a_proj
	// and kv_a_proj_with_mqa).
	b.projectionCopies(xn, 2)
	if m.QLoRARank > 0 {
		wdq := b.weight("Wdq", false, dm(DimD, WeightEmbed), dm(DimCq, Replicated))
		cq := b.act("cq", tok, res, dm(DimCq, Replicated))
		cqn := b.act("cqn", tok, res, dm(DimCq, Replicated))
		b.normOver("q_norm_w", DimCq)
		wuq := b.weight("Wuq", false, dm(DimCq, WeightEmbed), heads, dm(DimDqk, Replicated))
		b.einsum("q_down", GroupProjection, xn, wdq, cq, 1)
		b.kernelPass("q_norm", PassNorm, GroupNorm, cq, cqn, 1, cq)
		b.einsum("q_up", GroupProjection, cqn, wuq, q, 1)
	} else {
		wq := b.weight("Wq", false, dm(DimD, WeightEmbed), heads, dm(DimDqk, Replicated))
		b.einsum("q_proj", GroupProjection, xn, wq, q, 1)
	}
	wdkv := b.weight("Wdkv", false, dm(DimD, WeightEmbed), dm(DimCkv, Replicated))
	b.normOver("kv_norm_w", DimCkv)
	wukv := b.weight("Wukv", false, dm(DimCkv, WeightEmbed), heads, dm(DimDkv, Replicated))
	b.einsum("kv_down", GroupProjection, xn, wdkv, ckv, 1)
	b.kernelPass("kv_norm", PassNorm, GroupNorm, ckv, ckvn, 1, ckv)
	b.einsum("kv_up", GroupProjection, ckvn, wukv, kv, 1)
	n, qk, rope := float64(s.Heads), float64(m.QKHeadDim()), float64(m.QKRopeHeadDim)
	if m.QKRopeHeadDim > 0 {
		// The rotary key, one for all heads: the sequence the heads need is
		// gathered after the projection (Megatron-Core gathers k_pos_emb).
		wkr := b.weight("Wkr", false, dm(DimD, WeightEmbed), dm(DimDr, Replicated))
		kr := b.act("k_rope", tok, seq, dm(DimDr, Replicated))
		b.einsum("k_rope", GroupProjection, xn, wkr, kr, 1)
		// The rotary embedding touches the rope columns of q and the shared key.
		b.kernelPass("rope", b.ropePass(), GroupOther, q, q, (n*rope+rope)/(n*qk))
	}
	// k = [k_nope, k_rope broadcast over the heads] and v are written out of
	// kv and the shared key: read kv and the key, write k and v
	// (Megatron-Core's torch.cat or fused MLA rope kernel), in units of kv;
	// the backward pass moves the same bytes.
	nopeV := float64(m.QKNopeHeadDim + m.VHeadDim)
	moved := (n*nopeV + rope + n*qk + n*float64(m.VHeadDim)) / (n * nopeV)
	b.op(Op{Kind: Elementwise, Name: "kv_split", A: kv, C: k, Bytes: moved, BwdBytes: moved, Group: GroupOther, Writes: []int{v}})
	b.core(q, k, v, sc, o, score, heads, 1, variant)
	wo := b.weight("Wo", false, heads, dm(DimDv, Replicated), dm(DimD, WeightEmbed))
	b.einsum("out", GroupProjection, o, wo, y, 1)
	b.dropoutPass("dropout1", y)
	b.postNorm("post_norm1", y)
	b.kernelPass("residual1", PassResidual, GroupOther, y, b.mid, 1)
	return b.end()
}

// mlp writes the dense MLP block: GELU with two matrices or SwiGLU with a
// fused gate and up projection [SHOE].
func (b *builder) mlp() int {
	b.begin("mlp")
	x := b.mid
	b.blk.Input = x
	xn := b.act("xn2", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))
	win := b.weight("Win", false, dm(DimD, WeightEmbed), dm(DimF2, Width))
	h := b.act("h", dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimF2, Width))
	a := b.act("a", dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimF, Width))
	wout := b.weight("Wout", false, dm(DimF, Width), dm(DimD, WeightEmbed))
	y := b.act("y2", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))
	out := b.residual("x3")
	b.norm("norm2_w")
	if b.p.Spec.Bias {
		b.param("b_in", false, 1, dm(DimF2, Width))
		b.param("b_out", false, 1, dm(DimD, WeightEmbed))
	}
	b.kernelPass("norm2", PassNorm, GroupNorm, x, xn, 1, x)
	b.projectionCopies(xn, 2)
	b.einsum("ffn_in", GroupProjection, xn, win, h, 1)
	if b.p.Spec.FFN == SwiGLU {
		b.separate("ffn_in", 2) // gate and up
	}
	b.kernelPass("act", PassAct, GroupActivation, h, a, 1, h)
	b.einsum("ffn_out", GroupProjection, a, wout, y, 1)
	b.dropoutPass("dropout2", y)
	b.postNorm("post_norm2", y)
	b.kernelPass("residual2", PassResidual, GroupOther, y, out, 1)
	return b.end()
}

// moe writes the mixture-of-experts block: router, top-k, dispatch to the
// experts (an all-to-all over ep), the expert MLPs, combine, and the shared
// experts ([MEG-MOE], docs/formulas.md §3.5).
func (b *builder) moe() int {
	e := b.p.Spec.MoE
	b.begin("moe")
	x := b.mid
	b.blk.Input = x
	xn := b.act("xn2", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))
	wr := b.weight("Wrouter", false, dm(DimD, WeightEmbed), dm(DimEr, Replicated))
	lg := b.act("router_logits", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimEr, Replicated))
	probs := b.tensor("router_probs", ClassStat, dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimEr, Replicated))
	xk := b.act("xk", dm(DimB, MoEBatch), dm(DimS, MoESeq), dm(DimR, Replicated), dm(DimD, Replicated))
	xe := b.act("xe", dm(DimE, Experts), dm(DimC, ExpertSlots), dm(DimD, Replicated))
	// The experts' FFN width: split over tp (etp = tp) or whole (etp = 1).
	ew := Width
	if b.p.Options.ExpertsWhole {
		ew = Replicated
	}
	wei := b.weight("We_in", true, dm(DimE, Experts), dm(DimD, ExpertEmbed), dm(DimFe2, ew))
	he := b.act("he", dm(DimE, Experts), dm(DimC, ExpertSlots), dm(DimFe2, ew))
	ae := b.act("ae", dm(DimE, Experts), dm(DimC, ExpertSlots), dm(DimFe, ew))
	weo := b.weight("We_out", true, dm(DimE, Experts), dm(DimFe, ew), dm(DimD, ExpertEmbed))
	ye := b.act("ye", dm(DimE, Experts), dm(DimC, ExpertSlots), dm(DimD, Replicated))
	yk := b.act("yk", dm(DimB, MoEBatch), dm(DimS, MoESeq), dm(DimR, Replicated), dm(DimD, Replicated))
	ym := b.act("ym", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))
	out := b.residual("x3")
	copies := b.p.Size[DimR]
	b.norm("norm2_w")
	bias := b.p.Spec.Bias || e.Bias
	if bias {
		b.param("be_in", true, 1, dm(DimE, Experts), dm(DimFe2, ew))
		b.param("be_out", true, 1, dm(DimE, Experts), dm(DimD, ExpertEmbed))
	}

	b.kernelPass("norm2", PassNorm, GroupNorm, x, xn, 1, x)
	b.einsum("router", GroupProjection, xn, wr, lg, 1)
	// Top-k over the logits; the fp32 routing probabilities are saved [MEG-MOE].
	b.op(Op{Kind: Elementwise, Name: "topk", A: lg, C: probs, Bytes: 2, BwdBytes: 4, Group: GroupOther, Saves: []int{probs}})
	// Copy each token to its top_k·capacity slots: read and write them.
	b.pass("permute", GroupOther, xn, xk, 2*copies)
	sent := xk
	if r := b.p.Options.FP8; r != nil && r.Dispatch && b.fp8Eligible("expert_in", GroupProjection, wei) {
		// The dispatch carries the fp8 tokens the experts read [DSV3 §3.3.2].
		sent = b.fp8Input(xk)
		b.p.Tensors[xe].Class = ClassFP8
	}
	b.op(Op{Kind: Reshard, Name: "dispatch", A: sent, C: xe, Same: same(map[Dim][]Dim{DimB: {DimC}, DimS: {DimC}, DimR: {DimC}})})
	b.einsum("expert_in", GroupProjection, xe, wei, he, 1)
	if e.SwiGLULimit > 0 {
		// The clamp of the activation's input (MoE.SwiGLULimit), as the
		// framework runs it: in the fused activation, or eager kernels
		// before it that keep a clamped copy for its backward.
		b.kernelPass("expert_clamp", PassActClamp, GroupActivation, he, he, 1)
	}
	b.kernelPass("expert_act", PassAct, GroupActivation, he, ae, 1, he)
	b.einsum("expert_out", GroupProjection, ae, weo, ye, 1)
	if bias {
		// The down-projection's bias, as the framework adds it (the
		// up-projection's rides in its GEMM's epilogue or the fused
		// activation).
		b.kernelPass("expert_bias", PassExpertBias, GroupOther, ye, ye, 1)
	}
	b.op(Op{Kind: Reshard, Name: "combine", A: ye, C: yk, Same: same(map[Dim][]Dim{DimC: {DimB, DimS, DimR}})})
	if b.p.Options.Kernels.WeightedExperts {
		// The copies come weighted from the experts: their sum keeps
		// nothing for its backward (Kernels.WeightedExperts).
		b.pass("unpermute", GroupOther, yk, ym, 2)
	} else {
		// The weighted sum over the copies needs them for the routing weights' gradient.
		b.pass("unpermute", GroupOther, yk, ym, 2, yk)
	}
	if e.SharedExperts > 0 {
		wsi := b.weight("Ws_in", false, dm(DimD, WeightEmbed), dm(DimFs2, Width))
		hs := b.act("hs", dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimFs2, Width))
		as := b.act("as", dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimFs, Width))
		wso := b.weight("Ws_out", false, dm(DimFs, Width), dm(DimD, WeightEmbed))
		ys := b.act("ys", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))
		if b.p.Spec.Bias {
			b.param("bs_in", false, 1, dm(DimFs2, Width))
			b.param("bs_out", false, float64(e.SharedExperts), dm(DimD, WeightEmbed))
		}
		b.einsum("shared_in", GroupProjection, xn, wsi, hs, 1)
		b.kernelPass("shared_act", PassAct, GroupActivation, hs, as, 1, hs)
		b.einsum("shared_out", GroupProjection, as, wso, ys, 1)
	}
	b.postNorm("post_norm2", ym)
	b.kernelPass("residual2", PassResidual, GroupOther, x, out, 1)
	return b.end()
}

// mtp writes a multi-token-prediction module's own ops (DeepSeek-V3
// arXiv:2412.19437 §2.2; Megatron-Core's MultiTokenPredictionLayer): the
// lookup of the tokens one further ahead in the shared embedding (a copy of
// it on the last pipeline stage, like a tied output layer's), the norms of
// that embedding and of the previous depth's hidden state, their
// concatenation and the projection M from 2h to h, which writes layerInput,
// the input of the module's transformer layer. Megatron-Core splits M's
// columns over tensor parallelism and gathers its output; here it is
// replicated over tp on the residual stream's layout, like MLA's
// down-projections (no collective; each chip projects its own tokens under
// sequence parallelism). The module's final norm and output head are the
// output block, run again; its own final-norm weights are listed here.
func (b *builder) mtp(layerInput int) int {
	p := b.p
	b.begin("mtp")
	tok, res := dm(DimB, TokenBatch), dm(DimS, ResidualSeq)
	h := b.residual("h_mtp")
	b.blk.Input = h
	ids := b.tensor("ids_mtp", ClassIndex, tok, dm(DimS, Seq))
	oh := b.tensor("onehot_mtp", ClassVirtual, tok, dm(DimS, Seq), dm(DimV, Replicated))
	for _, t := range []int{ids, oh} {
		p.Tensors[t].NoComm, p.Tensors[t].NoGrad = true, true
	}
	wemb := b.tensor("Wemb", ClassWeight, dm(DimV, Width), dm(DimD, WeightEmbed))
	p.Tensors[wemb].Weight = true // the embedding's copy: not a parameter of its own
	e := b.residual("e_mtp")
	en := b.act("en", tok, res, dm(DimD, Replicated))
	hn := b.act("hn", tok, res, dm(DimD, Replicated))
	cat := b.act("eh", tok, res, dm(DimD2, Replicated))
	wm := b.weight("Wmtp", false, dm(DimD2, WeightEmbed), dm(DimD, Replicated))
	b.norm("mtp_enorm_w")
	b.norm("mtp_hnorm_w")
	b.norm("mtp_norm_f_w")
	b.op(Op{Kind: Einsum, Name: "embed", A: oh, B: wemb, C: e, Work: 0, Group: GroupProjection, Saves: []int{ids}})
	b.kernelPass("lookup", PassLookup, GroupOther, e, e, 1)
	b.kernelPass("enorm", PassNorm, GroupNorm, e, en, 1, e)
	b.kernelPass("hnorm", PassNorm, GroupNorm, h, hn, 1, h)
	// Read both normalised halves, write the concatenation (2 + 2 units of
	// hn); backward, the reverse.
	b.op(Op{Kind: Elementwise, Name: "concat", A: hn, C: cat, Bytes: 4, BwdBytes: 4, Group: GroupOther})
	b.einsum("mtp_proj", GroupProjection, cat, wm, layerInput, 1)
	return b.end()
}

// embedding writes the embedding lookup, as onehot[B,S,V]·Wemb[V,D] with
// no FLOPs so that the vocabulary-parallel reduction falls out of rule 3
// ([MEG-TP]); the backward pass needs the int64 token ids.
func (b *builder) embedding() int {
	b.begin("embedding")
	ids := b.tensor("ids", ClassIndex, dm(DimB, TokenBatch), dm(DimS, Seq))
	b.blk.Input = ids
	b.p.Tensors[ids].NoComm, b.p.Tensors[ids].NoGrad = true, true
	oh := b.tensor("onehot", ClassVirtual, dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimV, Replicated))
	b.p.Tensors[oh].NoComm, b.p.Tensors[oh].NoGrad = true, true
	wemb := b.weight("Wemb", false, dm(DimV, Width), dm(DimD, WeightEmbed))
	x0 := b.residual("x0")
	b.op(Op{Kind: Einsum, Name: "embed", A: oh, B: wemb, C: x0, Work: 0, Group: GroupProjection, Saves: []int{ids}})
	b.kernelPass("lookup", PassLookup, GroupOther, x0, x0, 1)
	b.dropoutPass("dropout_emb", x0)
	return b.end()
}

// output writes the final norm, the output layer and the loss: logits =
// xf·Wlm (the embedding when tied); the vocabulary-parallel cross-entropy
// reduces max, sum-exp and target logit over V (three fp32 values per
// token, 12 bytes) [MEG-TP]; the softmax is memory-bound on fp32 logits,
// which are saved for the backward pass [MEG-MEM].
func (b *builder) output() int {
	p := b.p
	b.begin("output")
	xf := b.residual("xf")
	b.blk.Input = xf
	xfn := b.act("xfn", dm(DimB, TokenBatch), dm(DimS, ResidualSeq), dm(DimD, Replicated))
	var wlm int
	if p.Spec.TiedEmbeddings {
		wlm = b.tensor("Wemb", ClassWeight, dm(DimV, Width), dm(DimD, WeightEmbed))
		p.Tensors[wlm].Weight = true // the embedding's copy: not a parameter of its own
	} else {
		wlm = b.weight("Wlm", false, dm(DimD, WeightEmbed), dm(DimV, Width))
	}
	logits := b.act("logits", dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimV, Width))
	// What the cross-entropy keeps of each logit for its backward pass, and
	// the gradient its backward holds, are the framework's (Kernels).
	loss := b.p.Options.Kernels.Passes[PassLoss]
	l32 := b.tensor("logits_kept", ClassRaw, dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimV, Width))
	p.Tensors[l32].Scale = loss.SavedBytes
	dl := b.tensor("dlogits_live", ClassRaw, dm(DimB, TokenBatch), dm(DimS, Seq), dm(DimV, Width))
	p.Tensors[dl].Scale, p.Tensors[dl].NoGrad, p.Tensors[dl].NoComm = loss.TransientBytes, true, true
	ones := b.tensor("ones", ClassVirtual, dm(DimV, Replicated))
	p.Tensors[ones].NoComm, p.Tensors[ones].NoGrad = true, true
	lse := b.tensor("loss_stats", ClassStat, dm(DimB, TokenBatch), dm(DimS, Seq))
	p.Tensors[lse].Scale = 3 // max, sum-exp and the target logit
	b.norm("norm_f_w")
	b.kernelPass("norm_f", PassNorm, GroupNorm, xf, xfn, 1, xf)
	b.einsum("logits", GroupProjection, xfn, wlm, logits, 1)
	if p.Spec.LogitSoftcap > 0 {
		// c·tanh(logits/c) before the loss (Gemma 2): the framework's pass.
		b.kernelPass("softcap", PassSoftcap, GroupOther, logits, logits, 1)
	}
	// The cross-entropy over bf16 logits keeps fp32 softmax statistics of
	// every logit for its backward pass (Megatron's exp-logits, eager
	// PyTorch's log-softmax output) [MEG-MEM].
	elem := p.ElemBytes(logits)
	b.op(Op{Kind: Elementwise, Name: "xent", A: logits, C: l32, Bytes: loss.FwdBytes / elem, BwdBytes: loss.BwdBytes / elem,
		Group: GroupOther, Writes: []int{dl}, Saves: []int{l32}})
	idx := b.end()
	// The loss statistics' reduction has no backward (each rank keeps them).
	blk := &p.Blocks[idx]
	blk.Fwd = append(blk.Fwd, Op{Kind: Einsum, Name: "loss_stats", A: logits, B: ones, C: lse, Work: 0, Group: GroupOther, Sibling: -1, SiblingIn: -1})
	return idx
}

// same turns a dimension-folding map into Op.Same bit sets.
func same(m map[Dim][]Dim) [NumDim]uint32 {
	var out [NumDim]uint32
	for k, vs := range m {
		for _, v := range vs {
			out[k] |= 1 << v
		}
	}
	return out
}

// gradOf returns (creating) the gradient tensor of t: the same dimensions;
// a weight's gradient is of ClassGradient.
func (b *builder) gradOf(t int) int {
	p := b.p
	if p.Tensors[t].Grad >= 0 {
		return p.Tensors[t].Grad
	}
	g := p.Tensors[t]
	g.Name = "d" + g.Name
	g.Grad, g.Primal = -1, t
	g.Weight, g.Expert, g.FP8Copy = false, false, false
	switch {
	case p.Tensors[t].Weight:
		g.Class = ClassGradient
	case g.Class == ClassFP8:
		g.Class = ClassActivation // the gradient of an fp8 copy is the bf16 gradient of its source
	}
	p.Tensors = append(p.Tensors, g)
	id := len(p.Tensors) - 1
	p.Tensors[t].Grad = id
	return id
}

// derive builds the backward pass of blk by transposition: for C = A·B,
// dA = dC·Bᵀ and dB = Aᵀ·dC (docs/design.md, [SB-SHARD]); a reshard transposes
// to the inverse reshard; an elementwise pass to one of twice its bytes on
// the input's gradient (read the gradient and the saved input, write the
// gradient). Flash attention's backward recomputes the scores once more
// (docs/formulas.md §1.2 [FA2]).
func (b *builder) derive(blk *Block) {
	p := b.p
	for i := len(blk.Fwd) - 1; i >= 0; i-- {
		f := blk.Fwd[i]
		switch f.Kind {
		case Einsum:
			if f.Name == "scores" && p.Tensors[f.C].OnChip {
				r := f
				r.Name = "scores (flash bwd recompute)"
				r.HardwareOnly, r.Writes, r.Saves = true, nil, nil
				blk.Bwd = append(blk.Bwd, r)
			}
			dc := b.gradOf(f.C)
			first := len(blk.Bwd)
			if !p.Tensors[f.A].NoGrad {
				blk.Bwd = append(blk.Bwd, Op{Kind: Einsum, Name: "d" + f.Name + "/d" + p.Tensors[f.A].Name,
					A: dc, B: f.B, C: b.gradOf(f.A), Work: f.Work, Group: f.Group, FP8: f.FP8, Calls: f.Calls, Sibling: -1, SiblingIn: f.B, Local: f.Local, Span: f.Span, Scan: f.Scan})
			}
			if !p.Tensors[f.B].NoGrad {
				blk.Bwd = append(blk.Bwd, Op{Kind: Einsum, Name: "d" + f.Name + "/d" + p.Tensors[f.B].Name,
					A: f.A, B: dc, C: b.gradOf(f.B), Work: f.Work, Group: f.Group, FP8: f.FP8, Sibling: -1, SiblingIn: f.A, Local: f.Local, Span: f.Span, Scan: f.Scan})
			}
			if len(blk.Bwd)-first == 2 {
				blk.Bwd[first].Sibling = first + 1
				blk.Bwd[first+1].Sibling = first
			}
		case Reshard:
			o := Op{Kind: Reshard, Name: "d" + f.Name, A: b.gradOf(f.C), B: -1, C: b.gradOf(f.A), Group: f.Group, Sibling: -1, SiblingIn: -1}
			for from, to := range f.Same {
				for d := Dim(0); d < NumDim; d++ {
					if to&(1<<d) != 0 {
						o.Same[d] |= 1 << Dim(from)
					}
				}
			}
			blk.Bwd = append(blk.Bwd, o)
		case Elementwise:
			if f.Bytes == 0 && f.BwdBytes == 0 {
				continue // fused into a neighbour (dropout): no pass of its own
			}
			g := b.gradOf(f.A)
			blk.Bwd = append(blk.Bwd, Op{Kind: Elementwise, Name: "d" + f.Name, A: g, B: -1, C: g, Bytes: f.BwdBytes, Group: f.Group, Sibling: -1, SiblingIn: -1, Scan: f.Scan})
		}
	}
}
