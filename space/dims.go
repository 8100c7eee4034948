package space

import "github.com/meshplan/meshplan/model"

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
	EP              // expert parallel, carved out of DP and FSDP
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
	// role is the sharding role of the dimension in the layer program, or
	// noRole for PP, which splits layers rather than tensors.
	role Role
	// keep is the rule of thumb that limits the link tiers the enumeration
	// puts the dimension on unless a fix pins it (see New).
	keep tierRule
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
// dimension is a row here, its role in roleTable, and its key in keyTable.
func dimTable() [NumDims]dimSpec {
	return [NumDims]dimSpec{
		DP:   {name: "dp", fill: 4, role: RoleDP, keep: anyTier},
		FSDP: {name: "fsdp", fill: 2, role: RoleFSDP, keep: offDCN},
		TP:   {name: "tp", fill: 0, role: RoleTP, keep: fastestTier},
		CP:   {name: "cp", fill: 1, role: RoleCP, keep: offDCN},
		PP:   {name: "pp", fill: 3, role: noRole, keep: anyTier},
		EP:   {name: "ep", fill: 5, within: FSDP.Bit() | DP.Bit(), role: RoleEP, keep: anyTier},
	}
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
// carving adds two: the data-parallel chips that remain in the MoE region
// (expert data parallel EDP and expert FSDP EFSDP, [MEG-MOE] parallel
// folding). Roles never share chips within one tensor's layout.
type Role uint8

// The roles. Their order is the order of RoleSet bits.
const (
	RoleDP Role = iota
	RoleFSDP
	RoleTP
	RoleCP
	RoleEP
	RoleEDP
	RoleEFSDP
	NumRoles
	noRole = NumRoles
)

// RoleSet is a set of roles, one bit per Role.
type RoleSet uint8

// Has reports whether r is in the set.
func (s RoleSet) Has(r Role) bool { return s&(1<<r) != 0 }

// Bit returns the set holding only r.
func (r Role) Bit() RoleSet { return 1 << r }

// String returns the role's name: "dp", "fsdp", "tp", "cp", "ep", "edp" or
// "efsdp".
func (r Role) String() string {
	if r >= NumRoles {
		return "role(" + itoa(int(r)) + ")"
	}
	return roleTable()[r].name
}

// roleSpec is one row of the table of roles.
type roleSpec struct {
	name string
	// dim is the strategy dimension the role belongs to (for EDP and
	// EFSDP: the dimension EP is carved out of).
	dim Dim
	// remainder says the role is dim with the carved dimension's shares
	// taken out (EDP, EFSDP).
	remainder bool
	// shards are the logical tensor dimensions the role splits.
	shards logicals
	// spShards are the logical dimensions it also splits with Megatron
	// sequence parallelism (sp=true) [KORT §4.2.2].
	spShards logicals
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
// W_in[D_{fsdp}, F_{tp}], W_e[E_{ep}, D_{efsdp}, F_{tp}]).
func roleTable() [NumRoles]roleSpec {
	return [NumRoles]roleSpec{
		RoleDP:    {name: "dp", dim: DP, shards: of(model.TokenBatch)},
		RoleFSDP:  {name: "fsdp", dim: FSDP, shards: of(model.TokenBatch, model.WeightEmbed)},
		RoleTP:    {name: "tp", dim: TP, shards: of(model.Width), spShards: of(model.ResidualSeq, model.ExpertSlots)},
		RoleCP:    {name: "cp", dim: CP, shards: of(model.ResidualSeq, model.Seq, model.ExpertSlots)},
		RoleEP:    {name: "ep", dim: EP, shards: of(model.MoEBatch, model.Experts)},
		RoleEDP:   {name: "edp", dim: DP, remainder: true, shards: of(model.MoEBatch, model.ExpertSlots)},
		RoleEFSDP: {name: "efsdp", dim: FSDP, remainder: true, shards: of(model.MoEBatch, model.ExpertEmbed, model.ExpertSlots)},
	}
}

// ClassRoles returns, for every logical tensor dimension of the layer
// program, the roles that shard it; sp adds Megatron sequence parallelism
// (tp on the residual stream's sequence). A role whose degree is 1 still
// appears: callers intersect with the active roles.
func ClassRoles(sp bool) [model.NumLogical]RoleSet {
	var out [model.NumLogical]RoleSet
	for r, spec := range roleTable() {
		ls := spec.shards
		if sp {
			ls |= spec.spShards
		}
		for l := range out {
			if ls&(1<<l) != 0 {
				out[l] |= Role(r).Bit()
			}
		}
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
