package model

// The layer program: a transformer as a short program of einsums over named
// dimensions, elementwise passes and layout changes (docs/design.md
// "Communication is derived"; docs/formulas.md §1-3). It is the one
// description of a layer: package cost derives FLOPs, bytes and collectives
// from it, package memory the weights and the activations each recompute
// policy saves.

import "slices"

// Dim is a named dimension of the layer program.
type Dim uint8

// The dimensions of the layer program. B, S, T and C take their sizes from
// the workload; the others from the model.
const (
	DimB   Dim = iota // batch (sequences)
	DimS              // query sequence
	DimT              // key/value sequence (S renamed for the score square)
	DimD              // model width h
	DimQ              // query projection, heads·head_dim
	DimN              // heads·head_dim in the attention core (q wide)
	DimK              // key/value projection, kv_heads·head_dim
	DimH              // fused query, key and value projection q + 2kv
	DimF              // dense MLP width
	DimF2             // fused gate and up projection (2F gated, F plain)
	DimE              // experts
	DimEr             // experts as the router's output width
	DimC              // expert token slots (batch·seq·top_k·capacity/experts)
	DimR              // routed copies of a token (top_k·capacity)
	DimFe             // expert MLP width
	DimFe2            // fused expert gate and up projection
	DimFs             // shared-expert MLP width (all shared experts)
	DimFs2            // fused shared-expert gate and up projection
	DimV              // vocabulary
	DimA              // attention heads (multi-head latent attention)
	DimCq             // MLA query latent, q_lora_rank
	DimCkv            // MLA key/value latent, kv_lora_rank
	DimDqk            // MLA query-key head width, qk_nope + qk_rope
	DimDv             // MLA value head width
	DimDkv            // MLA key/value up-projection per head, qk_nope + v
	DimDr             // MLA rotary key width, qk_rope (shared by the heads)
	DimD2             // the multi-token-prediction projection's input, 2h
	DimLz             // a state-space or linear-attention mixer's in-projection width (Spec.SSMInProjWidth)
	DimLc             // its short convolution's channels (Spec.SSMConvWidth)
	DimLv             // its value width, heads·head_dim (Mamba-2's d_inner)
	DimLk             // its key width, groups·d_state (Mamba-2) or key heads·key_dim (Gated DeltaNet)
	NumDim
)

// dimNames are the letters of the notation of `plan explain`.
func dimNames() [NumDim]string {
	return [NumDim]string{"B", "S", "T", "D", "Q", "N", "K", "H", "F", "F2", "E", "E", "C", "R", "Fe", "Fe2", "Fs", "Fs2", "V",
		"A", "Cq", "Ckv", "Dqk", "Dv", "Dkv", "Dr", "D2", "Lz", "Lc", "Lv", "Lk"}
}

// String returns the dimension's letter in the notation of `plan explain`.
func (d Dim) String() string {
	if d >= NumDim {
		return "?"
	}
	return dimNames()[d]
}

// Logical says what a tensor dimension holds, so that a strategy can say
// which of its parallel dimensions shard it (package space maps them, like
// MaxText's logical axis rules).
type Logical uint8

// The logical dimensions.
const (
	Replicated  Logical = iota // never sharded
	TokenBatch                 // the batch of the dense region: dp, fsdp
	MoEBatch                   // the batch of the MoE region before dispatch: ep, edp, efsdp
	ResidualSeq                // the residual stream's sequence: cp, and tp with sequence parallelism
	Seq                        // the sequence of inner tensors (q, k, v, MLP): cp
	Width                      // heads, MLP width, vocabulary: tp
	WeightEmbed                // a weight's model dimension: fsdp (ZeRO-3)
	ExpertEmbed                // a routed expert weight's model dimension: expert fsdp
	Experts                    // the experts: ep
	ExpertSlots                // expert token slots after dispatch: edp, efsdp, cp, tp's expert part (tpe) with sequence parallelism
	MoESeq                     // the MoE region's sequence before dispatch and after combine: cp, tp's expert part (tpe) with sequence parallelism
	NumLogical
)

// MaxRank is the largest number of dimensions of a tensor.
const MaxRank = 4

// Class says what a tensor's elements are, which sets their size through
// the Precision table.
type Class uint8

// Tensor classes.
const (
	ClassActivation Class = iota // activations and their gradients: Precision.Activation
	ClassWeight                  // a weight as the matmuls read it: Precision.Weight
	ClassGradient                // a weight's gradient, accumulated and reduced: Precision.Grad
	ClassStat                    // fp32 statistics (log-sum-exp, router probabilities, fp32 logits): 4 bytes
	ClassMask                    // dropout masks: 1 byte
	ClassIndex                   // token ids: int64, 8 bytes
	ClassVirtual                 // one-hot matrices and constants that never exist in memory: 0 bytes
	ClassResidual                // the residual stream and its gradient: Precision.Residual
	ClassRaw                     // a framework's own intermediates, sized by Scale in bytes per element: 1 byte
	ClassFP8                     // fp8 copies of matmul inputs (FP8Recipe): FP8Recipe.Bytes, 1 byte but for NVFP4
)

// Tensor is a named array of the program.
type Tensor struct {
	// Name is the tensor's name in `plan explain`.
	Name string
	// Rank is the number of dimensions.
	Rank int
	// Dims are the named dimensions, outermost first.
	Dims [MaxRank]Dim
	// Logical says what each dimension holds.
	Logical [MaxRank]Logical
	// Count are the dimensions whose sizes count the elements: Dims, except
	// that the keys and values of grouped-query attention have N dimensions
	// of size K.
	Count [MaxRank]Dim
	// Class sets the element size.
	Class Class
	// Scale multiplies the element count: 1, or 1/head_dim for per-head
	// arrays indexed by an N dimension (scores, log-sum-exp).
	Scale float64
	// Weight marks a parameter (its gradient accumulates over micro-batches).
	Weight bool
	// Expert marks a routed-expert parameter (reduced over expert data parallelism).
	Expert bool
	// FP8Copy marks a weight an fp8 matmul reads: the recipe keeps an fp8
	// copy and its transpose of it (FP8Recipe).
	FP8Copy bool
	// Bucketed marks a small parameter no matmul reads (norm weights,
	// biases): it travels in the gradient and parameter buckets of the
	// block's matmul weights, with no collective of its own [MEG-DDP].
	Bucketed bool
	// Shared marks a weight of a shared transformer block (Spec.Shared):
	// the layers of one kind that invoke the block hold it once per
	// pipeline stage, not once per layer (package memory counts it
	// min(layers, 1) times per stage; Counts once for the model).
	Shared bool
	// NoComm marks a tensor that is never communicated (flash-attention
	// scores, one-hot token ids).
	NoComm bool
	// NoGrad marks a tensor that needs no gradient (ids, constants).
	NoGrad bool
	// OnChip marks a tensor that never reaches HBM (flash-attention scores).
	OnChip bool
	// Grad is the index of the gradient tensor, -1 if none.
	Grad int
	// Primal is, for a gradient, the index of the tensor it is the gradient of, else -1.
	Primal int
}

// OpKind is what an op does.
type OpKind uint8

// Op kinds.
const (
	Einsum      OpKind = iota // C = A·B over the union of their dimensions, contracting those absent from C
	Reshard                   // C = A in another layout (MoE dispatch and combine)
	Elementwise               // a memory-bound pass over A (norms, activations, residual adds, the loss)
)

// Group says what an op is, for recompute policies: a policy re-runs the
// ops of some groups in the backward pass instead of saving their outputs.
type Group uint8

// Op groups.
const (
	GroupProjection Group = iota // matmuls with weights
	GroupCore                    // the attention core: scores, softmax, dropout on the scores, attention over V
	GroupNorm                    // normalisation layers
	GroupActivation              // MLP activation functions
	GroupOther                   // rotary embedding, residual adds, dropout, routing, the loss
	NumGroups
)

// Op is one step of the program.
type Op struct {
	// Kind is Einsum, Reshard or Elementwise.
	Kind OpKind
	// Name is the op's name in `plan explain`.
	Name string
	// A and B are the operands (B is -1 for Reshard and Elementwise), C the result.
	A, B, C int
	// Work multiplies 2·Π(dimension sizes), the FLOPs of an einsum, for the
	// work its kernel does: 0.5 for a causal flash-attention kernel, 0 for
	// a lookup.
	Work float64
	// Bytes is an elementwise pass's HBM traffic in units of A's bytes;
	// BwdBytes that of the pass the backward pass derives from it.
	Bytes, BwdBytes float64
	// Group is what the op is, for recompute policies.
	Group Group
	// HardwareOnly marks extra work of a kernel that counts no model FLOPs
	// (flash attention's backward recomputes the scores).
	HardwareOnly bool
	// Local and Span mark a flash kernel of sliding-window or chunked
	// attention over Span tokens: its Work depends on the sequence
	// (WorkAt); AttnFull and 0 otherwise.
	Local Attention
	Span  float64
	// FP8 marks an einsum that runs at the chip's fp8 rate (FP8Recipe).
	FP8 bool
	// Calls is the number of separate matmuls a projection stands for that
	// read the same input (Kernels.SeparateProjections); 0 or 1 is one.
	// Its input-gradient einsum then writes Calls outputs that a memory-
	// bound pass sums, reading each and writing one.
	Calls int
	// Scan marks an op of a state-space or linear-attention scan (a
	// Mamba-2 or Gated DeltaNet chunked scan): the time breakdown shows
	// them apart from the attention core.
	Scan bool
	// Sibling is, in the backward pass, the other einsum derived from the
	// same forward einsum (dA and dB), or -1; SiblingIn is this one's
	// operand that is not the incoming gradient, or -1.
	Sibling, SiblingIn int
	// Same, for a Reshard, holds for every input dimension the bit set of
	// output dimensions it folds into (B, S and R into C for the MoE dispatch).
	Same [NumDim]uint32
	// Writes lists the tensors the op writes besides C: side outputs (the
	// flash kernel's log-sum-exp, dropout masks) and views of C (rotary
	// embedding writes q, k and v, the column blocks of qkv).
	Writes []int
	// Saves lists the tensors the op's backward needs that are not weights:
	// its inputs, its output (softmax) or what it writes (log-sum-exp,
	// dropout masks). A recompute policy keeps or drops them; see
	// Program.Saved.
	Saves []int
}

// WorkAt returns the op's Work for sequences of seq tokens: Work, or for a
// sliding-window or chunked flash kernel the share of the score square its
// band covers (LocalWork).
func (o *Op) WorkAt(seq float64) float64 {
	if o.Span <= 0 {
		return o.Work
	}
	return LocalWork(o.Local, o.Span, seq)
}

// Block is a fragment of the program with its derived backward pass: one
// layer's attention, its MLP or mixture of experts, the embedding, the
// output layer.
type Block struct {
	// Name is "attention", "mamba2", "gdn", "mlp", "moe", "embedding" or "output".
	Name string
	// Fwd is the forward pass, Bwd its transposition.
	Fwd, Bwd []Op
	// Weights are the block's parameter tensors.
	Weights []int
	// Input is the block's input tensor (the residual stream).
	Input int
	// Attention is an attention block's variant (AttnFull for the others).
	Attention Attention
}

// KindMTP is the LayerKind name of a multi-token-prediction module, which
// runs after the stack rather than in it.
const KindMTP = "mtp"

// LayerKind is one kind of transformer layer: the blocks it runs.
type LayerKind struct {
	// Name is "dense", "moe" or "mtp" (a multi-token-prediction module: its
	// own block, then the blocks of the stack's last layer kind), prefixed
	// by "sliding " or "chunked " for a layer of local attention, by
	// "mamba2 " or "gdn " for a state-space or linear-attention mixer,
	// "mlp-only " for a layer without mixer; a layer without MLP is named
	// after its mixer block ("mamba2", "attention").
	Name string
	// Blocks are indices into Program.Blocks, in order.
	Blocks []int
	// Attention is the variant of the layer's attention.
	Attention Attention
	// MoE says the layer's MLP is the mixture of experts.
	MoE bool
	// Mixer is the layer's sequence mixer (attention unless a hybrid
	// pattern says otherwise).
	Mixer Mixer
	// NoMLP says the layer has no MLP block.
	NoMLP bool
	// SharedBlock is, with Mixer MixShared, the shared block the kind's
	// layers invoke (one kind per block).
	SharedBlock int
}

// Run is a run of consecutive layers of one kind in the stack.
type Run struct {
	// Kind indexes Program.Kinds.
	Kind int
	// Count is the number of layers.
	Count int
}

// Program is the layer program of one model, built by NewProgram. It is
// read-only once built and safe for concurrent use.
type Program struct {
	// Spec is the normalised model.
	Spec Spec
	// Options are the options it was built with, defaults filled.
	Options ProgramOptions
	// Tensors are the program's arrays, referenced by index.
	Tensors []Tensor
	// Blocks are the program's fragments.
	Blocks []Block
	// Kinds are the distinct layer kinds.
	Kinds []LayerKind
	// Stack is the layers in order, as runs of one kind (DeepSeek-V3: 3
	// dense, then 58 MoE).
	Stack []Run
	// Embedding and Output index the embedding and output-layer blocks.
	Embedding, Output int
	// MTP is the multi-token-prediction modules: Count layers of kind Kind
	// (Count 0 without them) that the last pipeline stage runs after the
	// stack, each followed by the output block again (DeepSeek-V3
	// arXiv:2412.19437 §2.2; Megatron-Core places them with the output
	// layer). They are not in Stack.
	MTP Run
	// Size is the size of each model dimension; B, S, T and C are zero
	// (see Sizes).
	Size [NumDim]float64
	// CapPart and Cap describe dimensions whose sharding stops early: a
	// dimension d of size Size[d] split n ways holds
	// (Size[d]-CapPart[d])/n + CapPart[d]/min(n, Cap[d]) elements per chip.
	// The key/value heads of grouped-query attention are replicated once a
	// tensor-parallel degree exceeds their count [MEG-TP].
	CapPart [NumDim]float64
	Cap     [NumDim]int
	// cum holds, for a stack of many runs, the layers of each kind before
	// every layer (layers+1 rows of len(Kinds)); layers is the stack's length.
	cum    []int32
	layers int
}

// Sizes returns the dimension sizes for a micro-batch of batch sequences
// of seq tokens: the model's sizes with B, S, T and C filled in.
func (p *Program) Sizes(batch, seq float64) [NumDim]float64 {
	sz := p.Size
	sz[DimB] = batch
	sz[DimS], sz[DimT] = seq, seq
	sz[DimC] = batch * seq * sz[DimR] / sz[DimE]
	return sz
}

// ClassBytes returns the bytes of one element of class c under the
// program's precision.
func (p *Program) ClassBytes(c Class) float64 {
	switch c {
	case ClassActivation:
		return p.Options.Precision.Activation
	case ClassWeight:
		return p.Options.Precision.Weight
	case ClassGradient:
		return p.Options.Precision.Grad
	case ClassStat:
		return fp32Bytes
	case ClassMask:
		return 1
	case ClassIndex:
		return 8
	case ClassResidual:
		return p.Options.Precision.Residual
	case ClassFP8:
		if r := p.Options.FP8; r != nil {
			return r.Bytes()
		}
		return 1
	case ClassRaw:
		return 1
	}
	return 0
}

// ElemBytes returns the bytes of one element of tensor t under the
// program's precision, times its Scale.
func (p *Program) ElemBytes(t int) float64 {
	return p.ClassBytes(p.Tensors[t].Class) * p.Tensors[t].Scale
}

// Params returns the parameters of weight t for the dimension sizes sz:
// its elements, times its Scale.
func (p *Program) Params(t int, sz *[NumDim]float64) float64 {
	return p.FullBytes(t, sz) / p.ClassBytes(ClassWeight)
}

// FullBytes returns tensor t's unsharded size in bytes for the dimension
// sizes sz (from Sizes).
func (p *Program) FullBytes(t int, sz *[NumDim]float64) float64 {
	tt := &p.Tensors[t]
	b := p.ElemBytes(t)
	for i := 0; i < tt.Rank; i++ {
		b *= sz[tt.Count[i]]
	}
	return b
}

// CapFactor returns the factor by which dimension d's per-chip size
// exceeds Size[d]/n when it is split n ways: 1 for dimensions without a cap.
func (p *Program) CapFactor(d Dim, n int) float64 {
	c := p.Cap[d]
	if c <= 0 || n <= c || p.Size[d] <= 0 {
		return 1
	}
	size, part, fn := p.Size[d], p.CapPart[d], float64(n)
	return ((size-part)/fn + part/float64(c)) * fn / size
}

// Layers returns the number of layers of each kind in layers [from, to) of
// the stack, indexed like Kinds.
func (p *Program) Layers(from, to int) []int {
	out := make([]int, len(p.Kinds))
	p.CountLayers(from, to, out)
	return out
}

// CountLayers writes into n (of length len(Kinds)) the number of layers of
// each kind in layers [from, to) of the stack, without allocating.
func (p *Program) CountLayers(from, to int, n []int) {
	clear(n)
	if nk := len(p.Kinds); len(p.cum) > 0 && len(n) == nk {
		// Prefix counts of a stack of many runs (an alternating pattern).
		from, to = min(max(from, 0), p.layers), min(max(to, 0), p.layers)
		if to <= from {
			return
		}
		for k := range n {
			n[k] = int(p.cum[to*nk+k] - p.cum[from*nk+k])
		}
		return
	}
	at := 0
	for _, r := range p.Stack {
		lo, hi := max(from, at), min(to, at+r.Count)
		if hi > lo {
			n[r.Kind] += hi - lo
		}
		at += r.Count
	}
}

// KindStarts writes into dst the first layer of every run of the stack
// but the first (where the layer kind may change) and returns dst.
func (p *Program) KindStarts(dst []int) []int {
	at := 0
	for i, r := range p.Stack {
		if i > 0 {
			dst = append(dst, at)
		}
		at += r.Count
	}
	return dst
}

// NumLayers is the number of layers in the stack.
func (p *Program) NumLayers() int {
	n := 0
	for _, r := range p.Stack {
		n += r.Count
	}
	return n
}

// ScoreHeadDim is the head width per score of the attention core's two
// products, 4·ScoreHeadDim FLOPs per score in the forward pass: head_dim,
// or with MLA the mean of the query-key and value head widths.
func (p *Program) ScoreHeadDim() float64 {
	if m := p.Spec.MLA; m != nil {
		return float64(m.QKHeadDim()+m.VHeadDim) / 2
	}
	return float64(p.Spec.HeadDim)
}

// AttentionHeadDims returns the per-head widths of the attention core's
// two matmuls: the query-key contraction's and the values' (MLA's
// nope+rope and v head dims; HeadDim for both otherwise).
func (p *Program) AttentionHeadDims() (qk, v int) {
	if m := p.Spec.MLA; m != nil {
		return m.QKHeadDim(), m.VHeadDim
	}
	return p.Spec.HeadDim, p.Spec.HeadDim
}

// OutputRuns is how many times the last pipeline stage runs the output
// block per micro-batch: once, and once more per multi-token-prediction
// module.
func (p *Program) OutputRuns() float64 { return 1 + float64(p.MTP.Count) }

// Precision returns the program's precision table.
func (p *Program) Precision() Precision { return p.Options.Precision }

// SPGathered reports, per tensor, whether a matmul reads it all-gathered
// over tensor parallelism under sequence parallelism: an activation with the
// residual stream's sequence (ResidualSeq, which tp shards with sequence
// parallelism) that an einsum multiplies by a weight split over tp on a
// width (Width) the product keeps. It is the input of a column-parallel
// linear layer, which sequence parallelism all-gathers before the GEMM
// ([MEG-TP] §4.2.2's g; [KORT] §4.2.2).
func (p *Program) SPGathered() []bool {
	out := make([]bool, len(p.Tensors))
	for b := range p.Blocks {
		for i := range p.Blocks[b].Fwd {
			o := &p.Blocks[b].Fwd[i]
			if o.Kind != Einsum || o.B < 0 {
				continue
			}
			if p.columnInput(o.A, o.B, o.C) {
				out[o.A] = true
			}
			if p.columnInput(o.B, o.A, o.C) {
				out[o.B] = true
			}
		}
	}
	return out
}

// columnInput reports whether activation a, multiplied by weight w into
// c, is the sequence-parallel input of a column-parallel matmul
// (SPGathered).
func (p *Program) columnInput(a, w, c int) bool {
	ta, tw, tc := &p.Tensors[a], &p.Tensors[w], &p.Tensors[c]
	if ta.Weight || !tw.Weight || !slices.Contains(ta.Logical[:ta.Rank], ResidualSeq) {
		return false
	}
	for j := 0; j < tw.Rank; j++ {
		if tw.Logical[j] == Width && slices.Contains(tc.Dims[:tc.Rank], tw.Dims[j]) {
			return true
		}
	}
	return false
}
