package cost

import (
	"math"
	"slices"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Bounder gives lower bounds on the step time of strategies, for a search
// that skips costing strategies a faster one with no more memory already
// beats (branch and bound). A bound costs a fraction of an evaluation: it
// prices every op's compute as if every role that shards one of its
// operands or its product split the work (the rules split it by a subset
// of them) and counts no communication, so it never exceeds
// Evaluator.Evaluate's step time. LowerBound reads of a strategy its
// degrees, the degree of every role, sequence parallelism, micro-batch
// size, recompute policy, ZeRO stage and schedule, never which mesh axes
// carry a role; DispatchBound adds, per placement, the MoE dispatch and
// combine that no op hides. It keeps each op's bound for the next
// strategy: another recompute policy of the same shape and placement only
// totals them again. A Bounder is not safe for concurrent use: use one
// per goroutine.
type Bounder struct {
	m  *Model
	in evalInputs
	st evalState
	// key is what the per-block compute bounds below are for, shares the
	// placement of the last strategy bounded, and valid says both hold;
	// placed says the state's mesh is that placement's (place), commOK
	// that comm is.
	key            boundKey
	shares         keyShares
	valid          bool
	placed, commOK bool
	// fwd and bwd are, per block, lower bounds on its forward and its
	// recompute plus backward compute per micro-batch; comm the time of
	// the collectives of its forward and backward reshards (the MoE
	// dispatch and combine) per micro-batch.
	fwd, bwd, comm []float64
	// opFwd, opRec and opBwd are, per block, the bounds of each forward
	// op, of its recompute and of each backward op, which sumBounds totals
	// into fwd and bwd under a recompute policy.
	opFwd, opRec, opBwd [][]float64
}

// boundKey is what a Bounder's compute bounds depend on: the strategy but
// its placement, ZeRO stage and schedule, and the degree of every role
// (EP carves the expert roles out of DP and FSDP by placement).
type boundKey struct {
	seg   segmentKey // without shares, zero2 false
	roles [space.NumRoles]int
}

// NewBounder returns a Bounder of cm on cluster c (copied) with workload w
// and options o (Trace is ignored).
func (cm *Model) NewBounder(c profiles.Cluster, w space.Workload, o Options) *Bounder {
	c.Axes = append([]profiles.Axis(nil), c.Axes...)
	o.Trace = false
	return &Bounder{m: cm, in: cm.inputs(c, w, o)}
}

// boundSlack scales a bound down, so that rounding in a different order of
// additions than Evaluate's cannot put it above the step time.
const boundSlack = 1 - 1e-9

// LowerBound returns a lower bound on the step time Evaluate gives
// strategy s (validated; placed or not), in seconds: the busiest pipeline
// stage's compute bound over all micro-batches, its optimizer step and
// its bubble.
func (b *Bounder) LowerBound(s space.Strategy) (float64, error) {
	k, ok := keyOfSegments(&s, b.in.cluster.Axes)
	k.zero2 = false
	shares := k.shares
	k.shares = keyShares{}
	st, e := &b.st, &b.st.e
	// Another recompute policy of the same shape and placement: the
	// per-op bounds stand, only their totals change.
	policy, onlyPolicy := -1, false
	if ok && b.valid && k != b.key.seg && shares == b.shares {
		same := k
		same.recompute = b.key.seg.recompute
		if same == b.key.seg {
			policy, onlyPolicy = b.m.policy(s.Recompute)
		}
	}
	switch {
	case onlyPolicy:
		e.policy = policy
		b.sumBounds()
		b.key.seg = k
		if e.zero != s.Zero {
			e.zero = s.Zero
			st.pickParams() // both shardings are filled
		}
	case !ok || !b.valid || k != b.key.seg:
		b.valid, b.commOK = false, false
		if err := b.m.setup(st, &b.in, &s, -1); err != nil {
			return 0, err
		}
		b.computeBounds(&s)
		b.key, b.shares, b.valid, b.placed = boundKey{seg: k, roles: e.mr.Degrees}, shares, ok, true
	case shares != b.shares:
		// Another placement of the same shape: the compute bounds read the
		// roles' degrees only, which only EP's carving of DP and FSDP
		// changes. The mesh is resolved when that or DispatchBound needs it.
		b.shares, b.commOK, b.placed = shares, false, false
		if s.Degree[space.EP] > 1 {
			if err := b.place(&s); err != nil {
				return 0, err
			}
		}
		if e.zero != s.Zero {
			e.zero = s.Zero
			st.pickParams() // both shardings are filled
		}
	case e.zero != s.Zero:
		e.zero = s.Zero
		st.pickParams() // both shardings are filled
	}
	if st.stagesStale(b.m.p, &s) {
		// Another split of the layers over the same stages, or another
		// loop of chunks.
		st.planStages(b.m.p, s.Degree[space.PP], s.LoopChunks(), s.Split)
	}
	pp := max(s.Degree[space.PP], 1)
	rules := s.Schedule.Rules()
	// The bubble of a schedule with one idle time per micro-batch pass
	// (GPipe, 1F1B, interleaved) is that many passes of the stage's
	// compute; a zero-bubble or DualPipe bubble weighs the forward,
	// backward and weight passes apart and subtracts what an overlapped
	// pair hides, so its bound is 0 (the step's bubble is never negative).
	var bubble float64
	if b := rules.Bubble(pp, rules.VirtualStages(s.V)); b.Uniform() {
		bubble = b.F
	}
	var best float64
	if pl := rules.Placement(); pl != space.PlaceLinear && pp > 1 {
		// A paired placement's rank 0 runs half of linear ranks 0 and
		// pp-1's micro-batch passes, the embedding's and the output
		// layer's at least so (cost.pairedView); that bounds the busiest
		// rank from below, its optimizer step not counted.
		var pair float64
		for _, r := range [2]int{0, len(st.rankStage) - 1} {
			for blk, n := range st.stages[st.rankStage[r]].mult {
				if n > 0 {
					pair += n * (b.fwd[blk] + b.bwd[blk]) / 2
				}
			}
		}
		return (st.M*pair + bubble*pair) * boundSlack, nil
	}
	for si := range st.stages {
		var compute, params float64
		for blk, n := range st.stages[si].mult {
			if n > 0 {
				compute += n * (b.fwd[blk] + b.bwd[blk])
				params += n * st.params[blk]
			}
		}
		t := st.M*compute + e.memSeconds(params*b.m.optimizerBytes) + bubble*compute
		best = max(best, t)
	}
	return best * boundSlack, nil
}

// blockBounds fills the per-op bounds and, by sumBounds, b.fwd and b.bwd
// for the strategy set up in b.st.
func (b *Bounder) blockBounds() {
	e, p := &b.st.e, b.m.p
	n := len(p.Blocks)
	if len(b.opFwd) != n {
		b.opFwd, b.opRec, b.opBwd = make([][]float64, n), make([][]float64, n), make([][]float64, n)
		for blk := range p.Blocks {
			nf, nb := len(p.Blocks[blk].Fwd), len(p.Blocks[blk].Bwd)
			b.opFwd[blk], b.opRec[blk], b.opBwd[blk] = make([]float64, nf), make([]float64, nf), make([]float64, nb)
		}
	}
	for blk := range p.Blocks {
		if b.m.idle[blk] {
			continue // never counted (Model.idle)
		}
		for i := range p.Blocks[blk].Fwd {
			o := &p.Blocks[blk].Fwd[i]
			b.opFwd[blk][i] = e.opBound(o, b.m.opDims[blk][0][i], pFwd)
			b.opRec[blk][i] = e.opBound(o, b.m.opDims[blk][0][i], pRecompute)
		}
		for i := range p.Blocks[blk].Bwd {
			b.opBwd[blk][i] = e.opBound(&p.Blocks[blk].Bwd[i], b.m.opDims[blk][1][i], pBwd)
		}
	}
	b.sumBounds()
}

// sumBounds totals the per-op bounds into b.fwd and b.bwd under the
// state's recompute policy: a block's forward ops, and the recompute of
// the forward ops the policy re-runs followed by its backward ops.
func (b *Bounder) sumBounds() {
	e, p := &b.st.e, b.m.p
	n := len(p.Blocks)
	if cap(b.fwd) < n {
		b.fwd, b.bwd = make([]float64, n), make([]float64, n)
	}
	b.fwd, b.bwd = b.fwd[:n], b.bwd[:n]
	for blk := range p.Blocks {
		var fwd, bwd float64
		if b.m.idle[blk] {
			b.fwd[blk], b.bwd[blk] = 0, 0 // never counted (Model.idle)
			continue
		}
		reruns := b.m.reruns[e.policy][blk]
		for i, sec := range b.opFwd[blk] {
			fwd += sec
			if reruns[i] {
				bwd += b.opRec[blk][i]
			}
		}
		for _, sec := range b.opBwd[blk] {
			bwd += sec
		}
		b.fwd[blk], b.bwd[blk] = fwd, bwd
	}
}

// place resolves the placement of s, a strategy of the shape the bounds
// are for, into b's state (LowerBound defers it), and computes the compute
// bounds again when it changes a role's degree.
func (b *Bounder) place(s *space.Strategy) error {
	st, e := &b.st, &b.st.e
	zero := e.zero
	b.valid = false
	if err := b.m.setup(st, &b.in, s, -1); err != nil {
		return err
	}
	switch {
	case e.mr.Degrees != b.key.roles:
		b.key.roles = e.mr.Degrees
		b.computeBounds(s)
	case e.zero != zero:
		st.pickParams() // both shardings are filled
	}
	b.valid, b.placed = true, true
	return nil
}

// computeBounds computes the compute bounds of s, set up in b's state:
// per block, the stages' compositions and the parameters per chip.
func (b *Bounder) computeBounds(s *space.Strategy) {
	b.blockBounds()
	b.st.planStages(b.m.p, s.Degree[space.PP], s.LoopChunks(), s.Split)
	b.st.fillParams()
}

// commBounds fills b.comm for the placement set up in b.st.
func (b *Bounder) commBounds() {
	e, p := &b.st.e, b.m.p
	b.comm = slices.Grow(b.comm[:0], len(p.Blocks))[:len(p.Blocks)]
	for blk := range p.Blocks {
		var comm float64
		if b.m.idle[blk] {
			b.comm[blk] = 0
			continue
		}
		for _, ops := range [2][]model.Op{p.Blocks[blk].Fwd, p.Blocks[blk].Bwd} {
			for i := range ops {
				if ops[i].Kind == model.Reshard {
					comm += e.reshardCommSeconds(&ops[i])
				}
			}
		}
		b.comm[blk] = comm
	}
}

// DispatchBound returns a lower bound on what the MoE dispatch and combine
// add to the step time Evaluate gives strategy s (validated; placed or
// not) over LowerBound's, in seconds: the collectives of the forward and
// backward reshards are critical and no op hides them (Model.assemble),
// so every pipeline rank's step holds them once per micro-batch, at least
// the least loaded rank's. It is 0 for a schedule that pairs chunks and
// hides them under the other chunk's compute (DualPipe, or any schedule
// under Strategy.A2AOverlap), and for a model without reshards. Unlike
// LowerBound it reads the mesh axes that carry each role: a search adds it
// per placement.
func (b *Bounder) DispatchBound(s space.Strategy) (float64, error) {
	if !b.m.dispatches || s.A2AOverlap || s.Schedule.Rules().Overlaps().Has(space.OverlapExpertA2A) {
		return 0, nil
	}
	if _, err := b.LowerBound(s); err != nil {
		return 0, err
	}
	if !b.placed {
		if err := b.place(&s); err != nil {
			return 0, err
		}
	}
	if !b.commOK {
		b.commBounds()
		b.commOK = true
	}
	st := &b.st
	least := math.Inf(1)
	for si := range st.stages {
		var comm float64
		for blk, n := range st.stages[si].mult {
			if n > 0 {
				comm += n * b.comm[blk]
			}
		}
		least = min(least, comm)
	}
	if math.IsInf(least, 1) {
		return 0, nil
	}
	return st.M * least * boundSlack, nil
}

// opBound is a lower bound on op o's compute time in pass ps whatever the
// rules decide: an einsum's FLOPs split by every role on its operands and
// product (the rules split them by a subset: those they leave in place),
// at its kernel's rate (flopSeconds, which grows with the FLOPs), without
// the roofline's memory bound; a reshard's or an elementwise pass's time
// as reshard and elementwise price it (they read the tensors' own
// layouts).
func (e *evaluator) opBound(o *model.Op, shape opShape, ps pass) float64 {
	switch o.Kind {
	case model.Einsum:
		split := e.roles[o.A] | e.roles[o.B] | e.roles[o.C]
		if pr := e.p.Tensors[o.C].Primal; pr >= 0 && e.p.Tensors[pr].Weight {
			// A weight gradient accumulates in its weight's layout, plus
			// its data role under ZeRO-2 (accLayout).
			split |= e.roles[pr] | e.dataRole(pr)
		}
		fl := 2 * o.WorkAt(e.size[model.DimS])
		for d := model.Dim(0); d < model.NumDim; d++ {
			if shape.dims&(1<<d) != 0 {
				fl *= e.size[d]
			}
		}
		// A capped dimension split by tp only adds work (CapFactor >= 1).
		return e.flopSeconds(o, fl/e.degOf(split), ps)
	case model.Reshard:
		return e.roofline(0, e.reshardBytes(o))
	case model.Elementwise:
		return e.roofline(0, e.elementwiseBytes(o))
	}
	return 0
}
