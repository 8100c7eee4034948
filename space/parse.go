package space

import (
	"errors"
	"fmt"
	"github.com/agnivade/levenshtein"
	"strconv"
	"strings"
)

// Keys of the strategy string, in the contract's (and String's) order.
const (
	keyDP = iota
	keyZero
	keyFSDP
	keyTP
	keySP
	keyCP
	keyPP
	keyEP
	keyMB
	keySchedule
	keyV
	keyRecompute
	keyMesh
	numKeys
)

// keyNames returns the strategy-string keys indexed by the key constants.
func keyNames() [numKeys]string {
	return [numKeys]string{"dp", "zero", "fsdp", "tp", "sp", "cp", "pp", "ep", "mb", "schedule", "v", "recompute", "mesh"}
}

// Keys returns the keys of the strategy string in canonical order.
func Keys() []string {
	k := keyNames()
	return k[:]
}

// lookupKey returns the index of a strategy key, or -1.
func lookupKey(name string) int {
	for i, k := range keyNames() {
		if k == name {
			return i
		}
	}
	return -1
}

// dimByName returns the Dim with the given mesh name, or NumDims.
func dimByName(name string) Dim {
	for d := Dim(0); d < NumDims; d++ {
		if d.String() == name {
			return d
		}
	}
	return NumDims
}

// Parse reads a strategy string: comma-separated key=value items, every key
// optional with its contract default (see the package documentation).
// Keys and the schedule and recompute names are case-insensitive. Parse
// checks the syntax and the range of each value on its own; Validate checks
// the strategy against a model, cluster and workload.
func Parse(s string) (Strategy, error) {
	st := Defaults()
	var set [numKeys]bool
	if err := parseItems(s, "strategy", func(k int, val string) error {
		set[k] = true
		return setKey(&st, k, val)
	}); err != nil {
		return Strategy{}, err
	}
	if !set[keySP] {
		st.SP = st.TP > 1
	}
	return st, nil
}

// parseItems splits s into key=value items and calls fn for each known key,
// rejecting unknown and repeated keys. what names the string in errors.
func parseItems(s, what string, fn func(key int, val string) error) error {
	var seen [numKeys]bool
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, val, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("space: %s item %q is not key=value (keys: %s)", what, item, strings.Join(Keys(), ", "))
		}
		name = strings.ToLower(strings.TrimSpace(name))
		val = strings.TrimSpace(val)
		k := lookupKey(name)
		if k < 0 {
			return unknownErr("space: "+what+" key", name, Keys())
		}
		if seen[k] {
			return fmt.Errorf("space: %s key %q is given twice", what, name)
		}
		seen[k] = true
		if err := fn(k, val); err != nil {
			return err
		}
	}
	return nil
}

// unknownErr says that name is not one of known, suggesting the closest.
func unknownErr(prefix, name string, known []string) error {
	if m := closest(name, known); m != "" {
		return fmt.Errorf("%s %q is unknown (did you mean %q?)", prefix, name, m)
	}
	return fmt.Errorf("%s %q is unknown (known: %s)", prefix, name, strings.Join(known, ", "))
}

// setKey parses val as the value of key k into st.
func setKey(st *Strategy, k int, val string) error {
	name := keyNames()[k]
	switch k {
	case keyDP, keyFSDP, keyTP, keyCP, keyPP, keyEP, keyMB, keyV:
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 {
			return fmt.Errorf("space: %s=%s must be a positive integer", name, val)
		}
		switch k {
		case keyDP:
			st.DP = n
		case keyFSDP:
			st.FSDP = n
		case keyTP:
			st.TP = n
		case keyCP:
			st.CP = n
		case keyPP:
			st.PP = n
		case keyEP:
			st.EP = n
		case keyMB:
			st.MB = n
		case keyV:
			st.V = n
		}
	case keyZero:
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 || n > 2 {
			return fmt.Errorf("space: zero=%s must be 0, 1 or 2 (ZeRO stage across dp; stage 3 is fsdp)", val)
		}
		st.Zero = n
	case keySP:
		b, err := strconv.ParseBool(val)
		if err != nil {
			return fmt.Errorf("space: sp=%s must be true or false", val)
		}
		st.SP = b
	case keySchedule:
		v := strings.ToLower(val)
		if !knownSchedule(v) {
			return unknownErr("space: schedule", val, []string{GPipe, OneFOneB, Interleaved})
		}
		st.Schedule = v
	case keyRecompute:
		v := strings.ToLower(val)
		if !knownRecompute(v) {
			return unknownErr("space: recompute", val, []string{RecomputeNone, RecomputeSelective, RecomputeFull})
		}
		st.Recompute = v
	case keyMesh:
		m, err := parseMesh(val)
		if err != nil {
			return err
		}
		st.Mesh = m
	}
	return nil
}

func knownSchedule(s string) bool { return s == GPipe || s == OneFOneB || s == Interleaved }

func knownRecompute(s string) bool {
	return s == RecomputeNone || s == RecomputeSelective || s == RecomputeFull
}

// parseMesh reads a mesh value such as "tp:gpu;pp:node*16;dp:node*8".
// A share without "*k" is the whole axis and gets Size 0 until Place
// resolves it against a cluster.
func parseMesh(val string) ([NumDims][]Share, error) {
	var m [NumDims][]Share
	if val == "" {
		return m, errors.New("space: mesh= is empty; write e.g. mesh=tp:z;fsdp:x.y")
	}
	var dimNames []string
	for _, d := range fillOrder() {
		dimNames = append(dimNames, d.String())
	}
	for part := range strings.SplitSeq(val, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		dn, axes, ok := strings.Cut(part, ":")
		if !ok {
			return m, fmt.Errorf("space: mesh part %q is not dim:axes (e.g. tp:z or fsdp:x.y)", part)
		}
		dn = strings.ToLower(strings.TrimSpace(dn))
		d := dimByName(dn)
		if d == NumDims {
			return m, unknownErr("space: mesh dimension", dn, dimNames)
		}
		if m[d] != nil {
			return m, fmt.Errorf("space: mesh dimension %q is given twice", dn)
		}
		shares := []Share{}
		for ax := range strings.SplitSeq(axes, ".") {
			ax = strings.TrimSpace(ax)
			name, size, hasSize := strings.Cut(ax, "*")
			name = strings.TrimSpace(name)
			if name == "" || strings.ContainsAny(name, ":;,=* ") {
				return m, fmt.Errorf("space: mesh part %q has an empty or malformed axis name %q", part, name)
			}
			sh := Share{Axis: name}
			if hasSize {
				n, err := strconv.Atoi(strings.TrimSpace(size))
				if err != nil || n < 1 {
					return m, fmt.Errorf("space: mesh share %s must give a positive integer share size after *", ax)
				}
				sh.Size = n
			}
			for _, o := range shares {
				if o.Axis == name {
					return m, fmt.Errorf("space: mesh dimension %s lists axis %q twice", dn, name)
				}
			}
			shares = append(shares, sh)
		}
		m[d] = shares
	}
	if meshString(&m) == "" {
		return m, errors.New("space: mesh= names no dimension; write e.g. mesh=tp:z;fsdp:x.y")
	}
	return m, nil
}

// meshString formats a mesh in fill order; it is empty when no dimension
// has shares.
func meshString(m *[NumDims][]Share) string {
	var b strings.Builder
	for _, d := range fillOrder() {
		if len(m[d]) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(d.String())
		b.WriteByte(':')
		for i, sh := range m[d] {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(sh.Axis)
			if sh.Size != 0 {
				b.WriteByte('*')
				b.WriteString(strconv.Itoa(sh.Size))
			}
		}
	}
	return b.String()
}

// String returns the canonical strategy string: the keys in the contract's
// order (dp, zero, fsdp, tp, sp, cp, pp, ep, mb, schedule, v, recompute,
// mesh), each key only when it differs from its default (sp's default is
// tp>1), and the mesh whenever any dimension has shares. A share is written
// axis*k when its Size is known (always after Place) and plain axis when
// Size is 0 (whole axis, not yet resolved). The all-default strategy prints
// as "dp=1". Parse(s.String()) gives s back for every s that Parse returns.
func (s Strategy) String() string {
	var b strings.Builder
	add := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	addInt := func(k string, v, def int) {
		if v != def {
			add(k, strconv.Itoa(v))
		}
	}
	addInt("dp", s.DP, 1)
	addInt("zero", s.Zero, 0)
	addInt("fsdp", s.FSDP, 1)
	addInt("tp", s.TP, 1)
	if s.SP != (s.TP > 1) {
		add("sp", strconv.FormatBool(s.SP))
	}
	addInt("cp", s.CP, 1)
	addInt("pp", s.PP, 1)
	addInt("ep", s.EP, 1)
	addInt("mb", s.MB, 1)
	if s.Schedule != OneFOneB {
		add("schedule", s.Schedule)
	}
	addInt("v", s.V, 1)
	if s.Recompute != RecomputeNone {
		add("recompute", s.Recompute)
	}
	if m := meshString(&s.Mesh); m != "" {
		add("mesh", m)
	}
	if b.Len() == 0 {
		return "dp=1"
	}
	return b.String()
}

// closest returns the candidate within edit distance 2 of name (or having
// it as a prefix), or "" when none is close.
func closest(name string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		d := editDistance(name, c)
		if d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" && name != "" {
		for _, c := range candidates {
			if strings.HasPrefix(c, name) || strings.HasPrefix(name, c) {
				return c
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b in runes; names
// longer than 64 bytes count as 64 apart from everything.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	return levenshtein.ComputeDistance(a, b)
}

func itoa(n int) string { return strconv.Itoa(n) }
