package sweep

import (
	"reflect"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	cfg := Config{
		Models: []string{"llama3-8b", "llama2-7b"}, Clusters: []string{"h100-8"}, Batches: []int{16, 32},
		Fix:    []string{"", "pp=1,tp=2"},
		Cells:  []CellSpec{{Model: "llama3-8b", Cluster: "v5p-16", Batch: 8, Seq: 2048}},
		Search: Search{Method: "auto", Seed: 1},
	}
	g, err := Expand(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []Cell{
		{"llama3-8b", "h100-8", 16, 8192, ""}, {"llama3-8b", "h100-8", 16, 8192, "tp=2,pp=1"},
		{"llama3-8b", "h100-8", 32, 8192, ""}, {"llama3-8b", "h100-8", 32, 8192, "tp=2,pp=1"},
		{"llama2-7b", "h100-8", 16, 4096, ""}, {"llama2-7b", "h100-8", 16, 4096, "tp=2,pp=1"},
		{"llama2-7b", "h100-8", 32, 4096, ""}, {"llama2-7b", "h100-8", 32, 4096, "tp=2,pp=1"},
		{"llama3-8b", "v5p-16", 8, 2048, ""},
	}
	if !reflect.DeepEqual(g.Cells, want) {
		t.Errorf("cells:\n%v\nwant\n%v", g.Cells, want)
	}
}

func TestExpandErrors(t *testing.T) {
	base := func() Config {
		return Config{Models: []string{"llama3-8b"}, Clusters: []string{"h100-8"}, Batches: []int{16}, Search: Search{Method: "auto", Seed: 1}}
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want []string
	}{
		{"unknown model", func(c *Config) { c.Models = append(c.Models, "llama3-9b") }, []string{`models "llama3-9b"`}},
		{"unknown cluster", func(c *Config) { c.Clusters = []string{"h200-7"} }, []string{`clusters "h200-7"`}},
		{"bad fix", func(c *Config) { c.Fix = []string{"tpp=2"} }, []string{`fix "tpp=2"`}},
		{"repeated cell", func(c *Config) { c.Batches = []int{16, 16} }, []string{"cell 1 (llama3-8b on h100-8, batch 16 x 8192) repeats cell 0"}},
		{"repeated by fix canonical form", func(c *Config) { c.Fix = []string{"tp=2,pp=1", "pp=1,tp=2"} }, []string{"repeats cell 0"}},
		{"explicit cell repeats the grid", func(c *Config) {
			c.Cells = []CellSpec{{Model: "llama3-8b", Cluster: "h100-8", Batch: 16, Seq: 8192}}
		}, []string{"repeats cell 0"}},
		{"two problems", func(c *Config) { c.Models = []string{"nope"}; c.Clusters = []string{"nada-1"} }, []string{`models "nope"`, `clusters "nada-1"`}},
		{"unknown framework", func(c *Config) { c.Framework = "megatorn" }, []string{`framework "megatorn": unknown framework "megatorn" (nearest: megatron;`}},
		{"missing framework file", func(c *Config) { c.Framework = "no-such-stack.yaml" }, []string{`framework "no-such-stack.yaml": cannot read framework file no-such-stack.yaml`}},
		{"framework and model", func(c *Config) { c.Framework = "jax"; c.Models = []string{"nope"} }, []string{`framework "jax"`, `models "nope"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.edit(&c)
			_, err := Expand(c)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestCellKey(t *testing.T) {
	a := Cell{"m", "c", 1, 2, "tp=2"}
	b := Cell{"m", "c", 1, 2, ""}
	if a.Key() == b.Key() {
		t.Error("different cells have the same key")
	}
	// Names that contain the separators of a naive key stay distinct.
	x := Cell{Model: "a,b", Cluster: "c", Batch: 1, Seq: 1}
	y := Cell{Model: "a", Cluster: "b,c", Batch: 1, Seq: 1}
	if x.Key() == y.Key() {
		t.Error("keys collide")
	}
}
