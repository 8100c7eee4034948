package space

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/meshplan/meshplan/profiles"
)

// axisIndex returns the index of the named axis in c, or -1.
func axisIndex(c *profiles.Cluster, name string) int {
	for i := range c.Axes {
		if c.Axes[i].Name == name {
			return i
		}
	}
	return -1
}

// axisNames lists the axes of c as "x (4), y (4), z (8)".
func axisNames(c *profiles.Cluster) string {
	var parts []string
	for _, a := range c.Axes {
		parts = append(parts, fmt.Sprintf("%s (%d)", a.Name, a.Size))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// placed reports whether any dimension has mesh shares.
func (s *Strategy) placed() bool {
	for d := range s.Mesh {
		if len(s.Mesh[d]) > 0 {
			return true
		}
	}
	return false
}

// Place returns s with its Mesh completed and resolved against cluster c.
//
// Shares given in s.Mesh are kept (a share without a size becomes the
// whole axis) and checked: every axis exists, every share size divides its
// axis size, a dimension's shares multiply to its degree, the shares of
// the non-EP dimensions on every axis multiply to exactly the axis size,
// and EP's shares lie within the DP and FSDP shares of each axis (and the TP
// shares for whole experts under sequence parallelism).
// Dimensions with a degree above 1 and no shares get the default placement
// in the order TP, CP, FSDP, PP, DP, each filling the free part of the
// axes innermost (fastest) first: a dimension whose degree equals the size
// of a still untouched axis of the same link tier as the innermost axis
// with free chips takes that whole axis (the innermost such one, so tp=8
// on a 4x4x8 torus takes the 8-long axis and keeps its wraparound, while
// tp=2 on two 8-GPU nodes stays in NVLink rather than taking the 2-node
// axis);
// otherwise it takes, axis by axis from the innermost, the largest factor of
// the axis's free part that divides what is left of its degree. EP then
// takes the innermost part of the DP and FSDP shares.
//
// Because the greedy fill works prime factor by prime factor, degrees that
// multiply to the chip count always admit the default placement; Place
// fails only when they do not, or when explicit shares are inconsistent.
//
// Each dimension's shares are returned innermost axis first, with their
// sizes set. The returned Mesh slices are new; s is not modified. Place
// returns an error, naming the degree and the axes, when the degrees do not
// multiply to the chip count or cannot be laid out on the axes.
func (s Strategy) Place(c profiles.Cluster) (Strategy, error) {
	return s.PlaceInOrder(c, nil)
}

// PlaceInOrder is Place with the default placement filling the dimensions
// of order first, innermost first, in that order, and the others after
// them in the fill order: a framework's rank order (Limits.RankOrder;
// Megatron-LM lays tp, cp, dp, pp over its ranks from the innermost), so
// that a strategy given without a mesh is placed as the framework lays it
// out. A nil order is Place's.
func (s Strategy) PlaceInOrder(c profiles.Cluster, order []Dim) (Strategy, error) {
	out := s
	out.Mesh = [NumDims][]Share{}
	var errs []error
	for _, d := range fillOrder() {
		if s.Degree[d] < 1 {
			errs = append(errs, fmt.Errorf("space: %s=%d must be a positive integer", d, s.Degree[d]))
		}
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	chips := c.Chips()
	if n := s.Chips(); n != chips {
		return out, fmt.Errorf("space: cannot place dp*fsdp*tp*cp*pp = %d on cluster %s with %d chips; the degrees must multiply to the chip count", n, c.Name, chips)
	}
	nAxes := len(c.Axes)
	free := make([]int, nAxes) // free[a]: the part of axis a no dimension holds yet
	for i, a := range c.Axes {
		free[i] = a.Size
	}
	// Explicit shares of the dimensions with chips of their own.
	for _, d := range ownDims() {
		if len(s.Mesh[d]) == 0 {
			continue
		}
		shares, err := resolveShares(&c, d, s.Mesh[d])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		prod := 1
		for _, sh := range shares {
			prod = mulSat(prod, sh.Size)
		}
		if prod != s.Degree[d] {
			errs = append(errs, fmt.Errorf("space: the mesh shares of %s (%s) multiply to %d, not to %s=%d", d, sharesString(shares), prod, d, s.Degree[d]))
			continue
		}
		for _, sh := range shares {
			a := axisIndex(&c, sh.Axis)
			if free[a]%sh.Size != 0 {
				errs = append(errs, fmt.Errorf("space: axis %s has %d chips but the mesh gives %s a share of %d on top of %d already held by other dimensions; the shares on an axis must multiply to its size",
					sh.Axis, c.Axes[a].Size, d, sh.Size, c.Axes[a].Size/free[a]))
				continue
			}
			free[a] /= sh.Size
		}
		out.Mesh[d] = shares
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	// Default placement of the rest.
	for _, d := range placeOrder(order) {
		if out.Mesh[d] != nil || s.Degree[d] == 1 {
			continue
		}
		shares, ok := defaultShares(&c, free, s.Degree[d], true)
		if !ok {
			errs = append(errs, fmt.Errorf("space: cannot lay out %s=%d on the free part of the mesh (%s): a degree must be a product of factors of the axis sizes left over by %s",
				d, s.Degree[d], freeString(&c, free), placedBefore(d)))
			continue
		}
		out.Mesh[d] = shares
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	for a, f := range free {
		if f != 1 {
			// Unreachable when the degrees multiply to the chip count and
			// every share divides its axis, but say so rather than panic.
			errs = append(errs, fmt.Errorf("space: %d of the %d chips of axis %s hold no parallel dimension; the shares on every axis must multiply to its size",
				c.Axes[a].Size-c.Axes[a].Size/f, c.Axes[a].Size, c.Axes[a].Name))
		}
	}
	// EP inside the dimensions it is carved out of (DP and FSDP, and TP
	// for whole experts under sequence parallelism).
	dataCap := make([]int, nAxes)
	for a := range dataCap {
		dataCap[a] = 1
	}
	tpCarvable := s.tpCarvable()
	from, nFrom := epSources(tpCarvable)
	for _, d := range from[:nFrom] {
		for _, sh := range out.Mesh[d] {
			a := axisIndex(&c, sh.Axis)
			dataCap[a] *= sh.Size
		}
	}
	switch {
	case len(s.Mesh[EP]) > 0:
		shares, err := resolveShares(&c, EP, s.Mesh[EP])
		if err != nil {
			errs = append(errs, err)
			break
		}
		prod := 1
		for _, sh := range shares {
			prod = mulSat(prod, sh.Size)
			a := axisIndex(&c, sh.Axis)
			if dataCap[a]%sh.Size != 0 {
				errs = append(errs, fmt.Errorf("space: the ep share %s*%d does not lie within the %s shares of axis %s, which span %d of its chips; ep is carved out of the data-parallel chips%s",
					sh.Axis, sh.Size, sourceNames(tpCarvable), sh.Axis, dataCap[a], tpNote(tpCarvable)))
			}
		}
		if prod != s.Degree[EP] {
			errs = append(errs, fmt.Errorf("space: the mesh shares of ep (%s) multiply to %d, not to ep=%d", sharesString(shares), prod, s.Degree[EP]))
		}
		out.Mesh[EP] = shares
	case s.Degree[EP] > 1:
		room := s.expertRoom()
		shares, ok := defaultShares(&c, dataCap, s.Degree[EP], false)
		if !ok || room%s.Degree[EP] != 0 {
			errs = append(errs, fmt.Errorf("space: cannot lay out ep=%d inside the %s shares (%d chips); ep must divide them and be a product of factors of their shares%s",
				s.Degree[EP], sourceNames(tpCarvable), room, tpNote(tpCarvable)))
			break
		}
		out.Mesh[EP] = shares
	}
	return out, errors.Join(errs...)
}

// placeOrder returns the dimensions with chips of their own, those of
// order first (in its order) and the others after them in fill order.
func placeOrder(order []Dim) []Dim {
	if len(order) == 0 {
		return ownDims()
	}
	var out []Dim
	for _, d := range order {
		if d >= 0 && d < NumDims && !d.carved() && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	for _, d := range ownDims() {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// placedBefore names the dimensions the default placement fills before d.
func placedBefore(d Dim) string {
	var names []string
	for _, o := range fillOrder() {
		if o == d {
			break
		}
		names = append(names, o.String())
	}
	if len(names) == 0 {
		return "the explicit shares"
	}
	return "the explicit shares and " + strings.Join(names, ", ")
}

// freeString describes the free part of every axis.
func freeString(c *profiles.Cluster, free []int) string {
	var parts []string
	for a, f := range free {
		parts = append(parts, fmt.Sprintf("%s %d of %d free", c.Axes[a].Name, f, c.Axes[a].Size))
	}
	return strings.Join(parts, ", ")
}

// sharesString formats shares as in the mesh value, e.g. "x*2.y*4".
func sharesString(shares []Share) string {
	var b strings.Builder
	for i, sh := range shares {
		if i > 0 {
			b.WriteByte('.')
		}
		fmt.Fprintf(&b, "%s*%d", sh.Axis, sh.Size)
	}
	return b.String()
}

// resolveShares checks shares of dimension d against c and returns a new
// slice with sizes resolved (0 is the whole axis), innermost axis first.
func resolveShares(c *profiles.Cluster, d Dim, shares []Share) ([]Share, error) {
	out := make([]Share, 0, len(shares))
	var errs []error
	for _, sh := range shares {
		a := axisIndex(c, sh.Axis)
		if a < 0 {
			errs = append(errs, fmt.Errorf("space: the mesh gives %s axis %q, which cluster %s does not have (axes: %s)", d, sh.Axis, c.Name, axisNames(c)))
			continue
		}
		size := c.Axes[a].Size
		switch {
		case sh.Size == 0:
		case sh.Size < 0 || size%sh.Size != 0:
			errs = append(errs, fmt.Errorf("space: the mesh share %s*%d of %s does not divide axis %s of size %d; use a divisor of %d", sh.Axis, sh.Size, d, sh.Axis, size, size))
			continue
		default:
			size = sh.Size
		}
		if slices.ContainsFunc(out, func(o Share) bool { return o.Axis == sh.Axis }) {
			errs = append(errs, fmt.Errorf("space: the mesh lists axis %q twice for %s", sh.Axis, d))
			continue
		}
		out = append(out, Share{Axis: sh.Axis, Size: size})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortStableFunc(out, func(x, y Share) int { return axisIndex(c, x.Axis) - axisIndex(c, y.Axis) })
	return out, nil
}

// defaultShares lays out degree n on the free parts of the axes (see
// Place; wholeFirst enables the whole-axis rule) and divides them out of free. It reports false, leaving free
// unchanged, when n is not a product of factors of the free parts.
func defaultShares(c *profiles.Cluster, free []int, n int, wholeFirst bool) ([]Share, bool) {
	if n == 1 {
		return nil, true
	}
	if wholeFirst {
		// Only axes of the tier of the innermost axis with free chips
		// qualify, so a small degree never jumps to a slower tier.
		tier := -1
		for a := range c.Axes {
			if free[a] > 1 {
				tier = c.Axes[a].Tier.Rank()
				break
			}
		}
		for a := range c.Axes {
			if free[a] == c.Axes[a].Size && free[a] == n && c.Axes[a].Tier.Rank() == tier {
				free[a] = 1
				return []Share{{Axis: c.Axes[a].Name, Size: n}}, true
			}
		}
	}
	var shares []Share
	left := n
	take := make([]int, len(free))
	for a := range free {
		g := gcd(free[a], left)
		take[a] = g
		left /= g
		if g > 1 {
			shares = append(shares, Share{Axis: c.Axes[a].Name, Size: g})
		}
	}
	if left != 1 {
		return nil, false
	}
	for a := range free {
		free[a] /= take[a]
	}
	return shares, true
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
