package profiles

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxExpandedNames bounds the clusters one list or range may name.
const MaxExpandedNames = 64

// ExpandNames expands a cluster argument that may name several clusters: a
// comma-separated list, whose items may be ranges; a range LO..HI of two
// names of the same chip that differ only in size, doubling from LO to HI
// (v5p-128..v5p-2048, or the slice count: 2xv5p-256..8xv5p-256); or one
// name or YAML file, returned as is. Every name a range yields parses; at
// most MaxExpandedNames names are returned.
func ExpandNames(arg string) ([]string, error) {
	if strings.TrimSpace(arg) == "" {
		return nil, fmt.Errorf("profiles: no cluster named")
	}
	if !strings.Contains(arg, ",") && !isRange(arg) {
		return []string{arg}, nil
	}
	var names []string
	for item := range strings.SplitSeq(arg, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("profiles: %q has an empty name in its list", arg)
		}
		if !isRange(item) {
			names = append(names, item)
			continue
		}
		r, err := expandRange(item)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", item, err)
		}
		names = append(names, r...)
	}
	if len(names) > MaxExpandedNames {
		return nil, fmt.Errorf("profiles: %q names %d clusters, more than %d", arg, len(names), MaxExpandedNames)
	}
	return names, nil
}

// isRange reports whether s reads as LO..HI rather than a file path.
func isRange(s string) bool {
	lo, hi, ok := strings.Cut(s, "..")
	return ok && lo != "" && hi != "" && !strings.ContainsAny(s, `/\`) &&
		!strings.HasSuffix(s, ".yaml") && !strings.HasSuffix(s, ".yml")
}

// sizedName is a cluster name split into its slice count, chip prefix and size suffix.
type sizedName struct {
	slices int    // K of a "Kx" prefix, 1 without one
	chip   string // the name between the prefix and the last '-'
	size   int    // the number after the last '-'
}

func (n sizedName) String() string {
	s := n.chip + "-" + strconv.Itoa(n.size)
	if n.slices > 1 {
		s = strconv.Itoa(n.slices) + "x" + s
	}
	return s
}

// splitName splits a cluster name such as 2xv5p-256 or h100-1024.
func splitName(name string) (sizedName, error) {
	n := sizedName{slices: 1}
	rest := strings.ToLower(strings.TrimSpace(name))
	if k, tail, ok := strings.Cut(rest, "x"); ok {
		if v, err := strconv.Atoi(k); err == nil && v >= 1 {
			n.slices, rest = v, tail
		}
	}
	i := strings.LastIndex(rest, "-")
	if i <= 0 {
		return n, fmt.Errorf("%q is not a name of the form CHIP-N", name)
	}
	size, err := strconv.Atoi(rest[i+1:])
	if err != nil || size < 1 {
		return n, fmt.Errorf("%q does not end in a size", name)
	}
	n.chip, n.size = rest[:i], size
	return n, nil
}

// expandRange expands LO..HI by doubling the size (or the slice count).
func expandRange(s string) ([]string, error) {
	los, his, _ := strings.Cut(s, "..")
	lo, err := splitName(los)
	if err != nil {
		return nil, err
	}
	hi, err := splitName(his)
	if err != nil {
		return nil, err
	}
	if lo.chip != hi.chip {
		return nil, fmt.Errorf("both ends must name the same chip, got %s and %s", lo.chip, hi.chip)
	}
	var step func(n *sizedName)
	from, to := 0, 0
	switch {
	case lo.slices == hi.slices:
		from, to = lo.size, hi.size
		step = func(n *sizedName) { n.size *= 2 }
	case lo.size == hi.size:
		from, to = lo.slices, hi.slices
		step = func(n *sizedName) { n.slices *= 2 }
	default:
		return nil, fmt.Errorf("the ends may differ in size or in slice count, not both")
	}
	if from > to {
		return nil, fmt.Errorf("the range runs downwards (%s is larger than %s)", los, his)
	}
	var names []string
	for n, v := lo, from; v <= to; v *= 2 {
		if len(names) > MaxExpandedNames {
			break
		}
		if _, err := Parse(n.String()); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		names = append(names, n.String())
		if v == to {
			return names, nil
		}
		step(&n)
	}
	return nil, fmt.Errorf("%s is not %s times a power of two", his, los)
}

// FamilySizes returns the single-slice cluster names of name's chip family
// whose sizes are powers of two and parse, smallest first (for h100-1024:
// h100-1, h100-2, h100-4, h100-8, h100-16, ...; for 2xv5p-256: v5p-8,
// v5p-16, ...).
func FamilySizes(name string) ([]string, error) {
	n, err := splitName(name)
	if err != nil {
		return nil, fmt.Errorf("profiles: %w", err)
	}
	n.slices = 1
	var names []string
	for size := 1; size <= MaxChips*2; size *= 2 {
		n.size = size
		if _, err := Parse(n.String()); err == nil {
			names = append(names, n.String())
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("profiles: no size of %s's family parses", name)
	}
	return names, nil
}

// Doublings returns the names of the clusters with 2, 4, ... 2^n times the
// chips of the cluster called name: "v5p-256" gives "v5p-512", "v5p-1024",
// ...; for a multislice name such as "2xv5p-256" the slice count doubles
// ("4xv5p-256", ...). A name that is not CHIP-N gives nil. The names are
// not checked against the catalogue (Parse them).
func Doublings(name string, n int) []string {
	s, err := splitName(name)
	if err != nil || s.size <= 0 {
		return nil
	}
	var out []string
	for d := 1; d <= n; d++ {
		t := s
		if s.slices > 1 {
			t.slices = s.slices << d
		} else {
			t.size = s.size << d
		}
		out = append(out, t.String())
	}
	return out
}
