package space

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// The genes of a Space, in mixed-radix order (GeneLayout varies slowest).
// Every choice list is ordered: layouts by degrees (tp, cp, fsdp, pp, dp,
// ep, ascending) then placement, micro-batch sizes ascending, schedules in
// the table's order (1f1b, gpipe, then interleaved by ascending v),
// recompute none, selective, full, and ZeRO stages ascending.
const (
	GeneLayout    = iota // degrees, ep and their placement on the mesh (and the MoE token dispatcher where the framework searches it)
	GeneMB               // micro-batch size
	GeneRecompute        // activation recomputation policy
	GeneZero             // ZeRO stage across dp
	GeneSchedule         // pipeline schedule and virtual stages v (fastest: neighbours share all but the schedule)
	NumGenes
)

// layout is one choice of the layout gene. It holds no pointer, so that
// the million layouts of a large space are neither scanned by the garbage
// collector nor copied behind its write barriers, and is 72 bytes.
type layout struct {
	// deg is the degrees (Degrees): a space's cluster has at most
	// profiles.MaxChips chips (checkInputs), so each fits 32 bits.
	deg        [NumDims]uint32
	perReplica int // batch/(dp*fsdp)
	// meshOff and meshN locate each dimension's shares in the share pool
	// of the list or Space that holds the layout (spans, meshOf): at most
	// one per axis of size above 1, so fewer than 32 (profiles.MaxChips).
	meshOff [NumDims]uint32
	meshN   [NumDims]uint8
	sp      bool
	whole   bool // etp=1 with tp > 1: the experts whole on every tp chip (Strategy.ExpertsWhole)
	// epTP says ep takes tensor-parallel ranks on some axis (beyond that
	// axis's dp and fsdp part), which only whole experts under sequence
	// parallelism allow (Strategy.tpCarvable): such a layout is listed
	// with whole experts only (sortedLayouts).
	epTP bool
	// disp is the MoE token dispatcher of a layout with ep > 1, the index
	// in its Space's dispatchers when it has any (withDispatchers).
	disp uint8
	// epOut says ep spans an axis of the scale-out network (epScaleOut):
	// where the EP overlap hides its all-to-all in an eager step.
	epOut bool
}

// degrees returns l's degrees.
func (l *layout) degrees() Degrees {
	var d Degrees
	for i, v := range l.deg {
		d[i] = int(v)
	}
	return d
}

// spans returns where l's shares lie in its pool, per dimension.
func (l *layout) spans() [NumDims]shareSpan {
	var out [NumDims]shareSpan
	for d := range out {
		out[d] = shareSpan{off: l.meshOff[d], n: uint32(l.meshN[d])}
	}
	return out
}

// setSpan places dimension d's shares of l at r of its pool.
func (l *layout) setSpan(d Dim, r shareSpan) {
	l.meshOff[d], l.meshN[d] = r.off, uint8(r.n)
}

// shareSpan is where one dimension's shares lie in a share pool: pool[off
// : off+n], none when n is 0.
type shareSpan struct {
	off, n uint32
}

// meshOf returns the mesh of layout l over pool, its list's or Space's:
// each dimension's shares as a slice of pool that cannot grow into the
// rest of it (nil for none).
func meshOf(pool []Share, l *layout) [NumDims][]Share {
	var m [NumDims][]Share
	for d, n := range l.meshN {
		if n > 0 {
			off := l.meshOff[d]
			end := off + uint32(n)
			m[d] = pool[off:end:end]
		}
	}
	return m
}

// scheduleChoice is one choice of the schedule gene.
type scheduleChoice struct {
	name Schedule
	v    int
	// split is the split of the layers over the stages; splitPP the only
	// pp it is offered for (0: any).
	split   Split
	splitPP int
}

// Space is the set of strategies for one model, cluster and workload, as a
// mixed-radix product of independent choices (genes). Every gene vector
// decodes to a strategy or is reported invalid; the order is deterministic.
// A Space is read-only after New and safe for concurrent use.
type Space struct {
	cards   []int
	layouts []layout
	// shares is the pool of the layouts' meshes (meshOf).
	shares     []Share
	mbs        []int
	schedules  []scheduleChoice
	rules      []Rules // of each schedule choice
	recomputes []string
	zeros      []int
	// precision is every strategy's matmul precision: the pinned one, else
	// bf16 (the search never changes a run's numerics on its own).
	// moe says the model has experts: its layouts with tp > 1 come split
	// and whole (expertLayouts).
	moe       bool
	precision string
	// weights is every strategy's weight dtype (Strategy.Weights): the
	// pinned one, else fp32 ("").
	weights string
	// offload and offloadFraction are every strategy's host offload: the
	// pinned one, else none (the search never offloads on its own;
	// planner.Solve pins it when nothing fits without it).
	offload         string
	offloadFraction float64
	// a2aOverlap says --fix pins Strategy.A2AOverlap true: every strategy
	// runs it. a2aAuto says the space turns it on wherever a strategy
	// allows it (a2aAllowed): a model with experts, a framework that runs
	// it (not Limits.NoA2AOverlap) and no pin. The overlap only hides
	// all-to-all time, and the memory model charges it one layer's
	// activations (a fraction of a percent of a rank's memory), so a
	// strategy with it is never slower than its twin without and hardly
	// larger: deciding it per strategy finds nearly the front a gene of its
	// own would, at none of a second gene's cost (--fix a2a_overlap=false
	// gives the twins). recomputeA2A says which recompute choices allow it
	// (not full, not a module list with moe).
	a2aOverlap, a2aAuto bool
	// a2aScaleUp says the overlap hides the all-to-all within one NVLink
	// domain too (Limits.A2AOverlapScaleUp), so a2aAuto turns it on for
	// every layout, not only those whose ep spans the network (layout.epOut).
	a2aScaleUp bool
	// dispatcher is every strategy's MoE token dispatcher: the pinned
	// one, else the default (""). dispatchers, when not empty, are the
	// dispatchers the layouts with ep > 1 choose from (layout.disp), each
	// such layout listed once per dispatcher (withDispatchers).
	dispatcher   string
	dispatchers  []string
	recomputeA2A []bool
	// actOffloads are, by recompute choice, the layers whose activations
	// that choice offloads (Strategy.ActOffload): 0 for the framework's
	// policies, ActOffloadChoices (or the pinned value) for the extra
	// choices of recompute none that offload instead.
	actOffloads []int
	layers      int
	anyV        bool // a pinned v: any v with pp·v <= layers, equal chunks or not
	// equalChunks requires layers = pp·v equal chunks (Limits.EqualChunks);
	// firstForPP1 says the first schedule choice is valid only without a
	// pipeline (the framework does not run it).
	equalChunks, firstForPP1 bool
	// equalStages requires layers in pp x (stages per rank) equal parts
	// (Limits.EqualStages); noZeroWithFSDP refuses ZeRO above 0 next to
	// fsdp (Limits.NoZeroWithFSDP).
	equalStages, noZeroWithFSDP bool
	// stageMicrobatches: the micro-batches of a pipeline divide over its
	// stages (Limits.StageMicrobatches).
	stageMicrobatches bool
	cluster           profiles.Cluster
	classes           [][]int // interchangeable axes, by index, each class in axis order
	// index maps each layout's key to its index, for Encode alone: built
	// on the first Encode (indexOnce), as a search never encodes and
	// the table of a large space takes as long to build as its layouts.
	index     map[string]int
	indexOnce sync.Once
}

// tupleDims are the dimensions of a per-axis factor tuple: those with chips
// of their own, in fill order.
func tupleDims() []Dim { return ownDims() }

// New builds the space of model m on cluster c for workload w (a zero
// w.SeqLen means m.SeqLen). fix is a partial strategy (the `--fix` string,
// parsed by ParseFix) that every strategy must agree with; the zero Fix
// restricts nothing.
//
// The layout gene lists every factorisation of the chip count into
// dp*fsdp*tp*cp*pp, times (for MoE models) every ep dividing the experts
// and dp*fsdp, times every distinct placement of those factors on the
// cluster's axes: each axis is split into per-dimension factors (within an
// axis the dimensions lie in fill order TP, CP, FSDP, PP, DP, innermost
// first, and EP lies inside the DP and FSDP part), and placements that
// differ only by swapping interchangeable axes (same size, tier,
// wraparound and bandwidth) are listed once. Layouts that can never be
// valid are left out while building: tp must divide the heads and divide
// or be a multiple of the KV heads, cp the sequence, with sp tp the
// per-cp-rank sequence, pp <= layers, dp*fsdp must divide the batch, and
// the layout must agree with fix.
//
// Under a framework that searches the MoE token dispatcher
// (Limits.SearchDispatchers), each layout with ep > 1 is listed once per
// dispatcher Limits.SearchedDispatchers gives for the cluster, the twins
// next to each other.
//
// Two pruning rules remove layouts an expert would never pick. On a
// cluster with several link tiers, tensor parallelism stays on the fastest
// tier (tp within the NVLink domain on GPUs, inside the ICI slice on
// multislice TPUs), since its collectives sit on the critical path of
// every layer (docs/formulas.md §7: "TP up to the GPUs per server"). And the
// data-centre network between TPU slices carries only DP and PP (and EP
// inside DP), never FSDP or CP, whose per-layer traffic it cannot sustain
// (docs/formulas.md §7: "FSDP over DCN is generally too slow"). A fix that pins
// a dimension's degree or mesh lifts the rule for it. Single-tier clusters
// (one TPU slice) are not pruned.
//
// The micro-batch gene lists the divisors of the largest per-replica
// batch; Decode reports the ones that do not divide a layout's own
// per-replica batch as invalid. The schedule gene lists the schedules of
// the table (1f1b, gpipe, interleaved), a schedule with virtual stages
// with every v that splits the busiest rank's ceil(layers/pp) layers into
// equal chunks of whole layers for some layout's pp (no fixed cap: GPT-3's
// 96 layers on 4 stages give v up to 24); Decode takes such a v for the
// layouts whose pp it divides that way (under Limits.EqualChunks only when
// pp*v divides the layers), and any v with pp*v <= layers when fix pins v.
// Each schedule choice comes with the default split of the layers over the
// stages and, for up to two pipeline depths that do not divide the layers,
// the explicit splits Splits offers for that depth (a fix pinning first or
// last puts its split on every choice). With pp=1 only the first choice
// decodes as valid. Stages of ZeRO above 0 decode
// as valid only with dp > 1. sp is true when tp > 1 unless fix pins it.
//
// New returns an error when the inputs are malformed or when no layout
// fits, saying why.
func New(m model.Spec, c profiles.Cluster, w Workload, fix Fix) (*Space, error) {
	return NewLimited(m, c, w, fix, Limits{})
}

// NewLimited is New over the strategies a framework can express (lim):
// its missing dimensions pinned to 1, its schedules, recompute policies
// and ZeRO stages only, and tensor parallelism with sequence parallelism
// where it requires it. A --fix outside the limits is an error naming it.
func NewLimited(m model.Spec, c profiles.Cluster, w Workload, fix Fix, lim Limits) (*Space, error) {
	if err := lim.validate(); err != nil {
		return nil, err
	}
	fp, err := fix.pins()
	if err != nil {
		return nil, fmt.Errorf("%w (in --fix %q)", err, fix.String())
	}
	fp.fsdpDCN = lim.FSDPOverDCN
	for _, d := range lim.NoDims {
		if fp.hasDim(d) && fp.Degree[d] > 1 {
			return nil, fmt.Errorf("space: --fix %s=%d: %s has no %s parallelism", d, fp.Degree[d], lim.name(), d)
		}
		fp.Degree[d] = 1
		fp.set[lookupKey(d.String())] = true
	}
	if lim.RequireSP && fp.has("sp") && !fp.SP {
		return nil, fmt.Errorf("space: --fix sp=false: %s runs tensor parallelism only with sequence parallelism", lim.name())
	}
	if lim.NoSplit && fp.Split.Explicit() {
		return nil, fmt.Errorf("space: --fix %s: %s cannot set the layers of a pipeline stage", fp.Split, lim.name())
	}
	if fp.Split.Explicit() && fp.hasDim(PP) {
		if err := fp.Split.Check(m.Layers, fp.Degree[PP]); err != nil {
			return nil, fmt.Errorf("%w (in --fix %q)", err, fix.String())
		}
	}
	if err := checkInputs(&m, &c, w); err != nil {
		return nil, err
	}
	if err := lim.checkCluster(&c); err != nil {
		return nil, fmt.Errorf("space: %w", err)
	}
	if lim.WeightsOverCP && m.MoE != nil {
		// The framework's expert sharding spans cp (Limits.WeightsOverCP),
		// which the planner does not price.
		if fp.hasDim(CP) && fp.Degree[CP] > 1 {
			return nil, fmt.Errorf("space: --fix cp=%d: %s shards the experts over fsdp x cp, which the planner does not price for model %s (use cp=1)", fp.Degree[CP], lim.name(), m.Name)
		}
		fp.Degree[CP] = 1
		fp.set[lookupKey(CP.String())] = true
	}
	sp := &Space{layers: m.Layers, cluster: c, equalChunks: lim.EqualChunks, equalStages: lim.EqualStages, noZeroWithFSDP: lim.NoZeroWithFSDP, stageMicrobatches: lim.StageMicrobatches}
	sp.classes = axisClasses(&c)
	var fixMesh [NumDims][]Share
	if fp.has("mesh") {
		for d := range fp.Mesh {
			if len(fp.Mesh[d]) == 0 {
				continue
			}
			if fixMesh[d], err = resolveShares(&c, Dim(d), fp.Mesh[d]); err != nil {
				return nil, fmt.Errorf("%w (in --fix %q)", err, fix.String())
			}
		}
	}
	found := enumerateLayouts(&m, &c, w, &fp, &fixMesh, sp.classes)
	sp.layouts, sp.shares = sortedLayouts(found, &m, &fp), found.pool
	sp.moe = m.MoE != nil
	if len(sp.layouts) == 0 {
		return nil, noLayoutErr(&m, &c, w, fix)
	}
	// The layouts the framework runs as placed (Limits.checkLayout).
	var firstErr error
	kept := sp.layouts[:0]
	for i := range sp.layouts {
		l := &sp.layouts[i]
		mesh := meshOf(sp.shares, l)
		if err := lim.checkLayout(&c, l.degrees(), &mesh, l.whole); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		l.epOut = epScaleOut(&c, &mesh)
		kept = append(kept, *l)
	}
	sp.layouts = kept
	if len(sp.layouts) == 0 {
		return nil, fmt.Errorf("space: no layout that agrees with --fix %q runs as placed: %w", fix.String(), firstErr)
	}
	// Micro-batch sizes.
	maxPer, anyDP, minPP := 0, false, 0
	for i := range sp.layouts {
		l := &sp.layouts[i]
		maxPer = max(maxPer, l.perReplica)
		anyDP = anyDP || l.deg[DP] > 1
		if pp := int(l.deg[PP]); pp > 1 && (minPP == 0 || pp < minPP) {
			minPP = pp
		}
	}
	if fp.has("mb") {
		if w.Batch%fp.MB != 0 {
			return nil, fmt.Errorf("space: the fixed mb=%d does not divide the batch of %d sequences: use mb in %s", fp.MB, w.Batch, divisorList(w.Batch))
		}
		sp.mbs = []int{fp.MB}
	} else {
		for d := 1; d <= maxPer; d++ {
			if maxPer%d == 0 {
				sp.mbs = append(sp.mbs, d)
			}
		}
	}

	// Schedules: every schedule of the table the search enumerates
	// unasked, or that --fix or the framework names, and for one with
	// virtual stages every v that splits the busiest rank's layers into
	// chunks of whole, equal layers for some layout's pp (a pinned v as it
	// is).
	var vs []int
	if fp.has("v") {
		vs, sp.anyV = []int{fp.V}, true
	} else {
		for i := range sp.layouts {
			if pp := int(sp.layouts[i].deg[PP]); pp > 1 {
				per := MaxStageLayers(m.Layers, pp)
				for v := 2; v <= per; v++ {
					if per%v == 0 && !slices.Contains(vs, v) {
						vs = append(vs, v)
					}
				}
			}
		}
		slices.Sort(vs)
	}
	var all []scheduleChoice
	for _, sc := range Schedules() {
		if !sc.Virtual() {
			if minPP > 0 || !sc.Rules().NeedsPipeline() {
				all = append(all, scheduleChoice{name: sc, v: 1})
			}
			continue
		}
		for _, v := range vs {
			if v >= 2 && minPP > 0 && minPP*v <= MaxVirtualStages(m.Layers) {
				all = append(all, scheduleChoice{name: sc, v: v})
			}
		}
	}
	all = withSplits(all, sp.layouts, m.Layers, &fp, lim)
	for _, sc := range all {
		if fp.has("schedule") && sc.name != fp.Schedule || fp.has("v") && sc.v != fp.V {
			continue
		}
		if !sc.name.Rules().Searched() && !fp.has("schedule") && !slices.Contains(lim.Schedules, sc.name) {
			continue
		}
		if len(lim.Schedules) > 0 && !slices.Contains(lim.Schedules, sc.name) {
			// A schedule the framework does not run stays only as the
			// first choice, which stands for "no pipeline" (pp = 1).
			if len(sp.schedules) > 0 || sc.name.Virtual() {
				continue
			}
			sp.firstForPP1 = true
		}
		sp.schedules = append(sp.schedules, sc)
	}
	if minPP == 0 && len(sp.schedules) > 1 {
		sp.schedules = sp.schedules[:1] // with pp=1 only the first choice is valid
	}
	for _, sc := range sp.schedules {
		sp.rules = append(sp.rules, sc.name.Rules())
	}
	if len(sp.schedules) == 0 {
		if fp.has("schedule") && !fp.Schedule.Virtual() {
			return nil, fmt.Errorf("space: no pipeline schedule agrees with --fix %q: schedule=%s needs pp > 1 (and v=1)", fix.String(), fp.Schedule)
		}
		return nil, fmt.Errorf("space: no pipeline schedule agrees with --fix %q: %s need v >= 2, pp > 1 and pp*v <= %d (the %d layers, the embedding and the output layer), and v > 1 needs one of them", fix.String(), strings.Join(virtualScheduleNames(), ", "), MaxVirtualStages(m.Layers), m.Layers)
	}

	// Recompute policies (with the framework's module lists the model
	// has) and ZeRO stages.
	for _, r := range slices.Concat(lim.SearchedRecomputes(), lim.SearchedModuleLists(&m)) {
		if !fp.has("recompute") || r == fp.Recompute {
			sp.recomputes = append(sp.recomputes, r)
		}
	}
	if fp.has("recompute") && len(sp.recomputes) == 0 && lim.allowsRecompute(fp.Recompute) {
		sp.recomputes = []string{fp.Recompute} // a policy the search does not try on its own
	}
	if len(sp.recomputes) == 0 {
		return nil, fmt.Errorf("space: --fix recompute=%s: %s's policies are %s", fp.Recompute, lim.name(), strings.Join(lim.SearchedRecomputes(), ", "))
	}
	if fp.has("recompute") {
		if err := model.CheckModules(fp.Recompute, &m); err != nil {
			return nil, fmt.Errorf("space: --fix %w", err)
		}
	}
	if err := sp.addActOffloads(lim, fp, fix, m.Layers); err != nil {
		return nil, err
	}
	for z := range 3 {
		if (!fp.has("zero") || z == fp.Zero) && (z == 0 || anyDP) && (len(lim.Zeros) == 0 || slices.Contains(lim.Zeros, z)) {
			sp.zeros = append(sp.zeros, z)
		}
	}
	if len(sp.zeros) == 0 {
		return nil, fmt.Errorf("space: the fixed zero=%d needs dp > 1, but no layout that agrees with --fix %q has dp > 1: use zero=0", fp.Zero, fix.String())
	}
	sp.precision = PrecisionBF16
	if fp.has("precision") {
		sp.precision = fp.Precision
	}
	if err := lim.checkPrecision(sp.precision); err != nil {
		return nil, err
	}
	if fp.has("weights") && (fp.BF16Weights() || fp.BF16Moments()) {
		sp.weights = fp.Weights
	}
	if err := lim.checkWeights(sp.weights); err != nil {
		return nil, err
	}
	if sp.precision == PrecisionFP8 && c.Chip.PeakFP8FLOPs <= 0 {
		return nil, fmt.Errorf("space: --fix precision=fp8: %s", noFP8(c.Chip))
	}
	if sp.precision == PrecisionFP8 && lim.FP4 && c.Chip.PeakFP4FLOPs <= 0 {
		return nil, fmt.Errorf("space: --fix precision=fp8: %s", noFP4(c.Chip))
	}
	if sp.precision == PrecisionInt8 && c.Chip.PeakInt8OPs <= 0 {
		return nil, fmt.Errorf("space: --fix precision=int8: %s", noInt8(c.Chip.Name))
	}
	if fp.has("offload") || fp.has("offload_fraction") {
		off := Strategy{Offload: fp.Offload, OffloadFraction: fp.OffloadFraction}
		if err := lim.checkOffload(off); err != nil {
			return nil, fmt.Errorf("space: --fix offload: %w", err)
		}
		sp.offload, sp.offloadFraction = fp.Offload, fp.OffloadFraction
	}
	if fp.has("dispatcher") {
		if err := lim.checkDispatcher(fp.Dispatcher); err != nil {
			return nil, fmt.Errorf("space: --fix dispatcher: %w", err)
		}
		sp.dispatcher = fp.Dispatcher
	} else if sp.moe {
		sp.dispatchers = lim.SearchedDispatchers(&c)
		sp.layouts = withDispatchers(sp.layouts, len(sp.dispatchers))
	}
	if fp.has("a2a_overlap") && fp.A2AOverlap {
		if lim.NoA2AOverlap {
			return nil, fmt.Errorf("space: --fix a2a_overlap=true: %s cannot express it: it overlaps the MoE all-to-all only under a DualPipe schedule, if at all", lim.name())
		}
		sp.a2aOverlap = true
	}
	sp.a2aAuto = sp.moe && !lim.NoA2AOverlap && !fp.has("a2a_overlap")
	sp.a2aScaleUp = lim.A2AOverlapScaleUp
	for _, r := range sp.recomputes {
		sp.recomputeA2A = append(sp.recomputeA2A, a2aOverlapProblem(2, 1, OneFOneB, r) == "")
	}
	sp.cards = make([]int, NumGenes)
	sp.cards[GeneLayout], sp.cards[GeneMB], sp.cards[GeneSchedule] = len(sp.layouts), len(sp.mbs), len(sp.schedules)
	sp.cards[GeneRecompute], sp.cards[GeneZero] = len(sp.recomputes), len(sp.zeros)
	return sp, nil
}

// withDispatchers returns layouts with each layout of ep > 1 listed n
// times in a row, once per dispatcher (layout.disp 0 to n-1), the others
// once; layouts itself when n < 2. The dispatchers of one placement stay
// next to each other, so the order by degrees and placement holds.
func withDispatchers(layouts []layout, n int) []layout {
	if n < 2 {
		return layouts
	}
	size := 0
	for i := range layouts {
		if layouts[i].deg[EP] > 1 {
			size += n
		} else {
			size++
		}
	}
	out := make([]layout, 0, size)
	for _, l := range layouts {
		if l.deg[EP] <= 1 {
			out = append(out, l)
			continue
		}
		for d := range n {
			l.disp = uint8(d)
			out = append(out, l)
		}
	}
	return out
}

// checkInputs rejects a model, cluster or workload the space cannot use.
func checkInputs(m *model.Spec, c *profiles.Cluster, w Workload) error {
	var errs []error
	if m.Layers < 1 || m.Heads < 1 {
		errs = append(errs, fmt.Errorf("space: model %s needs at least one layer and one attention head (has %d and %d)", m.Name, m.Layers, m.Heads))
	}
	if len(c.Axes) == 0 {
		errs = append(errs, fmt.Errorf("space: cluster %s has no mesh axes", c.Name))
	}
	for _, a := range c.Axes {
		if a.Size < 1 {
			errs = append(errs, fmt.Errorf("space: axis %s of cluster %s has size %d; sizes must be positive", a.Name, c.Name, a.Size))
		}
	}
	chips := 1
	for _, a := range c.Axes {
		if a.Size >= 1 && chips <= profiles.MaxChips {
			chips *= min(a.Size, profiles.MaxChips+1)
		}
	}
	if chips > profiles.MaxChips {
		errs = append(errs, fmt.Errorf("space: cluster %s has more than %d chips, which is not a real cluster", c.Name, profiles.MaxChips))
	}
	for i := range c.Axes {
		for j := range i {
			if c.Axes[i].Name == c.Axes[j].Name {
				errs = append(errs, fmt.Errorf("space: cluster %s names axis %q twice", c.Name, c.Axes[i].Name))
			}
		}
	}
	if w.Batch < 1 {
		errs = append(errs, fmt.Errorf("space: batch=%d must be a positive number of sequences", w.Batch))
	}
	if seqLen(m, w) < 1 {
		errs = append(errs, fmt.Errorf("space: the sequence length must be positive (workload %d, model %s default %d)", w.SeqLen, m.Name, m.SeqLen))
	}
	return errors.Join(errs...)
}

// noLayoutErr explains why no layout fits.
func noLayoutErr(m *model.Spec, c *profiles.Cluster, w Workload, fix Fix) error {
	base := fmt.Sprintf("space: no layout of the %d chips of cluster %s suits %s (%d heads, %d kv heads, %d layers) at batch %d and sequence %d",
		c.Chips(), c.Name, m.Name, m.Heads, m.KVHeads, m.Layers, w.Batch, seqLen(m, w))
	if len(fix.Set) > 0 {
		var noMesh [NumDims][]Share
		none := pinned{Strategy: Defaults(), set: make([]bool, len(strategyKeys))}
		if n := enumerateLayouts(m, c, w, &none, &noMesh, axisClasses(c)).n; n > 0 {
			if why := epBeyondReplicas(c, fix); why != "" {
				return fmt.Errorf("%s that agrees with --fix %q: %s", base, fix.String(), why)
			}
			return fmt.Errorf("%s that agrees with --fix %q; without the fix %d layouts fit: relax the fix", base, fix.String(), n)
		}
	}
	return errors.New(base + ": dp*fsdp must divide the batch, tp the heads, cp the sequence, and pp at most the layers; try a batch that is a multiple of the chip count or a smaller cluster")
}

// epBeyondReplicas says why a fix that pins ep, tp, cp and pp leaves no
// layout when ep does not divide the chips it can be carved out of: the
// data-parallel chips dp*fsdp = chips/(tp*cp*pp) and, for whole experts
// under sequence parallelism, the tensor-parallel ones (Megatron's expert
// grid with etp=1, megatron/core/parallel_state.py); "" when that is not
// the reason. Megatron's grid takes context-parallel ranks too, which the
// planner does not.
func epBeyondReplicas(c *profiles.Cluster, fix Fix) string {
	p, err := fix.pins()
	if err != nil || !p.hasDim(EP) || !p.hasDim(TP) || !p.hasDim(PP) {
		return ""
	}
	// An unpinned cp is 1 (Defaults), the most chips it leaves to dp*fsdp.
	own := p.Degree[TP] * p.Degree[PP] * max(p.Degree[CP], 1)
	ep := p.Degree[EP]
	if own < 1 || c.Chips()%own != 0 || ep <= 1 {
		return ""
	}
	r := c.Chips() / own
	tp := p.Degree[TP]
	whole := tp > 1 && (!p.has("etp") || p.ETP <= 1) && (!p.has("sp") || p.SP)
	room := r
	if whole {
		room *= tp
	}
	if room%ep == 0 {
		return ""
	}
	if whole {
		return fmt.Sprintf("ep=%d does not divide the %d chips it is carved out of (dp*fsdp %d x tp %d, with whole experts under sp); the planner does not carve it out of the context-parallel ranks, as Megatron's expert grid can: use ep in %s",
			ep, room, r, tp, divisorList(room))
	}
	return fmt.Sprintf("ep=%d does not divide the %d data-parallel chips (dp*fsdp = %d chips / tp*cp*pp %d); ep takes tensor-parallel ranks only with whole experts (etp=1) under sp: use ep in %s, or etp=1",
		ep, r, c.Chips(), own, divisorList(r))
}

// axisClasses groups the axes of c that are interchangeable: same size,
// tier, wraparound and bandwidth.
func axisClasses(c *profiles.Cluster) [][]int {
	var classes [][]int
	for i, a := range c.Axes {
		found := false
		for k, cl := range classes {
			b := c.Axes[cl[0]]
			if a.Size == b.Size && a.Tier == b.Tier && a.Wraparound == b.Wraparound && a.BandwidthBytesPerS == b.BandwidthBytesPerS {
				classes[k] = append(classes[k], i)
				found = true
				break
			}
		}
		if !found {
			classes = append(classes, []int{i})
		}
	}
	return classes
}

// tuple is the factor of each dimension on one axis (or the product over
// axes), indexed by Dim; carved dimensions (EP) stay 1.
type tuple [NumDims]int

// one returns the tuple with every factor 1.
func one() tuple {
	var t tuple
	for i := range t {
		t[i] = 1
	}
	return t
}

// axisTuples returns every ordered factorisation of n into the dimensions
// with chips of their own, in descending lexicographic order over the fill
// order (tp, cp, fsdp, pp, dp) so that among interchangeable axes the inner
// one gets the larger tp (then cp, ...).
func axisTuples(n int) []tuple {
	var out []tuple
	dims := tupleDims()
	t := one()
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == len(dims)-1 {
			t[dims[i]] = left
			out = append(out, t)
			return
		}
		for f := left; f >= 1; f-- {
			if left%f == 0 {
				t[dims[i]] = f
				rec(i+1, left/f)
			}
		}
	}
	rec(0, n)
	return out
}

// banned returns, per axis of c, the dimensions the tier rules of the
// table keep off it (see New), except those fp pins.
func banned(c *profiles.Cluster, fp *pinned, fixMesh *[NumDims][]Share) [][NumDims]bool {
	out := make([][NumDims]bool, len(c.Axes))
	fastest := -1
	for _, ax := range c.Axes {
		if r := ax.Tier.Rank(); fastest < 0 || r < fastest {
			fastest = r
		}
	}
	for d, spec := range dimTable() {
		if fp.hasDim(Dim(d)) || len(fixMesh[d]) > 0 || (Dim(d) == FSDP && fp.fsdpDCN) {
			continue
		}
		for a, ax := range c.Axes {
			switch spec.keep {
			case fastestTier:
				out[a][d] = ax.Tier.Rank() > fastest
			case offDCN:
				out[a][d] = ax.Tier == profiles.DCN
			}
		}
	}
	return out
}

// enumerateLayouts lists every layout of m on c for w agreeing with the
// pinned values fp and the resolved fixMesh.
func enumerateLayouts(m *model.Spec, c *profiles.Cluster, w Workload, fp *pinned, fixMesh *[NumDims][]Share, classes [][]int) *layoutList {
	nAxes := len(c.Axes)
	z := sizesOf(m, w, 0)
	tuples := make([][]tuple, nAxes)
	bySize := map[int][]tuple{}
	prevInClass := make([]int, nAxes)
	for a := range prevInClass {
		prevInClass[a] = -1
	}
	for _, cl := range classes {
		for k := 1; k < len(cl); k++ {
			prevInClass[cl[k]] = cl[k-1]
		}
	}
	for a, ax := range c.Axes {
		if _, ok := bySize[ax.Size]; !ok {
			bySize[ax.Size] = axisTuples(ax.Size)
		}
		tuples[a] = bySize[ax.Size]
	}
	var fixDeg tuple
	for _, d := range tupleDims() {
		if fp.hasDim(d) {
			fixDeg[d] = fp.Degree[d]
		}
	}
	spFixed, spVal := fp.has("sp"), fp.SP
	epFixed := fp.hasDim(EP)
	// Layouts with ep = 1 are listed unless ep is pinned above 1 or
	// placed.
	epOne := (!epFixed || fp.Degree[EP] == 1) && len(fixMesh[EP]) == 0
	// ep may take tensor ranks unless the experts are pinned split over
	// tp (etp > 1): whole experts under sequence parallelism.
	tpCarve := !fp.has("etp") || fp.ETP <= 1
	ban := banned(c, fp, fixMesh)

	dims := tupleDims()

	// walk lists, into out, the layouts whose first axis takes tuple t0
	// (all of them on a cluster without axes): each branch of the first
	// axis is walked on its own, in parallel, and the lists are joined
	// in the first axis's order, the order one walk finds them in.
	walk := func(t0 int, out *layoutList) {
		idx := make([]int, nAxes)
		// partial[i] holds the degree products over axes < i.
		partial := make([]tuple, nAxes+1)
		partial[0] = one()
		var rec func(a int)
		// step takes tuple t on axis a and goes on to the next axis.
		step := func(a, t int) {
			f := tuples[a][t]
			deg := partial[a]
			ok := true
			for _, d := range dims {
				deg[d] *= f[d]
				if fixDeg[d] != 0 && fixDeg[d]%deg[d] != 0 || ban[a][d] && f[d] > 1 {
					ok = false
				}
			}
			if !ok || !runningOK(&z, Degrees(deg)) {
				return
			}
			idx[a] = t
			partial[a+1] = deg
			rec(a + 1)
		}
		rec = func(a int) {
			if a == nAxes {
				deg := partial[nAxes]
				for _, d := range dims {
					if fixDeg[d] != 0 && deg[d] != fixDeg[d] {
						return
					}
				}
				spv := deg[TP] > 1
				if spFixed {
					spv = spVal
				}
				if spv && deg[TP] == 1 || !wholeOK(&z, Degrees(deg), spv) {
					return // sp without tp (Validate), or a rule fails
				}
				l := layout{sp: spv, perReplica: w.Batch / (deg[DP] * deg[FSDP])}
				for d, v := range deg {
					l.deg[d] = uint32(v)
				}
				out.buildMesh(&l, c, idx, tuples)
				if mesh := meshOf(out.pool, &l); !meshAgrees(&mesh, fixMesh, false) {
					return
				}
				if epOne {
					out.add(l)
				}
				if z.experts > 1 {
					addEP(out, l, c, idx, tuples, prevInClass, &z, epFixed, fp.Degree[EP], fixMesh, tpCarve)
				}
				return
			}
			start := 0
			if p := prevInClass[a]; p >= 0 {
				start = idx[p]
			}
			for t := start; t < len(tuples[a]); t++ {
				step(a, t)
			}
		}
		if nAxes == 0 {
			rec(0)
			return
		}
		step(0, t0) // the first axis is the first of its class (prevInClass)
	}
	if nAxes == 0 {
		out := new(layoutList)
		walk(0, out)
		return out
	}
	lists := make([]layoutList, len(tuples[0]))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(lists)) {
		wg.Go(func() {
			for t0 := int(next.Add(1)) - 1; t0 < len(lists); t0 = int(next.Add(1)) - 1 {
				walk(t0, &lists[t0])
			}
		})
	}
	wg.Wait()
	out := new(layoutList)
	for i := range lists {
		out.join(&lists[i])
	}
	return out
}

// buildMesh fills l.mesh from the per-axis tuple choice idx, with shares
// in ll's pool: those of an earlier layout of the same choice when ll has
// one (meshes), else new ones.
func (ll *layoutList) buildMesh(l *layout, c *profiles.Cluster, idx []int, tuples [][]tuple) {
	key, ok := choiceKey(idx)
	if ok {
		if spans, found := ll.meshes[key]; found {
			for d, r := range spans {
				l.setSpan(Dim(d), r)
			}
			return
		}
	}
	for _, d := range tupleDims() {
		start := len(ll.pool)
		for a, ax := range c.Axes {
			if f := tuples[a][idx[a]][d]; f > 1 {
				ll.pool = append(ll.pool, Share{Axis: ax.Name, Size: f})
			}
		}
		l.setSpan(d, shareSpan{off: uint32(start), n: uint32(len(ll.pool) - start)})
	}
	if ok {
		if ll.meshes == nil {
			ll.meshes = make(map[axisChoice][NumDims]shareSpan)
		}
		ll.meshes[key] = l.spans()
	}
}

// axisChoice is a key of a per-axis choice (tuple indices or factors) of
// up to maxKeyAxes axes.
type axisChoice [maxKeyAxes]uint16

// maxKeyAxes bounds the axes of a cluster whose per-axis choices key the
// share spans of a layoutList (on more, every layout takes shares of its
// own).
const maxKeyAxes = 8

// choiceKey returns the key of per-axis choice idx, and false when it has
// too many axes or an entry beyond 16 bits.
func choiceKey(idx []int) (axisChoice, bool) {
	var k axisChoice
	if len(idx) > len(k) {
		return k, false
	}
	for i, v := range idx {
		if v < 0 || v > math.MaxUint16 {
			return k, false
		}
		k[i] = uint16(v)
	}
	return k, true
}

// addEP adds to out the MoE variants of l with ep > 1: every per-axis
// choice of ep factors inside the part of each axis held by the dimensions
// EP is carved out of (dp and fsdp, and tp when tpCarve allows it and l
// runs sequence parallelism) whose product passes the running part of
// EP's rule against sizes z (it divides the experts), listed once up to
// interchangeable axes. The rule's whole part (ep divides dp*fsdp, or
// dp*fsdp*tp) holds by construction: each axis's ep factor divides that
// axis's part. A variant whose ep takes tensor ranks on some axis is
// marked (layout.epTP) for whole experts only.
func addEP(out *layoutList, l layout, c *profiles.Cluster, idx []int, tuples [][]tuple, prevInClass []int, z *sizes, epFixed bool, fixEP int, fixMesh *[NumDims][]Share, tpCarve bool) {
	nAxes := len(c.Axes)
	caps := make([]int, nAxes)
	data := make([]int, nAxes)
	spec := &dimSpecs[EP]
	within, rule := spec.within.inFillOrder(), spec.divides
	deg := l.degrees()
	carveTP := tpCarve && l.sp && l.deg[TP] > 1
	for a := range caps {
		t := tuples[a][idx[a]]
		data[a] = 1
		for _, d := range within {
			data[a] *= t[d]
		}
		caps[a] = data[a]
		if carveTP {
			for _, d := range spec.wholeWithin.inFillOrder() {
				caps[a] *= t[d]
			}
		}
	}
	e := make([]int, nAxes)
	var rec func(a, prod int)
	rec = func(a, prod int) {
		if a == nAxes {
			if prod == 1 || epFixed && prod != fixEP {
				return
			}
			v := l
			v.deg[EP] = uint32(prod)
			n := 0
			for b := range c.Axes {
				if e[b] > 1 {
					n++
				}
				if data[b]%e[b] != 0 {
					v.epTP = true
				}
			}
			v.setSpan(EP, out.epShares(c, e, n))
			if mesh := meshOf(out.pool, &v); meshAgrees(&mesh, fixMesh, true) {
				out.add(v)
			}
			return
		}
		for f := caps[a]; f >= 1; f-- {
			if deg[EP] = prod * f; caps[a]%f != 0 || !rule.running(z, deg, nil) {
				continue
			}
			// Interchangeable axes with equal tuples: keep the larger ep
			// share on the inner axis only.
			if p := prevInClass[a]; p >= 0 && idx[p] == idx[a] && e[p] < f {
				continue
			}
			e[a] = f
			rec(a+1, prod*f)
		}
	}
	rec(0, 1)
}

// epShares returns the span in ll's pool of ep's shares of per-axis
// factors e (n of them above 1): those of an earlier layout of the same
// factors when ll has one (epMeshes), else new ones.
func (ll *layoutList) epShares(c *profiles.Cluster, e []int, n int) shareSpan {
	key, ok := choiceKey(e)
	if ok {
		if r, found := ll.epMeshes[key]; found {
			return r
		}
	}
	start := len(ll.pool)
	for b, ax := range c.Axes {
		if e[b] > 1 {
			ll.pool = append(ll.pool, Share{Axis: ax.Name, Size: e[b]})
		}
	}
	r := shareSpan{off: uint32(start), n: uint32(n)}
	if ok {
		if ll.epMeshes == nil {
			ll.epMeshes = make(map[axisChoice]shareSpan)
		}
		ll.epMeshes[key] = r
	}
	return r
}

// meshAgrees reports whether every dimension fixMesh pins (EP only when
// withEP) has exactly those shares (both innermost axis first).
func meshAgrees(mesh, fixMesh *[NumDims][]Share, withEP bool) bool {
	for d := range fixMesh {
		if Dim(d) == EP && !withEP {
			continue
		}
		if len(fixMesh[d]) > 0 && !slices.Equal(mesh[d], fixMesh[d]) {
			return false
		}
	}
	return true
}

// sortedLayouts returns the layouts of ls sorted by their degrees in fill
// order (stably: layouts of one degree tuple keep the order they were
// found in), with the expert-tensor parallel choices of a mixture of
// experts (Strategy.ETP): a layout with tp > 1 splits the experts over tp
// (etp = tp) and, listed right after it, keeps them whole (etp = 1); a
// pinned etp keeps one of the two. A dense model's layouts are sorted as
// they are. The result is allocated once, at its size: a space of a
// million layouts is not copied as it grows.
func sortedLayouts(ls *layoutList, m *model.Spec, fp *pinned) []layout {
	split, whole := true, true
	if m.MoE == nil {
		whole = false
	} else if fp.has("etp") {
		split, whole = fp.ETP > 1, fp.ETP <= 1
	}
	// The layouts each one makes: with the experts split over tp (or no
	// tp), and whole.
	slotsOf := func(l *layout) (splitOne, wholeOne bool) {
		d := &l.deg
		return !l.epTP && (d[TP] == 1 || split), d[TP] > 1 && whole
	}
	// Number the degree tuples in the order found, each layout's in ids,
	// and count the layouts each tuple makes (consecutive layouts often
	// share theirs: the last one found is looked up first).
	ids := make([]uint32, 0, ls.n)
	idOf := make(map[[NumDims]uint32]uint32)
	var keys [][NumDims]uint32
	var counts []int
	var last [NumDims]uint32
	lastID := -1
	for _, c := range ls.chunks {
		for i := range c {
			d := &c[i].deg
			if lastID < 0 || *d != last {
				id, ok := idOf[*d]
				if !ok {
					id = uint32(len(keys))
					idOf[*d] = id
					keys = append(keys, *d)
					counts = append(counts, 0)
				}
				last, lastID = *d, int(id)
			}
			ids = append(ids, uint32(lastID))
			if s, w := slotsOf(&c[i]); s && w {
				counts[lastID] += 2
			} else if s || w {
				counts[lastID]++
			}
		}
	}
	// The tuples in fill order, and where each one's layouts start.
	order := fillOrder()
	byDeg := make([]int, len(keys))
	for i := range byDeg {
		byDeg[i] = i
	}
	slices.SortFunc(byDeg, func(a, b int) int {
		for _, d := range order {
			if c := cmp.Compare(keys[a][d], keys[b][d]); c != 0 {
				return c
			}
		}
		return 0
	})
	next := make([]int, len(keys))
	n := 0
	for _, id := range byDeg {
		next[id] = n
		n += counts[id]
	}
	// Each layout to its place, in the order found within its tuple.
	out := make([]layout, n)
	j := 0
	for k, c := range ls.chunks {
		for i := range c {
			id := ids[j]
			j++
			l := ls.rebased(k, c[i])
			s, w := slotsOf(&l)
			if s {
				out[next[id]] = l // the experts split over tp (or no tp)
				next[id]++
			}
			if w {
				l.whole = true
				out[next[id]] = l
				next[id]++
			}
		}
	}
	return out
}

// layoutChunk is the number of layouts in one chunk of a layoutList.
const layoutChunk = 1 << 12

// layoutList collects layouts in chunks of up to layoutChunk, so that the
// million layouts of a large mixture-of-experts space are found without
// regrowing one slice: each regrowth copies every layout so far in one
// move the garbage collector waits on, and mixtral-8x22b on v5p-4096
// (1.4M layouts) spent most of 10 s there. Lists found apart are joined
// by their chunks, without copying a layout (join).
type layoutList struct {
	chunks [][]layout
	n      int
	// pool holds the layouts' shares (layout.mesh): a layout of chunk k
	// finds them bases[k] further on than its spans say (a list joined
	// to another moves on in the pool, not its layouts; base). meshes
	// and epMeshes are the spans of the per-axis choices met (buildMesh,
	// epShares).
	pool     []Share
	bases    []uint32
	meshes   map[axisChoice][NumDims]shareSpan
	epMeshes map[axisChoice]shareSpan
}

// add appends l.
func (ll *layoutList) add(l layout) {
	if k := len(ll.chunks); k == 0 || len(ll.chunks[k-1]) == cap(ll.chunks[k-1]) {
		ll.chunks = append(ll.chunks, make([]layout, 0, layoutChunk))
		ll.bases = append(ll.bases, 0)
	}
	c := &ll.chunks[len(ll.chunks)-1]
	*c = append(*c, l)
	ll.n++
}

// join appends the layouts of o, taking its chunks (o's last one, maybe
// part full, then fills no further: add starts a new chunk after it).
func (ll *layoutList) join(o *layoutList) {
	base := uint32(len(ll.pool))
	ll.pool = append(ll.pool, o.pool...)
	for k, c := range o.chunks {
		ll.chunks = append(ll.chunks, c[:len(c):len(c)])
		ll.bases = append(ll.bases, base+o.bases[k])
	}
	ll.n += o.n
}

// rebased returns layout l of chunk k with its spans into the list's pool.
func (ll *layoutList) rebased(k int, l layout) layout {
	if b := ll.bases[k]; b > 0 {
		for d := range l.meshOff {
			l.meshOff[d] += b
		}
	}
	return l
}

// layoutKey appends to buf a key of a placed mesh that is the same for
// placements differing only by a permutation of interchangeable axes, with
// its sequence parallelism and whole experts.
func (sp *Space) layoutKey(buf []byte, mesh *[NumDims][]Share, spv, whole bool) []byte {
	var ks keyScratch
	return sp.appendLayoutKey(buf, &ks, mesh, spv, whole)
}

// keyScratch is working memory for appendLayoutKey, reused across calls.
type keyScratch struct {
	cols, group [][NumDims]int
}

// appendLayoutKey is layoutKey with its working memory in ks, for the
// loop that keys every layout of a space.
func (sp *Space) appendLayoutKey(buf []byte, ks *keyScratch, mesh *[NumDims][]Share, spv, whole bool) []byte {
	c := &sp.cluster
	cols := slices.Grow(ks.cols[:0], len(c.Axes))[:len(c.Axes)]
	ks.cols = cols
	for a := range cols {
		for d := range cols[a] {
			cols[a][d] = 1
		}
	}
	for d := range mesh {
		for _, sh := range mesh[d] {
			if a := axisIndex(c, sh.Axis); a >= 0 {
				cols[a][d] = sh.Size
			}
		}
	}
	for _, cl := range sp.classes {
		group := slices.Grow(ks.group[:0], len(cl))[:len(cl)]
		ks.group = group
		for k, a := range cl {
			group[k] = cols[a]
		}
		slices.SortFunc(group, func(x, y [NumDims]int) int { return slices.Compare(x[:], y[:]) })
		for _, col := range group {
			for _, f := range col {
				buf = strconv.AppendInt(buf, int64(f), 10)
				buf = append(buf, ',')
			}
			buf = append(buf, ';')
		}
	}
	buf = strconv.AppendBool(buf, spv)
	if whole {
		buf = append(buf, ",etp1"...)
	}
	return buf
}

// Cardinalities returns the number of choices of each gene, indexed by
// GeneLayout, GeneMB, GeneSchedule, GeneRecompute and GeneZero. The caller
// must not modify it.
func (sp *Space) Cardinalities() []int { return sp.cards }

// Size is the number of gene vectors: the product of Cardinalities.
func (sp *Space) Size() int64 {
	n := int64(1)
	for _, c := range sp.cards {
		n *= int64(c)
	}
	return n
}

// Layouts returns the number of choices of the layout gene: placed
// degree combinations (with ep for MoE models).
func (sp *Space) Layouts() int { return len(sp.layouts) }

// Decode writes the strategy for genes into dst (placed, with Mesh filled)
// and reports whether it is valid: whether it passes Validate (the checks
// New did not already apply to the layout are repeated here: mb divides
// the per-replica batch, ZeRO above 0 only with dp > 1, and the schedule
// rules), with pp=1 valid only for the first schedule choice. Decode does
// not allocate: dst.Mesh shares slices with the Space, which the caller
// must treat as read-only. A gene vector of the wrong length or with a gene
// out of range reports false and leaves dst unchanged.
func (sp *Space) Decode(genes []int, dst *Strategy) bool {
	if !sp.inRange(genes) {
		return false
	}
	l := &sp.layouts[genes[GeneLayout]]
	*dst = Strategy{Degree: l.degrees(), SP: l.sp, Precision: sp.precision, Weights: sp.weights, Offload: sp.offload, OffloadFraction: sp.offloadFraction, A2AOverlap: sp.a2aOverlap, Dispatcher: sp.dispatcher,
		Mesh: meshOf(sp.shares, l)}
	if sp.moe && l.deg[TP] > 1 && !l.whole {
		dst.ETP = int(l.deg[TP]) // the experts split over tp
	}
	if len(sp.dispatchers) > 0 && l.deg[EP] > 1 {
		dst.Dispatcher = sp.dispatchers[l.disp]
	}
	sp.setInner(genes, l, dst)
	return sp.validInner(genes, l, dst)
}

// DecodeInner is Decode for a dst that holds the decoding of a gene
// vector with the same layout gene (by Decode or DecodeInner, valid or
// not): it writes only what the other genes choose (the micro-batch size,
// schedule, recompute policy and ZeRO stage), not the layout's degrees,
// sequence parallelism and mesh, which dst keeps: the form for a loop over
// one layout's strategies. Given a dst of another layout it would mix the
// two layouts: the caller must not. A gene vector of the wrong length or
// with a gene out of range reports false and leaves dst unchanged.
func (sp *Space) DecodeInner(genes []int, dst *Strategy) bool {
	if !sp.inRange(genes) {
		return false
	}
	l := &sp.layouts[genes[GeneLayout]]
	sp.setInner(genes, l, dst)
	return sp.validInner(genes, l, dst)
}

// inRange reports whether genes has one gene per gene of the space, each
// in range.
func (sp *Space) inRange(genes []int) bool {
	if len(genes) != NumGenes || len(sp.cards) != NumGenes {
		return false
	}
	for i, g := range genes {
		if g < 0 || g >= sp.cards[i] {
			return false
		}
	}
	return true
}

// setInner writes into dst what the genes (in range) but the layout's,
// l, choose.
func (sp *Space) setInner(genes []int, l *layout, dst *Strategy) {
	sc := sp.schedules[genes[GeneSchedule]]
	dst.Zero, dst.MB, dst.Schedule, dst.V, dst.Split = sp.zeros[genes[GeneZero]], sp.mbs[genes[GeneMB]], sc.name, sc.v, sc.split
	dst.Recompute = sp.recomputes[genes[GeneRecompute]]
	dst.ActOffload = sp.actOffloads[genes[GeneRecompute]]
	if sp.a2aAuto {
		dst.A2AOverlap = sp.a2aOn(genes[GeneRecompute], l, dst)
	}
}

// a2aOn is whether a2aAuto turns the EP overlap on for strategy s of
// layout l and recompute choice rc: where it is allowed and hides the
// all-to-all (epScaleOut, Limits.A2AOverlapScaleUp).
func (sp *Space) a2aOn(rc int, l *layout, s *Strategy) bool {
	return sp.recomputeA2A[rc] && a2aAllowed(s.Degree[EP], s.Degree[PP], s.Schedule) && (l.epOut || sp.a2aScaleUp)
}

// validInner reports whether strategy s, decoded from genes of layout l,
// is valid (Decode).
func (sp *Space) validInner(genes []int, l *layout, s *Strategy) bool {
	return l.perReplica%s.MB == 0 && sp.valid(l, s.MB, s.Zero, genes[GeneSchedule]) &&
		// Parameters offload from ZeRO-3 shards only (Strategy.validateOffload).
		(sp.offload != OffloadParamsOptimizer || l.deg[DP] <= 1) &&
		(!sp.a2aOverlap || a2aOverlapProblem(int(l.deg[EP]), int(l.deg[PP]), s.Schedule, s.Recompute) == "") &&
		// Activation offload runs without a pipeline (actOffloadProblem).
		(s.ActOffload == 0 || l.deg[PP] <= 1)
}

// DecodeIndex decodes the i-th gene vector in mixed-radix order (the first
// gene varies slowest), 0 <= i < Size, writing the genes into genes (of
// length NumGenes) and the strategy into dst. It reports false when i or
// len(genes) is out of range or the strategy is invalid.
func (sp *Space) DecodeIndex(i int64, genes []int, dst *Strategy) bool {
	if i < 0 || i >= sp.Size() || len(genes) != len(sp.cards) {
		return false
	}
	for g := len(sp.cards) - 1; g >= 0; g-- {
		n := int64(sp.cards[g])
		genes[g] = int(i % n)
		i /= n
	}
	return sp.Decode(genes, dst)
}

// Encode returns the gene vector that decodes to s, or false when s is not
// in the space (a degree combination, placement, micro-batch size or
// schedule New left out, or a mesh inconsistent with the cluster). An
// unplaced s gets the default placement first. A placement that differs
// from a listed one only by swapping interchangeable axes encodes to that
// one, so Decode may name the axes differently. Decode of the result may
// still report the strategy invalid (e.g. an mb that does not divide the
// per-replica batch).
func (sp *Space) Encode(s Strategy) ([]int, bool) {
	p, err := s.Place(sp.cluster)
	if err != nil || (s.FP8() != (sp.precision == PrecisionFP8)) || (s.Int8() != (sp.precision == PrecisionInt8)) || s.BF16Weights() != (sp.weights == WeightsBF16) || s.BF16Moments() != (sp.weights == WeightsBF16Moments) ||
		s.Offload != sp.offload || s.OffloadFraction != sp.offloadFraction || !sp.a2aAuto && s.A2AOverlap != sp.a2aOverlap {
		return nil, false
	}
	disp := 0 // the layout's dispatcher (layout.disp)
	if len(sp.dispatchers) > 0 && s.Degree[EP] > 1 {
		if disp = slices.Index(sp.dispatchers, s.Dispatcher); disp < 0 {
			return nil, false
		}
	} else if s.Dispatcher != sp.dispatcher {
		return nil, false
	}
	sp.indexOnce.Do(sp.fillIndex)
	li, ok := sp.index[string(sp.layoutKey(nil, &p.Mesh, s.SP, sp.moe && s.ExpertsWhole()))]
	if !ok {
		return nil, false
	}
	li += disp // a placement's dispatchers follow its first (withDispatchers)
	l := &sp.layouts[li]
	if l.degrees() != s.Degree {
		return nil, false
	}
	genes := make([]int, NumGenes)
	genes[GeneLayout] = li
	genes[GeneMB] = slices.Index(sp.mbs, s.MB)
	genes[GeneSchedule] = slices.IndexFunc(sp.schedules, func(sc scheduleChoice) bool {
		return sc.name == s.Schedule && sc.v == s.V && sc.split == s.Split && (sc.splitPP == 0 || sc.splitPP == s.Degree[PP])
	})
	genes[GeneRecompute] = -1
	for i, r := range sp.recomputes {
		if r == s.Recompute && sp.actOffloads[i] == s.ActOffload {
			genes[GeneRecompute] = i
		}
	}
	genes[GeneZero] = slices.Index(sp.zeros, s.Zero)
	if slices.Contains(genes, -1) {
		return nil, false
	}
	if sp.a2aAuto && s.A2AOverlap != sp.a2aOn(genes[GeneRecompute], l, &s) {
		return nil, false // the space decides the overlap per strategy (setInner)
	}
	return genes, true
}

// fillIndex builds the index of the layouts' keys (Space.index).
func (sp *Space) fillIndex() {
	sp.index = make(map[string]int, len(sp.layouts))
	var buf []byte
	var ks keyScratch
	for i := range sp.layouts {
		l := &sp.layouts[i]
		if l.disp > 0 {
			continue // the placement's first dispatcher stands for all (Encode)
		}
		mesh := meshOf(sp.shares, l)
		buf = sp.appendLayoutKey(buf[:0], &ks, &mesh, l.sp, l.whole)
		sp.index[string(buf)] = i
	}
}

// valid reports whether layout l with micro-batch size mb (dividing its
// per-replica batch), ZeRO stage z and the k-th schedule choice is valid:
// ZeRO above 0 needs dp > 1; without a pipeline only the first schedule
// choice stands for all; a schedule with virtual stages needs pp*v within
// MaxVirtualStages; and the schedule's fewest micro-batches.
func (sp *Space) valid(l *layout, mb, z, k int) bool {
	if z > 0 && (l.deg[DP] == 1 || sp.noZeroWithFSDP && l.deg[FSDP] > 1) {
		return false
	}
	sc, rules := &sp.schedules[k], &sp.rules[k]
	pp := int(l.deg[PP])
	if pp == 1 {
		return k == 0 && !rules.NeedsPipeline() && !sc.split.Explicit()
	}
	if k == 0 && sp.firstForPP1 {
		return false
	}
	if sp.stageMicrobatches && (l.perReplica/mb)%pp != 0 {
		return false
	}
	explicit := sc.split.Explicit()
	if explicit && (sc.splitPP != 0 && sc.splitPP != pp || !sc.split.Fits(sp.layers, pp)) {
		return false
	}
	if !rules.Virtual() {
		if sp.equalStages && sp.layers%(pp*rules.VirtualStages(1)) != 0 {
			return false
		}
		return rules.Fits(pp, l.perReplica/mb, sp.layers)
	}
	if pp*sc.v > MaxVirtualStages(sp.layers) || !sp.anyV && sc.split.MaxStageLayers(sp.layers, pp)%sc.v != 0 || (sp.equalChunks || sp.equalStages) && sp.layers%(pp*sc.v) != 0 {
		return false
	}
	if _, _, short := sc.split.ShortOfChunks(sp.layers, pp, sc.v); explicit && short {
		return false
	}
	return l.perReplica/mb >= rules.MinMicrobatches(pp)
}

// Skip returns how many gene vectors, from genes on in mixed-radix order
// (the first gene slowest), certainly decode as invalid: 0 for a valid
// vector. It lets an exhaustive search jump over the runs of invalid
// vectors the product leaves: a micro-batch size that does not divide the
// layout's per-replica batch (its whole block), a ZeRO stage above 0
// without dp (the larger stages too), and the schedule choices after an
// invalid one when every later one is invalid as well (without a pipeline;
// interleaving with pp·v beyond the layers, the larger v too, or with too
// few micro-batches). genes must be in range.
func (sp *Space) Skip(genes []int) int64 {
	l := &sp.layouts[genes[GeneLayout]]
	mb := sp.mbs[genes[GeneMB]]
	z := sp.zeros[genes[GeneZero]]
	k := genes[GeneSchedule]
	ns, nz, nr := int64(sp.cards[GeneSchedule]), int64(sp.cards[GeneZero]), int64(sp.cards[GeneRecompute])
	switch {
	case l.perReplica%mb != 0:
		// Rest of the (layout, mb) block: recompute, zero and schedule genes.
		return (nr-int64(genes[GeneRecompute]))*nz*ns - int64(genes[GeneZero])*ns - int64(k)
	case z > 0 && l.deg[DP] == 1:
		// ZeRO stages are ascending: this one and the later ones.
		return (nz-int64(genes[GeneZero]))*ns - int64(k)
	case sp.valid(l, mb, z, k):
		return 0
	}
	sc := sp.schedules[k]
	pp := int(l.deg[PP])
	if pp == 1 && k > 0 || sp.rules[k].Virtual() && (pp*sc.v > MaxVirtualStages(sp.layers) || l.perReplica/mb < sc.name.MinMicrobatches(pp)) {
		// Without a pipeline only the first choice is valid; the schedules
		// with virtual stages come last, by ascending v, and fail for the
		// larger v (pp·v) or all alike (too few micro-batches).
		return ns - int64(k)
	}
	return 1
}

// CountValid returns the number of gene vectors that decode as valid,
// computed per layout without decoding each vector.
func (sp *Space) CountValid() int64 {
	var n int64
	nRec, nPiped := int64(len(sp.recomputes)), int64(0)
	for _, n := range sp.actOffloads {
		if n == 0 {
			nPiped++ // the choices a pipeline can run (validInner)
		}
	}
	for i := range sp.layouts {
		l := &sp.layouts[i]
		nr := nRec
		if l.deg[PP] > 1 {
			nr = nPiped
		}
		for _, mb := range sp.mbs {
			if l.perReplica%mb != 0 {
				continue
			}
			for zi := range sp.zeros {
				for k := range sp.schedules {
					if sp.valid(l, mb, sp.zeros[zi], k) {
						n += nr
					}
				}
			}
		}
	}
	return n
}

// String summarises the space: the choices of each gene and the size.
func (sp *Space) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "space: %d layouts x %d micro-batch sizes x %d schedules x %d recompute x %d zero = %d",
		len(sp.layouts), len(sp.mbs), len(sp.schedules), len(sp.recomputes), len(sp.zeros), sp.Size())
	return b.String()
}

// maxSplitDepths is the most pipeline depths not dividing the layers for
// which New offers explicit splits (a --fix pinning pp gives one).
const maxSplitDepths = 2

// withSplits returns the schedule choices all, each with the split of
// the layers over the stages: a pinned split (first, last) on every
// choice; else the default split and, after it, for every pp of the
// layouts that does not divide the layers, the few explicit splits Splits
// offers for that pp (none when the framework cannot set a stage's
// layers, or when more than maxSplitDepths such pp occur). A choice's splits stay next to it, so the choices keep their
// order by schedule and v (Space.Skip).
func withSplits(all []scheduleChoice, layouts []layout, layers int, fp *pinned, lim Limits) []scheduleChoice {
	if fp.has("first") || fp.has("last") {
		for i := range all {
			all[i].split = fp.Split
		}
		return all
	}
	var pps []int
	if !lim.NoSplit {
		for i := range layouts {
			if pp := int(layouts[i].deg[PP]); pp > 1 && !slices.Contains(pps, pp) && len(Splits(layers, pp)) > 0 {
				pps = append(pps, pp)
			}
		}
		slices.Sort(pps)
	}
	if len(pps) == 0 || len(pps) > maxSplitDepths {
		// Beyond a few pipeline depths the explicit splits would multiply
		// the schedule gene past a sane space: the default split (already
		// balanced, its end ranks lighter) stands alone.
		return all
	}
	var out []scheduleChoice
	for _, sc := range all {
		out = append(out, sc)
		for _, pp := range pps {
			if pp*sc.v > layers {
				continue
			}
			for _, x := range Splits(layers, pp) {
				out = append(out, scheduleChoice{name: sc.name, v: sc.v, split: x, splitPP: pp})
			}
		}
	}
	return out
}
