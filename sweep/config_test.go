package sweep

import (
	"reflect"
	"strings"
	"testing"
)

// clearEnv unsets the PLAN_ variables a sweep configuration reads.
func clearEnv(t *testing.T) {
	t.Helper()
	v, err := NewViper()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range v.AllKeys() {
		t.Setenv("PLAN_"+strings.ToUpper(strings.ReplaceAll(k, ".", "_")), "")
	}
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		yaml    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{
			name: "contract example",
			yaml: `models: [llama3-8b, llama2-7b]
clusters: [h100-8, h100-16]
batches: [16, 32]
seqs: [4096]
fix: ["", "tp=1"]
search: {method: auto, seed: 1, top: 5}
`,
			want: Config{Models: []string{"llama3-8b", "llama2-7b"}, Clusters: []string{"h100-8", "h100-16"}, Batches: []int{16, 32},
				Seqs: []int{4096}, Fix: []string{"", "tp=1"}, Search: Search{Method: "auto", Seed: 1, Top: 5}},
		},
		{
			name: "defaults and a single fix",
			yaml: "models: [llama3-8b]\nclusters: [h100-8]\nbatches: [8]\nfix: tp=2\n",
			want: Config{Models: []string{"llama3-8b"}, Clusters: []string{"h100-8"}, Batches: []int{8}, Fix: []string{"tp=2"}, Search: Search{Method: "auto", Seed: 1, Top: DefaultTop}},
		},
		{
			name: "explicit cells",
			yaml: "cells:\n  - {model: llama3-8b, cluster: h100-8, batch: 16}\n  - {model: llama2-7b, cluster: v5p-16, batch: 32, seq: 2048, fix: tp=2}\n",
			want: Config{Cells: []CellSpec{{Model: "llama3-8b", Cluster: "h100-8", Batch: 16}, {Model: "llama2-7b", Cluster: "v5p-16", Batch: 32, Seq: 2048, Fix: "tp=2"}},
				Search: Search{Method: "auto", Seed: 1, Top: DefaultTop}},
		},
		{
			name: "environment overrides the file",
			yaml: "models: [llama3-8b]\nclusters: [h100-8]\nbatches: [8]\nsearch: {seed: 3}\n",
			env:  map[string]string{"PLAN_SEARCH_SEED": "7", "PLAN_MODELS": "llama2-7b,llama3-8b", "PLAN_BATCHES": "16,32", "PLAN_SEARCH_METHOD": "evolve"},
			want: Config{Models: []string{"llama2-7b", "llama3-8b"}, Clusters: []string{"h100-8"}, Batches: []int{16, 32}, Search: Search{Method: "evolve", Seed: 7, Top: DefaultTop}},
		},
		{
			name: "framework key",
			yaml: "models: [llama3-8b]\nclusters: [h100-8]\nbatches: [8]\nframework: ' megatron '\n",
			want: Config{Models: []string{"llama3-8b"}, Clusters: []string{"h100-8"}, Batches: []int{8}, Framework: "megatron", Search: Search{Method: "auto", Seed: 1, Top: DefaultTop}},
		},
		{
			name: "framework file",
			yaml: "models: [llama3-8b]\nclusters: [h100-8]\nbatches: [8]\nframework: stacks/my-stack.yaml\n",
			want: Config{Models: []string{"llama3-8b"}, Clusters: []string{"h100-8"}, Batches: []int{8}, Framework: "stacks/my-stack.yaml", Search: Search{Method: "auto", Seed: 1, Top: DefaultTop}},
		},
		{
			name: "PLAN_FRAMEWORK overrides the file",
			yaml: "models: [llama3-8b]\nclusters: [h100-8]\nbatches: [8]\nframework: megatron\n",
			env:  map[string]string{"PLAN_FRAMEWORK": "deepspeed"},
			want: Config{Models: []string{"llama3-8b"}, Clusters: []string{"h100-8"}, Batches: []int{8}, Framework: "deepspeed", Search: Search{Method: "auto", Seed: 1, Top: DefaultTop}},
		},
		{
			name: "PLAN_FRAMEWORK without the key",
			yaml: "models: [llama3-8b]\nclusters: [h100-8]\nbatches: [8]\n",
			env:  map[string]string{"PLAN_FRAMEWORK": "torchtitan"},
			want: Config{Models: []string{"llama3-8b"}, Clusters: []string{"h100-8"}, Batches: []int{8}, Framework: "torchtitan", Search: Search{Method: "auto", Seed: 1, Top: DefaultTop}},
		},
		{name: "framework is not a map", yaml: "models: [a]\nclusters: [b]\nbatches: [1]\nframework: {base: megatron}\n", wantErr: `unknown key "framework.base"`},
		{name: "unknown key", yaml: "models: [a]\nclusters: [b]\nbatches: [1]\nmodel: x\n", wantErr: `test.yaml: unknown key "model"`},
		{name: "unknown search key", yaml: "models: [a]\nclusters: [b]\nbatches: [1]\nsearch: {methd: auto}\n", wantErr: `unknown key "search.methd"`},
		{name: "unknown cell key", yaml: "cells: [{model: a, cluster: b, batch: 1, batches: 2}]\n", wantErr: "batches"},
		{name: "not YAML", yaml: "models: [a\n", wantErr: "test.yaml: not YAML: "},
		{name: "a list", yaml: "- a\n", wantErr: "test.yaml: line 1: want a mapping of keys to values (e.g. batch: 16), got a list"},
		{name: "a list as a key", yaml: "[a]: 1\n", wantErr: "test.yaml: line 1: a key must be a plain name"},
		{name: "empty", yaml: "", wantErr: "models: give at least one"},
		{name: "no clusters", yaml: "models: [a]\nbatches: [1]\n", wantErr: "clusters: give at least one"},
		{name: "grid and cells, grid incomplete", yaml: "models: [a]\ncells: [{model: a, cluster: b, batch: 1}]\n", wantErr: "clusters: the grid needs at least one"},
		{name: "negative batch", yaml: "models: [a]\nclusters: [b]\nbatches: [16, -1]\n", wantErr: "batches: -1 is not a positive number of sequences"},
		{name: "zero seq", yaml: "models: [a]\nclusters: [b]\nbatches: [1]\nseqs: [0]\n", wantErr: "seqs: 0 is not a positive"},
		{name: "bad method", yaml: "models: [a]\nclusters: [b]\nbatches: [1]\nsearch: {method: greedy}\n", wantErr: `search.method must be auto, exhaustive or evolve, got "greedy"`},
		{name: "negative top", yaml: "models: [a]\nclusters: [b]\nbatches: [1]\nsearch: {top: -2}\n", wantErr: "search.top must not be negative"},
		{name: "objective", yaml: "models: [a]\nclusters: [b]\nbatches: [1]\nsearch: {objective: memory}\n",
			want: Config{Models: []string{"a"}, Clusters: []string{"b"}, Batches: []int{1}, Search: Search{Method: "auto", Seed: 1, Top: DefaultTop, Objective: "memory"}}},
		{name: "objective cost", yaml: "models: [a]\nclusters: [b]\nbatches: [1]\nsearch: {objective: cost}\n", wantErr: "search.objective cost needs a price per chip-hour, which a sweep has not"},
		{name: "bad objective", yaml: "models: [a]\nclusters: [b]\nbatches: [1]\nsearch: {objective: fast}\n", wantErr: `search.objective must be balanced, time or memory, got "fast"`},
		{name: "cell without cluster", yaml: "cells: [{model: a, batch: 1}]\n", wantErr: "cells[0].cluster is required"},
		{name: "batch not a number", yaml: "models: [a]\nclusters: [b]\nbatches: [lots]\n", wantErr: `batches[0]: "lots" is not a whole number`},
		{name: "batch a fraction", yaml: "models: [a]\nclusters: [b]\nbatches: [16.5]\n", wantErr: "batches[0]: 16.5 is not a whole number"},
		{name: "cell batch a fraction", yaml: "cells: [{model: a, cluster: b, batch: 8.5}]\n", wantErr: "cells[0].batch: 8.5 is not a whole number"},
		{name: "batches with suffixes", yaml: "models: [a]\nclusters: [b]\nbatches: [1Ki]\nseqs: [8Ki]\n",
			want: Config{Models: []string{"a"}, Clusters: []string{"b"}, Batches: []int{1024}, Seqs: []int{8192}, Search: Search{Method: "auto", Seed: 1, Top: DefaultTop}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got, err := ParseConfig("test.yaml", []byte(tc.yaml))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("models: [llama3-8b]\nclusters: [h100-8]\nbatches: [16]\n"))
	f.Add([]byte("cells: [{model: a, cluster: b, batch: 1, seq: 2, fix: tp=2}]\nsearch: {method: evolve, seed: 3, top: 1}\n"))
	f.Add([]byte("models: a\nfix: [\"\", tp=1]\n"))
	f.Add([]byte("{]"))
	f.Add([]byte("models: [a]\nclusters: [b]\nbatches: [1]\nframework: megatron\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig("fuzz.yaml", data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("ParseConfig accepted a configuration that does not validate: %v", err)
		}
	})
}
