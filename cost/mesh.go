package cost

import (
	"math"

	"github.com/meshplan/meshplan/space"
)

// roleSet is a set of the algebra's roles (space.Role): the parallel
// dimensions as they shard tensors, with EP's expert remainders EDP and
// EFSDP.
type roleSet = space.RoleSet

// bit returns the set holding only r.
func bit(r space.Role) roleSet { return r.Bit() }

// numRoleSets is the number of distinct role sets.
const numRoleSets = 1 << space.NumRoles

// meshRoles is a strategy's space.Mesh with the collective models of every
// role set it has priced, memoised: a strategy's einsums ask for the same
// few sets over and over.
type meshRoles struct {
	space.Mesh
	deg [space.NumRoles]float64
	// models holds per role set the linear collective models (0: AllGather
	// and ReduceScatter, 1: AllToAll, 2: the MoE dispatch and combine);
	// have says which are computed.
	models [numRoleSets][3]linModel
	have   [numRoleSets]uint8
	// seen says per role set which models (have's bits) have been computed
	// since resolve, under any placement moveTo moved to; sets lists the
	// role sets seen.
	seen [numRoleSets]uint8
	sets []roleSet
	// routing is the model's MoE routing, which thins out the network leg
	// of the dispatch and combine.
	routing routing
	// buf is scratch for a union of groups.
	buf []space.Group
	// flat prices collectives as one flat ring (Comm.Flat).
	flat bool
	// placed, when not nil, is the kept placement the mesh is a copy of,
	// whose models the ones computed here are taken from and kept in.
	placed *placedMesh
}

// numPlaced is the number of named placements an evaluator keeps the
// resolved mesh and collective models of (placedMeshes): more than a
// search's layout class usually holds.
const numPlaced = 64

// placedMeshes keeps the resolved meshes of the last numPlaced placements
// an Evaluator was given names for (Evaluator.EvaluatePlacedTo), with the
// collective models priced under each: a search comes back to a layout
// class's placements once per micro-batch size, and a named placement
// always has the same mesh, whose models depend on its groups alone.
type placedMeshes struct {
	// names are the entries' names, apart so that find scans them in a
	// few cache lines.
	names   [numPlaced]int64
	entries [numPlaced]placedMesh
	n, next int
}

// placedMesh is one kept placement: its mesh, and the linear collective
// models computed under it, slot[set]-1 in models per role set (0: none)
// with have's bits (meshRoles.have) for the kinds computed.
type placedMesh struct {
	mesh   space.Mesh
	slot   [numRoleSets]uint8
	have   []uint8
	models [][3]linModel
	// routing is the MoE routing the kept dispatch and combine models
	// (kind 2) were priced under: a strategy's dispatcher changes it
	// (routing.under).
	routing routing
}

// resolve resolves s on the inputs into m, and returns the kept placement
// m is a copy of: the one named name when kept (m is then copied from it,
// not resolved again), else a new one kept under name; nil, resolving
// alone, when pm is nil, name is negative or the inputs trace.
func (pm *placedMeshes) resolve(m *space.Mesh, in *evalInputs, s *space.Strategy, name int64) (*placedMesh, error) {
	if pm == nil || name < 0 || in.options.Trace {
		return nil, m.Resolve(in.cluster, s)
	}
	if pl := pm.find(name); pl != nil {
		m.CopyFrom(&pl.mesh)
		return pl, nil
	}
	if err := m.Resolve(in.cluster, s); err != nil {
		return nil, err
	}
	return pm.keep(name, m), nil
}

// find returns the kept placement named name, or nil.
func (pm *placedMeshes) find(name int64) *placedMesh {
	for i, n := range pm.names[:pm.n] {
		if n == name {
			return &pm.entries[i]
		}
	}
	return nil
}

// keep keeps a copy of mesh m under name, in place of the oldest kept
// placement when all slots are taken, and returns it.
func (pm *placedMeshes) keep(name int64, m *space.Mesh) *placedMesh {
	pl := &pm.entries[pm.next]
	pm.names[pm.next] = name
	pm.next = (pm.next + 1) % numPlaced
	pm.n = min(pm.n+1, numPlaced)
	pl.mesh.CopyFrom(m)
	clear(pl.slot[:])
	pl.have, pl.models = pl.have[:0], pl.models[:0]
	return pl
}

// model returns the kept model of kind k over set, if computed.
func (pl *placedMesh) model(set roleSet, k int) (linModel, bool) {
	if i := pl.slot[set]; i != 0 && pl.have[i-1]&kindBits(k) != 0 {
		return pl.models[i-1][k], true
	}
	return linModel{}, false
}

// forgetDispatch forgets the kept dispatch and combine models (kind 2),
// priced under another routing, and keeps r as the routing.
func (pl *placedMesh) forgetDispatch(r routing) {
	for i := range pl.have {
		pl.have[i] &^= kindBits(2)
	}
	pl.routing = r
}

// keepModel keeps lm as the model of kind k over set.
func (pl *placedMesh) keepModel(set roleSet, k int, lm linModel) {
	i := pl.slot[set]
	if i == 0 {
		if len(pl.models) == math.MaxUint8 {
			return // full: computed again when asked
		}
		pl.have = append(pl.have, 0)
		pl.models = append(pl.models, [3]linModel{})
		i = uint8(len(pl.models))
		pl.slot[set] = i
	}
	pl.have[i-1] |= kindBits(k)
	pl.models[i-1][k] = lm
}

// resolve resolves s (placed or not) on the cluster into mr and forgets
// the memoised models of the previous strategy; with placed and a name
// (placedMeshes.resolve), from and into the kept placement of that name.
func (mr *meshRoles) resolve(ev *evalInputs, s *space.Strategy, placed *placedMeshes, name int64) error {
	pl, err := placed.resolve(&mr.Mesh, ev, s, name)
	if err != nil {
		return err
	}
	mr.flat, mr.placed = ev.options.Comm.Flat, pl
	for r := range mr.deg {
		mr.deg[r] = float64(mr.Degrees[r])
	}
	mr.have = [numRoleSets]uint8{}
	for _, set := range mr.sets {
		mr.seen[set] = 0
	}
	mr.sets = mr.sets[:0]
	return nil
}

// moveTo moves mr to mesh m, another placement of the same role degrees
// (mr's old mesh is returned in m), and returns the roles of the role
// sets seen since resolve whose collective models m changes (a cost that
// priced collectives only over unchanged sets holds under m bit for bit)
// and the roles whose axis groups m changes. The seen sets' models are
// computed for m (have), the others forgotten. With pl, the kept
// placement m is a copy of, the models are taken from it and kept in it.
func (mr *meshRoles) moveTo(m *space.Mesh, pl *placedMesh) (changed, regrouped roleSet) {
	for r := range m.Groups {
		if !sameGroups(m.Groups[r], mr.Groups[r]) {
			regrouped |= bit(space.Role(r))
		}
	}
	mr.Mesh, *m = *m, mr.Mesh
	mr.placed = pl
	mr.have = [numRoleSets]uint8{}
	for _, set := range mr.sets {
		mr.have[set] = mr.seen[set]
		if set&regrouped == 0 {
			continue // the same groups: the same models
		}
		old := mr.models[set]
		for k := range old {
			if mr.seen[set]&kindBits(k) != 0 {
				mr.models[set][k] = mr.placedModel(set, k)
			}
		}
		if mr.models[set] != old {
			changed |= set & regrouped
		}
	}
	return changed, regrouped
}

// kindBits are the collective ops (have's bits) that a role set's linModel
// of kind k (collOp.model) prices.
func kindBits(k int) uint8 {
	switch k {
	case 1:
		return 1 << opA2A
	case 2:
		return 1 << opA2AMoE
	}
	return 1<<opAG | 1<<opRS | 1<<opAR
}

// modelOf is the linModel of kind k (collOp.model) over groups g.
func (mr *meshRoles) modelOf(g []space.Group, k int) linModel {
	switch k {
	case 1:
		return linModelOf(g, true, mr.flat)
	case 2:
		return scaledLinModel(g, true, mr.flat, mr.routing.netScale(networkChips(g)))
	}
	return linModelOf(g, false, mr.flat)
}

// placedModel is the linModel of kind k over the roles in set: the kept
// placement's when it has it, else computed (and kept there).
func (mr *meshRoles) placedModel(set roleSet, k int) linModel {
	pl := mr.placed
	if pl == nil {
		return mr.modelOf(mr.union(set), k)
	}
	if k == 2 && pl.routing != mr.routing {
		pl.forgetDispatch(mr.routing)
	}
	if lm, ok := pl.model(set, k); ok {
		return lm
	}
	lm := mr.modelOf(mr.union(set), k)
	pl.keepModel(set, k, lm)
	return lm
}

// union returns the merged axis groups of the roles in set (see
// space.Mesh.Union), in scratch memory valid until the next call.
func (mr *meshRoles) union(set roleSet) []space.Group {
	mr.buf = mr.Union(mr.buf[:0], set)
	return mr.buf
}

// axesOf lists the axis names of the roles in set, innermost first.
func (mr *meshRoles) axesOf(set roleSet) []string {
	gs := mr.union(set)
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Axis.Name
	}
	return out
}

// seconds is the time of collective op on a full array of bytes over the
// roles in set.
func (mr *meshRoles) seconds(op collOp, bytes float64, set roleSet) float64 {
	if bytes <= 0 || set == 0 {
		return 0
	}
	if op < opAG || op > opA2AMoE || op == opP2P {
		return 0
	}
	k := op.model()
	if mr.have[set]&(1<<op) == 0 {
		mr.models[set][k] = mr.placedModel(set, k)
		mr.have[set] |= kindBits(k)
		if mr.seen[set] == 0 {
			mr.sets = append(mr.sets, set)
		}
		mr.seen[set] |= kindBits(k)
	}
	return mr.models[set][k].at(bytes) * op.passes()
}

// latency is the fixed part of one collective op over the roles in set:
// its time for a vanishing array.
func (mr *meshRoles) latency(op collOp, set roleSet) float64 {
	if set == 0 {
		return 0
	}
	mr.seconds(op, 1, set)
	m := &mr.models[set][op.model()]
	return (m.ringLat + m.lat) * op.passes()
}

// model is the index of op's linModel: 0 for the gathers, 1 for AllToAll,
// 2 for the MoE dispatch and combine.
func (op collOp) model() int {
	switch op {
	case opA2A:
		return 1
	case opA2AMoE:
		return 2
	}
	return 0
}

// passes is the number of gather-like passes op makes: an AllReduce is a
// ReduceScatter and an AllGather.
func (op collOp) passes() float64 {
	if op == opAR {
		return 2
	}
	return 1
}

// linModel is a collective's time as a function of its bytes v over fixed
// groups: max(v·ringPerByte, ringLat) + v·perByte + lat. gatherSeconds and
// allToAllSeconds have exactly this form, so it is evaluated once per role set.
type linModel struct {
	ringPerByte, ringLat, perByte, lat float64
}

func (l *linModel) at(v float64) float64 {
	if v <= 0 {
		return 0
	}
	return max(v*l.ringPerByte, l.ringLat) + v*l.perByte + l.lat
}
