package cost

import (
	"strings"

	"github.com/meshplan/meshplan/model"
)

// dim is a named dimension of the layer program (design.md "Communication
// is derived"): B batch, S query sequence, T key/value sequence (S renamed),
// D model, Q query heads·head_dim, N heads in the attention core (q wide), K
// kv heads·head_dim, H fused q+2kv, F ffn, F2 fused gate+up, E experts, C
// expert token slots, R routed copies per token, Fe/Fe2 expert ffn,
// Fs/Fs2 shared-expert ffn, V vocabulary.
type dim uint8

const (
	dB dim = iota
	dS
	dT
	dD
	dQ
	dN
	dK
	dH
	dF
	dF2
	dE
	dEr
	dC
	dR
	dFe
	dFe2
	dFs
	dFs2
	dV
	numDimIDs
)

var dimNames = [numDimIDs]string{"B", "S", "T", "D", "Q", "N", "K", "H", "F", "F2", "E", "E", "C", "R", "Fe", "Fe2", "Fs", "Fs2", "V"}

// class says which roles shard a tensor dimension; the strategy maps each
// class to a role set at Evaluate time (layoutOf).
type class uint8

const (
	cNone     class = iota
	cData           // token batch in the dense region: dp, fsdp
	cDataMoE        // token batch in the MoE region: ep, edp, efsdp
	cSeqResid       // sequence of residual-stream tensors: cp, and tp with SP
	cSeq            // sequence of inner tensors (q, k, v, ffn hidden): cp
	cModel          // heads, ffn, vocab: tp
	cWData          // weight model dim D: fsdp (ZeRO-3)
	cWDataE         // expert weight D: efsdp
	cExpert         // experts: ep
	cTokMoE         // expert token slots after dispatch: edp, efsdp, cp, tp with SP
	numClasses
)

const maxRank = 4

// tensor is a named array of the program.
type tensor struct {
	name      string
	rank      int
	dims      [maxRank]dim
	cls       [maxRank]class
	size      [maxRank]dim // dims for the element count (K instead of N for GQA keys)
	elemBytes float64
	weight    bool // a parameter (its gradient accumulates over micro-batches)
	expert    bool // a routed-expert parameter (reduced over edp)
	noComm    bool // never communicated (flash-attention scores, one-hot ids)
	noGrad    bool // needs no gradient (one-hot ids, constants)
	noHBM     bool // lives on chip (flash-attention scores)
	grad      int  // index of the gradient tensor, -1 if none
	// Why strings of a weight's once-per-step collectives.
	whyAR, whyRS, whyAG string
	primal              int // for a gradient: the tensor it is the gradient of, else -1
}

// opKind is einsum, reshard (layout change, e.g. MoE dispatch) or elementwise.
type opKind uint8

const (
	kEinsum opKind = iota
	kReshard
	kElementwise
)

// pass is where an op runs.
type pass uint8

const (
	pFwd pass = iota
	pBwd
	pRecompute
)

var passNames = [...]string{"fwd", "bwd", "recompute"}

// op is one step of the program: C = A·B (einsum over the union of dims,
// contracting the dims absent from C), C = reshard(A), or an elementwise op
// over A (memory-bound, bytes = hbm × A's local bytes).
type op struct {
	kind      opKind
	name      string
	a, b, c   int
	flopScale float64           // multiplies 2·Π dims (0.5 for causal attention, 0 for lookups)
	hbm       float64           // elementwise: HBM bytes as a multiple of A's local bytes
	core      bool              // attention core (re-run under selective recompute; CP hides under it)
	hwOnly    bool              // extra work of the kernel (flash backward's QKᵀ), no model FLOPs
	sibling   int               // backward: index of the other einsum of the same forward op, -1
	siblingIn int               // backward: the operand that is not the incoming gradient, -1
	same      [numDimIDs]uint32 // reshard: bit set of the output dims that input dim d folds into
	why       [numActions]string
}

// action is a communication decision of the rules, for Why strings.
type action uint8

const (
	actGatherA action = iota
	actGatherB
	actAllReduceC
	actReduceScatterC
	actGatherC
	actAllToAllC
	numActions
)

// segment is a forward program fragment with its derived backward.
type segment struct {
	fwd []op
	bwd []op
}

// program is the per-model layer program, built once per model and cached.
type program struct {
	tensors []tensor
	attn    segment
	mlp     segment // dense MLP
	moe     segment // MoE MLP (nil fwd for dense models)
	embed   segment
	head    segment
	weights struct {
		attn, mlp, moe, embed, head []int // weight tensor ids per segment
	}
	// model dimension sizes (B, S, T, C filled per Evaluate).
	size [numDimIDs]float64
}

type builder struct {
	p *program
}

func (b *builder) tensor(name string, elemBytes float64, dims ...any) int {
	t := tensor{name: name, elemBytes: elemBytes, grad: -1, primal: -1}
	for i := 0; i+1 < len(dims); i += 2 {
		t.dims[t.rank] = dims[i].(dim)
		t.size[t.rank] = dims[i].(dim)
		t.cls[t.rank] = dims[i+1].(class)
		t.rank++
	}
	b.p.tensors = append(b.p.tensors, t)
	return len(b.p.tensors) - 1
}

func (b *builder) weight(name string, expert bool, dims ...any) int {
	id := b.tensor(name, bytesWeight, dims...)
	t := &b.p.tensors[id]
	t.whyAR = "gradient of " + name + ": all-reduce over the replicas once per step, after accumulation (data parallel)"
	t.whyRS = "gradient of " + name + ": reduce-scatter over the replicas once per step (ZeRO optimizer shards)"
	t.whyAG = "parameters " + name + ": all-gather the updated shards once per step (ZeRO)"
	b.p.tensors[id].weight = true
	b.p.tensors[id].expert = expert
	return id
}

// Bytes per element [MEG-ARGS][MEG-DOPT], formulas.md §3.1: bf16 activations
// and gathered weights, fp32 gradient reductions.
const (
	bytesAct    = 2.0
	bytesWeight = 2.0
	bytesGrad   = 4.0
)

// causalWork is the fraction of the score square a causal flash kernel
// computes (it skips masked blocks; [MEG-FLOP] halves the core for the mask).
const causalWork = 0.5

// gradOf returns (creating) the gradient tensor of t: same dims and classes.
func (b *builder) gradOf(t int) int {
	p := b.p
	if p.tensors[t].grad >= 0 {
		return p.tensors[t].grad
	}
	g := p.tensors[t]
	g.name = "d" + g.name
	g.grad, g.primal = -1, t
	g.weight, g.expert = false, false
	if p.tensors[t].weight {
		g.elemBytes = bytesGrad
	}
	p.tensors = append(p.tensors, g)
	id := len(p.tensors) - 1
	p.tensors[t].grad = id
	return id
}

func (b *builder) einsum(seg *segment, name string, a, bb, c int, flopScale float64, core bool) {
	seg.fwd = append(seg.fwd, op{kind: kEinsum, name: name, a: a, b: bb, c: c, flopScale: flopScale, core: core, sibling: -1, siblingIn: -1})
}

func (b *builder) elementwise(seg *segment, name string, a int, hbm float64) {
	seg.fwd = append(seg.fwd, op{kind: kElementwise, name: name, a: a, b: -1, c: a, hbm: hbm, sibling: -1, siblingIn: -1})
}

func (b *builder) reshard(seg *segment, name string, a, c int, same map[dim][]dim) {
	o := op{kind: kReshard, name: name, a: a, b: -1, c: c, sibling: -1, siblingIn: -1}
	for k, vs := range same {
		for _, v := range vs {
			o.same[k] |= 1 << v
		}
	}
	seg.fwd = append(seg.fwd, o)
}

// needsGrad says whether the backward computes the gradient of tensor t.
func (b *builder) needsGrad(t int) bool { return !b.p.tensors[t].noGrad }

// derive builds the backward of a segment by transposition: for C = A·B,
// dA = dC·Bᵀ and dB = Aᵀ·dC (design.md, [SB-SHARD]); a reshard transposes to
// the inverse reshard; an elementwise op to one of twice the bytes (read the
// gradient and the saved input, write the gradient). Flash attention's
// backward recomputes the scores once more (formulas.md §1.2 [FA2]).
func (b *builder) derive(seg *segment) {
	for i := len(seg.fwd) - 1; i >= 0; i-- {
		f := seg.fwd[i]
		switch f.kind {
		case kEinsum:
			if f.name == "scores" && b.p.tensors[f.c].noHBM {
				r := f
				r.name = "scores (flash bwd recompute)"
				r.hwOnly = true
				seg.bwd = append(seg.bwd, r)
			}
			dc := b.gradOf(f.c)
			first := len(seg.bwd)
			if b.needsGrad(f.a) {
				seg.bwd = append(seg.bwd, op{kind: kEinsum, name: "d" + f.name + "/d" + b.p.tensors[f.a].name,
					a: dc, b: f.b, c: b.gradOf(f.a), flopScale: f.flopScale, core: f.core, sibling: -1, siblingIn: f.b})
			}
			if b.needsGrad(f.b) {
				seg.bwd = append(seg.bwd, op{kind: kEinsum, name: "d" + f.name + "/d" + b.p.tensors[f.b].name,
					a: f.a, b: dc, c: b.gradOf(f.b), flopScale: f.flopScale, core: f.core, sibling: -1, siblingIn: f.a})
			}
			if len(seg.bwd)-first == 2 {
				seg.bwd[first].sibling = first + 1
				seg.bwd[first+1].sibling = first
			}
		case kReshard:
			o := op{kind: kReshard, name: "d" + f.name, a: b.gradOf(f.c), b: -1, c: b.gradOf(f.a), sibling: -1, siblingIn: -1}
			for from, to := range f.same {
				for d := dim(0); d < numDimIDs; d++ {
					if to&(1<<d) != 0 {
						o.same[d] |= 1 << dim(from)
					}
				}
			}
			seg.bwd = append(seg.bwd, o)
		case kElementwise:
			g := b.gradOf(f.a)
			seg.bwd = append(seg.bwd, op{kind: kElementwise, name: "d" + f.name, a: g, b: -1, c: g, hbm: 2 * f.hbm, sibling: -1, siblingIn: -1})
		}
	}
}

// finish fills the Why strings of every op.
func (p *program) finish(segs ...*segment) {
	for _, s := range segs {
		for _, ops := range [][]op{s.fwd, s.bwd} {
			for i := range ops {
				o := &ops[i]
				an := p.tensors[o.a].name
				bn, cn := "", p.tensors[o.c].name
				if o.b >= 0 {
					bn = p.tensors[o.b].name
				}
				o.why[actGatherA] = o.name + ": gather " + an + " (rules 2/4: sharded on a contracting dim, or the same axis on another operand's dim)"
				o.why[actGatherB] = o.name + ": gather " + bn + " (rules 2/4: sharded on a contracting dim, or the same axis on another operand's dim)"
				o.why[actAllReduceC] = o.name + ": sum partial " + cn + " (rule 3: both operands sharded on the contracting dim; next op wants it replicated)"
				o.why[actReduceScatterC] = o.name + ": reduce-scatter partial " + cn + " (rule 3: contracting dim sharded; next op wants it sharded)"
				o.why[actGatherC] = o.name + ": gather " + cn + " (next op wants it replicated)"
				o.why[actAllToAllC] = o.name + ": move " + cn + "'s sharding to another dim (reshard)"
				if o.kind == kReshard {
					o.why[actAllToAllC] = o.name + ": " + an + " -> " + cn + " moves the expert axis from tokens to experts (reshard)"
				}
			}
		}
	}
}

// specKey is the part of model.Spec the program depends on (comparable).
type specKey struct {
	layers, hidden, heads, kvHeads, headDim, ffn, vocab int
	gated, tied                                         bool
	noFlash                                             bool
	experts, topK, expertFFN, shared, sharedFFN         int
	capacity                                            float64
}

func keyOf(m model.Spec, noFlash bool) specKey {
	k := specKey{noFlash: noFlash, layers: m.Layers, hidden: m.Hidden, heads: m.Heads, kvHeads: m.KVHeads, headDim: m.HeadDim,
		ffn: m.FFNHidden, vocab: m.Vocab, gated: m.FFN == model.SwiGLU, tied: m.TiedEmbeddings}
	if m.MoE != nil && m.MoE.Experts > 0 {
		k.experts, k.topK, k.expertFFN, k.shared, k.sharedFFN = m.MoE.Experts, m.MoE.TopK, m.MoE.ExpertFFNHidden, m.MoE.SharedExperts, m.MoE.SharedFFNHidden
		k.capacity = m.MoE.CapacityFactor
	}
	return k
}

// buildProgram writes the layer program: a pre-norm decoder block (attention
// with fused QKV and GQA, flash attention core, output projection; MLP gelu
// or swiglu with fused gate+up, or MoE with router, dispatch, experts,
// combine and shared experts), the embedding and the output layer with the
// vocab-parallel loss ([SHOE], [KORT], [MEG-TP], formulas.md §1-3).
func buildProgram(k specKey) *program {
	p := &program{}
	b := &builder{p: p}
	q := float64(k.heads * k.headDim)
	kv := float64(k.kvHeads * k.headDim)
	mats := 1.0
	if k.gated {
		mats = 2
	}
	p.size = [numDimIDs]float64{dD: float64(k.hidden), dQ: q, dN: q, dK: kv, dH: q + 2*kv,
		dF: float64(k.ffn), dF2: mats * float64(k.ffn), dV: float64(k.vocab), dE: 1, dEr: 1, dR: 1}
	if k.experts > 0 {
		cf := k.capacity
		if cf <= 0 {
			cf = 1
		}
		sf := k.sharedFFN
		if sf == 0 {
			sf = k.expertFFN
		}
		p.size[dE], p.size[dEr] = float64(k.experts), float64(k.experts)
		p.size[dR] = cf * float64(k.topK)
		p.size[dFe], p.size[dFe2] = float64(k.expertFFN), mats*float64(k.expertFFN)
		p.size[dFs], p.size[dFs2] = float64(k.shared*sf), mats*float64(k.shared*sf)
	}

	// Attention block. x[B_{dp,fsdp}, S_{cp(,tp)}, D] is the residual stream.
	s := &p.attn
	x := b.tensor("x", bytesAct, dB, cData, dS, cSeqResid, dD, cNone)
	xn := b.tensor("xn", bytesAct, dB, cData, dS, cSeqResid, dD, cNone)
	wqkv := b.weight("Wqkv", false, dD, cWData, dH, cModel)
	qkv := b.tensor("qkv", bytesAct, dB, cData, dS, cSeq, dH, cModel)
	qh := b.tensor("q", bytesAct, dB, cData, dS, cSeq, dN, cModel)
	kh := b.tensor("k", bytesAct, dB, cData, dT, cSeq, dN, cModel)
	vh := b.tensor("v", bytesAct, dB, cData, dT, cSeq, dN, cModel)
	p.tensors[kh].size[2], p.tensors[vh].size[2] = dK, dK // GQA: k, v are kv wide
	sc := b.tensor("P", bytesAct, dB, cData, dN, cModel, dS, cSeq, dT, cSeq)
	p.tensors[sc].noComm, p.tensors[sc].noHBM = true, !k.noFlash
	core := causalWork
	if k.noFlash {
		// Without FlashAttention the score square is materialised in HBM and
		// computed in full (the causal mask is applied by the softmax kernel).
		// P's N dim spans heads·head_dim so that its einsums count the right
		// FLOPs; it holds one bf16 score per head, hence head_dim per element.
		core = 1
		p.tensors[sc].elemBytes = bytesAct / float64(k.headDim)
	}
	o := b.tensor("o", bytesAct, dB, cData, dS, cSeq, dN, cModel)
	wo := b.weight("Wo", false, dN, cModel, dD, cWData)
	y := b.tensor("y", bytesAct, dB, cData, dS, cSeqResid, dD, cNone)
	b.elementwise(s, "norm1", x, 2)
	b.einsum(s, "qkv", xn, wqkv, qkv, 1, false)
	b.elementwise(s, "rope", qkv, 2)
	// q, k, v are views of qkv's columns; the core einsums see them as heads.
	b.einsum(s, "scores", qh, kh, sc, core, true)
	if k.noFlash {
		// Unfused softmax and dropout over the scores: read and write them
		// twice plus a 1-byte mask, 4.5 score-sized passes ([KORT §4.1]:
		// softmax output 2as²b, dropout mask as²b, dropout output 2as²b).
		b.elementwise(s, "softmax+dropout", sc, 4.5)
	}
	b.einsum(s, "attend", sc, vh, o, core, true)
	b.einsum(s, "out", o, wo, y, 1, false)
	b.elementwise(s, "residual1", y, 3)
	p.weights.attn = []int{wqkv, wo}
	// Views share gradients: dq, dk, dv are column blocks of dqkv.
	b.derive(s)

	// Dense MLP block.
	s = &p.mlp
	x2 := b.tensor("x2", bytesAct, dB, cData, dS, cSeqResid, dD, cNone)
	win := b.weight("Win", false, dD, cWData, dF2, cModel)
	h := b.tensor("h", bytesAct, dB, cData, dS, cSeq, dF2, cModel)
	a := b.tensor("a", bytesAct, dB, cData, dS, cSeq, dF, cModel)
	wout := b.weight("Wout", false, dF, cModel, dD, cWData)
	y2 := b.tensor("y2", bytesAct, dB, cData, dS, cSeqResid, dD, cNone)
	b.elementwise(s, "norm2", x2, 2)
	b.einsum(s, "ffn_in", x2, win, h, 1, false)
	b.elementwise(s, "act", h, 1+1/mats)
	b.einsum(s, "ffn_out", a, wout, y2, 1, false)
	b.elementwise(s, "residual2", y2, 3)
	p.weights.mlp = []int{win, wout}
	b.derive(s)

	if k.experts > 0 {
		s = &p.moe
		xm := b.tensor("x2", bytesAct, dB, cData, dS, cSeqResid, dD, cNone)
		wr := b.weight("Wrouter", false, dD, cWData, dEr, cNone)
		lg := b.tensor("router_logits", bytesAct, dB, cData, dS, cSeqResid, dEr, cNone)
		xk := b.tensor("xk", bytesAct, dB, cDataMoE, dS, cSeqResid, dR, cNone, dD, cNone)
		xe := b.tensor("xe", bytesAct, dE, cExpert, dC, cTokMoE, dD, cNone)
		wei := b.weight("We_in", true, dE, cExpert, dD, cWDataE, dFe2, cModel)
		he := b.tensor("he", bytesAct, dE, cExpert, dC, cTokMoE, dFe2, cModel)
		ae := b.tensor("ae", bytesAct, dE, cExpert, dC, cTokMoE, dFe, cModel)
		weo := b.weight("We_out", true, dE, cExpert, dFe, cModel, dD, cWDataE)
		ye := b.tensor("ye", bytesAct, dE, cExpert, dC, cTokMoE, dD, cNone)
		yk := b.tensor("yk", bytesAct, dB, cDataMoE, dS, cSeqResid, dR, cNone, dD, cNone)
		b.elementwise(s, "norm2", xm, 2)
		b.einsum(s, "router", xm, wr, lg, 1, false)
		b.elementwise(s, "topk", lg, 2)
		b.elementwise(s, "permute", xk, 2)
		b.reshard(s, "dispatch", xk, xe, map[dim][]dim{dB: {dC}, dS: {dC}, dR: {dC}})
		b.einsum(s, "expert_in", xe, wei, he, 1, false)
		b.elementwise(s, "expert_act", he, 1+1/mats)
		b.einsum(s, "expert_out", ae, weo, ye, 1, false)
		b.reshard(s, "combine", ye, yk, map[dim][]dim{dC: {dB, dS, dR}})
		b.elementwise(s, "unpermute", yk, 2)
		p.weights.moe = []int{wr, wei, weo}
		if k.shared > 0 {
			wsi := b.weight("Ws_in", false, dD, cWData, dFs2, cModel)
			hs := b.tensor("hs", bytesAct, dB, cData, dS, cSeq, dFs2, cModel)
			as := b.tensor("as", bytesAct, dB, cData, dS, cSeq, dFs, cModel)
			wso := b.weight("Ws_out", false, dFs, cModel, dD, cWData)
			ys := b.tensor("ys", bytesAct, dB, cData, dS, cSeqResid, dD, cNone)
			b.einsum(s, "shared_in", xm, wsi, hs, 1, false)
			b.elementwise(s, "shared_act", hs, 1+1/mats)
			b.einsum(s, "shared_out", as, wso, ys, 1, false)
			p.weights.moe = append(p.weights.moe, wsi, wso)
		}
		b.elementwise(s, "residual2", xm, 3)
		b.derive(s)
	}

	// Embedding: a lookup, written as onehot[B,S,V]·Wemb[V,D] with no FLOPs
	// so the vocab-parallel reduction falls out of rule 3 ([MEG-TP]).
	s = &p.embed
	ids := b.tensor("onehot", 0, dB, cData, dS, cSeq, dV, cNone)
	p.tensors[ids].noComm, p.tensors[ids].noGrad = true, true
	wemb := b.weight("Wemb", false, dV, cModel, dD, cWData)
	x0 := b.tensor("x0", bytesAct, dB, cData, dS, cSeqResid, dD, cNone)
	b.einsum(s, "embed", ids, wemb, x0, 0, false)
	b.elementwise(s, "lookup", x0, 2)
	p.weights.embed = []int{wemb}
	b.derive(s)

	// Output layer and loss: logits = xf·Wlm; the vocab-parallel cross-entropy
	// reduces max, sum-exp and target logit over V (three fp32 values per
	// token, 12 bytes) [MEG-TP]; softmax-xent is memory-bound on fp32 logits.
	s = &p.head
	xf := b.tensor("xf", bytesAct, dB, cData, dS, cSeqResid, dD, cNone)
	wlm := wemb
	if !k.tied {
		wlm = b.weight("Wlm", false, dD, cWData, dV, cModel)
		p.weights.head = []int{wlm}
	}
	logits := b.tensor("logits", bytesAct, dB, cData, dS, cSeq, dV, cModel)
	ones := b.tensor("ones", 0, dV, cNone)
	p.tensors[ones].noComm, p.tensors[ones].noGrad = true, true
	lse := b.tensor("lse", 12, dB, cData, dS, cSeq)
	b.elementwise(s, "norm_f", xf, 2)
	b.einsum(s, "logits", xf, wlm, logits, 1, false)
	b.elementwise(s, "xent", logits, 4) // bf16 logits → fp32 softmax (read 2, write 4, per element ≈ 4× bf16 bytes)
	b.derive(s)
	// The loss statistics' reduction has no backward (each rank keeps lse).
	s.fwd = append(s.fwd, op{kind: kEinsum, name: "loss_stats", a: logits, b: ones, c: lse, flopScale: 0, sibling: -1, siblingIn: -1})
	p.finish(&p.attn, &p.mlp, &p.moe, &p.embed, &p.head)
	return p
}

// layoutText renders a tensor's layout, e.g. "x[B_{dp,fsdp}, S_{cp}, D]".
func layoutText(t *tensor, l [maxRank]roleSet, partial roleSet) string {
	var sb strings.Builder
	sb.WriteString(t.name)
	sb.WriteByte('[')
	for i := 0; i < t.rank; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(dimNames[t.dims[i]])
		if l[i] != 0 {
			sb.WriteString("_{" + roleList(l[i]) + "}")
		}
	}
	sb.WriteByte(']')
	if partial != 0 {
		sb.WriteString("{U_" + roleList(partial) + "}")
	}
	return sb.String()
}

func roleList(s roleSet) string {
	var parts []string
	for r := role(0); r < numRoles; r++ {
		if s.has(r) {
			parts = append(parts, roleNames[r])
		}
	}
	return strings.Join(parts, ",")
}
