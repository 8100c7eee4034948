package space

import (
	"fmt"
	"slices"
	"strings"
)

// Fix is a partial strategy: the keys a user pinned with --fix. The zero Fix
// pins nothing.
type Fix struct {
	// Set has one entry per key given, e.g. "tp" -> "8". ParseFix stores
	// each value in canonical form (as Strategy.String prints it); a Fix
	// built by hand may use any value Parse accepts for that key.
	//
	// A pinned mesh pins only the dimensions it names: "mesh" -> "tp:gpu"
	// requires tp to occupy exactly the whole gpu axis and leaves the other
	// dimensions free.
	Set map[string]string
}

// ParseFix reads a partial strategy string for --fix: any subset of the
// strategy keys, including mesh, e.g. "tp=8,pp=16" or "mesh=tp:gpu". Unlike
// Parse it fills no defaults: only the keys given restrict the search.
func ParseFix(s string) (Fix, error) {
	f := Fix{Set: map[string]string{}}
	st := Defaults()
	err := parseItems(s, "fix", func(k int, val string) error {
		ks := strategyKeys[k]
		if err := ks.set(&st, val); err != nil {
			return err
		}
		f.Set[ks.name] = ks.format(&st)
		return nil
	})
	if err != nil {
		return Fix{}, err
	}
	// etp=N > 1 is the experts split over all the tp chips: it pins tp=N
	// too; etp=1 (whole experts, the default) leaves tp free.
	if e, ok := f.Set["etp"]; ok && e != "1" {
		if t, ok := f.Set["tp"]; ok && t != e {
			return Fix{}, fmt.Errorf("space: --fix etp=%s with tp=%s: each expert's matrices are split over all the tp chips (etp=tp) or none (etp=1)", e, t)
		}
		f.Set["tp"] = e
	}
	return f, nil
}

// String returns the pinned keys as a strategy string in canonical key
// order, e.g. "tp=8,pp=16"; the zero Fix gives "".
func (f Fix) String() string {
	var b strings.Builder
	for _, k := range Keys() {
		v, ok := f.Set[k]
		if !ok {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String()
}

// Has reports whether key (e.g. "tp") is pinned.
func (f Fix) Has(key string) bool {
	_, ok := f.Set[key]
	return ok
}

// pinned is a parsed Fix: the pinned values and which keys are pinned.
type pinned struct {
	Strategy
	set []bool // indexed like keyTable
	// fsdpDCN lifts the tier rule that keeps fsdp off the DCN
	// (Limits.FSDPOverDCN).
	fsdpDCN bool
}

// has reports whether the key named name is pinned.
func (p *pinned) has(name string) bool {
	i := lookupKey(name)
	return i >= 0 && p.set[i]
}

// hasDim reports whether dimension d's degree is pinned.
func (p *pinned) hasDim(d Dim) bool { return p.has(d.String()) }

// pins parses f into a pinned.
func (f Fix) pins() (pinned, error) {
	st, set, err := f.parse()
	return pinned{Strategy: st, set: set}, err
}

// parse returns the pinned values and which keys (indexed like keyTable)
// are pinned.
func (f Fix) parse() (Strategy, []bool, error) {
	st := Defaults()
	set := make([]bool, len(strategyKeys))
	var unknown []string
	for k := range f.Set {
		if lookupKey(k) < 0 {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return st, set, unknownErr("space: fix key", unknown[0], Keys())
	}
	for k, ks := range strategyKeys {
		v, ok := f.Set[ks.name]
		if !ok {
			continue
		}
		if err := ks.set(&st, strings.TrimSpace(v)); err != nil {
			return st, set, err
		}
		set[k] = true
	}
	return st, set, nil
}

// Validate reports a malformed Fix (an unknown key or a bad value).
func (f Fix) Validate() error {
	_, _, err := f.parse()
	if err != nil {
		return fmt.Errorf("%w (in --fix %q)", err, f.String())
	}
	return nil
}

// Allows reports whether s agrees with every pinned key. A malformed Fix
// allows nothing. A pinned mesh share written without a size (the whole
// axis) matches a share of s on that axis when the sizes agree, or when s
// gives that axis to no other dimension (so the share is the whole axis).
func (f Fix) Allows(s Strategy) bool {
	if len(f.Set) == 0 {
		return true
	}
	p, set, err := f.parse()
	if err != nil {
		return false
	}
	for k, ks := range strategyKeys {
		if !set[k] {
			continue
		}
		if ks.name == "mesh" {
			for d := Dim(0); d < NumDims; d++ {
				if len(p.Mesh[d]) > 0 && !sharesMatch(p.Mesh[d], &s, d) {
					return false
				}
			}
			continue
		}
		if ks.format(&p) != ks.format(&s) {
			return false
		}
	}
	return true
}

// sharesMatch reports whether the pinned shares want equal the shares of s
// for dimension d, as sets of axes, resolving unsized shares as documented
// on Allows.
func sharesMatch(want []Share, s *Strategy, d Dim) bool {
	have := s.Mesh[d]
	if len(have) != len(want) {
		return false
	}
	for _, w := range want {
		i := slices.IndexFunc(have, func(h Share) bool { return h.Axis == w.Axis })
		if i < 0 {
			return false
		}
		h := have[i]
		switch {
		case h.Size == w.Size:
		case w.Size == 0 || h.Size == 0:
			if !aloneOnAxis(s, d, w.Axis) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// aloneOnAxis reports whether no dimension of s other than d (and the
// carved EP, which lies inside dp and fsdp) has a share larger than 1 on axis.
func aloneOnAxis(s *Strategy, d Dim, axis string) bool {
	for o := Dim(0); o < NumDims; o++ {
		if o == d || o.carved() || d.carved() {
			continue
		}
		for _, sh := range s.Mesh[o] {
			if sh.Axis == axis && sh.Size != 1 {
				return false
			}
		}
	}
	return true
}
