package profiles

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestParseYAML(t *testing.T) {
	src := `
name: lab
chip: h100
axes:
  - {name: gpu, size: 8, tier: nvlink}
  - {name: node, size: 4, tier: infiniband, bandwidth_bytes_per_s: 25e9, wraparound: false}
efficiency:
  matmul_fraction: 0.7
`
	c, err := ParseYAML([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "lab" || c.Chip.Name != "h100" || c.Chips() != 32 {
		t.Fatalf("got %+v", c)
	}
	gpu, _ := c.Axis("gpu")
	node, _ := c.Axis("node")
	// Absent link fields come from the catalogue H100 links.
	if gpu.BandwidthBytesPerS != 450e9 || gpu.LatencySeconds != nvlinkLatencySeconds || gpu.Efficiency != 0.82 {
		t.Errorf("gpu axis %+v, want H100 NVLink defaults", gpu)
	}
	if node.BandwidthBytesPerS != 25e9 || node.Efficiency != infinibandEfficiency {
		t.Errorf("node axis %+v", node)
	}
	hopper, _ := DefaultEfficiency("nvidia-hopper")
	if c.Efficiency.MatmulFraction != 0.7 || c.Efficiency.HBMFraction != hopper.HBMFraction {
		t.Errorf("efficiency %+v: want matmul 0.7 and the other Hopper defaults", c.Efficiency)
	}
}

func TestParseYAMLInlineChip(t *testing.T) {
	src := `
chip:
  name: mychip
  peak_bf16_flops: 5e14
  hbm_bytes: 64e9
  hbm_bandwidth_bytes_per_s: 2e12
axes:
  - name: x
    size: 4
    tier: ici
    wraparound: true
    bandwidth_bytes_per_s: 5e10
`
	c, err := ParseYAML([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "custom" || c.Chip.Family != "custom" || c.Chip.TensorCoresPerChip != 1 {
		t.Errorf("got %+v", c)
	}
	if c.Efficiency != GenericEfficiency() {
		t.Errorf("efficiency %+v, want the generic defaults", c.Efficiency)
	}
	if a := c.Axes[0]; !a.Wraparound || a.LatencySeconds != iciLatencySeconds || a.Efficiency != iciEfficiency {
		t.Errorf("axis %+v, want ICI defaults with wraparound", a)
	}

	// A catalogue chip with one field changed: an H100 with 64 GB, which no
	// variant has.
	c, err = ParseYAML([]byte("chip: {name: h100, hbm_bytes: 64e9}\naxes: [{name: gpu, size: 4, tier: nvlink}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Chip.Name != "h100" || c.Chip.HBMBytes != 64e9 || c.Chip.PeakBF16FLOPs != 989e12 {
		t.Errorf("chip %+v, want H100 with 64e9 bytes", c.Chip)
	}
}

func TestParseYAMLChipVariant(t *testing.T) {
	tests := []struct {
		chip          string
		wantName      string
		wantHBMBytes  float64
		wantBandwidth float64
	}{
		// Only the capacity, a variant's: the variant, with the capacity given.
		{"{name: h100, hbm_bytes: 96e9}", "h100-96gb-500w", 96e9, 2410e9},
		{"{name: h100, hbm_bytes: 103079215104}", "h100-96gb-500w", 103079215104, 2410e9}, // 96 GiB, 7.4% above 96e9
		{"{name: a100, hbm_bytes: 40e9}", "a100-40gb", 40e9, 1555e9},                      // 5.4% below the 40 GB part's 42.3e9
		{"{name: h100, hbm_bytes: 110e9}", "h100", 110e9, 3350e9},                         // 14.6% above 96e9: no variant
		{"{name: a100, hbm_bytes: 42.3e9}", "a100-40gb", 42.3e9, 1555e9},
		{"{name: a100-80gb, hbm_bytes: 42.3e9}", "a100-40gb", 42.3e9, 1555e9},
		// Another field given: the named chip, overridden.
		{"{name: h100, hbm_bytes: 96e9, hbm_bandwidth_bytes_per_s: 4e12}", "h100", 96e9, 4e12},
		// A capacity no variant has, and the base chip's own.
		{"{name: h100, hbm_bytes: 85017493504}", "h100", 85017493504, 3350e9},
	}
	for _, tt := range tests {
		c, err := ParseYAML([]byte("chip: " + tt.chip + "\naxes: [{name: gpu, size: 8, tier: nvlink}]\n"))
		if err != nil {
			t.Errorf("%s: %v", tt.chip, err)
			continue
		}
		if c.Chip.Name != tt.wantName || c.Chip.HBMBytes != tt.wantHBMBytes || c.Chip.HBMBandwidthBytesPerS != tt.wantBandwidth {
			t.Errorf("%s: %s with %g bytes at %g B/s, want %s with %g at %g", tt.chip, c.Chip.Name, c.Chip.HBMBytes,
				c.Chip.HBMBandwidthBytesPerS, tt.wantName, tt.wantHBMBytes, tt.wantBandwidth)
		}
	}
}

func TestParseYAMLErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"empty", "", []string{"empty"}},
		{"not a mapping", "- a\n- b\n", []string{"mapping"}},
		{"bad yaml", "chip: [h100\n", []string{"profiles: cluster YAML"}},
		{"unknown top key", "chip: h100\naxis: []\n", []string{`unknown key "axis"`, `"axes"`}},
		{"unknown axis key", "chip: h100\naxes:\n  - {name: gpu, size: 8, tier: nvlink, bandwith_bytes_per_s: 1}\n",
			[]string{`"bandwith_bytes_per_s"`, `"bandwidth_bytes_per_s"`, "line 3", "axes[0]"}},
		{"unknown chip key", "chip: {name: h100, hbm: 1}\naxes: [{name: gpu, size: 8, tier: nvlink}]\n",
			[]string{`"hbm"`, `"hbm_bytes"`}},
		{"unknown efficiency key", "chip: h100\naxes: [{name: gpu, size: 8, tier: nvlink}]\nefficiency: {matmul: 0.5}\n",
			[]string{`"matmul"`, `"matmul_fraction"`}},
		{"duplicate key", "chip: h100\nchip: a100\naxes: [{name: gpu, size: 8, tier: nvlink}]\n", []string{`key "chip" is given 2 times (lines 1, 2); give it once`}},
		{"two documents", "chip: h100\naxes: [{name: gpu, size: 8, tier: nvlink}]\n---\nchip: a100\n", []string{"more than one YAML document"}},
		{"unknown chip", "chip: h1000\naxes: [{name: gpu, size: 8, tier: nvlink}]\n", []string{"unknown chip", "h100"}},
		{"no chip", "axes: [{name: gpu, size: 8, tier: nvlink}]\n", []string{"no chip"}},
		{"no axes", "chip: h100\n", []string{"no axes"}},
		{"empty axes", "chip: h100\naxes: []\n", []string{"no axes"}},
		{"axes not a list", "chip: h100\naxes: 3\n", []string{"list"}},
		{"axis without size", "chip: h100\naxes: [{name: gpu, tier: nvlink}]\n", []string{"no size"}},
		{"zero size", "chip: h100\naxes: [{name: gpu, size: 0, tier: nvlink}]\n", []string{"size 0", "positive"}},
		{"negative size", "chip: h100\naxes: [{name: gpu, size: -8, tier: nvlink}]\n", []string{"positive"}},
		{"bad tier", "chip: h100\naxes: [{name: gpu, size: 8, tier: nvlnk}]\n", []string{"unknown tier", "nvlink"}},
		{"duplicate axis", "chip: h100\naxes: [{name: gpu, size: 8, tier: nvlink}, {name: gpu, size: 2, tier: infiniband}]\n", []string{"twice"}},
		{"zero bandwidth", "chip: h100\naxes: [{name: gpu, size: 8, tier: nvlink, bandwidth_bytes_per_s: 0}]\n", []string{"bandwidth_bytes_per_s", "positive"}},
		{"no default bandwidth", "chip: h100\naxes: [{name: gpu, size: 8, tier: ici}]\n", []string{"bandwidth_bytes_per_s"}},
		{"efficiency above 1", "chip: h100\naxes: [{name: gpu, size: 8, tier: nvlink, efficiency: 1.5}]\n", []string{"efficiency", "(0, 1]"}},
		{"matmul fraction 0", "chip: h100\naxes: [{name: gpu, size: 8, tier: nvlink}]\nefficiency: {matmul_fraction: 0}\n", []string{"matmul_fraction"}},
		{"flash attention 2 fraction above 1", "chip: h100\naxes: [{name: gpu, size: 8, tier: nvlink}]\nefficiency: {flash_attention2_fraction: 1.5}\n", []string{"flash_attention2_fraction", "(0, 1]"}},
		{"nan", "chip: h100\naxes: [{name: gpu, size: 8, tier: nvlink, latency_s: .nan}]\n", []string{"latency_s"}},
		{"custom chip missing peak", "chip: {name: foo, hbm_bytes: 1e9, hbm_bandwidth_bytes_per_s: 1e12}\naxes: [{name: gpu, size: 8, tier: nvlink, bandwidth_bytes_per_s: 1e11}]\n",
			[]string{"peak_bf16_flops"}},
		{"wrong type", "chip: h100\naxes: [{name: gpu, size: eight, tier: nvlink}]\n", []string{"line 2", "eight"}},
		{"too many chips", "chip: h100\naxes: [{name: gpu, size: 1000, tier: nvlink}, {name: node, size: 100000, tier: infiniband}]\n", []string{"1000000"}},
		{"bad axis name", "chip: h100\naxes: [{name: 'a;b', size: 8, tier: nvlink}]\n", []string{"axis name"}},
		{"negative mxu", "chip: {name: v6e, mxu_dim: -256}\naxes: [{name: x, size: 8, tier: ici}]\n", []string{"mxu_dim", "4096"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseYAML([]byte(tt.src))
			if err == nil {
				t.Fatal("ParseYAML succeeded, want an error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "profiles: ") || strings.Contains(msg, "\n") {
				t.Errorf("error %q is not one line prefixed \"profiles: \"", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
}

// TestYAMLRoundTrip checks that every preset written with yaml.Marshal reads
// back equal, as `plan calibrate` relies on.
func TestYAMLRoundTrip(t *testing.T) {
	for _, n := range Names() {
		c, err := Parse(n)
		if err != nil {
			t.Fatal(err)
		}
		c.Efficiency.MatmulFraction = 0.6543 // as a fit would leave it
		data, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseYAML(data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", n, err, data)
		}
		if !reflect.DeepEqual(back, c) {
			t.Errorf("%s: round trip gave\n%+v\nwant\n%+v", n, back, c)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "my-pod.yaml")
	src := "chip: v5p\naxes: [{name: x, size: 4, tier: ici, wraparound: true}]\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "my-pod" || c.Chips() != 4 || c.Axes[0].BandwidthBytesPerS != 9e10 {
		t.Errorf("Load(%s) = %+v", path, c)
	}
	if c, err := Load("v5p-256"); err != nil || c.Chips() != 128 {
		t.Errorf("Load(v5p-256) = %v, %v", c.Chips(), err)
	}
	_, err = Load(filepath.Join(dir, "missing.yml"))
	if err == nil || !strings.Contains(err.Error(), "cannot read") || !strings.HasPrefix(err.Error(), "profiles: ") {
		t.Errorf("Load(missing) = %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("chip: h100\nfoo: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "bad.yaml") || strings.Count(err.Error(), "profiles:") != 1 {
		t.Errorf("Load(bad) = %v", err)
	}
}
