package space

import (
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/text"
	"slices"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/model"
)

// keySpec is one key of the strategy string: its name, how to read its
// value into a strategy, how to print it, and whether it is at its default.
type keySpec struct {
	name string
	// dim is the parallel dimension of a degree key, or NumDims for the
	// other keys.
	dim    Dim
	set    func(st *Strategy, val string) error
	format func(st *Strategy) string
	// isDefault reports whether the value is the contract default (sp's
	// default depends on tp).
	isDefault func(st *Strategy) bool
}

// strategyKeys is keyTable's table, built once and only read: String,
// Parse and Fix go through it for every strategy.
var strategyKeys = keyTable()

// keyTable returns the keys of the strategy string in the contract's (and
// String's) order. A degree key is generated from its dimension.
func keyTable() []keySpec {
	deg := func(d Dim) keySpec {
		return keySpec{name: d.String(), dim: d,
			set: func(st *Strategy, val string) error {
				n, err := positive(d.String(), val)
				st.Degree[d] = n
				return err
			},
			format:    func(st *Strategy) string { return strconv.Itoa(st.Degree[d]) },
			isDefault: func(st *Strategy) bool { return st.Degree[d] == 1 },
		}
	}
	knob := func(name string, set func(*Strategy, string) error, format func(*Strategy) string, isDefault func(*Strategy) bool) keySpec {
		return keySpec{name: name, dim: NumDims, set: set, format: format, isDefault: isDefault}
	}
	keys := []keySpec{
		deg(DP),
		knob("zero", func(st *Strategy, val string) error {
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 2 {
				return fmt.Errorf("space: zero=%s must be 0, 1 or 2 (ZeRO stage across dp; stage 3 is fsdp)", val)
			}
			st.Zero = n
			return nil
		}, func(st *Strategy) string { return strconv.Itoa(st.Zero) }, func(st *Strategy) bool { return st.Zero == 0 }),
		deg(FSDP),
		deg(TP),
		knob("sp", func(st *Strategy, val string) error {
			b, err := strconv.ParseBool(val)
			if err != nil {
				return fmt.Errorf("space: sp=%s must be true or false", val)
			}
			st.SP = b
			return nil
		}, func(st *Strategy) string { return strconv.FormatBool(st.SP) }, func(st *Strategy) bool { return st.SP == (st.Degree[TP] > 1) }),
		deg(CP),
		deg(PP),
		knob("first", func(st *Strategy, val string) error {
			n, err := positive("first", val)
			st.Split.First = n
			return err
		}, func(st *Strategy) string { return strconv.Itoa(st.Split.First) }, func(st *Strategy) bool { return st.Split.First == 0 }),
		knob("last", func(st *Strategy, val string) error {
			n, err := positive("last", val)
			st.Split.Last = n
			return err
		}, func(st *Strategy) string { return strconv.Itoa(st.Split.Last) }, func(st *Strategy) bool { return st.Split.Last == 0 }),
		deg(EP),
		knob("mb", func(st *Strategy, val string) error {
			n, err := positive("mb", val)
			st.MB = n
			return err
		}, func(st *Strategy) string { return strconv.Itoa(st.MB) }, func(st *Strategy) bool { return st.MB == 1 }),
		knob("etp", func(st *Strategy, val string) error {
			n, err := positive("etp", val)
			st.ETP = n
			return err
		}, func(st *Strategy) string { return strconv.Itoa(st.ExpertTP()) }, func(st *Strategy) bool { return st.ETP <= 1 }),
		knob("schedule", func(st *Strategy, val string) error {
			v, ok := LookupSchedule(strings.ToLower(val))
			if !ok {
				return unknownErr("space: schedule", val, scheduleNames())
			}
			st.Schedule = v
			return nil
		}, func(st *Strategy) string { return string(st.Schedule) }, func(st *Strategy) bool { return st.Schedule == OneFOneB }),
		knob("v", func(st *Strategy, val string) error {
			n, err := positive("v", val)
			st.V = n
			return err
		}, func(st *Strategy) string { return strconv.Itoa(st.V) }, func(st *Strategy) bool { return st.V == 1 }),
		knob("recompute", func(st *Strategy, val string) error {
			v := strings.ToLower(val)
			if !knownRecompute(v) {
				return unknownErr("space: recompute", val, model.PolicyNames())
			}
			st.Recompute = v
			return nil
		}, func(st *Strategy) string { return st.Recompute }, func(st *Strategy) bool { return st.Recompute == RecomputeNone }),
		knob("precision", func(st *Strategy, val string) error {
			v := strings.ToLower(val)
			if v != PrecisionBF16 && v != PrecisionFP8 && v != PrecisionInt8 {
				return unknownErr("space: precision", val, []string{PrecisionBF16, PrecisionFP8, PrecisionInt8})
			}
			st.Precision = v
			return nil
		}, func(st *Strategy) string {
			if st.Precision == "" {
				return PrecisionBF16
			}
			return st.Precision
		}, func(st *Strategy) bool { return !st.EightBit() }),
		knob("weights", func(st *Strategy, val string) error {
			v := strings.ToLower(val)
			if !slices.Contains(weightsNames(), v) {
				return unknownErr("space: weights", val, weightsNames())
			}
			st.Weights = v
			return nil
		}, func(st *Strategy) string {
			if st.Weights == "" {
				return WeightsFP32
			}
			return st.Weights
		}, func(st *Strategy) bool { return st.Weights == "" || st.Weights == WeightsFP32 }),
	}
	// The all-to-all overlap, the dispatcher, the host offload and the
	// activation offload keys, then the mesh, last.
	keys = append(keys, a2aOverlapKey(knob), dispatcherKey(knob))
	keys = append(keys, offloadKeys(knob)...)
	keys = append(keys, actOffloadKey(knob))
	return append(keys, knob("mesh", func(st *Strategy, val string) error {
		m, err := parseMesh(val)
		if err != nil {
			return err
		}
		st.Mesh = m
		return nil
	}, func(st *Strategy) string { return meshString(&st.Mesh) }, func(st *Strategy) bool { return meshString(&st.Mesh) == "" }))
}

// positive parses a positive integer value of key name.
func positive(name, val string) (int, error) {
	n, err := strconv.Atoi(val)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("space: %s=%s must be a positive integer", name, val)
	}
	return n, nil
}

// scheduleNames lists the schedules for messages.
func scheduleNames() []string {
	var out []string
	for _, s := range Schedules() {
		out = append(out, string(s))
	}
	return out
}

// Keys returns the keys of the strategy string in canonical order.
func Keys() []string {
	var out []string
	for _, k := range strategyKeys {
		out = append(out, k.name)
	}
	return out
}

// lookupKey returns the index of a strategy key in keyTable, or -1.
func lookupKey(name string) int {
	for i, k := range strategyKeys {
		if k.name == name {
			return i
		}
	}
	return -1
}

// Parse reads a strategy string: comma-separated key=value items, every key
// optional with its contract default (see the package documentation).
// Keys and the schedule and recompute names are case-insensitive. Parse
// checks the syntax and the range of each value on its own; Validate checks
// the strategy against a model, cluster and workload.
func Parse(s string) (Strategy, error) {
	st := Defaults()
	spSet := false
	if err := parseItems(s, "strategy", func(k int, val string) error {
		spSet = spSet || strategyKeys[k].name == "sp"
		return strategyKeys[k].set(&st, val)
	}); err != nil {
		return Strategy{}, err
	}
	if !spSet {
		st.SP = st.Degree[TP] > 1
	}
	if st.ETP == 1 {
		st.ETP = 0 // the default
	}
	return st, nil
}

// parseItems splits s into key=value items and calls fn for each known key,
// rejecting unknown and repeated keys. what names the string in errors.
func parseItems(s, what string, fn func(key int, val string) error) error {
	seen := make([]bool, len(strategyKeys))
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

// knownRecompute reports whether s names a recompute policy.
func knownRecompute(s string) bool {
	_, ok := model.LookupPolicy(s)
	return ok
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
// order (dp, zero, fsdp, tp, sp, cp, pp, first, last, ep, mb, etp,
// schedule, v, recompute, precision, mesh), each key only when it differs from its default (sp's default is
// tp>1), and the mesh whenever any dimension has shares. A share is written
// axis*k when its Size is known (always after Place) and plain axis when
// Size is 0 (whole axis, not yet resolved). The all-default strategy prints
// as "dp=1". Parse(s.String()) gives s back for every s that Parse returns.
func (s Strategy) String() string {
	var b strings.Builder
	for _, k := range strategyKeys {
		if k.isDefault(&s) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k.name)
		b.WriteByte('=')
		b.WriteString(k.format(&s))
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
		d := text.EditDistance(name, c)
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

func itoa(n int) string { return strconv.Itoa(n) }
