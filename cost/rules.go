package cost

import (
	"math/bits"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// The sharding rules of docs/design.md "Communication is derived", applied to
// C = A·B role by role.

// placement of one role on an einsum's output before resharding: a
// dimension index (>= 0), a partial sum, or nowhere.
const (
	outNone    = -1
	outPartial = -2
)

// einsumCtx is what the rules need of one einsum of one pass.
type einsumCtx struct {
	o          *model.Op
	ta, tb, tc *model.Tensor
	la, lb, lc [model.MaxRank]roleSet
	ma, mb, mc uint32  // dimension bit sets of A, B, C
	ra, rb, rc roleSet // roles of each layout
	// allowU are the roles the product may stay a partial sum over (a
	// weight gradient until the step's reduction).
	allowU  roleSet
	isWGrad bool
	// shareA and shareB weigh an operand's gather: in a backward pair
	// (dA = dC·Bᵀ, dB = Aᵀ·dC) the incoming gradient serves both einsums.
	shareA, shareB float64
	// cpShare scales the bytes of a collective over cp alone: the part of
	// the keys and values a sliding-window or chunked core needs from the
	// other shards (model.CPShare), 1 otherwise.
	cpShare float64
	// tpPlan keeps every weight's tp shard in place (Comm.TPPlan).
	tpPlan bool
}

// resolution is the cheapest legal choice of the rules for every role:
// eight role sets, one per byte (lane) in the order of the choices they
// collect (roleChoice: lane j is choice bit j+1), so that a role's choice
// is added, and the resolution kept or merged role-wise, in a few word
// operations (it passes in one register):
//
//   - gA, gB: the operands gathered;
//   - split: the roles that split the work;
//   - ar, rs, agC, a2a: the collectives on the product;
//   - partial: the roles the product is left partial over.
type resolution uint64

// The lanes of a resolution.
const (
	laneGA = iota
	laneGB
	laneSplit
	laneAR
	laneRS
	laneAGC
	laneA2A
	lanePartial
)

// lanes has the lowest bit of every lane set: set·lanes holds set in
// every lane.
const lanes = 0x0101010101010101

// lane returns the role set of lane l.
func (res resolution) lane(l int) roleSet { return roleSet(res >> (8 * l)) }

// gA returns the roles operand A is gathered over.
func (res resolution) gA() roleSet { return res.lane(laneGA) }

// gB returns the roles operand B is gathered over.
func (res resolution) gB() roleSet { return res.lane(laneGB) }

// split returns the roles that split the work.
func (res resolution) split() roleSet { return res.lane(laneSplit) }

// ar returns the roles the product is all-reduced over.
func (res resolution) ar() roleSet { return res.lane(laneAR) }

// rs returns the roles the product is reduce-scattered over.
func (res resolution) rs() roleSet { return res.lane(laneRS) }

// agC returns the roles the product is gathered over.
func (res resolution) agC() roleSet { return res.lane(laneAGC) }

// a2a returns the roles the product is exchanged over (AllToAll).
func (res resolution) a2a() roleSet { return res.lane(laneA2A) }

// partial returns the roles the product is left partial over.
func (res resolution) partial() roleSet { return res.lane(lanePartial) }

// attentionCore reports whether o is an einsum of an attention core (not a
// state-space or linear-attention scan): the ops whose keys and values
// context parallelism exchanges.
func attentionCore(o *model.Op) bool { return o.Group == model.GroupCore && !o.Scan }

// newEinsumCtx prepares the rules' inputs for op o of pass ps.
func (e *evaluator) newEinsumCtx(o *model.Op, ps pass) einsumCtx {
	p := e.p
	x := einsumCtx{o: o, ta: &p.Tensors[o.A], tb: &p.Tensors[o.B], tc: &p.Tensors[o.C], shareA: 1, shareB: 1, cpShare: 1, tpPlan: e.o.Comm.TPPlan}
	if o.Span > 0 {
		x.cpShare = model.CPShare(o.Local, o.Span, e.size[model.DimS], e.degOf(bit(space.RoleCP)&e.active))
	}
	if attentionCore(o) {
		x.cpShare *= e.cpKV
	}
	x.la, x.lb = e.layout(o.A), e.layout(o.B)
	gA, gB := e.gathered[o.A], e.gathered[o.B]
	if gA != 0 {
		for i := range x.la {
			x.la[i] &^= gA
		}
	}
	if gB != 0 {
		for i := range x.lb {
			x.lb[i] &^= gB
		}
	}
	x.ra, x.rb = e.roles[o.A]&^gA, e.roles[o.B]&^gB
	x.isWGrad = x.tc.Primal >= 0 && p.Tensors[x.tc.Primal].Weight
	if x.isWGrad {
		x.lc = e.accLayout(x.tc.Primal)
		x.allowU = e.replicaRoles(x.tc.Primal)
		x.rc = rolesOf(x.lc)
	} else {
		x.lc = e.layout(o.C)
		x.rc = e.roles[o.C]
	}
	x.ma, x.mb, x.mc = e.dimMask(o.A), e.dimMask(o.B), e.dimMask(o.C)
	if ps == pBwd && o.Sibling >= 0 {
		if o.A != o.SiblingIn {
			x.shareA = 0.5
		} else {
			x.shareB = 0.5
		}
	}
	return x
}

// resolve applies the rules role by role: for every role it tries leaving
// each operand as it is or gathering it (rules 2 and 4), derives where the
// role ends up on the product (a dimension, a partial sum U, or nowhere),
// adds the cost of moving that to the layout the next op needs (AllReduce
// or ReduceScatter of a partial sum, rule 3; AllGather or AllToAll of a
// sharded dimension; a free slice), and keeps the cheapest legal choice.
func (e *evaluator) resolve(x *einsumCtx) resolution {
	return e.resolveRoles(x, resolution(0), ^roleSet(0), nil, nil)
}

// roleChoice is one role's part of a resolution (chooseRole), with
// choiceKnown set.
type roleChoice uint16

const (
	choiceKnown roleChoice = 1 << iota
	choiceGA
	choiceGB
	choiceSplit
	choiceAR
	choiceRS
	choiceAGC
	choiceA2A
	choicePartial
)

// roleChoices are the choices of an einsum's roles, per role and per
// collective model of the role (evaluator.roleModel): a role's choice
// depends, for one einsum's inputs, only on the collective models of the
// role alone (chooseRole prices over the role alone), so a placement that
// gives the role a model it had before gives it the choice it had.
type roleChoices [space.NumRoles][roleModels]roleChoice

// rolePlans are the plans of an einsum's roles (rolePlan) and its sure
// roles (sureRoles). A role's plan depends only on where the role sits on
// the einsum's operands and product, which its layouts give role by role:
// on the model, sequence parallelism, the operands' gathered roles and
// ZeRO-2 (the memo entry's key) and on the role being active, not on the
// other roles, the degrees, the micro-batch or the placement. An einsum's
// memo entry keeps them across generations (opMemo.pgen) and plans a role
// when it first meets it active.
type rolePlans struct {
	// xgen is the layout generation (evaluator.lgen) of the memo entry's
	// inputs to the rules (opMemo.x; 0: none) and sure their sure roles.
	xgen uint64
	sure roleSet
	// planned are the roles planned; fixed those of them whose plan holds
	// one choice or none (planRole keeps only legal choices that no
	// earlier one dominates, and leaving both operands as they are when
	// that is legal and moves nothing dominates all the others): it wins
	// whatever the sizes and mesh, without pricing anything (chooseRole;
	// what it moves is priced when emitted). fixedRes is their part of
	// every resolution.
	planned, fixed roleSet
	fixedRes       resolution
	role           [space.NumRoles]rolePlan
}

// plan plans the roles in set of einsum x.
func (p *rolePlans) plan(x *einsumCtx, set roleSet) {
	for set := uint8(set); set != 0; set &= set - 1 {
		r := space.Role(bits.TrailingZeros8(set))
		pl := planRole(x, r)
		p.role[r] = pl
		if pl.n <= 1 {
			p.fixed |= bit(r)
			if pl.n == 1 {
				p.fixedRes.add(r, pl.opts[0].choice)
			}
		}
	}
	p.planned |= set
}

// rolePlan is the part of one role's choice (chooseRole) that depends on
// an einsum's layouts alone: its gather choices in order (leave both
// operands, gather A, gather B, gather both), those the operands allow
// and the rules make legal that no earlier one dominates (planRole), each
// with the gathers it prices, the move it needs on the product and the
// role's choice when it wins.
type rolePlan struct {
	n    uint8
	opts [4]planOpt
}

// planOpt is one gather choice of a rolePlan: the gathers it prices
// (optA, optB) in flags, its move and its choice.
type planOpt struct {
	flags  uint8
	op     collOp
	choice roleChoice
}

// The flags of a planOpt.
const (
	optA uint8 = 1 << iota
	optB
)

// planRole returns the plan of role r in einsum x: per gather choice the
// operands allow, where the role lands on the product (landing, which
// may make the choice illegal), the collective that moves it to the
// layout the next op wants (moveOp; a tensor never communicated forbids
// one) and the choice it makes, kept unless an earlier choice dominates
// it (dominated): what is left can win for some sizes and mesh.
func planRole(x *einsumCtx, r space.Role) rolePlan {
	pc := pos(x.lc, x.tc.Rank, r)
	dc := model.NumDim
	if pc >= 0 {
		dc = x.tc.Dims[pc]
	}
	pa, pb := pos(x.la, x.ta.Rank, r), pos(x.lb, x.tb.Rank, r)
	canA, canB := pa >= 0 && !x.ta.NoComm, pb >= 0 && !x.tb.NoComm
	var p rolePlan
	for g := 0; g < 4; g++ {
		doA, doB := g&1 != 0, g&2 != 0
		if (doA && !canA) || (doB && !canB) {
			continue
		}
		if x.tpPlan && r == space.RoleTP && ((doA && x.ta.Weight) || (doB && x.tb.Weight)) {
			continue // a DTensor TP plan never gathers a weight over tp (Comm.TPPlan)
		}
		out, splits, legal := landing(x, kept(pa, doA), kept(pb, doB), dc)
		if !legal {
			continue
		}
		o := planOpt{flags: uint8(g), op: moveOp(x, r, out, pc, dc)} // flags: optA, optB
		if o.op != opNone && x.tc.NoComm {
			continue
		}
		if dominated(&p, o) {
			continue
		}
		o.choice = choiceOf(x, r, g, out, splits, pc, dc)
		p.opts[p.n] = o
		p.n++
	}
	return p
}

// kept is the dimension index p (-1: none) a role keeps on an operand,
// -1 once the choice gathers the operand over it.
func kept(p int, gathered bool) int {
	if gathered {
		return -1
	}
	return p
}

// dominated reports whether choice o costs at least as much as a choice
// of p before it whatever the sizes and mesh: one that gathers no operand
// o does not and moves the product as o does or not at all (every gather
// and move costs zero or more). chooseRole keeps the first of equal
// costs and takes a later choice only when strictly cheaper, so o never
// wins.
func dominated(p *rolePlan, o planOpt) bool {
	for _, q := range p.opts[:p.n] {
		if q.flags&^o.flags&(optA|optB) == 0 && (q.op == opNone || q.op == o.op) {
			return true
		}
	}
	return false
}

// choiceOf is the roleChoice of role r gathering as g says (bit 0: A,
// bit 1: B) and landing on the product at out (splitting the work or
// not), when the next op wants it at C's dimension index pc (dimension
// dc).
func choiceOf(x *einsumCtx, r space.Role, g, out int, split bool, pc int, dc model.Dim) roleChoice {
	c := choiceKnown
	if g&1 != 0 {
		c |= choiceGA
	}
	if g&2 != 0 {
		c |= choiceGB
	}
	if split {
		c |= choiceSplit
	}
	switch {
	case out == outPartial && pc < 0:
		if x.allowU.Has(r) {
			c |= choicePartial
		} else {
			c |= choiceAR
		}
	case out == outPartial:
		c |= choiceRS
	case out >= 0 && pc < 0:
		c |= choiceAGC
	case out >= 0 && model.Dim(out) != dc:
		c |= choiceA2A
	}
	return c
}

// resolveRoles is resolve for the roles in roles alone, keeping the
// choices of res for the others. A role's choice prices collectives over
// that role alone (chooseRole), so an outcome resolved under an earlier
// placement needs choosing again only for the roles whose collective
// models the placements since have changed (evaluator.movedSince). With
// known (the einsum's memo entry's), a role's choice under a model it
// had before is taken from it, and a new one is kept in it. A choice
// taken from known notes the role in opDep: the roles looked up there are
// the moved roles of a stale outcome, which its choices priced, and
// whether chooseRole prices a role depends on the einsum's layouts alone
// (it does unless its plan holds one choice or none). The roles' plans
// and sure roles are taken from plans (the memo entry's, of x), made
// there when not yet made (on the fly when nil); a role whose plan fixes
// its choice takes it without choosing (rolePlans.fixed) or a memo slot.
func (e *evaluator) resolveRoles(x *einsumCtx, res resolution, roles roleSet, known *roleChoices, plans *rolePlans) resolution {
	if plans == nil {
		return e.resolveRolesPlanned(x, res, roles, known)
	}
	all := x.ra | x.rb | x.rc
	if miss := all &^ plans.planned; miss != 0 {
		plans.plan(x, miss)
	}
	res.keep(^roles)
	if f := plans.fixed & roles & all; f != 0 {
		res.merge(&plans.fixedRes, f)
		roles &^= f
	}
	for set := uint8(all & roles); set != 0; set &= set - 1 {
		r := space.Role(bits.TrailingZeros8(set))
		var slot *roleChoice
		if id := e.roleModel[r]; known != nil && id < roleModels {
			slot = &known[r][id]
			if c := *slot; c&choiceKnown != 0 {
				res.add(r, c)
				e.opDep |= bit(r)
				continue
			}
		}
		c := e.chooseRole(x, r, plans.sure, &plans.role[r])
		if slot != nil {
			*slot = c
		}
		res.add(r, c)
	}
	return res
}

// resolveRolesPlanned is resolveRoles with plans made on the fly (a traced
// evaluation's, which keeps no memo): apart, so that the common path does
// not clear a rolePlans on its stack.
func (e *evaluator) resolveRolesPlanned(x *einsumCtx, res resolution, roles roleSet, known *roleChoices) resolution {
	var plans rolePlans
	plans.sure = sureRoles(x)
	return e.resolveRoles(x, res, roles, known, &plans)
}

// keep clears every role of res but those in set.
func (res *resolution) keep(set roleSet) {
	*res &= resolution(uint64(set) * lanes)
}

// merge adds the roles in set of o to res.
func (res *resolution) merge(o *resolution, set roleSet) {
	*res |= *o & resolution(uint64(set)*lanes)
}

// sureRoles are the roles on the same contracted dimension of both
// operands that the product wants on a dimension of its own: each is
// reduce-scattered with the product, which the collective moves
// unreduced, so another role's move of the product is priced on the
// bytes they leave.
func sureRoles(x *einsumCtx) roleSet {
	var sure roleSet
	for set := uint8(x.ra & x.rb & x.rc); set != 0; set &= set - 1 {
		r := space.Role(bits.TrailingZeros8(set))
		pa, pb := pos(x.la, x.ta.Rank, r), pos(x.lb, x.tb.Rank, r)
		if d := x.ta.Dims[pa]; d == x.tb.Dims[pb] && x.mc&(1<<d) == 0 {
			sure |= bit(r)
		}
	}
	return sure
}

// add sets role r's part of res to choice c.
func (res *resolution) add(r space.Role, c roleChoice) {
	// The choice bits but choiceKnown, one per lane, spread to the lowest
	// bit of their lanes (bit j to bit 8j), then moved to role r's bit.
	x := uint64(c>>1) & 0xff
	x = (x | x<<28) & 0x0000000f0000000f
	x = (x | x<<14) & 0x0003000300030003
	x = (x | x<<7) & lanes
	*res |= resolution(x << r)
}

// chooseRole returns the cheapest legal choice of role r in plan p
// (choiceKnown alone when none is legal: the role stays replicated), with
// the roles sure (sureRoles) still summing into the product (their
// reduce-scatter moves it whole, emitEinsum). The plan holds only legal
// choices no earlier one dominates (planRole): a single one wins without
// pricing anything (what it moves is priced when emitted); otherwise
// each gather and each move is priced once, when a choice first needs
// it, and a free choice ends the search (no cost is negative, and a later
// choice must be cheaper to win).
func (e *evaluator) chooseRole(x *einsumCtx, r space.Role, sure roleSet, p *rolePlan) roleChoice {
	switch p.n {
	case 0:
		return choiceKnown
	case 1:
		return p.opts[0].choice
	}
	unreduced := sure &^ bit(r)
	gatherA, gatherB := -1.0, -1.0 // priced on first use
	cBytes := -1.0                 // the product's bytes for a move, computed on first use
	best, c := inf, choiceKnown
	for i := 0; i < int(p.n) && best != 0; i++ {
		o := &p.opts[i]
		cost := 0.0
		if o.flags&optA != 0 {
			if gatherA < 0 {
				gatherA = x.shareA * e.blockSeconds(opAG, x.scaled(e.bytes(x.o.A, x.ra&^bit(r)), bit(r)), bit(r))
			}
			cost += gatherA
		}
		if o.flags&optB != 0 {
			if gatherB < 0 {
				gatherB = x.shareB * e.blockSeconds(opAG, x.scaled(e.bytes(x.o.B, x.rb&^bit(r)), bit(r)), bit(r))
			}
			cost += gatherB
		}
		if o.op != opNone {
			if cBytes < 0 {
				cBytes = x.scaled(e.bytes(x.o.C, x.rc&^bit(r)&^unreduced), bit(r))
			}
			cost += e.blockSeconds(o.op, cBytes, bit(r))
		}
		if cost < best*(1-1e-9) {
			best, c = cost, o.choice
		}
	}
	return c
}

// moveOp is the collective that moves role r from where it lands on the
// product (out) to where the next op wants it (C's dimension index pc,
// dimension dc): an AllReduce of a partial sum (unless it may stay
// partial), a ReduceScatter, an AllGather, an AllToAll, or nothing
// (opNone). A tensor that is never communicated makes any collective
// illegal.
func moveOp(x *einsumCtx, r space.Role, out, pc int, dc model.Dim) collOp {
	switch {
	case out == outPartial && pc < 0:
		if x.allowU.Has(r) {
			return opNone
		}
		return opAR
	case out == outPartial:
		return opRS
	case out >= 0 && pc < 0:
		return opAG
	case out >= 0 && model.Dim(out) != dc:
		return opA2A
	}
	return opNone
}

// landing says where a role that stays on A's dimension pa and B's
// dimension pb (-1: not on the operand) ends up on the product: on a
// dimension of C, as a partial sum (its dimension is contracted, rules 2
// and 3), or nowhere (then it splits the work for free when an operand has
// C's dimension dc). A role on two different dimensions is illegal (rule 4).
func landing(x *einsumCtx, pa, pb int, dc model.Dim) (out int, splits, legal bool) {
	onC := func(d model.Dim) int {
		if x.mc&(1<<d) != 0 {
			return int(d)
		}
		return outPartial
	}
	switch {
	case pa >= 0 && pb >= 0:
		if x.ta.Dims[pa] != x.tb.Dims[pb] {
			return 0, false, false
		}
		return onC(x.ta.Dims[pa]), true, true
	case pa >= 0:
		return onC(x.ta.Dims[pa]), true, true
	case pb >= 0:
		return onC(x.tb.Dims[pb]), true, true
	}
	return outNone, dc != model.NumDim && (x.ma|x.mb)&(1<<dc) != 0, true
}

// scaled returns the bytes of a collective over roles: scaled by cpShare
// when the roles are cp alone.
func (x *einsumCtx) scaled(bytes float64, roles roleSet) float64 {
	if roles == bit(space.RoleCP) {
		return bytes * x.cpShare
	}
	return bytes
}

// einsum costs C = A·B: the rules' collectives, then the compute of the
// split product. Gathered operands are kept for the rest of the pass. It
// returns the memo entry holding the outcome (nil while tracing).
func (e *evaluator) einsum(res *runResult, b, k int, o *model.Op, why whyID, shape opShape, idx int, ps pass) *opMemo {
	pr := e.p.Tensors[o.C].Primal
	m, hit, stale := e.memoFor(b, k, idx, o, e.zero >= 2 && pr >= 0 && e.p.Tensors[pr].Weight)
	if hit {
		e.replay(res, m, o, idx, ps)
		return m
	}
	e.opDep = 0
	var x *einsumCtx
	var rs resolution
	if stale {
		// The inputs of the same state, under another placement: only the
		// roles whose collective models moved choose again; the others
		// price what they priced before.
		x = &m.x
		moved := e.movedSince(m.dep, m.at)
		e.opDep = m.dep &^ moved
		rs = e.resolveRoles(x, m.rs, moved, &m.choices, &m.plans)
	} else if m != nil {
		// The inputs to the rules are the memo entry's when it holds them
		// for the current layouts (rolePlans.xgen; they do not depend on
		// the sizes or the mesh).
		if m.plans.xgen != e.lgen {
			m.x = e.newEinsumCtx(o, ps)
			m.plans.xgen, m.plans.sure = e.lgen, sureRoles(&m.x)
		}
		x = &m.x
		rs = e.resolveRoles(x, resolution(0), ^roleSet(0), &m.choices, &m.plans)
	} else {
		ctx := e.newEinsumCtx(o, ps)
		x = &ctx
		rs = e.resolveRoles(x, resolution(0), ^roleSet(0), nil, nil)
	}
	if stale && rs == m.rs {
		e.reprice(res, m, o, idx, ps)
		return m
	}
	if x.isWGrad {
		e.pending[x.tc.Primal] |= rs.partial()
	}
	first := len(res.emit)
	e.emitEinsum(res, x, &rs, why, idx, ps)

	// Compute: 2·work·Π(union of dimensions) FLOPs over the roles that split
	// the work (work: the band of a local attention kernel, Op.WorkAt); a
	// capped dimension split by tp does more per chip.
	fl := 2 * o.WorkAt(e.size[model.DimS])
	for d := model.Dim(0); d < model.NumDim; d++ {
		if shape.dims&(1<<d) != 0 {
			fl *= e.size[d]
		}
	}
	fl /= e.degOf(rs.split())
	if shape.cap != model.NumDim && rs.split().Has(space.RoleTP) {
		fl *= e.capF[shape.cap]
	}
	bytes := 0.0
	if !x.ta.OnChip {
		bytes += e.bytes(o.A, x.ra&^rs.gA())
	}
	if !x.tb.OnChip {
		bytes += e.bytes(o.B, x.rb&^rs.gB())
	}
	if !x.tc.OnChip {
		bytes += e.bytes(o.C, x.rc)
	}
	flSec := e.flopSeconds(o, fl, ps)
	calls := 1.0
	if e.o.PerExpertGEMMs && shape.dims&(1<<model.DimE) != 0 && o.Group != model.GroupCore {
		// A grouped expert matmul run as one GEMM per local expert, each
		// with its own tail (the t₀ of profiles.Efficiency, fitted per
		// call on docs/measured-h100.md's gemm.csv): Megatron-Core's
		// TEGroupedMLP calls Transformer Engine's GroupedLinear, which
		// issues one cuBLAS GEMM per expert (transformer_engine/pytorch/
		// module/grouped_linear.py, general_grouped_gemm), so n local
		// experts pay n·t₀, not one (docs/formulas.md §3.5).
		if n := e.size[model.DimE] / e.degOf(rs.split()&bit(space.RoleEP)); n > 1 {
			flSec, calls = n*e.flopSeconds(o, fl/n, ps), n
		}
	}
	callTail := e.callTail(o)
	if t := e.launchedTail(o, callTail); fl > 0 && t < callTail {
		// Launched back to back with the host ahead, each call pays the
		// GPU's tail, not a single call's t₀ (Comm.GraphedLayers).
		flSec -= calls * (callTail - t)
		callTail = t
	}
	memSec := e.memSeconds(bytes)
	sec := max(flSec, memSec)
	// The part of a compute-bound matmul's time that is its calls' fixed
	// tails (profiles.Efficiency's t₀ per call), for the breakdown.
	var tail float64
	if fl > 0 && flSec >= memSec {
		tail = calls * callTail
	}
	if shape.dims&(1<<model.DimC) != 0 && e.degOf(rs.split()&bit(space.RoleEP)) > 1 {
		// The expert matmuls of the busiest expert rank (model.MoE.Load);
		// without expert parallelism one rank runs every expert's tokens.
		sec *= e.m.imbalance
		tail *= e.m.imbalance
	}
	// Memory-bound work the op brings with it: AQT quantises each operand
	// inside every int8 matmul call, the weight included (under FSDP the
	// gathered weight again for the forward, recompute and input-gradient
	// calls, aqtWeightBytes); a TensorCore adds the partial sums of the
	// op's reductions (reductionSeconds); a DTensor plan copies its
	// sequence-parallel collectives' arrays (seqCopySeconds).
	var mem float64
	if o.FP8 && e.int8 && e.peak8 > 0 {
		if x.ta.Weight {
			mem += e.memSeconds(aqtWeightBytes * e.bytes(o.A, x.ra&^rs.gA()) / e.p.ElemBytes(o.A))
		}
		if x.tb.Weight {
			mem += e.memSeconds(aqtWeightBytes * e.bytes(o.B, x.rb&^rs.gB()) / e.p.ElemBytes(o.B))
		}
	}
	if e.coreRed {
		mem += e.reductionSeconds(res.emit[first:])
	}
	if e.o.Comm.TPPlan {
		mem += e.seqCopySeconds(res.emit[first:])
	}
	if o.Calls > 1 && ps == pBwd {
		// Separate projections on one input (model.Op.Calls): autograd
		// sums their input gradients, one pass reading each local output
		// (the partial sum before its reduce-scatter) and writing one:
		// Calls + 1 outputs' bytes [derived] (torchtitan's wq, wk, wv and
		// w1, w3, pytorch/torchtitan@820504e20d1149fbf0b98c567af24c4b0433b22d
		// torchtitan/models/llama3/model.py:238,302).
		mem += e.memSeconds(float64(o.Calls+1) * e.bytes(o.C, x.rc&^rs.rs()))
	}
	sec += mem
	res.addOpMem(idx, o, sec, mem)
	res.cat[catTail] += tail
	res.flops += fl
	res.dep |= e.opDep
	if m != nil {
		m.addA, m.addB, m.partial, m.sec, m.fl, m.mem, m.tail = rs.gA(), rs.gB(), rs.partial(), sec, fl, mem, tail
		m.rs = rs
		m.dep, m.at = e.opDep, e.epoch
		m.emit = append(m.emit[:0], res.emit[first:]...)
		e.stamps++
		m.stamp = e.stamps
	}
	if e.trace != nil {
		lA, lB := e.layout(o.A), e.layout(o.B)
		text := layoutText(x.ta, lA, 0) + " · " + layoutText(x.tb, lB, 0) + " -> " + layoutText(x.tc, x.lc, rs.partial())
		e.traceOp(res, ps, text, fl, sec, first)
	}
	return m
}

// flopSeconds is the time of fl FLOPs of einsum o in pass ps at its
// kernel's rate, before the roofline's memory bound: a matmul's
// (profiles.Efficiency.MatmulSeconds, or MatmulFP8Seconds for an fp8
// projection), or, in the attention core, a flash
// kernel's or a materialised core's batched matmuls'. It grows with fl.
func (e *evaluator) flopSeconds(o *model.Op, fl float64, ps pass) float64 {
	p := e.p
	switch {
	case o.Group == model.GroupCore && (p.Tensors[o.A].OnChip || p.Tensors[o.B].OnChip || p.Tensors[o.C].OnChip):
		// A flash kernel: its matmuls at the chip's attention rate plus a
		// time per score for the exponential, slower for short key loops
		// (profiles.Efficiency.AttentionSeconds, docs/measured-h100.md); the
		// framework's kernel may run at a fraction of it. The forward
		// kernel does 4·head_dim FLOPs per score over its two einsums, the
		// backward 10·head_dim over five (its recompute of the scores
		// included, [FA2]); each einsum takes its share of the scores.
		perScore := 4.0
		if ps == pBwd {
			perScore = 10
		}
		scores := fl / (perScore * p.ScoreHeadDim())
		kv := e.size[model.DimT] / e.degOf(bit(space.RoleCP)&e.active)
		if o.Span > 0 {
			kv = min(kv, o.Span) // a window's or chunk's shorter key loop
		}
		return e.eff.AttentionSeconds(ps == pBwd, fl, scores, kv, e.attnPeak) / (e.attnRate * e.attnFill)
	case o.Group == model.GroupCore:
		return e.eff.MatmulSeconds(fl, e.peak) / (attnKernelFraction * e.attnFill)
	case o.FP8 && e.int8 && e.peak8 > 0:
		// An int8 (AQT) matmul at the chip's int8 rate, with the bf16
		// curve's fraction and t₀ (an assumption: no int8 matmul is
		// measured): fl·peak/peak8 bf16 FLOPs' time, fl/(f·peak8) + t₀.
		return e.eff.MatmulSeconds(fl*e.peak/e.peak8, e.peak)
	case o.FP8 && e.fp4 && e.peak8 > 0:
		// An NVFP4 matmul at the chip's fp4 rate (profiles.Efficiency.
		// MatmulFP4Seconds: fp8's curve carried over, profiles/efficiency.go).
		return e.eff.MatmulFP4Seconds(fl, e.peak8)
	case o.FP8 && e.peak8 > 0:
		// An fp8 matmul at the chip's fp8 rate (profiles.Efficiency.
		// MatmulFP8Seconds, fitted on docs/measured-h100.md's gemm-fp8.csv).
		return e.eff.MatmulFP8Seconds(fl, e.peak8)
	}
	return e.eff.MatmulSeconds(fl, e.peak)
}

// callTail is the fixed time of one call of einsum o, the t₀ of its
// kernel's curve (profiles.Efficiency: t = FLOPs/(fraction·peak) + t₀):
// MatmulHalfFLOPs/(MatmulFraction·peak) and its fp8 and fp4 twins, as
// flopSeconds prices the call; 0 for the attention core, whose kernels
// have no per-call tail of that form.
func (e *evaluator) callTail(o *model.Op) float64 {
	half, rate := e.eff.MatmulHalfFLOPs, e.eff.MatmulFraction*e.peak
	switch {
	case o.Group == model.GroupCore:
		return 0
	case o.FP8 && e.int8 && e.peak8 > 0:
		// AQT int8: the bf16 curve's t₀ (flopSeconds).
	case o.FP8 && e.fp4 && e.peak8 > 0:
		half, rate = e.eff.MatmulFP4HalfFLOPs, e.eff.MatmulFP4Fraction*e.peak8
	case o.FP8 && e.peak8 > 0:
		half, rate = e.eff.MatmulFP8HalfFLOPs, e.eff.MatmulFP8Fraction*e.peak8
	}
	if rate <= 0 {
		return 0
	}
	return half / rate
}

// launchedTail is the tail one call of einsum o pays as the strategy's
// launches run, given its single-call tail t (callTail): the back-to-back
// tail, when smaller, where CUDA graphs keep the host ahead of the GPU
// (Comm.GraphedStep, Comm.GraphedLayers), else t.
func (e *evaluator) launchedTail(o *model.Op, t float64) float64 {
	if g := &e.o.Comm; g.GraphedStep || g.GraphedLayers {
		return min(streamTail(o), t)
	}
	return t
}

// The tail of a GEMM call launched back to back behind others, the host
// ahead of the GPU: t = FLOPs/rate + t₀ fitted over 8 to 32 expert GEMMs
// run one after another on one stream of an H200 gives t₀ = 6-9 µs at
// 750 TFLOP/s in bf16 and 13-15 µs at 1,400 TFLOP/s in fp8, where single
// calls give 27-29 and 33-39 µs
// (profiles/testdata/measured-h200/multistream-experts.csv and its
// README): 7 and 14 µs, taken as times on every GPU as t₀ is.
const (
	streamTailSeconds    = 7e-6
	streamTailFP8Seconds = 14e-6
)

// streamTail is the back-to-back tail of one call of einsum o: the fp8
// one for an fp8 (or fp4, an assumption) projection, else the bf16 one.
func streamTail(o *model.Op) float64 {
	if o.FP8 {
		return streamTailFP8Seconds
	}
	return streamTailSeconds
}

// seqCopySeconds is the memory time of the copies that a DTensor plan's
// sequence-parallel collectives among em make (Comm.TPPlan): the
// activations are [batch, sequence, hidden], sharded over tp on the
// sequence (Shard(1)), while NCCL gathers and scatters along the leading
// dimension, so PyTorch's functional all_gather_tensor concatenates the
// gathered chunks along gather_dim and reduce_scatter_tensor concatenates
// the input's chunks before reducing (torch.cat(torch.chunk(...));
// pytorch/pytorch@000f488bac901f592cae91dbaa39d78238cf5a05
// torch/distributed/_functional_collectives.py): each reads and writes
// the full array once, 2 bytes of HBM traffic per byte gathered or
// reduced. torchtitan notes the cost ("we can accelerate Sequence Parallel
// by folding (and unfolding) the batch dimension and the sequence
// dimension", pytorch/torchtitan@820504e20d1149fbf0b98c567af24c4b0433b22d
// torchtitan/models/llama3/parallelize_llama.py:175-177).
func (e *evaluator) seqCopySeconds(em []emission) float64 {
	var b float64
	for i := range em {
		if op := em[i].op; (op == opAG || op == opRS) && em[i].class == classCritical && em[i].roles == bit(space.RoleTP) {
			b += 2 * em[i].bytes
		}
	}
	return e.memSeconds(b)
}

// aqtWeightBytes is the HBM traffic per weight element of AQT's int8
// quantisation inside one matmul call: the per-channel absolute maximum
// reads the bf16 weight (2 bytes), the scaling and rounding read it again
// and write the int8 copy (2 + 1): AQT's dot_general quantises both
// operands on every call, with no copy kept between calls
// (MaxText@e591f30c src/maxtext/layers/quantizations.py
// _get_int8_quant_config: aqt config_v3 with fwd, dlhs and drhs at 8 bits).
const aqtWeightBytes = 5

// reductionSeconds is the core time of the additions of the reduce-scatters
// and all-reduces among em, on a chip whose core adds them
// (profiles.Chip.CoreReductions): a ring over n ranks adds (n-1)/n of the
// full array on each rank, reading its partial and the received one and
// writing the sum, memory-bound at 3 bytes of HBM traffic per byte reduced
// ([SB-SHARD]'s ring reduce-scatter; docs/tpu.md, "What the planner uses").
func (e *evaluator) reductionSeconds(em []emission) float64 {
	var b float64
	for i := range em {
		if op := em[i].op; op == opRS || op == opAR {
			n := e.degOf(em[i].roles)
			b += 3 * (n - 1) / n * em[i].bytes
		}
	}
	return e.memSeconds(b)
}

// attentionRate is the framework's flash attention speed relative to the
// chip's flash kernel (model.Kernels.AttentionRate), times
// FlashAttention-2's fraction of it for an ALiBi model (model.Spec.ALiBi)
// whose framework does not pass the bias to a fused kernel
// (model.Kernels.ALiBiFused; profiles.Efficiency.FlashAttention2Fraction).
func attentionRate(p *model.Program, eff *profiles.Efficiency) float64 {
	return p.Options.Kernels.AttentionRate * eff.ALiBiRate(p.Spec.ALiBi, p.Options.Kernels.ALiBiFused)
}

// attentionFill is the useful fraction of a TPU matrix unit's work in the
// attention core of p on chip c: the query-key matmul contracts over the
// qk head width and the value matmul produces the v head width, each padded
// up to the MXU's side ([SB-TPU]: "smaller axes are padded"; docs/tpu.md
// §5: head_dim 128 on v6e's 256-wide MXU runs at half rate), so the core's
// FLOPs take (padded qk + padded v)/(qk + v) of their unpadded time; 1 on
// GPUs (MXUDim 0).
func attentionFill(p *model.Program, c *profiles.Chip) float64 {
	qk, v := p.AttentionHeadDims()
	if c.MXUDim <= 0 || qk <= 0 || v <= 0 {
		return 1
	}
	return float64(qk+v) / (float64(qk)/c.MXUFill(qk) + float64(v)/c.MXUFill(v))
}

// emitEinsum records the collectives of a resolved einsum: one per kind
// over the union of its roles.
func (e *evaluator) emitEinsum(res *runResult, x *einsumCtx, rs *resolution, why whyID, idx int, ps pass) {
	o := x.o
	classIn := func(t *model.Tensor) commClass {
		if t.Weight {
			return classWeights
		}
		return classCritical
	}
	classOut := classCritical
	if x.isWGrad {
		classOut = classWeights
	}
	compiledRing := e.o.Comm.CPAllGather && attentionCore(o) // Comm.CPAllGather
	hide := func(t int, isOut bool, roles roleSet) (int, float64) {
		if compiledRing && roles == bit(space.RoleCP) {
			return -1, 0 // a compiled ring's collective is waited on where it is issued (Comm.CPAllGather)
		}
		tpOnly := roles&^(bit(space.RoleTP)|bit(space.RoleCP)) == 0
		if ps == pBwd && o.Sibling >= 0 && (isOut || t == o.SiblingIn) && !(e.o.Comm.TPPlan && tpOnly) {
			return o.Sibling, 1 // Megatron overlaps dX's reduction with the dW GEMM and the re-gather with dX ([MEG-TP], docs/formulas.md §6)
		}
		if o.Group == model.GroupCore && roles&^bit(space.RoleCP) == 0 {
			return idx, e.eff.OverlapFraction // ring attention hides the K/V exchange under the blocks (docs/formulas.md §3.4)
		}
		if e.o.CollectiveMatmul && tpOnly {
			return idx, 1 // collective matmul [SB-JAX]
		}
		return -1, 0
	}
	if gA := rs.gA(); gA != 0 {
		h, f := hide(o.A, false, gA)
		e.emit(res, opAG, gA, x.scaled(e.bytes(o.A, x.ra&^gA), gA), classIn(x.ta), ps, why+whyID(actGatherA), h, f)
		e.gathered[o.A] |= gA
	}
	if gB := rs.gB(); gB != 0 {
		h, f := hide(o.B, false, gB)
		e.emit(res, opAG, gB, x.scaled(e.bytes(o.B, x.rb&^gB), gB), classIn(x.tb), ps, why+whyID(actGatherB), h, f)
		e.gathered[o.B] |= gB
	}
	for _, c := range [...]struct {
		op    collOp
		roles roleSet
		act   action
	}{{opAR, rs.ar(), actAllReduceC}, {opRS, rs.rs(), actReduceScatterC}, {opAG, rs.agC(), actGatherC}, {opA2A, rs.a2a(), actAllToAllC}} {
		if c.roles == 0 {
			continue
		}
		h, f := hide(o.C, true, c.roles)
		bytes := x.scaled(e.bytes(o.C, x.rc&^c.roles), c.roles)
		if compiledRing && c.roles == bit(space.RoleCP) && c.op != opAG {
			bytes *= e.cpGradWidth // the ring backward's fp32 key and value gradients (Comm.CPAllGather)
		}
		e.emit(res, c.op, c.roles, bytes, classOut, ps, why+whyID(c.act), h, f)
	}
}
