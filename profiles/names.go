package profiles

import (
	"fmt"
	"github.com/meshplan/meshplan/internal/bounded"
	"path/filepath"
	"strconv"
	"strings"
)

// MaxChips bounds the chip count of any cluster, parsed or read from YAML;
// larger counts are rejected as absurd.
const MaxChips = 1_000_000

// maxNameLen bounds the length of a cluster name Parse looks at.
const maxNameLen = 100

// Names returns a representative list of cluster presets, for `plan
// clusters` with no arguments. Any name Parse accepts works as well.
func Names() []string {
	return []string{
		"v4-8", "v4-128", "v4-1024",
		"v5e-8", "v5e-64", "v5e-256", "2xv5e-256",
		"v5p-8", "v5p-128", "v5p-256", "v5p-1024", "v5p-4096", "2xv5p-256",
		"v6e-64", "v6e-256", "4xv6e-256",
		"tpu7x-128",
		"a100-64", "a100-40gb-64",
		"h100-8", "h100-64", "h100-1024", "h100-16384",
		"h200-1024", "h800-2048",
		"b200-1024", "b300-1024",
		"gb200-72", "gb200-1152", "gb300-72",
		"mi300x-64",
	}
}

// Load returns the cluster named by arg: a path ending in .yaml or .yml is
// read with ParseYAML (a file without a name takes its base name), anything
// else is a name for Parse.
func Load(arg string) (Cluster, error) {
	lower := strings.ToLower(arg)
	if !strings.HasSuffix(lower, ".yaml") && !strings.HasSuffix(lower, ".yml") {
		return Parse(arg)
	}
	data, err := bounded.ReadFile(arg, bounded.ConfigBytes)
	if err != nil {
		return Cluster{}, fmt.Errorf("profiles: cannot read cluster file %s: %v", arg, err)
	}
	base := filepath.Base(arg)
	c, err := parseYAML(data, strings.TrimSuffix(base, filepath.Ext(base)))
	if err != nil {
		return Cluster{}, fmt.Errorf("profiles: cluster file %s: %v", arg, err)
	}
	return c, nil
}

// Parse returns the cluster with the given name: a TPU slice such as
// "v5p-256" or "v5e-64", optionally prefixed "Kx" for K slices joined over
// DCN ("2xv5p-256"), or a GPU cluster "CHIP-N" such as "h100-1024". The
// package documentation gives the rules. Names are case-insensitive.
func Parse(name string) (Cluster, error) {
	s := strings.ToLower(strings.TrimSpace(name))
	switch {
	case s == "":
		return Cluster{}, fmt.Errorf("profiles: empty cluster name; write CHIP-N, e.g. v5p-256 or h100-1024")
	case len(s) > maxNameLen:
		return Cluster{}, fmt.Errorf("profiles: cluster name of %d characters is too long; write CHIP-N, e.g. v5p-256 or h100-1024", len(s))
	}

	slicesK, rest, err := splitMultislice(s)
	if err != nil {
		return Cluster{}, err
	}
	i := strings.LastIndex(rest, "-")
	if i < 0 {
		if _, ok := lookupSpec(rest); ok {
			return Cluster{}, fmt.Errorf("profiles: cluster name %q has no size; write CHIP-N, e.g. %s", name, exampleName(rest))
		}
		return Cluster{}, fmt.Errorf("profiles: cluster name %q is not CHIP-N; write e.g. v5p-256 or h100-1024", name)
	}
	prefix, size := rest[:i], rest[i+1:]
	if prefix == "" {
		return Cluster{}, fmt.Errorf("profiles: cluster name %q has no chip before the size; write CHIP-N, e.g. v5p-256 or h100-1024", name)
	}
	if strings.HasSuffix(prefix, "-") {
		return Cluster{}, fmt.Errorf("profiles: cluster %q has a negative size; sizes count chips (or TPU cores) and must be positive", name)
	}
	spec, ok := lookupSpec(prefix)
	if !ok {
		return Cluster{}, fmt.Errorf("profiles: unknown chip %q in cluster name %q; %s", prefix, name, chipHint(prefix))
	}
	n, err := parseSize(name, size)
	if err != nil {
		return Cluster{}, err
	}
	// Bound the chip count before any arithmetic on it.
	chips := n / max(spec.chip.TensorCoresPerChip, 1)
	if chips > MaxChips/slicesK {
		return Cluster{}, fmt.Errorf("profiles: cluster %q would have more than %d chips, which is not a real cluster", name, MaxChips)
	}
	if spec.torus != nil {
		return tpuCluster(s, prefix, spec, n, slicesK)
	}
	if slicesK > 1 {
		return Cluster{}, fmt.Errorf("profiles: the Kx prefix of %q joins TPU slices over DCN; for GPUs count all GPUs, e.g. %s-%d", name, prefix, n*slicesK)
	}
	return gpuCluster(s, prefix, spec, n)
}

// splitMultislice splits a "Kx" prefix off s, returning K (1 without one).
func splitMultislice(s string) (int, string, error) {
	j := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == 0 || j == len(s) || s[j] != 'x' {
		return 1, s, nil
	}
	k, err := strconv.Atoi(s[:j])
	if err != nil || k > MaxChips {
		return 0, "", fmt.Errorf("profiles: %q joins too many slices; at most %d chips in all are accepted", s, MaxChips)
	}
	if k < 1 {
		return 0, "", fmt.Errorf("profiles: %q joins %d slices; the Kx prefix needs K >= 1, e.g. 2x%s", s, k, s[j+1:])
	}
	return k, s[j+1:], nil
}

// parseSize reads the N of CHIP-N.
func parseSize(name, size string) (int, error) {
	if size == "" {
		return 0, fmt.Errorf("profiles: cluster name %q has no size after the dash; write CHIP-N, e.g. v5p-256 or h100-1024", name)
	}
	for _, r := range size {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("profiles: size %q in cluster name %q is not a whole number", size, name)
		}
	}
	n, err := strconv.Atoi(size)
	if err != nil || n > 2*MaxChips {
		return 0, fmt.Errorf("profiles: cluster %q would have more than %d chips, which is not a real cluster", name, MaxChips)
	}
	if n == 0 {
		return 0, fmt.Errorf("profiles: cluster %q has zero chips; sizes must be positive", name)
	}
	return n, nil
}

// exampleName gives a valid cluster name for a chip prefix.
func exampleName(prefix string) string {
	spec, _ := lookupSpec(prefix)
	if spec.torus != nil {
		return prefix + "-256"
	}
	return fmt.Sprintf("%s-%d", prefix, spec.domain)
}

// gpuLayout splits a job of n GPUs into NVLink domains the way a scheduler
// places it: whole nodes of node GPUs (or a part of one node that divides
// it), at most domain GPUs per domain. A job that fits one domain stays in
// one; a larger one is cut into equal segments of whole nodes, each inside
// one domain, the segment the largest number of nodes, at most a domain's
// worth, that divides the job's nodes: Megatron-Bridge's GB200 launcher asks
// Slurm for such a --segment (scripts/performance/utils/executors.py), so
// gb200-128 is two domains of 64 and gb200-256 four of 64. With node equal
// to domain (DGX/HGX) this is whole domains. ok is false for a job that is
// not a whole number of nodes.
func gpuLayout(n, node, domain int) (perDomain, domains int, ok bool) {
	switch {
	case n < node:
		return n, 1, node%n == 0
	case n%node != 0:
		return 0, 0, false
	case n <= domain:
		return n, 1, true
	}
	nodes := n / node
	seg := domain / node
	for nodes%seg != 0 {
		seg--
	}
	return seg * node, nodes / seg, true
}

// gpuCluster builds a GPU cluster of n GPUs (gpuLayout places them): an
// NVLink axis "gpu" inside each domain and an InfiniBand axis "node" across
// domains.
func gpuCluster(name, prefix string, spec chipSpec, n int) (Cluster, error) {
	d := spec.domain
	node := spec.node
	if node == 0 {
		node = d
	}
	perDomain, domains, ok := gpuLayout(n, node, d)
	if !ok {
		var near []string
		for lo := n - 1; lo >= 1; lo-- {
			if _, _, ok := gpuLayout(lo, node, d); ok {
				near = append(near, fmt.Sprintf("%s-%d", prefix, lo))
				break
			}
		}
		hi := n + 1
		for ; ; hi++ {
			if _, _, ok := gpuLayout(hi, node, d); ok {
				break
			}
		}
		near = append(near, fmt.Sprintf("%s-%d", prefix, hi))
		if node < d {
			return Cluster{}, fmt.Errorf("profiles: %s is not a whole number of %d-GPU trays (an NVLink domain holds %d); use %s", name, node, d/node, orList(near))
		}
		return Cluster{}, fmt.Errorf("profiles: %s is not a whole number of %d-GPU NVLink domains; use %s", name, d, orList(near))
	}
	up := spec.scaleUp.bandwidthBytesPerS
	if spec.peerBytesPerS > 0 && perDomain < d {
		// A point-to-point mesh gives a smaller group only its own links [MLE-NET].
		up = spec.peerBytesPerS * float64(max(perDomain-1, 1))
	}
	axes := []Axis{{
		Name:               "gpu",
		Size:               perDomain,
		Tier:               spec.scaleUp.tier,
		BandwidthBytesPerS: up,
		LatencySeconds:     spec.scaleUp.latencySeconds,
		Efficiency:         spec.scaleUp.efficiency,
	}}
	if domains > 1 {
		axes = append(axes, Axis{
			Name:               "node",
			Size:               domains,
			Tier:               spec.scaleOut.tier,
			BandwidthBytesPerS: spec.scaleOut.bandwidthBytesPerS,
			LatencySeconds:     spec.scaleOut.latencySeconds,
			Efficiency:         spec.scaleOut.efficiency,
		})
	}
	eff, _ := familyEfficiency(spec.chip.Family)
	return Cluster{Name: name, Chip: spec.chip, Axes: axes, Efficiency: eff}, nil
}

// Axis returns the axis with the given name.
func (c Cluster) Axis(name string) (Axis, bool) {
	for _, a := range c.Axes {
		if a.Name == name {
			return a, true
		}
	}
	return Axis{}, false
}
