package profiles

import (
	"fmt"
	"slices"
)

// smallCubeShapes are the v4/v5p/tpu7x slices smaller than one 4x4x4 cube,
// keyed by chip count [XPK][GC-v5p]. They have no wraparound [SB-TPU].
func smallCubeShapes() map[int][]int {
	return map[int][]int{
		4:  {2, 2, 1},
		8:  {2, 2, 2},
		16: {2, 2, 4},
		32: {2, 4, 4},
	}
}

// planeShapes are the v5e/v6e slices keyed by chip count [GC-ver][GC-v6e].
func planeShapes() map[int][]int {
	return map[int][]int{
		1:   {1, 1},
		4:   {2, 2},
		8:   {2, 4},
		16:  {4, 4},
		32:  {4, 8},
		64:  {8, 8},
		128: {8, 16},
		256: {16, 16},
	}
}

// shape returns the standard slice shape for chips chips, or nil.
//
// Slices of whole 4x4x4 cubes take the most cubic shape AxBxC (A <= B <= C,
// each a multiple of 4, fitting in the pod): the smallest C, then the largest
// A. This reproduces every default shape in xpk and the v5p documentation
// (4x4x8, 4x8x8, 4x4x12, 4x8x12, 4x12x12, 8x8x12, 8x8x16, 12x12x12, 12x12x24,
// 16x16x24, 16x20x28) [XPK][GC-v5p].
func (t torusSpec) shape(chips int) []int {
	if t.dims == 2 {
		return planeShapes()[chips]
	}
	if s, ok := smallCubeShapes()[chips]; ok {
		return s
	}
	const cube = 4 * 4 * 4
	if chips <= 0 || chips%cube != 0 {
		return nil
	}
	var best []int
	for a := 4; a <= t.maxShape[0]; a += 4 {
		for b := a; b <= t.maxShape[1]; b += 4 {
			if chips%(a*b) != 0 {
				continue
			}
			c := chips / (a * b)
			if c < b || c%4 != 0 || c > t.maxShape[2] {
				continue
			}
			if best == nil || c < best[2] || (c == best[2] && a > best[0]) {
				best = []int{a, b, c}
			}
		}
	}
	return best
}

// maxChips is the size of the largest single slice.
func (t torusSpec) maxChips() int {
	n := 1
	for _, d := range t.maxShape {
		n *= d
	}
	return n
}

// validChipCounts lists every chip count with a standard shape, ascending.
func (t torusSpec) validChipCounts() []int {
	var out []int
	if t.dims == 2 {
		for n := range planeShapes() {
			out = append(out, n)
		}
	} else {
		for n := range smallCubeShapes() {
			out = append(out, n)
		}
		for n := 64; n <= t.maxChips(); n += 64 {
			if t.shape(n) != nil {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// wraps reports whether an axis of the given length in a slice of the
// given shape closes into a ring. v4/v5p/tpu7x: every axis wraps once the
// slice is made of whole cubes, i.e. every dimension is a multiple of 4
// [SB-TPU] (the v4 doc words it more narrowly [GC-v4]; twisted tori are not
// modelled). v5e/v6e: only an axis of length 16 wraps [SB-TPU][SB-SHARD].
func (t torusSpec) wraps(shape []int, length int) bool {
	if t.dims == 2 {
		return length == 16
	}
	for _, d := range shape {
		if d%4 != 0 {
			return false
		}
	}
	return true
}

// tpuAxes builds the torus axes of one slice, innermost first, leaving out
// axes of size 1 unless all are.
func tpuAxes(spec chipSpec, shape []int) []Axis {
	names := []string{"x", "y", "z"}
	var axes []Axis
	for i, d := range shape {
		if d == 1 {
			continue
		}
		axes = append(axes, Axis{
			Name:               names[i],
			Size:               d,
			Tier:               ICI,
			Wraparound:         spec.torus.wraps(shape, d),
			BandwidthBytesPerS: spec.scaleUp.bandwidthBytesPerS,
			LatencySeconds:     spec.scaleUp.latencySeconds,
			Efficiency:         spec.scaleUp.efficiency,
		})
	}
	if len(axes) == 0 {
		axes = append(axes, Axis{
			Name: names[0], Size: 1, Tier: ICI,
			BandwidthBytesPerS: spec.scaleUp.bandwidthBytesPerS,
			LatencySeconds:     spec.scaleUp.latencySeconds,
			Efficiency:         spec.scaleUp.efficiency,
		})
	}
	return axes
}

// tpuCluster builds a TPU cluster of slices slices, each named by the suffix
// n (TensorCores for v4/v5p/tpu7x, chips for v5e/v6e).
func tpuCluster(name, prefix string, spec chipSpec, n, slicesK int) (Cluster, error) {
	t := spec.torus
	cores := max(spec.chip.TensorCoresPerChip, 1)
	sliceName := func(chips int) string { return fmt.Sprintf("%s-%d", prefix, chips*cores) }
	unit := "chips"
	if cores > 1 {
		unit = fmt.Sprintf("TensorCores, %d per chip,", cores)
	}
	if n%cores != 0 {
		return Cluster{}, fmt.Errorf("profiles: %s counts %s so it must be a multiple of %d; %s",
			name, unit, cores, nearSizes(t, float64(n)/float64(cores), sliceName))
	}
	chips := n / cores
	if chips > t.maxChips() {
		largest := t.validChipCounts()
		big := largest[len(largest)-1]
		k := (chips + big - 1) / big
		per := big
		for _, v := range largest {
			if v <= chips/k {
				per = v
			}
		}
		hint := fmt.Sprintf("%dx%s", k, sliceName(per))
		return Cluster{}, fmt.Errorf("profiles: %s (%d chips) is larger than the largest %s slice, %s (%s); join slices over DCN instead, e.g. %s",
			name, chips, prefix, sliceName(big), shapeString(t.shape(big)), hint)
	}
	shape := t.shape(chips)
	if shape == nil {
		return Cluster{}, fmt.Errorf("profiles: %s (%d chips) has no standard %s slice shape; %s",
			name, chips, prefix, nearSizes(t, float64(chips), sliceName))
	}
	axes := tpuAxes(spec, shape)
	if slicesK > 1 {
		axes = append(axes, Axis{
			Name:               "slice",
			Size:               slicesK,
			Tier:               DCN,
			BandwidthBytesPerS: spec.scaleOut.bandwidthBytesPerS,
			LatencySeconds:     spec.scaleOut.latencySeconds,
			Efficiency:         spec.scaleOut.efficiency,
		})
	}
	eff, _ := familyEfficiency(spec.chip.Family)
	return Cluster{Name: name, Chip: spec.chip, Axes: axes, Efficiency: eff}, nil
}

// nearSizes names the valid slices just below and just above chips.
func nearSizes(t *torusSpec, chips float64, sliceName func(int) string) string {
	valid := t.validChipCounts()
	var near []string
	below, above := -1, -1
	for _, v := range valid {
		if float64(v) < chips {
			below = v
		}
		if float64(v) > chips && above < 0 {
			above = v
		}
	}
	for _, v := range []int{below, above} {
		if v > 0 {
			near = append(near, fmt.Sprintf("%s (%s)", sliceName(v), chipCount(v)))
		}
	}
	return nearPhrase(near)
}

// nearPhrase reads "the nearest valid size is a" or "the nearest valid sizes are a or b".
func nearPhrase(near []string) string {
	if len(near) == 1 {
		return "the nearest valid size is " + near[0]
	}
	return "the nearest valid sizes are " + orList(near)
}

// shapeString writes a shape as Google does, e.g. "4x4x8".
func shapeString(shape []int) string {
	s := ""
	for i, d := range shape {
		if i > 0 {
			s += "x"
		}
		s += fmt.Sprint(d)
	}
	return s
}

// chipCount writes "1 chip" or "n chips".
func chipCount(n int) string {
	if n == 1 {
		return "1 chip"
	}
	return fmt.Sprintf("%d chips", n)
}
