package profiles

import (
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/bounded"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxYAMLBytes bounds the size of a cluster file.
const maxYAMLBytes = 1 << 20

// ParseYAML reads a cluster from YAML whose keys are the struct tags of
// Cluster, Chip, Axis and Efficiency:
//
//	name: my-h100s            # default "custom"
//	chip: h100                # a catalogue name, or a mapping of Chip fields
//	axes:                     # innermost first
//	  - {name: gpu, size: 8, tier: nvlink}
//	  - {name: node, size: 4, tier: infiniband, bandwidth_bytes_per_s: 25e9}
//	efficiency:               # optional; each key overrides the family default
//	  matmul_fraction: 0.75
//
// A chip mapping whose name is in the catalogue starts from the catalogue
// chip and overrides the fields given; one that changes only hbm_bytes, to
// the capacity of a catalogue variant of that chip, is that variant (an
// h100 with 96e9 bytes is h100-96gb-500w, an a100 with 40e9 a100-40gb); any other chip needs at least
// peak_bf16_flops, hbm_bytes and hbm_bandwidth_bytes_per_s (family defaults
// to "custom", tensor_cores_per_chip to 1). An axis needs name, size and
// tier; bandwidth_bytes_per_s, latency_s and efficiency default to the
// catalogue chip's link of that tier (latency and efficiency also to the
// tier's default), and wraparound to false. Unknown keys are errors that
// name the nearest known key, and the result must pass Validate.
// yaml.Marshal of a Cluster reads back to an equal Cluster.
func ParseYAML(data []byte) (Cluster, error) {
	c, err := parseYAML(data, "custom")
	if err != nil {
		return Cluster{}, fmt.Errorf("profiles: cluster YAML: %v", err)
	}
	return c, nil
}

// parseYAML is ParseYAML without the error prefix; a cluster without a name
// is called defaultName.
func parseYAML(data []byte, defaultName string) (Cluster, error) {
	if len(data) > maxYAMLBytes {
		return Cluster{}, fmt.Errorf("%d bytes is too large for a cluster description (at most %d)", len(data), maxYAMLBytes)
	}
	doc, err := bounded.YAML(data)
	if err != nil {
		return Cluster{}, err
	}
	if len(doc.Content) == 0 {
		return Cluster{}, fmt.Errorf("the document is empty; give at least chip and axes")
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return Cluster{}, fmt.Errorf("line %d: the document must be a mapping with keys %s", root.Line, strings.Join(yamlKeys(Cluster{}), ", "))
	}
	fields, err := mappingFields(root, yamlKeys(Cluster{}), "the cluster")
	if err != nil {
		return Cluster{}, err
	}

	c := Cluster{Name: defaultName}
	if n, ok := fields["name"]; ok {
		if err := n.Decode(&c.Name); err != nil {
			return Cluster{}, yamlError(err)
		}
	}

	chipNode, ok := fields["chip"]
	if !ok {
		return Cluster{}, fmt.Errorf("the cluster has no chip; add e.g. \"chip: h100\" (known chips: %s)", strings.Join(ChipNames(), ", "))
	}
	spec, known, err := decodeChip(chipNode, &c.Chip)
	if err != nil {
		return Cluster{}, err
	}

	axesNode, ok := fields["axes"]
	if !ok {
		return Cluster{}, fmt.Errorf("the cluster has no axes; list them innermost first, e.g. [{name: gpu, size: 8, tier: nvlink}]")
	}
	if axesNode.Kind != yaml.SequenceNode {
		return Cluster{}, fmt.Errorf("line %d: axes must be a list of mappings", axesNode.Line)
	}
	for i, item := range axesNode.Content {
		a, err := decodeAxis(resolve(item), i, spec, known)
		if err != nil {
			return Cluster{}, err
		}
		c.Axes = append(c.Axes, a)
	}

	eff, ok := familyEfficiency(c.Chip.Family)
	if !ok {
		eff = GenericEfficiency()
	}
	if n, ok := fields["efficiency"]; ok {
		if n.Kind != yaml.MappingNode {
			return Cluster{}, fmt.Errorf("line %d: efficiency must be a mapping with keys %s", n.Line, strings.Join(yamlKeys(Efficiency{}), ", "))
		}
		if _, err := mappingFields(n, yamlKeys(Efficiency{}), "efficiency"); err != nil {
			return Cluster{}, err
		}
		if err := n.Decode(&eff); err != nil {
			return Cluster{}, yamlError(err)
		}
	}
	c.Efficiency = eff

	if err := c.check(); err != nil {
		return Cluster{}, err
	}
	return c, nil
}

// decodeChip reads the chip, given as a catalogue name or as a mapping. It
// returns the catalogue entry when the chip's name is in the catalogue.
func decodeChip(n *yaml.Node, ch *Chip) (chipSpec, bool, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		spec, ok := lookupSpec(strings.ToLower(n.Value))
		if !ok {
			return chipSpec{}, false, fmt.Errorf("line %d: unknown chip %q; %s", n.Line, n.Value, chipHint(strings.ToLower(n.Value)))
		}
		*ch = spec.chip
		return spec, true, nil
	case yaml.MappingNode:
		fields, err := mappingFields(n, yamlKeys(Chip{}), "chip")
		if err != nil {
			return chipSpec{}, false, err
		}
		var name string
		if v, ok := fields["name"]; ok {
			if err := v.Decode(&name); err != nil {
				return chipSpec{}, false, yamlError(err)
			}
		}
		spec, known := lookupSpec(name)
		if known {
			*ch = spec.chip
		} else {
			*ch = Chip{Family: "custom", TensorCoresPerChip: 1}
		}
		if err := n.Decode(ch); err != nil {
			return chipSpec{}, false, yamlError(err)
		}
		if _, capacityOnly := fields["hbm_bytes"]; known && capacityOnly && len(fields) == 2 {
			// Only the capacity changed: a variant's is that variant, with
			// the capacity as given.
			if v, ok := variantFor(spec, ch.HBMBytes); ok {
				hbmBytes := ch.HBMBytes
				spec, *ch = v, v.chip
				ch.HBMBytes = hbmBytes
			}
		}
		return spec, known, nil
	}
	return chipSpec{}, false, fmt.Errorf("line %d: chip must be a chip name such as h100 or a mapping of chip fields", n.Line)
}

// decodeAxis reads axes[i], filling absent link fields from the catalogue
// chip (when known) or the tier defaults.
func decodeAxis(n *yaml.Node, i int, spec chipSpec, known bool) (Axis, error) {
	where := fmt.Sprintf("axes[%d]", i)
	if n.Kind != yaml.MappingNode {
		return Axis{}, fmt.Errorf("line %d: %s must be a mapping with keys %s", n.Line, where, strings.Join(yamlKeys(Axis{}), ", "))
	}
	fields, err := mappingFields(n, yamlKeys(Axis{}), where)
	if err != nil {
		return Axis{}, err
	}
	for _, key := range []string{"name", "size", "tier"} {
		if _, ok := fields[key]; !ok {
			return Axis{}, fmt.Errorf("line %d: %s has no %s; each axis needs name, size and tier", n.Line, where, key)
		}
	}
	var a Axis
	if err := n.Decode(&a); err != nil {
		return Axis{}, yamlError(err)
	}
	a.Tier = Tier(strings.ToLower(string(a.Tier)))
	if !a.Tier.Valid() {
		return Axis{}, fmt.Errorf("line %d: %s has unknown tier %q; use %s", n.Line, where, a.Tier, tierList())
	}

	def, haveLink := tierDefault(a.Tier)
	if known {
		for _, l := range []link{spec.scaleUp, spec.scaleOut} {
			if l.tier == a.Tier {
				def, haveLink = l, true
			}
		}
	}
	if _, ok := fields["bandwidth_bytes_per_s"]; !ok {
		if !haveLink || def.bandwidthBytesPerS == 0 {
			return Axis{}, fmt.Errorf("line %d: %s (%q) has no bandwidth_bytes_per_s and chip has no default for tier %s; give the one-way bandwidth per chip in bytes/s", n.Line, where, a.Name, a.Tier)
		}
		a.BandwidthBytesPerS = def.bandwidthBytesPerS
	}
	if _, ok := fields["latency_s"]; !ok {
		a.LatencySeconds = def.latencySeconds
	}
	if _, ok := fields["efficiency"]; !ok {
		a.Efficiency = def.efficiency
	}
	return a, nil
}

// mappingFields returns the values of a mapping by key, rejecting keys not in
// known (naming the nearest known key) and keys given twice.
func mappingFields(n *yaml.Node, known []string, where string) (map[string]*yaml.Node, error) {
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: keys of %s must be plain words", k.Line, where)
		}
		if !slices.Contains(known, k.Value) {
			return nil, fmt.Errorf("line %d: unknown key %q in %s; did you mean %q?", k.Line, k.Value, where, closest(k.Value, known))
		}
		if _, dup := out[k.Value]; dup {
			return nil, fmt.Errorf("line %d: key %q appears twice in %s", k.Line, k.Value, where)
		}
		out[k.Value] = resolve(n.Content[i+1])
	}
	return out, nil
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; i < 8 && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

// yamlKeys lists the yaml keys of a struct's fields.
func yamlKeys(v any) []string {
	t := reflect.TypeOf(v)
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return keys
}

// yamlError turns a yaml error into one line without the "yaml: " prefix.
func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return errors.New(te.Errors[0])
	}
	return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
}
