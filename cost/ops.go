package cost

import (
	"fmt"
	"strings"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// collOp is a collective kind.
type collOp uint8

const (
	opNone collOp = iota
	opAG
	opRS
	opAR
	opA2A
	opP2P
	// opA2AMoE is the MoE dispatch and combine: an AllToAll whose network
	// leg group-limited routing thins out (routing.netScale).
	opA2AMoE
)

func collNames() [7]string {
	return [...]string{"", AllGather, ReduceScatter, AllReduce, AllToAll, SendRecv, AllToAll}
}

// commClass says how a collective meets the critical path (docs/formulas.md §6).
type commClass uint8

const (
	classCritical  commClass = iota // TP/SP/CP/EP activations: on the critical path
	classWeights                    // per micro-batch weight gathers and gradient reductions (FSDP, ZeRO-2)
	classStepGrad                   // once per step gradient reduction (DP, ZeRO-1/2)
	classStepParam                  // once per step parameter gather (ZeRO-1/2)
)

// attnKernelFraction is the efficiency of a materialised attention core's
// batched matmuls (contractions over one head's 64-128 dimensions) relative
// to a GEMM of the same FLOPs, as for a flash kernel on A100 ([FA2] §4:
// 50-73% of peak vs an 87% MAMF, docs/hardware.md §4.1).
const attnKernelFraction = 0.7

// category is what an op's compute time is spent on, for the breakdown.
type category uint8

const (
	catMatmul    category = iota // matmuls with weights
	catAttention                 // the attention core
	catMemory                    // memory-bound passes and layout copies
	catScan                      // state-space and linear-attention scans (model.Op.Scan)
	// catTail is the part of catMatmul that is the matmuls' per-call
	// tails (evaluator.callTail), for the breakdown only: no op's time is
	// counted in it alone.
	catTail
	numCategories
)

// categoryOf returns op o's category.
func categoryOf(o *model.Op) category {
	switch {
	case o.Scan:
		return catScan
	case o.Group == model.GroupCore:
		return catAttention
	case o.Kind == model.Einsum:
		return catMatmul
	}
	return catMemory
}

// pass is where an op runs.
type pass uint8

const (
	pFwd pass = iota
	pBwd
	pRecompute
)

func passName(p pass) string { return [...]string{"fwd", "bwd", "recompute"}[p] }

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

// whyTexts returns the reasons of the collectives op o may cause.
func whyTexts(p *model.Program, o *model.Op) [numActions]string {
	var w [numActions]string
	an := p.Tensors[o.A].Name
	bn, cn := "", p.Tensors[o.C].Name
	if o.B >= 0 {
		bn = p.Tensors[o.B].Name
	}
	w[actGatherA] = o.Name + ": gather " + an + " (rules 2/4: sharded on a contracting dim, or the same axis on another operand's dim)"
	w[actGatherB] = o.Name + ": gather " + bn + " (rules 2/4: sharded on a contracting dim, or the same axis on another operand's dim)"
	w[actAllReduceC] = o.Name + ": sum partial " + cn + " (rule 3: both operands sharded on the contracting dim; next op wants it replicated)"
	w[actReduceScatterC] = o.Name + ": reduce-scatter partial " + cn + " (rule 3: contracting dim sharded; next op wants it sharded)"
	w[actGatherC] = o.Name + ": gather " + cn + " (next op wants it replicated)"
	w[actAllToAllC] = o.Name + ": move " + cn + "'s sharding to another dim (reshard)"
	if o.Kind == model.Reshard {
		w[actAllToAllC] = o.Name + ": " + an + " -> " + cn + " moves the expert axis from tokens to experts (reshard)"
	}
	return w
}

// emission is one collective call of a pass. It holds no pointers (its
// reason is an index into the Model's whys), so the passes copy and
// replay emissions as plain memory.
type emission struct {
	bytes    float64
	seconds  float64
	hideFrac float64 // fraction of hideOp's time usable
	exposed  float64 // resolved exposed seconds of one call
	hideOp   int32   // op index whose compute may hide it (-1: none)
	why      whyID
	op       collOp
	roles    roleSet
	class    commClass
	pass     pass
	// wgrad says a weight-gradient op caused it; dispatch that the MoE
	// dispatch or combine (a reshard) did, lead that it was the pass's
	// first (the all-to-all into the experts: the dispatch forward, the
	// combine's gradient backward; Model.expertSpan).
	wgrad, dispatch, lead bool
}

// runResult is the outcome of one pass of a block on one micro-batch. Its
// slices grow as needed and are reused.
type runResult struct {
	seconds   float64                // compute
	cat       [numCategories]float64 // compute by category
	flops     float64                // per-chip FLOPs executed
	emit      []emission
	opSeconds []float64
	// dep are the roles whose axis groups its ops' collectives were priced
	// over, at the placement epoch it was computed in (evaluator.fresh).
	dep roleSet
	at  uint32
	// refs are the op outcomes the run used, in order (none while
	// tracing): their emissions are emit's (evaluator.revalidate).
	refs []memoRef
}

// reset empties r for a pass computed in placement epoch at, keeping its
// memory.
func (r *runResult) reset(ops int, at uint32) {
	r.seconds, r.flops = 0, 0
	r.dep, r.at = 0, at
	r.cat = [numCategories]float64{}
	r.emit = r.emit[:0]
	r.refs = r.refs[:0]
	if cap(r.opSeconds) < ops {
		r.opSeconds = make([]float64, ops)
	}
	r.opSeconds = r.opSeconds[:ops]
}

// copyFrom makes r a copy of src, reusing r's memory.
func (r *runResult) copyFrom(src *runResult) {
	r.seconds, r.cat, r.flops = src.seconds, src.cat, src.flops
	r.dep, r.at = src.dep, src.at
	r.emit = append(r.emit[:0], src.emit...)
	r.refs = append(r.refs[:0], src.refs...)
	r.opSeconds = append(r.opSeconds[:0], src.opSeconds...)
}

// addOp records op idx's compute time.
func (r *runResult) addOp(idx int, o *model.Op, sec float64) {
	r.opSeconds[idx] = sec
	r.seconds += sec
	r.cat[categoryOf(o)] += sec
}

// addOpMem is addOp for an op whose sec includes mem seconds of
// memory-bound work it brings with it, counted as memory-bound.
func (r *runResult) addOpMem(idx int, o *model.Op, sec, mem float64) {
	r.opSeconds[idx] = sec
	r.seconds += sec
	r.cat[categoryOf(o)] += sec - mem
	r.cat[catMemory] += mem
}

// emit records a collective of one call and returns its time.
func (e *evaluator) emit(res *runResult, op collOp, roles roleSet, bytes float64, class commClass, ps pass, why whyID, hideOp int, hideFrac float64) float64 {
	if roles == 0 || bytes <= 0 {
		return 0
	}
	sec := e.emissionSeconds(op, roles, bytes, class)
	res.emit = append(res.emit, emission{op: op, roles: roles, bytes: bytes, seconds: sec, class: class, pass: ps, why: why,
		hideOp: int32(hideOp), hideFrac: hideFrac, wgrad: e.opWgrad, dispatch: e.opReshard, lead: e.opLead})
	return sec
}

// emissionSeconds is the time of one call of a collective of class class
// (op over roles, on a full array of bytes) of the block being costed.
func (e *evaluator) emissionSeconds(op collOp, roles roleSet, bytes float64, class commClass) float64 {
	sec := e.blockSeconds(op, bytes, roles)
	if class == classWeights && e.o.Comm.PerTensor {
		// One collective per parameter tensor the weight stands for.
		sec += (e.m.tensorsPerWeight[e.blockIdx] - 1) * e.mr.latency(op, roles)
	}
	return sec
}

// reshard changes a tensor's layout: a role that stays on an equivalent dim
// is free, one that moves to another dim is an AllToAll, one that disappears
// an AllGather, one that appears a free slice ([SB-SHARD]; MoE dispatch and
// combine, docs/formulas.md §3.5).
func (e *evaluator) reshard(res *runResult, o *model.Op, why whyID, idx int, ps pass) {
	ta, tc := &e.p.Tensors[o.A], &e.p.Tensors[o.C]
	la, lc := e.layout(o.A), e.layout(o.C)
	a2a, ag := e.reshardRoles(o)
	ra := rolesOf(la)
	first := len(res.emit)
	if a2a != 0 {
		// The busiest rank sends and receives Imbalance times the mean
		// (model.MoE.Imbalance).
		e.emit(res, opA2AMoE, a2a, e.m.imbalance*e.bytes(o.A, ra&^a2a), classCritical, ps, why+whyID(actAllToAllC), -1, 0)
	}
	if ag != 0 {
		e.emit(res, opAG, ag, e.bytes(o.A, ra&^ag), classCritical, ps, why+whyID(actGatherA), -1, 0)
	}
	sec := e.roofline(0, e.reshardBytes(o))
	res.addOp(idx, o, sec)
	if e.trace != nil {
		text := layoutText(ta, la, 0) + " -> " + layoutText(tc, lc, 0)
		e.traceOp(res, ps, text, 0, sec, first)
	}
}

// reshardRoles returns the roles reshard o moves to another dimension
// (AllToAll) and those it gathers (AllGather): a role that stays on an
// equivalent dimension is free, one that appears a free slice.
func (e *evaluator) reshardRoles(o *model.Op) (a2a, ag roleSet) {
	ta, tc := &e.p.Tensors[o.A], &e.p.Tensors[o.C]
	la, lc := e.layout(o.A), e.layout(o.C)
	for r := space.Role(0); r < space.NumRoles; r++ {
		pa := pos(la, ta.Rank, r)
		if pa < 0 {
			continue
		}
		pc := pos(lc, tc.Rank, r)
		switch {
		case pc < 0:
			ag |= bit(r)
		case o.Same[ta.Dims[pa]]&(1<<tc.Dims[pc]) == 0:
			a2a |= bit(r)
		}
	}
	return a2a, ag
}

// reshardCommSeconds is the time of reshard o's collectives, as reshard
// emits them: critical, never hidden by an op (only a schedule that pairs
// chunks hides a dispatch or combine, Model.assemble).
func (e *evaluator) reshardCommSeconds(o *model.Op) float64 {
	a2a, ag := e.reshardRoles(o)
	ra := e.roles[o.A]
	var sec float64
	if a2a != 0 {
		if b := e.m.imbalance * e.bytes(o.A, ra&^a2a); b > 0 {
			sec += e.mr.seconds(opA2AMoE, b, a2a)
		}
	}
	if ag != 0 {
		if b := e.bytes(o.A, ra&^ag); b > 0 {
			sec += e.mr.seconds(opAG, b, ag)
		}
	}
	return sec
}

// elementwise is a memory-bound pass: Bytes × the local bytes of its input.
func (e *evaluator) elementwise(res *runResult, o *model.Op, idx int, ps pass) {
	l := e.layout(o.A)
	bytes := e.elementwiseBytes(o)
	sec := e.roofline(0, bytes)
	res.addOp(idx, o, sec)
	// A pass that moves and writes nothing in this direction (an fp8
	// gradient quantisation seen from the forward pass) is not listed.
	if e.trace != nil && (bytes > 0 || len(o.Writes) > 0) {
		e.traceOp(res, ps, o.Name+"("+layoutText(&e.p.Tensors[o.A], l, 0)+")", 0, sec, len(res.emit))
	}
}

// reshardBytes is the HBM traffic of reshard o: its input read and written
// in the tensor's own layout.
func (e *evaluator) reshardBytes(o *model.Op) float64 {
	return 2 * e.bytes(o.A, e.roles[o.A])
}

// elementwiseBytes is the HBM traffic of elementwise pass o: Bytes × the
// local bytes of its input.
func (e *evaluator) elementwiseBytes(o *model.Op) float64 {
	return o.Bytes * e.bytes(o.A, e.roles[o.A])
}

// roofline is max(the matmul time of a call of flops FLOPs, bytes / (HBM
// bandwidth·HBMFraction)) ([SB-ROOF]); the matmul time is
// profiles.Efficiency.MatmulSeconds, whose efficiency falls for small calls
// (fitted on the measured H100 GEMMs, docs/measured-h100.md).
func (e *evaluator) roofline(flops, bytes float64) float64 {
	return max(e.eff.MatmulSeconds(flops, e.peak), e.memSeconds(bytes))
}

// memSeconds is the time to move bytes through HBM at HBMFraction of its
// bandwidth.
func (e *evaluator) memSeconds(bytes float64) float64 {
	return bytes / (e.hbm * e.eff.HBMFraction)
}

// traceOp appends one traced op; its collectives are the run's emissions
// from firstEmit on.
func (e *evaluator) traceOp(res *runResult, ps pass, text string, fl, sec float64, firstEmit int) {
	op := Op{Pass: passName(ps), Text: text, FLOPs: fl, Seconds: sec}
	names := collNames()
	for i := firstEmit; i < len(res.emit); i++ {
		em := &res.emit[i]
		paired := e.traceHideA2A && em.dispatch
		op.Collective = Collective{Op: names[em.op], Axes: e.mr.axesOf(em.roles), Bytes: em.bytes, Count: 1,
			Seconds: em.seconds, Overlapped: em.class != classCritical || em.hideOp >= 0 || paired, Why: e.m.whys[em.why]}
		op.Text += fmt.Sprintf("  %s(%s) %s %s", op.Collective.Op, roleList(em.roles), fmtBytes(em.bytes), fmtSeconds(em.seconds))
		switch {
		case paired:
			op.Text += " overlapped by the schedule's paired chunks"
		case op.Collective.Overlapped:
			op.Text += " overlapped"
		default:
			op.Text += " exposed"
		}
	}
	*e.trace = append(*e.trace, op)
}

func fmtBytes(b float64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%.2f GB", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	default:
		return fmt.Sprintf("%.1f kB", b/1e3)
	}
}

func fmtSeconds(s float64) string {
	if s >= 1e-3 {
		return fmt.Sprintf("%.2f ms", s*1e3)
	}
	return fmt.Sprintf("%.1f µs", s*1e6)
}

// layoutText renders a tensor's layout, e.g. "x[B_{dp,fsdp}, S_{cp}, D]".
func layoutText(t *model.Tensor, l [model.MaxRank]roleSet, partial roleSet) string {
	var sb strings.Builder
	sb.WriteString(t.Name)
	sb.WriteByte('[')
	for i := 0; i < t.Rank; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(t.Dims[i].String())
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

// roleList names the roles of s, comma-separated.
func roleList(s roleSet) string {
	var parts []string
	for _, r := range s.Roles() {
		parts = append(parts, r.String())
	}
	return strings.Join(parts, ",")
}
