package cost

import (
	"fmt"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// role is a parallel "mesh axis" of the sharded-einsum algebra: the chips of
// one parallel dimension. EP is carved out of the data-parallel chips, so the
// MoE region splits DP×FSDP into EP × EDP × EFSDP (expert data parallel and
// expert FSDP, [MEG-MOE] parallel folding); roles never share chips within one
// tensor's layout.
type role uint8

const (
	rDP role = iota
	rFSDP
	rTP
	rCP
	rEP
	rEDP
	rEFSDP
	numRoles
)

var roleNames = [numRoles]string{"dp", "fsdp", "tp", "cp", "ep", "edp", "efsdp"}

// roleSet is a bit set of roles.
type roleSet uint8

func (s roleSet) has(r role) bool { return s&(1<<r) != 0 }

func bit(r role) roleSet { return 1 << r }

// meshRoles is a strategy resolved against a cluster: per role its degree and
// axis groups, plus the pipeline groups.
type meshRoles struct {
	deg    [numRoles]float64
	groups [numRoles][maxGroups]space.Group
	ng     [numRoles]int
	pp     [maxGroups]space.Group
	npp    int
	// per role set: linear collective models (0: AG/RS, 1: AllToAll), and
	// which ops have been computed.
	models [1 << numRoles][2]linModel
	have   [1 << numRoles]uint8
}

// reset forgets a previous strategy's groups and memoised collective models.
func (mr *meshRoles) reset() {
	mr.ng = [numRoles]int{}
	mr.npp = 0
	mr.deg = [numRoles]float64{}
	mr.have = [1 << numRoles]uint8{}
}

// resolveMesh turns the Mesh shares of s into axis groups per role.
func resolveMesh(c profiles.Cluster, s space.Strategy, mr *meshRoles) error {
	mesh := s.Mesh
	empty := true
	for _, sh := range mesh {
		if len(sh) > 0 {
			empty = false
		}
	}
	if empty && c.Chips() > 1 {
		placed, err := s.Place(c)
		if err != nil {
			return fmt.Errorf("cost: %w", err)
		}
		mesh = placed.Mesh
	}
	dimRole := [space.NumDims]role{space.DP: rDP, space.FSDP: rFSDP, space.TP: rTP, space.CP: rCP, space.PP: numRoles, space.EP: rEP}
	for d := space.Dim(0); d < space.NumDims; d++ {
		prod := 1
		r := dimRole[d]
		for _, sh := range mesh[d] {
			a, ok := c.Axis(sh.Axis)
			if !ok {
				return fmt.Errorf("cost: mesh names axis %q, which cluster %s does not have", sh.Axis, c.Name)
			}
			if sh.Size <= 1 {
				continue
			}
			g := space.Group{Axis: a, Size: sh.Size, Whole: sh.Size == a.Size}
			if r == numRoles {
				if mr.npp < maxGroups {
					mr.pp[mr.npp] = g
					mr.npp++
				}
			} else if mr.ng[r] < maxGroups {
				mr.groups[r][mr.ng[r]] = g
				mr.ng[r]++
			}
			prod *= sh.Size
		}
		if prod != max(s.Degree(d), 1) {
			return fmt.Errorf("cost: mesh shares of parallel dimension %d multiply to %d, not its degree %d", d, prod, max(s.Degree(d), 1))
		}
		if r != numRoles {
			mr.deg[r] = float64(prod)
		}
	}
	// Expert data parallelism: the DP and FSDP groups with the EP shares
	// taken out (EP is a subset of their axes; contract "ep").
	mr.groups[rEDP], mr.ng[rEDP] = mr.groups[rDP], mr.ng[rDP]
	mr.groups[rEFSDP], mr.ng[rEFSDP] = mr.groups[rFSDP], mr.ng[rFSDP]
	for i := 0; i < mr.ng[rEP]; i++ {
		e := mr.groups[rEP][i]
		if !carve(&mr.groups[rEFSDP], &mr.ng[rEFSDP], e) && !carve(&mr.groups[rEDP], &mr.ng[rEDP], e) {
			return fmt.Errorf("cost: ep share %s:%d is not part of a dp or fsdp share", e.Axis.Name, e.Size)
		}
	}
	for _, r := range []role{rEDP, rEFSDP} {
		p := 1
		for i := 0; i < mr.ng[r]; i++ {
			p *= mr.groups[r][i].Size
		}
		mr.deg[r] = float64(p)
	}
	for r := range mr.deg {
		if mr.deg[r] < 1 {
			mr.deg[r] = 1
		}
	}
	return nil
}

// carve divides the group on e's axis by e.Size, dropping it when it reaches 1.
func carve(gs *[maxGroups]space.Group, n *int, e space.Group) bool {
	for i := 0; i < *n; i++ {
		g := &gs[i]
		if g.Axis.Name != e.Axis.Name || g.Size%e.Size != 0 {
			continue
		}
		g.Size /= e.Size
		g.Whole = false
		if g.Size == 1 {
			copy(gs[i:], gs[i+1:*n])
			*n--
		}
		return true
	}
	return false
}

// union collects the axis groups of the roles in set into dst, merging
// groups on the same axis (their sizes multiply), and returns the count.
func (mr *meshRoles) union(set roleSet, dst *[maxGroups]space.Group) int {
	n := 0
	for r := role(0); r < numRoles; r++ {
		if !set.has(r) {
			continue
		}
	groups:
		for i := 0; i < mr.ng[r]; i++ {
			g := mr.groups[r][i]
			for j := 0; j < n; j++ {
				if dst[j].Axis.Name == g.Axis.Name {
					dst[j].Size *= g.Size
					dst[j].Whole = dst[j].Size == dst[j].Axis.Size
					continue groups
				}
			}
			if n < maxGroups {
				dst[n] = g
				n++
			}
		}
	}
	return n
}

// axesOf lists the axis names of the roles in set, innermost first.
func (mr *meshRoles) axesOf(set roleSet) []string {
	var gs [maxGroups]space.Group
	n := mr.union(set, &gs)
	out := make([]string, n)
	for i := 0; i < n; i++ {
		out[i] = gs[i].Axis.Name
	}
	return out
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

// axesOfGroup names pipeline group i's axis.
func (mr *meshRoles) axesOfGroup(i int) []string { return []string{mr.pp[i].Axis.Name} }

// seconds is the time of collective op on a full array of bytes over the roles in set.
func (mr *meshRoles) seconds(op collOp, bytes float64, set roleSet) float64 {
	if bytes <= 0 || set == 0 {
		return 0
	}
	if mr.have[set]&(1<<op) == 0 {
		var gs [maxGroups]space.Group
		n := mr.union(set, &gs)
		g := gs[:n]
		switch op {
		case opAG, opRS, opAR:
			mr.models[set][0] = linModelOf(g, false)
			mr.have[set] |= 1<<opAG | 1<<opRS | 1<<opAR
		case opA2A:
			mr.models[set][1] = linModelOf(g, true)
			mr.have[set] |= 1 << opA2A
		}
	}
	switch op {
	case opAG, opRS:
		return mr.models[set][0].at(bytes)
	case opAR:
		return 2 * mr.models[set][0].at(bytes)
	case opA2A:
		return mr.models[set][1].at(bytes)
	}
	return 0
}
