package space

import (
	"slices"

	"github.com/meshplan/meshplan/model"
)

// Dim is a parallel dimension of a strategy: a key of the strategy string
// that takes a degree and occupies mesh axes. The dimensions are the rows
// of one table (dims.go); everything else (parsing, placement, validity,
// enumeration, the roles that shard tensors) reads that table.
type Dim int

// The parallel dimensions, in the order the strategy string lists them.
const (
	DP   Dim = iota // pure data-parallel replicas
	FSDP            // fully sharded data parallel (ZeRO-3)
	TP              // tensor (model) parallel
	CP              // context parallel (sequence split, ring attention)
	PP              // pipeline stages
	EP              // expert parallel, carved out of DP and FSDP (and TP for whole experts)
	NumDims
)

// dimSpec is one row of the table of parallel dimensions.
type dimSpec struct {
	// name is the strategy-string key and the name in the mesh value.
	name string
	// fill is the dimension's place in the default placement and inside
	// an axis: lower fills first and lies innermost (stride 1).
	fill int
	// within is the set of dimensions whose chips this one is carved out
	// of, taken in fill order (EP: FSDP first, then DP, as torchtitan
	// borrows dp_shard); empty for a dimension with chips of its own.
	within DimSet
	// wholeWithin is the set of dimensions it is carved out of after
	// within when the experts are whole on every tensor rank (etp=1) under
	// sequence parallelism, where each tp rank holds tokens of its own:
	// Megatron-Core's expert grid lays ep over tp x cp x dp with etp=1
	// (NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553:
	// megatron/core/parallel_state.py, the expert RankGenerator with
	// tp=expert_tensor_parallel_size).
	wholeWithin DimSet
	// role is the sharding role of the dimension in the layer program, or
	// noRole for PP, which splits layers rather than tensors.
	role Role
	// keep is the rule of thumb that limits the link tiers the enumeration
	// puts the dimension on unless a fix pins it (see New).
	keep tierRule
	// divides is what the degree must divide or stay within (the heads,
	// the experts, the batch, the sequence, the layers), with the errors
	// that say why not: the enumeration prunes layouts with it (New) and
	// Validate explains strategies with it. Dimensions that one rule
	// constrains together (dp and fsdp: dp*fsdp divides the batch) share
	// it.
	divides *dimRule
}

// tierRule limits the link tiers a dimension is enumerated on.
type tierRule uint8

const (
	// anyTier: every tier (the zero rule).
	anyTier tierRule = iota
	// fastestTier: only on the cluster's fastest tier; TP's collectives sit
	// on the critical path of every layer (docs/formulas.md §7: "TP up to
	// the GPUs per server").
	fastestTier
	// offDCN: never on the data-centre network between TPU slices, whose
	// bandwidth cannot carry per-layer traffic (docs/formulas.md §7: "FSDP
	// over DCN is generally too slow").
	offDCN
)

// dimSpecs, roleSpecs and dimsInFillOrder are dimTable, roleTable and
// fillOrder built once, for the paths that read them for every placement
// (Mesh.Resolve, Strategy.RoleDegrees): read-only.
var (
	dimSpecs        = dimTable()
	roleSpecs       = roleTable()
	dimsInFillOrder = fillOrder()
)

// dimTable returns the parallel dimensions, indexed by Dim. Adding a
// dimension is a row here (with its rule below), its role in roleTable,
// and its key in keyTable.
func dimTable() [NumDims]dimSpec {
	return [NumDims]dimSpec{
		DP:   {name: "dp", fill: 4, role: RoleDP, keep: anyTier, divides: &replicaRule},
		FSDP: {name: "fsdp", fill: 2, role: RoleFSDP, keep: offDCN, divides: &replicaRule},
		TP:   {name: "tp", fill: 0, role: RoleTP, keep: fastestTier, divides: &tpRule},
		CP:   {name: "cp", fill: 1, role: RoleCP, keep: offDCN, divides: &cpRule},
		PP:   {name: "pp", fill: 3, role: noRole, keep: anyTier, divides: &ppRule},
		EP:   {name: "ep", fill: 5, within: FSDP.Bit() | DP.Bit(), wholeWithin: TP.Bit(), role: RoleEP, keep: anyTier, divides: &epRule},
	}
}

// dimRule is what the degrees of one or more dimensions must divide or
// stay within, as two checks of degrees d against sizes z. Each reports
// whether d passes and, given a why, says through it why not and what
// would work, once for every part that fails; with a nil why it writes no
// message and allocates nothing, for the enumeration's loops.
type dimRule struct {
	// order is where the rule's errors come among Validate's (tp's heads
	// first, then ep, the batch, the sequence and the layers).
	order int
	// running is the part that every divisor of a passing degree passes
	// too (the degree divides a size, or is at most one): the enumeration
	// checks it on the degrees' running products over the first axes and
	// prunes a branch as soon as it fails.
	running func(z *sizes, d Degrees, why reason) bool
	// whole is the rest, checked on whole degrees with sequence
	// parallelism sp; nil for none. It says nothing about what running
	// reports (Validate applies both).
	whole func(z *sizes, d Degrees, sp bool, why reason) bool
}

// reason receives one error of a rule, as fmt.Errorf's arguments without
// the "space: " prefix.
type reason func(format string, args ...any)

// sizes are what the dimensions' rules check degrees against: the model's
// shape and the workload.
type sizes struct {
	model                  string
	heads, kvHeads, layers int
	experts                int // 0 for a dense model
	batch, seq             int // seq: the workload's, else the model's
	// mb is the micro-batch size: 0 while the enumeration builds
	// layouts, which take it later (a gene of its own, see Decode).
	mb int
	// whole says the experts are whole on every tensor rank (etp=1), so
	// that ep may take tp's ranks too under sequence parallelism: set by
	// Validate, false while the enumeration builds layouts (addEP carves
	// them itself).
	whole bool
}

// sizesOf returns the sizes of model m and workload w with micro-batches
// of mb sequences (0: not chosen).
func sizesOf(m *model.Spec, w Workload, mb int) sizes {
	z := sizes{model: m.Name, heads: m.Heads, kvHeads: m.KVHeads, layers: m.Layers, batch: w.Batch, seq: seqLen(m, w), mb: mb}
	if m.MoE != nil && m.MoE.Experts > 0 {
		z.experts = m.MoE.Experts
	}
	return z
}

// The dimensions' rules (dimTable's divides).
var (
	// tpRule: tp divides the attention heads, and tp and the key/value
	// heads divide one another (when tp is a multiple of kv_heads each KV
	// head is replicated tp/kv_heads times, as Megatron does for GQA).
	tpRule = dimRule{order: 0, running: tpDividesHeads, whole: tpMeetsKVHeads}
	// epRule: ep > 1 needs an MoE model and divides its experts, and ep
	// divides dp*fsdp, the chips it is carved out of (dp*fsdp*tp for
	// whole experts under sequence parallelism).
	epRule = dimRule{order: 1, running: epDividesExperts, whole: epWithinReplicas}
	// replicaRule: dp*fsdp divides the batch, and mb (once chosen)
	// divides the per-replica batch batch/(dp*fsdp).
	replicaRule = dimRule{order: 2, running: replicasDivideBatch, whole: mbDividesReplicaBatch}
	// cpRule: cp divides the sequence, and with sp tp divides seq/cp.
	cpRule = dimRule{order: 3, running: cpDividesSeq, whole: spDividesCPSeq}
	// ppRule: pp is at most the layer count (layers need not divide
	// evenly, see StageLayers).
	ppRule = dimRule{order: 4, running: ppWithinLayers}
)

// dimRules are the distinct rules of dimTable in their order.
var dimRules = rulesInOrder()

// rulesInOrder returns the distinct rules of dimTable sorted by order.
func rulesInOrder() []*dimRule {
	var out []*dimRule
	for _, spec := range dimTable() {
		if spec.divides != nil && !slices.Contains(out, spec.divides) {
			out = append(out, spec.divides)
		}
	}
	slices.SortStableFunc(out, func(a, b *dimRule) int { return a.order - b.order })
	return out
}

// runningOK reports whether the running products d of the degrees pass
// every rule's running part.
func runningOK(z *sizes, d Degrees) bool {
	for _, r := range dimRules {
		if !r.running(z, d, nil) {
			return false
		}
	}
	return true
}

// wholeOK reports whether whole degrees d, whose running parts passed,
// pass every rule's whole part with sequence parallelism sp.
func wholeOK(z *sizes, d Degrees, sp bool) bool {
	for _, r := range dimRules {
		if r.whole != nil && !r.whole(z, d, sp, nil) {
			return false
		}
	}
	return true
}

// ruleErrs applies every rule to degrees d with sequence parallelism sp,
// saying through why what fails.
func ruleErrs(z *sizes, d Degrees, sp bool, why reason) {
	for _, r := range dimRules {
		r.running(z, d, why)
		if r.whole != nil {
			r.whole(z, d, sp, why)
		}
	}
}

func tpDividesHeads(z *sizes, d Degrees, why reason) bool {
	tp := d[TP]
	switch {
	case z.heads < 1:
		if why != nil {
			why("model %s has %d attention heads; tp cannot be checked", z.model, z.heads)
		}
		return false
	case z.heads%tp != 0:
		if why != nil {
			why("tp=%d does not divide the %d attention heads of %s: use tp in %s", tp, z.heads, z.model, divisorList(z.heads))
		}
		return false
	}
	return true
}

func tpMeetsKVHeads(z *sizes, d Degrees, _ bool, why reason) bool {
	tp := d[TP]
	if kv := z.kvHeads; kv > 0 && kv%tp != 0 && tp%kv != 0 {
		if why != nil {
			why("tp=%d and the %d key/value heads of %s do not divide one another: tp must divide kv_heads (each chip holds kv_heads/tp) or be a multiple of it (each KV head is replicated tp/kv_heads times); use tp in %s or a multiple of %d",
				tp, kv, z.model, divisorList(kv), kv)
		}
		return false
	}
	return true
}

func epDividesExperts(z *sizes, d Degrees, why reason) bool {
	ep := d[EP]
	switch {
	case ep <= 1:
		return true
	case z.experts < 1:
		if why != nil {
			why("ep=%d needs a mixture-of-experts model, but %s is dense: use ep=1", ep, z.model)
		}
		return false
	case z.experts%ep != 0:
		if why != nil {
			why("ep=%d does not divide the %d experts of %s: use ep in %s", ep, z.experts, z.model, divisorList(z.experts))
		}
		return false
	}
	return true
}

func epWithinReplicas(z *sizes, d Degrees, sp bool, why reason) bool {
	ep, r := d[EP], mulSat(d[DP], d[FSDP])
	if z.whole && sp {
		// Whole experts under sequence parallelism: ep may take tp's ranks.
		if r = mulSat(r, d[TP]); ep > 1 && r%ep != 0 {
			if why != nil {
				why("ep=%d does not divide dp*fsdp*tp = %d: expert parallelism is carved out of the data-parallel chips and, with whole experts (etp=1) under sp, the tensor-parallel ones, so use ep in %s", ep, r, divisorList(r))
			}
			return false
		}
		return true
	}
	if ep > 1 && r%ep != 0 {
		if why != nil {
			why("ep=%d does not divide dp*fsdp = %d: expert parallelism is carved out of the data-parallel chips (and the tensor-parallel ones only with etp=1 and sp), so use ep in %s", ep, r, divisorList(r))
		}
		return false
	}
	return true
}

func replicasDivideBatch(z *sizes, d Degrees, why reason) bool {
	r := mulSat(d[DP], d[FSDP])
	switch {
	case z.batch < 1:
		if why != nil {
			why("batch=%d must be a positive number of sequences", z.batch)
		}
		return false
	case z.batch%r != 0:
		if why != nil {
			why("batch %d does not split over dp*fsdp = %d data-parallel replicas: use a batch that is a multiple of %d, or dp*fsdp in %s", z.batch, r, r, divisorList(z.batch))
		}
		return false
	}
	return true
}

func mbDividesReplicaBatch(z *sizes, d Degrees, _ bool, why reason) bool {
	r := mulSat(d[DP], d[FSDP])
	if z.mb < 1 || z.batch < 1 || z.batch%r != 0 {
		return true // no micro-batch size yet, or replicasDivideBatch's
	}
	if per := z.batch / r; per%z.mb != 0 {
		if why != nil {
			why("mb=%d does not divide the per-replica batch of %d sequences (batch %d / dp*fsdp %d): use mb in %s", z.mb, per, z.batch, r, divisorList(per))
		}
		return false
	}
	return true
}

func cpDividesSeq(z *sizes, d Degrees, why reason) bool {
	cp := d[CP]
	switch {
	case z.seq < 1:
		if why != nil {
			why("the sequence length %d must be positive", z.seq)
		}
		return false
	case z.seq%cp != 0:
		if why != nil {
			why("cp=%d does not divide the sequence of %d tokens: use cp in %s", cp, z.seq, divisorList(z.seq))
		}
		return false
	}
	return true
}

func spDividesCPSeq(z *sizes, d Degrees, sp bool, why reason) bool {
	tp, cp := d[TP], d[CP]
	if !sp || tp <= 1 || z.seq < 1 || z.seq%cp != 0 {
		return true // no sequence parallelism, or cpDividesSeq's
	}
	if per := z.seq / cp; per%tp != 0 {
		if why != nil {
			why("with sp, tp=%d must divide the %d tokens each cp rank holds (seq %d / cp %d): use sp=false or a tp dividing %d", tp, per, z.seq, cp, per)
		}
		return false
	}
	return true
}

func ppWithinLayers(z *sizes, d Degrees, why reason) bool {
	if pp := d[PP]; pp > z.layers {
		if why != nil {
			why("pp=%d exceeds the %d layers of %s: use pp <= %d", pp, z.layers, z.model, z.layers)
		}
		return false
	}
	return true
}

// String returns the dimension's key in the strategy string: "dp", "fsdp",
// "tp", "cp", "pp" or "ep".
func (d Dim) String() string {
	if d < 0 || d >= NumDims {
		return "dim(" + itoa(int(d)) + ")"
	}
	return dimTable()[d].name
}

// carved reports whether d is carved out of other dimensions' chips (EP)
// rather than holding chips of its own.
func (d Dim) carved() bool { return dimSpecs[d].within != 0 }

// DimSet is a set of parallel dimensions, one bit per Dim.
type DimSet uint8

// A ninth dimension does not fit a DimSet: this constant then overflows
// and the package fails to compile. Widen DimSet (and its users' masks).
const _ = DimSet(1 << (NumDims - 1))

// Bit returns the set holding only d.
func (d Dim) Bit() DimSet { return 1 << d }

// Has reports whether d is in the set.
func (s DimSet) Has(d Dim) bool { return s&(1<<d) != 0 }

// inFillOrder returns the dimensions of s in fill order.
func (s DimSet) inFillOrder() []Dim {
	var out []Dim
	for _, d := range fillOrder() {
		if s.Has(d) {
			out = append(out, d)
		}
	}
	return out
}

// fillOrder is the order in which the default placement gives mesh axes to
// the dimensions, innermost (fastest) axes first; it is also the order in
// which the mesh value of the strategy string lists them, and the order of
// the dimensions' shares inside one axis (the first holds the contiguous,
// innermost part).
func fillOrder() [NumDims]Dim {
	var out [NumDims]Dim
	for d, spec := range dimTable() {
		out[spec.fill] = Dim(d)
	}
	return out
}

// ownDims are the dimensions with chips of their own (all but EP), in fill
// order: their degrees multiply to the chip count.
func ownDims() []Dim {
	var out []Dim
	for _, d := range fillOrder() {
		if !d.carved() {
			out = append(out, d)
		}
	}
	return out
}

// Carved reports whether d is carved out of other dimensions' chips (EP)
// rather than holding chips of its own.
func (d Dim) Carved() bool { return d >= 0 && d < NumDims && d.carved() }

// OwnDims returns the dimensions with chips of their own (dp, fsdp, tp, cp,
// pp), whose degrees multiply to the chip count, in Dim order.
func OwnDims() []Dim {
	var out []Dim
	for d := Dim(0); d < NumDims; d++ {
		if !d.carved() {
			out = append(out, d)
		}
	}
	return out
}

// CarvedDims returns the dimensions carved out of others' chips (ep), in
// Dim order.
func CarvedDims() []Dim {
	var out []Dim
	for d := Dim(0); d < NumDims; d++ {
		if d.carved() {
			out = append(out, d)
		}
	}
	return out
}

// dimByName returns the Dim with the given key, or NumDims.
func dimByName(name string) Dim {
	for d, spec := range dimTable() {
		if spec.name == name {
			return Dim(d)
		}
	}
	return NumDims
}

// Role is a parallel dimension as it shards the tensors of the layer
// program: the "mesh axes" of the sharded-einsum algebra (docs/design.md
// "Communication is derived"). Every dimension but PP has a role; EP's
// carving adds three: the data-parallel chips that remain in the MoE region
// (expert data parallel EDP and expert FSDP EFSDP, [MEG-MOE] parallel
// folding) and, for experts whole on every tensor rank, the tensor ranks
// that remain there (TPE). Roles never share chips within one tensor's
// layout.
type Role uint8

// The roles. Their order is the order of RoleSet bits.
const (
	RoleDP Role = iota
	RoleFSDP
	RoleTP
	// RoleTPE follows RoleTP so that a union of groups keeps tp's axes
	// innermost (Mesh.Union lists them in role order).
	RoleTPE
	RoleCP
	RoleEP
	RoleEDP
	RoleEFSDP
	NumRoles
	noRole = NumRoles
)

// RoleSet is a set of roles, one bit per Role.
type RoleSet uint8

// A ninth role does not fit a RoleSet: this constant then overflows and
// the package fails to compile. Widen RoleSet, and package cost's
// resolution, a word of role sets one byte each, with it.
const _ = RoleSet(1 << (NumRoles - 1))

// Has reports whether r is in the set.
func (s RoleSet) Has(r Role) bool { return s&(1<<r) != 0 }

// Bit returns the set holding only r.
func (r Role) Bit() RoleSet { return 1 << r }

// String returns the role's name: "dp", "fsdp", "tp", "tpe", "cp", "ep",
// "edp" or "efsdp".
func (r Role) String() string {
	if r >= NumRoles {
		return "role(" + itoa(int(r)) + ")"
	}
	return roleTable()[r].name
}

// roleSpec is one row of the table of roles.
type roleSpec struct {
	name string
	// dim is the strategy dimension the role belongs to (for EDP, EFSDP
	// and TPE: the dimension EP is carved out of).
	dim Dim
	// remainder says the role is dim with the carved dimension's shares
	// taken out (EDP, EFSDP, TPE).
	remainder bool
	// shards are the logical tensor dimensions the role splits.
	shards logicals
	// spShards are the logical dimensions it also splits with Megatron
	// sequence parallelism (sp=true) [KORT §4.2.2].
	spShards logicals
	// splitShards and wholeShards are those it splits with sequence
	// parallelism when the experts are split over tp (etp = tp) or whole
	// on every tp rank (etp = 1): the MoE region's tokens go over all of
	// tp with split experts, over tp's expert part (TPE) with whole ones.
	splitShards, wholeShards logicals
}

// logicals is a set of logical dimensions, one bit per model.Logical.
type logicals uint16

// of returns the set of the given logical dimensions.
func of(ls ...model.Logical) logicals {
	var s logicals
	for _, l := range ls {
		s |= 1 << l
	}
	return s
}

// roleTable returns the roles, indexed by Role: which logical dimensions of
// the layer program each one shards (docs/design.md: x[B_{dp,fsdp}, S_{cp}, D],
// W_in[D_{fsdp}, F_{tp}], W_e[E_{ep}, D_{efsdp}, F_{tp}]). The MoE region's
// tokens are split over tp's ranks through TPE, the part of tp that ep does
// not take: all of tp unless ep takes tensor ranks (whole experts).
func roleTable() [NumRoles]roleSpec {
	return [NumRoles]roleSpec{
		RoleDP:    {name: "dp", dim: DP, shards: of(model.TokenBatch)},
		RoleFSDP:  {name: "fsdp", dim: FSDP, shards: of(model.TokenBatch, model.WeightEmbed)},
		RoleTP:    {name: "tp", dim: TP, shards: of(model.Width), spShards: of(model.ResidualSeq), splitShards: of(model.MoESeq, model.ExpertSlots)},
		RoleCP:    {name: "cp", dim: CP, shards: of(model.ResidualSeq, model.Seq, model.MoESeq, model.ExpertSlots)},
		RoleEP:    {name: "ep", dim: EP, shards: of(model.MoEBatch, model.Experts)},
		RoleEDP:   {name: "edp", dim: DP, remainder: true, shards: of(model.MoEBatch, model.ExpertSlots)},
		RoleEFSDP: {name: "efsdp", dim: FSDP, remainder: true, shards: of(model.MoEBatch, model.ExpertEmbed, model.ExpertSlots)},
		RoleTPE:   {name: "tpe", dim: TP, remainder: true, wholeShards: of(model.MoESeq, model.ExpertSlots)},
	}
}

// ClassRoles returns, for every logical tensor dimension of the layer
// program, the roles that shard it; sp adds Megatron sequence parallelism
// (tp on the residual stream's sequence, and on the MoE region's tokens:
// all of tp with the experts split over it, tp's expert part TPE with
// whole experts). A role whose degree is 1 still appears: callers
// intersect with the active roles.
//
// With weightsOverCP the weights' model dimension is sharded over cp too
// (model.ProgramOptions.WeightsOverCP: torchtitan's and MaxText's FSDP
// spans the context-parallel ranks).
func ClassRoles(sp, wholeExperts, weightsOverCP bool) [model.NumLogical]RoleSet {
	var out [model.NumLogical]RoleSet
	for r, spec := range roleTable() {
		ls := spec.shards
		if sp {
			ls |= spec.spShards
			if wholeExperts {
				ls |= spec.wholeShards
			} else {
				ls |= spec.splitShards
			}
		}
		for l := range out {
			if ls&(1<<l) != 0 {
				out[l] |= Role(r).Bit()
			}
		}
	}
	if weightsOverCP {
		out[model.WeightEmbed] |= RoleCP.Bit()
	}
	return out
}

// Roles returns the roles in set, in Role order.
func (s RoleSet) Roles() []Role {
	var out []Role
	for r := Role(0); r < NumRoles; r++ {
		if s.Has(r) {
			out = append(out, r)
		}
	}
	return out
}
