package cost

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// evaluator is one strategy resolved against the program: every tensor's
// size and layout, the roles' degrees and the collective models. Its
// slices grow to the program's size once and are reused.
type evaluator struct {
	m    *Model
	p    *model.Program
	mr   meshRoles
	o    Options
	eff  profiles.Efficiency
	peak float64 // bf16 FLOP/s of a matmul: the peak at the chip's power-limited rate
	// attnPeak is the bf16 FLOP/s a flash attention kernel's fraction is
	// of: the datasheet peak, which no power limit lowers (on the H200 the
	// H100's attention.csv ran as fast, median 0.999 forward and 0.985
	// backward, where its GEMMs ran 1.037 times slower).
	attnPeak float64
	peak8    float64 // 8-bit matmul FLOP/s: fp8, or int8 under int8; 0 without a speed-up
	int8     bool    // precision=int8: the 8-bit projections at the int8 rate (AQT)
	fp4      bool    // the program's recipe runs its quantised matmuls at the fp4 rate (model.FP8Recipe.FP4), peak8 that rate
	// attnFill is the useful fraction of a TPU matrix unit's work in the
	// attention core (attentionFill); 1 on GPUs.
	attnFill float64
	// attnRate is the flash attention kernel's speed relative to the
	// chip's (attentionRate).
	attnRate float64
	// coreRed says the chip's core adds a reduction's partial sums
	// (profiles.Chip.CoreReductions).
	coreRed bool
	// a2aSMShare is the share of the chip's SMs the MoE all-to-all's
	// kernels take from the compute they run beside (a2aSMShare).
	a2aSMShare float64
	// collSMShare is the share of the chip's SMs NCCL's other
	// collectives take from the compute they overlap (collectiveSMShare).
	collSMShare float64
	// cpKV scales the bytes of the attention core's collectives over cp
	// alone (its keys and values, repeated to the query heads under
	// Comm.CPRepeatedKV), and cpGradWidth those of their gradients'
	// reductions (fp32 under Comm.CPAllGather): cpExchange.
	cpKV, cpGradWidth float64
	// traceHideA2A says the traced strategy's schedule overlaps the MoE
	// dispatch and combine with the paired chunk's compute (DualPipe).
	traceHideA2A bool
	hbm          float64
	zero         int
	policy       int
	// active are the roles whose degree exceeds 1; cls the active roles
	// that shard each logical dimension.
	active roleSet
	cls    [model.NumLogical]roleSet
	// degs is degOf for every role set.
	degs [numRoleSets]float64
	// size is the dimension sizes of one micro-batch over all replicas.
	size [model.NumDim]float64
	// capF is, per capped dimension, model.Program.CapFactor at the
	// tensor-parallel degree.
	capF [model.NumDim]float64
	// full is every tensor's unsharded bytes; gathered the roles a tensor
	// has been gathered over in the current pass; pending, per weight, the
	// roles its gradient is still partial over.
	full, capCorr     []float64
	gathered, pending []roleSet
	// acc is, per weight, the roles of its gradient accumulator without
	// and with ZeRO-2 (accRoles).
	acc [][2]roleSet
	// lays is every used tensor's layout: the roles on each dimension;
	// roles the roles of each (rolesOf).
	lays  [][model.MaxRank]roleSet
	roles []roleSet
	trace *[]Op
	// blockIdx is the block being costed; opWgrad and opReshard say the op
	// being costed is a weight-gradient pass or a reshard (MoE dispatch or
	// combine), opLead that it is its pass's first reshard
	// (Model.expertSpan), for its emissions.
	blockIdx                   int
	opWgrad, opReshard, opLead bool
	// memo holds memoWays outcomes per einsum of the program (opMemo),
	// valid in generation gen: one strategy's layouts, sizes and mesh,
	// from one setup to the next.
	memo []opMemo
	gen  uint64
	// stamps counts the op outcomes recorded (opMemo.stamp).
	stamps uint64
	// shape is what the sizes, degrees, capped factors and layouts above
	// were computed for (setup skips them for the same shape); shapeOK
	// says they were.
	shape   shapeKey
	shapeOK bool
	// layouts is the shape without its rows: all the tensors' layouts and
	// the einsums' inputs to the rules depend on; lgen numbers the
	// layouts met in turn (the layout generation; rolePlans.xgen).
	layouts shapeKey
	lgen    uint64
	// planned is what the einsums' plans depend on (rolePlans), pgen the
	// number of the plans' keys met in turn.
	planned planKey
	pgen    uint64
	// steps holds stepWays once-per-step outcomes per block (stepMemo).
	steps []stepMemo
	// epoch counts the placements generation gen has been moved to
	// (Model.remesh), and movedAfter is, per epoch of the generation, the
	// roles whose collective models (of a role set holding them that the
	// generation priced) a placement changed after it (meshRoles.moveTo;
	// movedAfter[epoch] is empty): an outcome recorded in epoch at that
	// priced collectives over roles dep is current while none of them
	// moved since (fresh). opDep collects the roles priced by the op
	// being resolved (blockSeconds).
	epoch      uint32
	movedAfter []roleSet
	opDep      roleSet
	// alt is scratch for the mesh of the strategy Model.remesh moves to.
	alt space.Mesh
	// placed are the last named placements met (Evaluator.EvaluatePlacedTo).
	placed placedMeshes
	// roleModel is, per role, the index of its axis groups among the
	// roleModels first it has had in the generation (modelGroups, nModels),
	// roleModels when they are not among them: the role's collective
	// models (roleChoices).
	roleModel   [space.NumRoles]uint8
	modelGroups [space.NumRoles][roleModels][]space.Group
	nModels     [space.NumRoles]uint8
}

// roleModels is the number of collective models per role whose choices an
// einsum's memo entry keeps (roleChoices): a role takes a few placements
// of its degree on a cluster's axes.
const roleModels = 4

// noteRoleModels sets roleModel for the current placement, forgetting the
// models of the generation before when reset; without reset, only for
// the roles in regrouped, whose axis groups the placement changed (the
// others keep theirs).
func (e *evaluator) noteRoleModels(reset bool, regrouped roleSet) {
	for r := range e.roleModel {
		if reset {
			e.nModels[r] = 0
		} else if !regrouped.Has(space.Role(r)) {
			continue
		}
		cur := e.mr.Groups[r]
		if id := e.roleModel[r]; !reset && id < e.nModels[r] && sameGroups(e.modelGroups[r][id], cur) {
			continue
		}
		id := uint8(0)
		for id < e.nModels[r] && !sameGroups(e.modelGroups[r][id], cur) {
			id++
		}
		if id == e.nModels[r] && id < roleModels {
			e.modelGroups[r][id] = append(e.modelGroups[r][id][:0], cur...)
			e.nModels[r]++
		}
		e.roleModel[r] = id
	}
}

// blockSeconds is meshRoles.seconds for a collective of a block's passes:
// it notes the roles priced in opDep, the roles the op's outcome depends
// on through the mesh.
func (e *evaluator) blockSeconds(op collOp, bytes float64, set roleSet) float64 {
	e.opDep |= set
	return e.mr.seconds(op, bytes, set)
}

// fresh reports whether an outcome recorded in epoch at, which priced
// collectives over the roles in dep, holds under the current placement:
// no placement since changed the collective models of a role set holding
// one of them (meshRoles.moveTo).
func (e *evaluator) fresh(dep roleSet, at uint32) bool {
	return int(at) >= len(e.movedAfter) || dep&e.movedAfter[at] == 0
}

// movedSince returns the roles of dep whose collective models a placement
// changed since epoch at (meshRoles.moveTo): those an outcome recorded
// then, which priced collectives over dep, must price again.
func (e *evaluator) movedSince(dep roleSet, at uint32) roleSet {
	if int(at) >= len(e.movedAfter) {
		return 0
	}
	return dep & e.movedAfter[at]
}

// freshRun reports whether pass result r holds under the current placement.
func (e *evaluator) freshRun(r *runResult) bool { return e.fresh(r.dep, r.at) }

// shapeKey is what an evaluator's sizes, role degrees, capped factors
// and tensor layouts depend on: the model, the rows of a micro-batch over
// all replicas (micro-batch size times replicas), the sequence length,
// sequence parallelism (under tp), the tensor-parallel degree and every
// role's degree.
type shapeKey struct {
	m         *Model
	rows, seq int
	sp        bool
	tp        int
	deg       [space.NumRoles]int
}

// planKey is what the rules' plans of an einsum depend on besides its
// operands' gathered roles, ZeRO-2 and which roles are active (rolePlans):
// the model and sequence parallelism, which place each role on the
// tensors' dimensions (evaluator.layoutOf).
type planKey struct {
	m      *Model
	sp     bool
	tpPlan bool // Comm.TPPlan forbids a weight's gather over tp (planRole)
}

// grow sizes the per-tensor slices for the program.
func (e *evaluator) grow(n int) {
	if cap(e.full) < n {
		e.full = make([]float64, n)
		e.acc = make([][2]roleSet, n)
		e.capCorr = make([]float64, n)
		e.gathered = make([]roleSet, n)
		e.pending = make([]roleSet, n)
		e.lays = make([][model.MaxRank]roleSet, n)
		e.roles = make([]roleSet, n)
	}
	e.full, e.capCorr, e.acc = e.full[:n], e.capCorr[:n], e.acc[:n]
	e.gathered, e.pending = e.gathered[:n], e.pending[:n]
	e.lays, e.roles = e.lays[:n], e.roles[:n]
}

// layout returns the roles that shard each dimension of tensor t.
func (e *evaluator) layout(t int) [model.MaxRank]roleSet { return e.lays[t] }

// layoutOf computes the layout of tensor t from the strategy's classes.
func (e *evaluator) layoutOf(t int) [model.MaxRank]roleSet {
	var l [model.MaxRank]roleSet
	tt := &e.p.Tensors[t]
	for i := 0; i < tt.Rank; i++ {
		l[i] = e.cls[tt.Logical[i]]
	}
	return l
}

// accLayout is the layout the gradient of weight w accumulates in: the
// weight's own, plus dp (edp for an expert) on its data dimension under
// ZeRO-2 (docs/formulas.md §3.1).
func (e *evaluator) accLayout(w int) [model.MaxRank]roleSet {
	return e.accLayoutOf(w, e.zero >= 2)
}

// accLayoutOf is accLayout under ZeRO-2 or not (zero2).
func (e *evaluator) accLayoutOf(w int, zero2 bool) [model.MaxRank]roleSet {
	l := e.layout(w)
	if zero2 {
		tt := &e.p.Tensors[w]
		for i := 0; i < tt.Rank; i++ {
			if tt.Logical[i] == model.WeightEmbed || tt.Logical[i] == model.ExpertEmbed {
				l[i] |= e.dataRole(w)
			}
		}
	}
	return l
}

// accRoles is the roles of weight w's gradient accumulator (accLayout),
// kept per layout generation for either gradient sharding (Model.setup).
func (e *evaluator) accRoles(w int) roleSet {
	if e.zero >= 2 {
		return e.acc[w][1]
	}
	return e.acc[w][0]
}

// zeroRoles is the data role a ZeRO-2 accumulator of weight w is sharded
// over: dp, or edp for a routed expert's weight.
func (e *evaluator) zeroRoles(w int) roleSet {
	if e.zero < 2 {
		return 0
	}
	return e.dataRole(w)
}

// dataRole is the pure data-parallel role of weight w: dp, or edp for a
// routed expert's weight, when active.
func (e *evaluator) dataRole(w int) roleSet {
	if e.p.Tensors[w].Expert {
		if e.p.Options.ExpertsWhole {
			// Whole experts are replicated over tp's ranks that ep did not
			// take too: the distributed optimizer shards them over the
			// expert data-parallel group, edp x tpe [MEG-MOE]
			// (model.ProgramOptions.ExpertsWhole).
			return (bit(space.RoleEDP) | bit(space.RoleTPE)) & e.active
		}
		return bit(space.RoleEDP) & e.active
	}
	return bit(space.RoleDP) & e.active
}

// replicaRoles are the roles over which weight w's gradient may stay partial
// until the step's reduction: the roles that replicate the weight (dp, edp,
// cp, tp, and tp's expert part tpe) and do not shard its accumulator.
func (e *evaluator) replicaRoles(w int) roleSet {
	stored := e.accRoles(w)
	return (bit(space.RoleDP) | bit(space.RoleEDP) | bit(space.RoleCP) | bit(space.RoleTP) | bit(space.RoleTPE)) &^ stored & e.active
}

// degOf is the product of the degrees of the roles in set.
func (e *evaluator) degOf(set roleSet) float64 { return e.degs[set] }

// bytes is tensor t's bytes per chip when sharded over the roles in set:
// its full bytes over their degrees, with the early stop of a dimension
// tensor parallelism splits beyond its cap (key/value heads).
func (e *evaluator) bytes(t int, set roleSet) float64 {
	b := e.full[t] / e.degs[set]
	if set.Has(space.RoleTP) {
		b *= e.capCorr[t]
	}
	return b
}

// fillDegrees tabulates degOf for every role set.
func (e *evaluator) fillDegrees() {
	e.degs[0] = 1
	for s := 1; s < len(e.degs); s++ {
		e.degs[s] = e.degs[s&(s-1)] * e.mr.deg[bits.TrailingZeros(uint(s))]
	}
}

func rolesOf(l [model.MaxRank]roleSet) roleSet {
	var s roleSet
	for _, x := range l {
		s |= x
	}
	return s
}

// pos finds the dimension index of role r in layout l, or -1.
func pos(l [model.MaxRank]roleSet, rank int, r space.Role) int {
	for i := 0; i < rank; i++ {
		if l[i].Has(r) {
			return i
		}
	}
	return -1
}

// dimMask is the set of dimensions of tensor t.
func (e *evaluator) dimMask(t int) uint32 { return e.m.dims[t] }

const inf = math.MaxFloat64

// evalState is the working memory of one evaluation: the evaluator and the
// per-micro-batch cost of each block. An Evaluator keeps one and resets
// only what a new strategy overwrites.
type evalState struct {
	e evaluator
	// host is the strategy's host offload (assemble sets it).
	host hostOffload
	// blocks are, per block of the program, its cost (each its own
	// allocation: swapBlock exchanges them with spares by pointer).
	blocks []*segCost
	// keys are, per block, the recompute class (Model.rerunClass) and
	// ZeRO stage its cost in blocks is for.
	keys []blockKey
	// spares are, per block, its costs for other recompute classes and
	// ZeRO stages under the same layouts, sizes and mesh (swapBlock).
	spares []spareBlocks
	// pSend is one pipeline send on the slowest hop and pRamp one
	// micro-batch's sends over every stage boundary, seconds.
	pSend, pRamp float64
	// M is the micro-batches per step.
	M float64
	// stages are the distinct stage compositions of the pipeline, ranks
	// the candidate ranks and rankStage the index in stages of each one's
	// composition: the current stageSet's (planStages). kindStarts are the
	// layers where the program's layer kind changes.
	stages                       []stagePlan
	ranks, rankStage, kindStarts []int
	// split is the split of the layers st.stages are of and loop the
	// chunks a rank runs them in (planStages); rankCounts the layers of
	// each kind per rank of looped chunks (space.Split.LoopCounts).
	split      space.Split
	loop       int
	rankCounts []int
	// stageSets are the stage plans of the last few pipelines (a layout's
	// schedules take several loops of chunks), nextStageSet the one the
	// next new pipeline takes.
	stageSets    [maxStageSets]stageSet
	nextStageSet int
	// lin is a rank of a linear placement (rankView, sharing a stage
	// plan's multiplicities), view one that runs two stages' layers and
	// best the busiest of those.
	lin, view, best rankView
	// known are the rules of the schedules met (rulesOf), looked up once
	// each: at most the table's few, as check refuses any other.
	known []knownRules
	// offload is, per layer kind, the bytes one layer keeps in host memory
	// per micro-batch under the strategy's policy, and kept those it keeps
	// in HBM, which an activation offload moves to host memory too.
	offload, kept []float64
	// actHost is the share of the layers whose kept activations an
	// activation offload moves to host memory (assemble sets it).
	actHost float64
	// params is, per block, the parameters one chip updates (shardParams),
	// sharded those without and with ZeRO's sharding of the optimizer
	// states (params is one of them); stored those it holds (ZeRO aside)
	// and computed those it computes gradients for (FSDP aside).
	params, stored, computed []float64
	sharded                  [2][]float64
	// fp8 is, per block, the parameters with fp8 copies one chip computes
	// with, and gathered those FSDP gathers, as the gather makes them
	// (fillParams).
	fp8, gathered []float64
	// paramsAt and offloadAt are what params (and stored, computed, fp8,
	// gathered) and offload were last filled for (keepParams, keepOffload).
	paramsAt, offloadAt filledAt
	// sums are the rank views' sums of the block costs above, per view
	// slot (Model.assemble), current while their gen is sumsGen, which an
	// Evaluator moves on whenever the block costs or parameters may change
	// (0: never kept); sumScratch is one view's when none are kept.
	sums       []rankSums
	sumsGen    uint64
	sumScratch rankSums
}

// stepParts recomputes every block's once-per-step collectives for ZeRO
// stage zero, keeping the per-micro-batch passes (valid for stages 0 and 1
// alike).
func (st *evalState) stepParts(zero int) {
	e := &st.e
	e.zero = zero
	for b := range e.p.Blocks {
		if !e.m.idle[b] {
			e.stepPart(b, st.blocks[b])
		}
		st.keys[b].zero = zero
	}
	st.keepParams()
}

// blockKey is what a block's cost per micro-batch depends on besides the
// strategy's layouts, sizes and mesh: the class of its recompute policy
// in the block (Model.rerunClass) and the ZeRO stage.
type blockKey struct {
	rerun, zero int
}

// prepare resolves s on the inputs and computes the per-micro-batch block
// costs into st: everything that does not depend on the pipeline schedule.
// name is the caller's name for s's placement (Evaluator.EvaluatePlacedTo),
// negative when none.
func (cm *Model) prepare(st *evalState, in *evalInputs, s *space.Strategy, name int64) error {
	if err := cm.setup(st, in, s, name); err != nil {
		return err
	}
	p, e := cm.p, &st.e
	if in.options.Trace {
		e.trace = new([]Op)
		e.traceHideA2A = s.A2AOverlap && e.epOverlapHides(in.options.Comm.GraphedStep) || s.Schedule.Rules().Overlaps().Has(space.OverlapExpertA2A)
	}

	// Per-micro-batch cost of each block.
	if cap(st.blocks) < len(p.Blocks) {
		st.blocks = make([]*segCost, len(p.Blocks))
	}
	st.blocks = st.blocks[:len(p.Blocks)]
	for b, sc := range st.blocks {
		if sc == nil {
			st.blocks[b] = new(segCost)
		}
	}
	st.keys = slices.Grow(st.keys[:0], len(p.Blocks))[:len(p.Blocks)]
	var spans [][2]int // per block, its ops in the trace
	if e.trace != nil {
		spans = make([][2]int, len(p.Blocks))
	}
	for b := range p.Blocks {
		st.blocks[b].reset()
		if cm.idle[b] {
			st.keys[b] = blockKey{rerun: cm.rerunClass[b][e.policy], zero: e.zero}
			continue
		}
		first := 0
		if e.trace != nil {
			first = len(*e.trace)
		}
		e.block(b, st.blocks[b])
		st.keys[b] = blockKey{rerun: cm.rerunClass[b][e.policy], zero: e.zero}
		if e.trace == nil {
			continue
		}
		label, used := blockLabel(p, b)
		if !used {
			*e.trace = (*e.trace)[:first] // a block no layer runs (the dense MLP of an all-MoE stack)
			continue
		}
		for i := first; i < len(*e.trace); i++ {
			(*e.trace)[i].Block = label
		}
		spans[b] = [2]int{first, len(*e.trace)}
	}
	if e.trace != nil {
		*e.trace = inExecutionOrder(p, *e.trace, spans)
	}

	st.fillSends(s.Degree[space.PP])
	st.planStages(p, s.Degree[space.PP], s.LoopChunks(), s.Split)
	st.keepParams()
	st.keepOffload()
	return nil
}

// knownRules are one schedule's rules, and the step rules of the last few
// pipeline depths, virtual stages and micro-batches met with them
// (stepRulesOf; next is the one to replace).
type knownRules struct {
	schedule space.Schedule
	rules    space.Rules
	srs      [4]knownStepRules
	next     int
}

// knownStepRules are step rules for v virtual stages asked and the
// all-to-all overlap a2a (ok: filled).
type knownStepRules struct {
	sr  stepRules
	v   int
	a2a bool
	ok  bool
}

// rulesOf returns the rules of schedule sc, looked up in the schedule
// table once for each schedule met: the search's consecutive strategies
// differ in their schedule most often. The result is valid until the next
// call.
func (st *evalState) rulesOf(sc space.Schedule) *knownRules {
	for i := range st.known {
		if st.known[i].schedule == sc {
			return &st.known[i]
		}
	}
	st.known = append(st.known, knownRules{schedule: sc, rules: sc.Rules()})
	return &st.known[len(st.known)-1]
}

// filledAt is the evaluator generation (the layouts, sizes and role
// degrees) and, for the offloaded bytes, the recompute policy a per-block
// table of an evalState was filled for (gen 0: never).
type filledAt struct {
	gen uint64
	key int
}

// keepParams fills st.params, stored, computed, fp8 and gathered unless
// they are already of the current generation, and takes params for the current
// ZeRO sharding: they read the layouts and role degrees (which only a new
// generation changes) and whether ZeRO shards the optimizer states (stage
// 1 and up), not the placement or the recompute policy (fillParams,
// shardParams).
func (st *evalState) keepParams() {
	at := filledAt{gen: st.e.gen}
	if st.paramsAt != at {
		st.fillParams()
		st.paramsAt = at
	}
	st.pickParams()
}

// pickParams points st.params at the parameters per chip of the current
// ZeRO stage's sharding (fillParams filled both).
func (st *evalState) pickParams() { st.params = st.sharded[min(st.e.zero, 1)] }

// keepOffload fills st.offload unless it is already of the current
// generation and recompute policy, all it reads (fillOffload).
func (st *evalState) keepOffload() {
	at := filledAt{gen: st.e.gen, key: st.e.policy}
	if st.offloadAt != at {
		st.fillOffload()
		st.offloadAt = at
	}
}

// fillSends sets the pipeline sends of pp stages: the residual stream's
// local shard [MEG-SCHED], docs/formulas.md §3.3, on every axis the
// pipeline crosses.
func (st *evalState) fillSends(pp int) {
	st.pSend, st.pRamp = 0, 0
	if pp > 1 {
		st.pSend, st.pRamp = PipelineSendSeconds(st.e.sendBytes(), st.e.mr.Pipeline)
	}
}

// inExecutionOrder returns trace, whose ops of block b are
// trace[spans[b][0]:spans[b][1]], with its blocks in the order a step's
// forward pass reaches them, for a reader of plan explain: the embedding,
// the layers' blocks (and the multi-token-prediction module's) in program
// order, the output layer. The costs do not depend on the order.
func inExecutionOrder(p *model.Program, trace []Op, spans [][2]int) []Op {
	order := make([]int, 0, len(p.Blocks))
	order = append(order, p.Embedding)
	for b := range p.Blocks {
		if b != p.Embedding && b != p.Output {
			order = append(order, b)
		}
	}
	if p.Output != p.Embedding {
		order = append(order, p.Output)
	}
	out := make([]Op, 0, len(trace))
	for _, b := range order {
		if b >= 0 && b < len(spans) {
			out = append(out, trace[spans[b][0]:spans[b][1]]...)
		}
	}
	return out
}

// blockLabel names block b of p for the traced program with the layers
// that run it ("attention (sliding, 128 tokens): 12 of 24 layers"), and
// reports whether any does.
func blockLabel(p *model.Program, b int) (string, bool) {
	blk := &p.Blocks[b]
	if b == p.Embedding || b == p.Output {
		return blk.Name, true
	}
	name := blk.Name
	if blk.Attention != model.AttnFull {
		name += fmt.Sprintf(" (%s, %d tokens)", blk.Attention, p.Spec.Span(blk.Attention))
	}
	n, mtp := blockLayers(p, b)
	extra := ""
	if mtp {
		extra = fmt.Sprintf(" and %d multi-token-prediction module(s)", p.MTP.Count)
	}
	if n == 0 && !mtp {
		return name, false
	}
	return fmt.Sprintf("%s: %d of %d layers%s", name, n, p.NumLayers(), extra), true
}

// blockLayers returns the layers of p's stack that run block b, and
// whether its multi-token-prediction modules do.
func blockLayers(p *model.Program, b int) (layers int, mtp bool) {
	for _, r := range p.Stack {
		if slices.Contains(p.Kinds[r.Kind].Blocks, b) {
			layers += r.Count
		}
	}
	m := p.MTP
	return layers, m.Count > 0 && slices.Contains(p.Kinds[m.Kind].Blocks, b)
}

// blockRuns reports whether any part of p runs block b: the embedding,
// the output layer, a layer of the stack or a multi-token-prediction
// module.
func blockRuns(p *model.Program, b int) bool {
	n, mtp := blockLayers(p, b)
	return b == p.Embedding || b == p.Output || n > 0 || mtp
}

// fillOffload sets st.offload for the strategy's recompute policy.
func (st *evalState) fillOffload() {
	e := &st.e
	st.offload, st.kept = st.offload[:0], st.kept[:0]
	for k, ts := range e.m.offloaded[e.policy] {
		st.offload = append(st.offload, st.tensorBytes(ts))
		st.kept = append(st.kept, st.tensorBytes(e.m.kept[e.policy][k]))
	}
}

// tensorBytes is the bytes per chip of the tensors ts, as laid out.
func (st *evalState) tensorBytes(ts []int) float64 {
	e := &st.e
	var b float64
	for _, t := range ts {
		b += e.bytes(t, rolesOf(e.layoutOf(t)))
	}
	return b
}

// rerun recomputes st, prepared for a strategy that differs from s only in
// its recompute policy, ZeRO stage and schedule, for s: the recompute and
// backward passes of every block whose re-run ops or gradient sharding
// (ZeRO-2) change, keeping their forward passes, the once-per-step
// collectives of the blocks whose ZeRO stage changes, and what depends on
// the policy and stage.
func (cm *Model) rerun(st *evalState, in *evalInputs, s *space.Strategy) error {
	policy, err := cm.check(in, s)
	if err != nil {
		return err
	}
	st.rekey(policy, s.Zero)
	return nil
}

// rekey moves st to recompute policy and ZeRO stage zero under the
// evaluator's current placement: every block's cost (refresh) and what
// depends on the policy and stage.
func (st *evalState) rekey(policy, zero int) {
	e := &st.e
	e.policy, e.zero = policy, zero
	for b := range st.blocks {
		st.refresh(b, blockKey{rerun: e.m.rerunClass[b][policy], zero: zero})
	}
	st.keepParams()
	st.keepOffload()
}

// refresh makes st.blocks[b] block b's cost for key k under the current
// placement: it costs again the passes that priced a collective over a
// role a placement since moved (all three when the forward pass did, from
// the memo but for those ops), takes or computes the cost of another
// recompute class or gradient sharding (swapBlock), and recomputes the
// once-per-step collectives for another ZeRO stage (0 and 1 share the
// passes) or placement.
func (st *evalState) refresh(b int, k blockKey) {
	e, sc, old := &st.e, st.blocks[b], st.keys[b]
	if !e.m.idle[b] && !e.freshBlock(sc) {
		// Under another placement: priced again from the op outcomes
		// when they all hold (revalidate), else below.
		e.revalidate(b, sc)
	}
	switch {
	case e.m.idle[b]:
	case !e.freshRun(&sc.runs[0]):
		sc.reset()
		e.block(b, sc)
	case k.rerun != old.rerun || (k.zero >= 2) != (old.zero >= 2):
		st.swapBlock(b, k)
	case !e.freshRun(&sc.runs[1]) || !e.freshRun(&sc.runs[2]):
		sc.reset()
		e.blockBackward(b, sc)
	case k.zero != old.zero || !e.stepFresh(sc):
		e.stepPart(b, sc)
	}
	st.keys[b] = k
}

// remesh moves st, prepared for a strategy with s's degrees, micro-batch
// and sequence parallelism, to s's placement and to its recompute policy
// and ZeRO stage, and reports true; when the placement changes a role's
// degree (EP carving DP and FSDP into other expert roles) it reports
// false with st unchanged: prepare s then. The sizes and layouts stay, so
// every outcome of the generation that priced no collective over a role
// set whose collective models the placement changed stays too
// (meshRoles.moveTo, evaluator.fresh; tp moved to another torus axis of
// the same size and links prices the same). A block's passes are costed
// again only when one of them did, and then from the memo but for the ops
// that did. A block's once-per-step collectives are priced again when the
// placement moved a role they priced (stepFresh); the pipeline sends are
// computed again. name is the caller's name for s's placement
// (Evaluator.EvaluatePlacedTo): a kept placement of that name is not
// resolved again, and its collective models are taken from it.
func (cm *Model) remesh(st *evalState, in *evalInputs, s *space.Strategy, name int64) (bool, error) {
	policy, err := cm.check(in, s)
	if err != nil {
		return false, err
	}
	e := &st.e
	pl, err := e.placed.resolve(&e.alt, in, s, name)
	if err != nil {
		return false, err
	}
	if e.alt.Degrees != e.mr.Degrees {
		return false, nil
	}
	moved, regrouped := e.mr.moveTo(&e.alt, pl)
	e.noteRoleModels(false, regrouped)
	if moved != 0 {
		for a := range e.movedAfter {
			e.movedAfter[a] |= moved
		}
		e.epoch++
		e.movedAfter = append(e.movedAfter, 0)
	}
	st.rekey(policy, s.Zero)
	st.fillSends(s.Degree[space.PP])
	return true, nil
}

// sameGroups reports whether two roles' axis groups are the same shares
// of the same axes of one cluster.
func sameGroups(a, b []space.Group) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Axis.Name != b[i].Axis.Name || a[i].Size != b[i].Size || a[i].Whole != b[i].Whole {
			return false
		}
	}
	return true
}

// blockSpares is the number of other (recompute class, ZeRO stage) costs
// of a block an evalState keeps for its strategy's layouts, sizes and
// mesh: a block has at most a few recompute classes, each under ZeRO-2
// and not.
const blockSpares = 12

// spareBlocks are a block's costs per micro-batch for other recompute
// classes and ZeRO stages than the strategy's (evalState.swapBlock).
type spareBlocks struct {
	sc   [blockSpares]*segCost // nil until first used
	key  [blockSpares]blockKey
	gen  [blockSpares]uint64 // the evaluator generation of each; 0: none
	next int                 // the next one to give up when all are current
}

// freshBlock reports whether block cost sc holds under the evaluator's
// current placement: each of its passes does.
func (e *evaluator) freshBlock(sc *segCost) bool {
	r := &sc.runs
	return e.freshRun(&r[0]) && e.freshRun(&r[1]) && e.freshRun(&r[2])
}

// swapBlock makes st.blocks[b] block b's cost for key k, whose recompute
// class or gradient sharding differ from those of the cost it holds: it
// keeps that cost among the block's spares and takes the spare of the
// same class and sharding when there is one (made current from the cost
// it puts aside where they share passes, evaluator.revalidateFrom, and
// recomputing the once-per-step collectives for another ZeRO stage), else
// recomputes the recompute and backward passes on the forward pass it
// holds.
func (st *evalState) swapBlock(b int, k blockKey) {
	e := &st.e
	if len(st.spares) != len(st.blocks) {
		st.spares = make([]spareBlocks, len(st.blocks))
	}
	sp := &st.spares[b]
	old := st.keys[b]
	for j := range sp.sc {
		if sp.gen[j] == e.gen && sp.key[j].rerun == k.rerun && (sp.key[j].zero >= 2) == (k.zero >= 2) &&
			(e.freshBlock(sp.sc[j]) || e.revalidateFrom(b, sp.sc[j], st.blocks[b], k.rerun == old.rerun)) {
			had := sp.key[j].zero
			st.blocks[b], sp.sc[j] = sp.sc[j], st.blocks[b]
			sp.key[j] = old
			if had != k.zero || !e.stepFresh(st.blocks[b]) {
				// Another ZeRO stage, or a placement since that moved a
				// role they priced (Model.remesh).
				e.stepPart(b, st.blocks[b])
			}
			return
		}
	}
	v := -1
	for j := range sp.sc {
		if sp.gen[j] != e.gen {
			v = j
			break
		}
	}
	if v < 0 {
		v = sp.next
		sp.next = (sp.next + 1) % blockSpares
	}
	if sp.sc[v] == nil {
		sp.sc[v] = new(segCost)
	}
	st.blocks[b], sp.sc[v] = sp.sc[v], st.blocks[b]
	sp.key[v], sp.gen[v] = old, e.gen
	sc := st.blocks[b]
	sc.runs[0].copyFrom(&sp.sc[v].runs[0]) // the forward pass, the same for every class
	sc.reset()
	e.blockBackward(b, sc)
}

// setup resolves s on the inputs into st: the micro-batches, the roles'
// degrees and every used tensor's size and layout, without costing
// anything. name is the caller's name for s's placement, negative when
// none (Model.prepare).
func (cm *Model) setup(st *evalState, in *evalInputs, s *space.Strategy, name int64) error {
	policy, err := cm.check(in, s)
	if err != nil {
		return err
	}
	p := cm.p
	mbs := max(s.MB, 1)
	st.M = float64(in.workload.Batch / (s.Replicas() * mbs))

	e := &st.e
	e.m, e.p, e.o, e.policy, e.trace, e.zero = cm, p, in.options, policy, nil, s.Zero
	if err := e.mr.resolve(in, s, &e.placed, name); err != nil {
		return err
	}
	e.mr.routing = cm.routing.under(s.Dispatcher)
	e.eff = in.eff
	// The matmuls run at the chip's power-limited rate of its peaks
	// (profiles.Chip.PowerLimitedRate; the H200's measured GEMM sweep), the
	// flash attention kernel at its datasheet peak.
	rate := in.cluster.Chip.KernelRate()
	e.peak, e.hbm = in.cluster.Chip.PeakBF16FLOPs*rate, in.cluster.Chip.HBMBandwidthBytesPerS
	e.attnPeak = in.cluster.Chip.PeakBF16FLOPs
	e.peak8, e.int8, e.fp4 = in.cluster.Chip.PeakFP8FLOPs*rate, s.Int8(), false
	e.attnFill = attentionFill(p, &in.cluster.Chip)
	e.attnRate = attentionRate(p, &in.eff)
	e.coreRed = in.cluster.Chip.CoreReductions
	e.a2aSMShare = a2aSMShare(s.Dispatcher, in.cluster.Chip.SMs)
	e.collSMShare = collectiveSMShare(in.cluster.Chip.Family, in.cluster.Chip.SMs)
	e.cpKV, e.cpGradWidth = cpExchange(p, in.options.Comm)
	if e.int8 {
		e.peak8 = in.cluster.Chip.PeakInt8OPs * rate
	}
	if r := p.Options.FP8; r != nil && r.FP4 && !e.int8 {
		// An NVFP4 recipe: the fp4 rate (space.Validate refuses a chip
		// without one before the model is asked).
		e.peak8, e.fp4 = in.cluster.Chip.PeakFP4FLOPs*rate, true
	}
	e.gen++
	e.epoch, e.movedAfter = 0, append(e.movedAfter[:0], 0)
	e.noteRoleModels(true, 0)
	if n := cm.numOps * memoWays; len(e.memo) != n {
		e.memo = make([]opMemo, n)
	}
	if n := len(p.Blocks) * stepWays; len(e.steps) != n {
		e.steps = make([]stepMemo, n)
	}
	tp := max(s.Degree[space.TP], 1)
	shape := shapeKey{m: cm, rows: mbs * s.Replicas(), seq: in.seq, sp: s.SP && tp > 1, tp: tp, deg: e.mr.Degrees}
	if pk := (planKey{m: cm, sp: shape.sp, tpPlan: in.options.Comm.TPPlan}); e.pgen == 0 || pk != e.planned {
		// Another model or sequence parallelism: the einsums' plans go
		// (rolePlans).
		e.pgen++
		e.planned = pk
	}
	relaid := false
	if lk := (shapeKey{m: cm, seq: in.seq, sp: shape.sp, tp: tp, deg: shape.deg}); e.lgen == 0 || lk != e.layouts {
		// Other degrees: the einsums' inputs to the rules go, and the
		// layouts are computed below (a new shape, as the degrees differ).
		e.lgen++
		e.layouts, relaid = lk, true
	}
	if e.shapeOK && shape == e.shape {
		return nil // the sizes, degrees and layouts of the last strategy
	}
	e.shapeOK = false
	e.size = p.Sizes(float64(shape.rows), float64(in.seq))
	if relaid || cap(e.full) < len(p.Tensors) {
		// Other layouts: the degrees, the classes' roles, the capped
		// factors and every used tensor's layout (they do not depend on
		// the rows).
		e.fillDegrees()
		e.active = e.mr.Active()
		e.cls = space.ClassRoles(shape.sp, p.Options.ExpertsWhole, p.Options.WeightsOverCP)
		for l := range e.cls {
			e.cls[l] &= e.active
		}
		for d := range e.capF {
			if p.Cap[d] > 0 {
				e.capF[d] = p.CapFactor(model.Dim(d), tp)
			}
		}
		e.grow(len(p.Tensors))
		for _, i := range cm.used {
			e.lays[i] = e.layoutOf(i)
			e.roles[i] = rolesOf(e.lays[i])
			e.capCorr[i] = 1
			if d := cm.capDim[i]; d != model.NumDim {
				e.capCorr[i] = e.capF[d]
			}
		}
		for _, i := range cm.used {
			if p.Tensors[i].Weight {
				e.acc[i] = [2]roleSet{rolesOf(e.accLayoutOf(i, false)), rolesOf(e.accLayoutOf(i, true))}
			}
		}
	}
	for _, i := range cm.used {
		e.full[i] = p.FullBytes(i, &e.size)
	}
	e.shape, e.shapeOK = shape, true
	return nil
}

// sendBytes is one chip's pipeline send: the residual stream's local shard,
// divided over tp also without SP (Megatron's scatter/gather, [NARA §4.1],
// docs/formulas.md §3.3).
func (e *evaluator) sendBytes() float64 {
	x := e.p.Blocks[e.p.Kinds[0].Blocks[0]].Input
	l := e.roles[x] | bit(space.RoleTP)&e.active
	return e.bytes(x, l)
}

// fillEfficiency takes the cluster's coefficients, filling a field left zero
// with the chip family's documented default (profiles.DefaultEfficiency):
// once per evalInputs (Model.inputs).
func (e *evaluator) fillEfficiency(c profiles.Cluster) {
	d, ok := profiles.DefaultEfficiency(c.Chip.Family)
	if !ok {
		d = profiles.GenericEfficiency()
	}
	e.eff = c.Efficiency
	if e.eff.MatmulFraction <= 0 {
		e.eff.MatmulFraction = d.MatmulFraction
	}
	if e.eff.MatmulHalfFLOPs <= 0 {
		e.eff.MatmulHalfFLOPs = d.MatmulHalfFLOPs
	}
	if e.eff.MatmulFP8Fraction <= 0 {
		e.eff.MatmulFP8Fraction = d.MatmulFP8Fraction
	}
	if e.eff.MatmulFP8HalfFLOPs <= 0 {
		e.eff.MatmulFP8HalfFLOPs = d.MatmulFP8HalfFLOPs
	}
	if e.eff.MatmulFP8Fraction <= 0 {
		// A custom chip with an fp8 peak but no family defaults: the
		// measured H100 fraction and t₀ (profiles.Efficiency).
		g := profiles.GenericEfficiency()
		e.eff.MatmulFP8Fraction, e.eff.MatmulFP8HalfFLOPs = g.MatmulFP8Fraction, g.MatmulFP8HalfFLOPs
	}
	if e.eff.MatmulFP4Fraction <= 0 {
		e.eff.MatmulFP4Fraction, e.eff.MatmulFP4HalfFLOPs = d.MatmulFP4Fraction, d.MatmulFP4HalfFLOPs
	}
	if e.eff.MatmulFP4Fraction <= 0 && c.Chip.PeakFP4FLOPs > 0 {
		// A custom chip with an fp4 peak but no family defaults: B200's.
		b, _ := profiles.DefaultEfficiency("nvidia-blackwell")
		e.eff.MatmulFP4Fraction, e.eff.MatmulFP4HalfFLOPs = b.MatmulFP4Fraction, b.MatmulFP4HalfFLOPs
	}
	if e.eff.HBMFraction <= 0 {
		e.eff.HBMFraction = d.HBMFraction
	}
	if e.eff.OverlapFraction <= 0 {
		e.eff.OverlapFraction = d.OverlapFraction
	}
	if e.eff.AttentionFwdFraction <= 0 {
		e.eff.AttentionFwdFraction, e.eff.AttentionFwdScoreSeconds, e.eff.AttentionFwdHalfSeq =
			d.AttentionFwdFraction, d.AttentionFwdScoreSeconds, d.AttentionFwdHalfSeq
	}
	if e.eff.AttentionBwdFraction <= 0 {
		e.eff.AttentionBwdFraction, e.eff.AttentionBwdScoreSeconds, e.eff.AttentionBwdHalfSeq =
			d.AttentionBwdFraction, d.AttentionBwdScoreSeconds, d.AttentionBwdHalfSeq
	}
	if e.eff.SustainedFraction <= 0 {
		e.eff.SustainedFraction = d.SustainedFraction
	}
	if r := c.Chip.ScoreRate; r > 0 {
		// A faster special-function unit than the family's measured chip
		// (profiles.Chip.ScoreRate: Blackwell Ultra's doubled exponentials).
		e.eff.AttentionFwdScoreSeconds /= r
		e.eff.AttentionBwdScoreSeconds /= r
	}
	// In a job of more than one chip every kernel rate is SustainedFraction
	// of the single-chip one (profiles.Efficiency, docs/hardware.md).
	if s := e.eff.SustainedFraction; s > 0 && s < 1 && c.Chips() > 1 {
		e.eff.MatmulFraction *= s
		e.eff.MatmulFP8Fraction *= s
		e.eff.MatmulFP4Fraction *= s
		e.eff.AttentionFwdFraction *= s
		e.eff.AttentionBwdFraction *= s
		e.eff.AttentionFwdScoreSeconds /= s
		e.eff.AttentionBwdScoreSeconds /= s
	}
}

// cpExchange returns the factors on the bytes of context parallelism's key
// and value exchange under c: the query heads over the key and value heads
// of a grouped-query attention whose framework repeats them before the
// kernel (Comm.CPRepeatedKV; 1 otherwise, and for latent attention, whose
// keys and values are per head already), and fp32 over the activations'
// width for their gradients under Comm.CPAllGather (1 otherwise).
func cpExchange(p *model.Program, c Comm) (kv, grad float64) {
	kv, grad = 1, 1
	sp := p.Spec
	if c.CPRepeatedKV && sp.MLA == nil && sp.KVHeads > 0 && sp.KVHeads < sp.Heads {
		kv = float64(sp.Heads) / float64(sp.KVHeads)
	}
	if a := p.Options.Precision.Activation; c.CPAllGather && a > 0 {
		grad = 4 / a
	}
	return kv, grad
}
