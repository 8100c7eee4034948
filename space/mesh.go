package space

import (
	"fmt"

	"github.com/meshplan/meshplan/profiles"
)

// Group is one mesh-axis share of a parallel dimension or role, resolved
// against a cluster: what the cost model needs to price a collective over it.
type Group struct {
	// Axis is the cluster axis the share lies on.
	Axis profiles.Axis
	// Size is the number of chips of the axis in the group.
	Size int
	// Whole says the group spans the whole axis, so it keeps the axis's
	// wraparound; a part of an axis is a contiguous sub-ring without one.
	Whole bool
}

// Mesh is a placed strategy resolved against a cluster, once, for the cost
// and memory models: for every role the axis groups it spans (innermost
// first) and its degree, and the pipeline's groups. EP's carving out of DP
// and FSDP is resolved here and nowhere else: on every axis, EP takes the
// FSDP share first and then the DP share (torchtitan's dp_shard borrowing,
// [MEG-MOE] parallel folding); what is left are the expert data-parallel
// roles EFSDP and EDP.
type Mesh struct {
	// Groups are the axis groups of each role, innermost axis first.
	Groups [NumRoles][]Group
	// Degrees are the roles' degrees (1 for a role the strategy does not use).
	Degrees [NumRoles]int
	// Pipeline are the pipeline's axis groups, innermost axis first.
	Pipeline []Group
	// backing holds the groups; Resolve reuses it.
	backing []Group
}

// Resolve resolves the placed strategy s (see Place; an unplaced strategy
// is placed first) against cluster c into m, reusing m's memory.
func (m *Mesh) Resolve(c profiles.Cluster, s *Strategy) error {
	if !s.placed() && c.Chips() > 1 {
		p, err := s.Place(c)
		if err != nil {
			return err
		}
		return m.resolve(&c, &p)
	}
	return m.resolve(&c, s)
}

// Resolve returns the mesh of s on c (see Mesh.Resolve).
func (s Strategy) Resolve(c profiles.Cluster) (Mesh, error) {
	var m Mesh
	err := m.Resolve(c, &s)
	return m, err
}

// resolve fills m from the placed strategy s.
func (m *Mesh) resolve(c *profiles.Cluster, s *Strategy) error {
	n := 0
	for d := range s.Mesh {
		n += len(s.Mesh[d])
	}
	// Each share gives at most one group to its own role, to the pipeline,
	// or (DP, FSDP) to the expert remainder as well.
	if cap(m.backing) < 2*n {
		m.backing = make([]Group, 0, 2*n)
	}
	m.backing = m.backing[:0]
	tab := &dimSpecs
	groupsOf := func(d Dim) (start int, err error) {
		start = len(m.backing)
		prod := 1
		for _, sh := range s.Mesh[d] {
			a, ok := c.Axis(sh.Axis)
			if !ok {
				return start, fmt.Errorf("space: the mesh gives %s axis %q, which cluster %s does not have", d, sh.Axis, c.Name)
			}
			size := sh.Size
			if size == 0 {
				size = a.Size
			}
			if size < 1 || a.Size%size != 0 {
				return start, fmt.Errorf("space: the mesh share %s*%d of %s does not divide axis %s of size %d", sh.Axis, size, d, sh.Axis, a.Size)
			}
			prod *= size
			if size > 1 {
				m.backing = append(m.backing, Group{Axis: a, Size: size, Whole: size == a.Size})
			}
		}
		if want := max(s.Degree[d], 1); prod != want {
			return start, fmt.Errorf("space: the mesh shares of %s multiply to %d, not to %s=%d", d, prod, d, want)
		}
		return start, nil
	}
	m.Pipeline = nil
	for r := range m.Groups {
		m.Groups[r] = nil
		m.Degrees[r] = 1
	}
	for d := Dim(0); d < NumDims; d++ {
		start, err := groupsOf(d)
		if err != nil {
			return err
		}
		gs := m.backing[start:len(m.backing):len(m.backing)]
		if r := tab[d].role; r == noRole {
			m.Pipeline = gs
		} else {
			m.Groups[r] = gs
			m.Degrees[r] = max(s.Degree[d], 1)
		}
	}
	return m.carve(s.tpCarvable())
}

// CopyFrom makes m a copy of o that shares no memory with it, reusing m's
// memory: the same groups, degrees and pipeline.
func (m *Mesh) CopyFrom(o *Mesh) {
	m.backing = append(m.backing[:0], o.backing...)
	m.Degrees = o.Degrees
	for r := range m.Groups {
		m.Groups[r] = m.rebase(o, o.Groups[r])
	}
	m.Pipeline = m.rebase(o, o.Pipeline)
}

// rebase returns gs, a group list of o, as the same list in m's backing
// (a copy of o's): at the same place when gs lies in o's backing, else a
// copy of its own (a Mesh built by hand). An empty list stays empty, and
// nil stays nil.
func (m *Mesh) rebase(o *Mesh, gs []Group) []Group {
	switch {
	case gs == nil:
		return nil
	case len(gs) == 0:
		return []Group{}
	}
	for i := range o.backing {
		if &o.backing[i] == &gs[0] && i+len(gs) <= len(m.backing) {
			return m.backing[i : i+len(gs) : i+len(gs)]
		}
	}
	return append([]Group(nil), gs...)
}

// carve derives the expert remainder roles EFSDP, EDP and TPE: on every
// axis, EP's share e is taken from the FSDP share f first, the DP share d
// after and, when tp is carvable (whole experts under sequence
// parallelism, Strategy.tpCarvable), the TP share t last, leaving
// f/gcd(f, e), d/gcd(d, e') and t/gcd(t, e”). This always divides when
// e divides the product of those shares on the axis, which Place checks.
func (m *Mesh) carve(tpCarvable bool) error {
	roles := &roleSpecs
	// The remainder roles start as copies of the roles they are carved
	// from, in m's backing (Resolve sized it); remainder is, per role
	// carved from, its remainder role (EDP for DP, EFSDP for FSDP, TPE for
	// TP).
	var remainder [NumRoles]Role
	for rr := range roles {
		if !roles[rr].remainder {
			continue
		}
		from := dimSpecs[roles[rr].dim].role
		remainder[from] = Role(rr)
		start := len(m.backing)
		m.backing = append(m.backing, m.Groups[from]...)
		m.Groups[rr] = m.backing[start:len(m.backing):len(m.backing)]
	}
	from, n := epSources(tpCarvable)
	for _, e := range m.Groups[RoleEP] {
		left := e.Size
		for _, d := range from[:n] {
			gs := m.Groups[remainder[dimSpecs[d].role]]
			for i := range gs {
				if gs[i].Axis.Name != e.Axis.Name {
					continue
				}
				g := gcd(gs[i].Size, left)
				gs[i].Size /= g
				gs[i].Whole = false
				left /= g
			}
		}
		if left != 1 {
			return fmt.Errorf("space: the ep share %s*%d does not lie within the %s shares of axis %s; ep is carved out of the data-parallel chips%s", e.Axis.Name, e.Size, sourceNames(tpCarvable), e.Axis.Name, tpNote(tpCarvable))
		}
	}
	for rr := range roles {
		if !roles[rr].remainder {
			continue
		}
		// Drop the groups carved down to one chip, in place.
		gs := m.Groups[rr][:0]
		deg := 1
		for _, g := range m.Groups[rr] {
			if g.Size > 1 {
				gs = append(gs, g)
				deg *= g.Size
			}
		}
		m.Groups[rr] = gs
		m.Degrees[rr] = deg
	}
	return nil
}

// epSources returns the dimensions EP is carved out of, in the order it
// takes their shares (EP's within in fill order, then its wholeWithin when
// tp is carvable), as a fixed array and its length: no allocation on the
// memory model's hot path.
func epSources(tpCarvable bool) (out [NumDims]Dim, n int) {
	spec := &dimSpecs[EP]
	for _, d := range dimsInFillOrder {
		if spec.within.Has(d) {
			out[n] = d
			n++
		}
	}
	if tpCarvable {
		for _, d := range dimsInFillOrder {
			if spec.wholeWithin.Has(d) {
				out[n] = d
				n++
			}
		}
	}
	return out, n
}

// sourceNames names the dimensions EP is carved out of, for messages.
func sourceNames(tpCarvable bool) string {
	if tpCarvable {
		return "dp, fsdp and tp"
	}
	return "dp and fsdp"
}

// tpNote is the hint of a carving message: ep takes tensor ranks only for
// whole experts under sequence parallelism.
func tpNote(tpCarvable bool) string {
	if tpCarvable {
		return ""
	}
	return " (and the tensor-parallel ones only with etp=1 and sp)"
}

// tpCarvable reports whether ep may take s's tensor-parallel ranks: the
// experts are whole on every tp rank (etp=1) and sequence parallelism
// gives each tp rank tokens of its own, Megatron-Core's expert grid with
// etp=1 (NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553:
// megatron/core/parallel_state.py, the expert RankGenerator).
func (s *Strategy) tpCarvable() bool { return s.SP && s.ExpertsWhole() }

// expertRoom is the number of chips ep is carved out of: dp*fsdp, times tp
// when ep may take tensor ranks (tpCarvable).
func (s *Strategy) expertRoom() int {
	if s.tpCarvable() {
		return mulSat(s.Replicas(), s.Degree[TP])
	}
	return s.Replicas()
}

// Degree returns the product of the degrees of the roles in set.
func (m *Mesh) Degree(set RoleSet) int {
	n := 1
	for r := Role(0); r < NumRoles; r++ {
		if set.Has(r) {
			n *= m.Degrees[r]
		}
	}
	return n
}

// Active returns the roles whose degree exceeds 1.
func (m *Mesh) Active() RoleSet {
	var s RoleSet
	for r := Role(0); r < NumRoles; r++ {
		if m.Degrees[r] > 1 {
			s |= r.Bit()
		}
	}
	return s
}

// Union appends to dst the axis groups of the roles in set, merging groups
// on the same axis (their sizes multiply), innermost axis first in role
// order, and returns it.
func (m *Mesh) Union(dst []Group, set RoleSet) []Group {
	for r := Role(0); r < NumRoles; r++ {
		if !set.Has(r) {
			continue
		}
	groups:
		for _, g := range m.Groups[r] {
			for j := range dst {
				if dst[j].Axis.Name == g.Axis.Name {
					dst[j].Size *= g.Size
					dst[j].Whole = dst[j].Size == dst[j].Axis.Size
					continue groups
				}
			}
			dst = append(dst, g)
		}
	}
	return dst
}

// RoleDegrees returns the degree of every role of the placed strategy s
// on cluster c without building its groups: the same carving as Resolve
// (EP takes each axis's FSDP share first, then its DP share, then its TP
// share for whole experts under sequence parallelism), for the memory
// model's hot path. An unplaced strategy is placed first.
func (s *Strategy) RoleDegrees(c profiles.Cluster) ([NumRoles]int, error) {
	var out [NumRoles]int
	if !s.placed() && c.Chips() > 1 {
		p, err := s.Place(c)
		if err != nil {
			return out, err
		}
		return p.RoleDegrees(c)
	}
	dims, roles := &dimSpecs, &roleSpecs
	for r := range out {
		out[r] = 1
	}
	for d := Dim(0); d < NumDims; d++ {
		if r := dims[d].role; r != noRole {
			out[r] = max(s.Degree[d], 1)
		}
	}
	if len(s.Mesh[EP]) == 0 {
		for rr, spec := range roles {
			if spec.remainder {
				out[rr] = out[dims[spec.dim].role]
			}
		}
		return out, nil
	}
	// remainder[d] is the remainder role of dimension d (EDP of DP, EFSDP
	// of FSDP, TPE of TP), noRole for the others.
	var remainder [NumDims]Role
	for d := range remainder {
		remainder[d] = noRole
	}
	for rr, spec := range roles {
		if spec.remainder {
			out[rr] = out[dims[spec.dim].role]
			remainder[spec.dim] = Role(rr)
		}
	}
	tpCarvable := s.tpCarvable()
	from, n := epSources(tpCarvable)
	for _, e := range s.Mesh[EP] {
		left := e.Size
		if left == 0 {
			a, ok := c.Axis(e.Axis)
			if !ok {
				return out, fmt.Errorf("space: the mesh gives ep axis %q, which cluster %s does not have", e.Axis, c.Name)
			}
			left = a.Size
		}
		for _, d := range from[:n] {
			for _, sh := range s.Mesh[d] {
				if sh.Axis != e.Axis {
					continue
				}
				size := sh.Size
				if size == 0 {
					if a, ok := c.Axis(sh.Axis); ok {
						size = a.Size
					}
				}
				g := gcd(size, left)
				out[remainder[d]] /= g
				left /= g
			}
		}
		if left != 1 {
			return out, fmt.Errorf("space: the ep share %s*%d does not lie within the %s shares of axis %s; ep is carved out of the data-parallel chips%s", e.Axis, e.Size, sourceNames(tpCarvable), e.Axis, tpNote(tpCarvable))
		}
	}
	return out, nil
}

// DimGroups returns the axis groups of parallel dimension d: its role's
// (the whole of DP and FSDP, before EP's carving), or the pipeline's.
func (m *Mesh) DimGroups(d Dim) []Group {
	if d < 0 || d >= NumDims {
		return nil
	}
	if r := dimSpecs[d].role; r != noRole {
		return m.Groups[r]
	}
	return m.Pipeline
}
