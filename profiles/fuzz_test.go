package profiles

import (
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// checkCluster is what every successful parse must satisfy.
func checkCluster(t *testing.T, c Cluster) {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatalf("parsed cluster fails Validate: %v", err)
	}
	n := 1
	for _, a := range c.Axes {
		n *= a.Size
	}
	if n != c.Chips() || n < 1 || n > MaxChips || len(c.Axes) == 0 {
		t.Fatalf("axes %v multiply to %d, Chips() = %d", c.Axes, n, c.Chips())
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range Names() {
		f.Add(n)
	}
	for _, n := range []string{"v5p-7", "v5e-512", "h100-12", "2xv5p-256", "0x", "x-", "-", "--1", "9x9x9", "v5p-1e3", "gb200-144"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, name string) {
		c, err := Parse(name)
		if err != nil {
			return
		}
		checkCluster(t, c)
	})
}

func FuzzParseYAML(f *testing.F) {
	for _, n := range []string{"h100-1024", "2xv5p-256", "v5e-1"} {
		c, _ := Parse(n)
		data, _ := yaml.Marshal(c)
		f.Add(data)
	}
	f.Add([]byte("chip: h100\naxes: [{name: gpu, size: 8, tier: nvlink}]\n"))
	f.Add([]byte("chip: {name: x, peak_bf16_flops: 1e12, hbm_bytes: 1e9, hbm_bandwidth_bytes_per_s: 1e11}\naxes: [{name: a, size: 2, tier: ethernet, bandwidth_bytes_per_s: 1e9}]\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseYAML(data)
		if err != nil {
			return
		}
		checkCluster(t, c)
		// Whatever parses must survive a round trip.
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, err := ParseYAML(out)
		if err != nil {
			t.Fatalf("round trip: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("round trip changed the cluster:\n%+v\n%+v", c, back)
		}
	})
}

// FuzzExpandNames: any argument either fails or yields at most
// MaxExpandedNames non-empty names, each range member a name that parses.
func FuzzExpandNames(f *testing.F) {
	for _, s := range []string{"v5p-128..v5p-2048", "h100-512,h100-1024,h100-2048", "2xv5p-256..8xv5p-256",
		"h100-8..v5p-64", "a,,b", "v5e-1..v5e-256", "x..y", "my.yaml", "h100-8..h100-24"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		names, err := ExpandNames(arg)
		if err != nil {
			return
		}
		if len(names) == 0 || len(names) > MaxExpandedNames {
			t.Fatalf("ExpandNames(%q) = %d names", arg, len(names))
		}
		for _, n := range names {
			if n == "" {
				t.Fatalf("ExpandNames(%q) yields an empty name", arg)
			}
		}
	})
}
