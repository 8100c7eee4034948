package space

import (
	"slices"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/profiles"
)

// TestDispatcherKey checks the strategy key dispatcher: each value parses
// (any case) and prints back, the default prints nothing, an unknown
// value is refused with the known ones, and a framework refuses the
// dispatchers it does not run.
func TestDispatcherKey(t *testing.T) {
	for _, tt := range []struct {
		spec, want, str string
	}{
		{"dp=2,ep=8", "", "dp=2,ep=8"},
		{"dp=2,ep=8,dispatcher=alltoall", DispatcherAllToAll, "dp=2,ep=8,dispatcher=alltoall"},
		{"dp=2,ep=8,dispatcher=DeepEP", DispatcherDeepEP, "dp=2,ep=8,dispatcher=deepep"},
		{"dp=2,ep=8,dispatcher=hybridep", DispatcherHybridEP, "dp=2,ep=8,dispatcher=hybridep"},
	} {
		s, err := Parse(tt.spec)
		if err != nil {
			t.Fatalf("Parse(%s): %v", tt.spec, err)
		}
		if s.Dispatcher != tt.want {
			t.Errorf("Parse(%s).Dispatcher = %q, want %q", tt.spec, s.Dispatcher, tt.want)
		}
		if got := s.String(); !strings.HasPrefix(got, tt.str) || (tt.want == "" && strings.Contains(got, "dispatcher")) {
			t.Errorf("Parse(%s).String() = %q, want it to start %q", tt.spec, got, tt.str)
		}
	}
	if _, err := Parse("dispatcher=deepepp"); err == nil || !strings.Contains(err.Error(), `did you mean "deepep"`) {
		t.Errorf("Parse(dispatcher=deepepp) = %v, want a suggestion", err)
	}
	s, err := Parse("fsdp=16,ep=8,dispatcher=hybridep")
	if err != nil {
		t.Fatal(err)
	}
	tt := Limits{Framework: "torchtitan", Dispatchers: []string{DispatcherAllToAll, DispatcherDeepEP}}
	if err := tt.Check(s, mixtral().Layers); err == nil || !strings.Contains(err.Error(), "cannot express dispatcher=hybridep: it dispatches with alltoall, deepep") {
		t.Errorf("torchtitan's limits: %v, want a refusal of hybridep", err)
	}
	s.Dispatcher = DispatcherDeepEP
	if err := tt.Check(s, mixtral().Layers); err != nil {
		t.Errorf("torchtitan's limits refuse deepep: %v", err)
	}
	s.Dispatcher = DispatcherHybridEP
	if err := (Limits{Framework: "megatron"}).Check(s, mixtral().Layers); err != nil {
		t.Errorf("megatron's limits refuse hybridep: %v", err)
	}
}

// TestDispatcherPinned checks that --fix dispatcher=X gives every strategy
// of the space that dispatcher, that a strategy with another does not
// encode, and that a framework that does not run it refuses the pin.
func TestDispatcherPinned(t *testing.T) {
	w := Workload{Batch: 64, SeqLen: 4096}
	fix, err := ParseFix("dispatcher=deepep")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := NewLimited(mixtral(), gpuCluster(16), w, fix, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	genes := make([]int, NumGenes)
	var got Strategy
	n := 0
	for i := range sp.Size() {
		if !sp.DecodeIndex(i, genes, &got) {
			continue
		}
		n++
		if got.Dispatcher != DispatcherDeepEP {
			t.Fatalf("%s decoded with dispatcher %q, want deepep", got, got.Dispatcher)
		}
		if _, ok := sp.Encode(got); !ok {
			t.Fatalf("Encode(%s) not in the space", got)
		}
		got.Dispatcher = DispatcherAllToAll
		if _, ok := sp.Encode(got); ok {
			t.Fatalf("Encode(%s) in the space pinned to deepep", got)
		}
	}
	if n == 0 {
		t.Fatal("no strategy decoded")
	}
	if _, err := NewLimited(mixtral(), gpuCluster(16), w, fix, Limits{Framework: "maxtext", Dispatchers: []string{DispatcherAllToAll}}); err == nil || !strings.Contains(err.Error(), "--fix dispatcher") {
		t.Errorf("maxtext with --fix dispatcher=deepep: %v, want a refusal", err)
	}
}

// TestSearchedDispatchers holds where the search tries each dispatcher:
// the plain AllToAll on every GPU, DeepEP on Hopper and later with NVLink
// domains of up to 8 GPUs, HybridEP on larger ones (a GB200 NVL72 rack),
// nothing without SearchDispatchers or on TPUs, and only what the
// framework runs.
func TestSearchedDispatchers(t *testing.T) {
	on := Limits{SearchDispatchers: true}
	withFamily := func(c profiles.Cluster, family string) profiles.Cluster {
		c.Chip.Family = family
		return c
	}
	nvl72 := profiles.Cluster{Name: "gb200-144", Chip: profiles.Chip{Family: "nvidia-grace-blackwell"}, Axes: []profiles.Axis{
		{Name: "gpu", Size: 72, Tier: profiles.NVLink}, {Name: "node", Size: 2, Tier: profiles.InfiniBand}}}
	for _, tc := range []struct {
		name    string
		lim     Limits
		cluster profiles.Cluster
		want    []string
	}{
		{"off", Limits{}, withFamily(gpuCluster(64), "nvidia-hopper"), nil},
		{"hopper nodes of 8", on, withFamily(gpuCluster(64), "nvidia-hopper"), []string{DispatcherAllToAll, DispatcherDeepEP}},
		{"blackwell nodes of 8", on, withFamily(gpuCluster(64), "nvidia-blackwell"), []string{DispatcherAllToAll, DispatcherDeepEP}},
		{"one node", on, withFamily(gpuCluster(8), "nvidia-hopper"), []string{DispatcherAllToAll, DispatcherDeepEP}},
		{"nvl72", on, nvl72, []string{DispatcherAllToAll, DispatcherHybridEP}},
		{"ampere", on, withFamily(gpuCluster(64), "nvidia-ampere"), []string{DispatcherAllToAll}},
		{"no family", on, gpuCluster(64), []string{DispatcherAllToAll}},
		{"amd", on, withFamily(gpuCluster(64), "amd-cdna3"), []string{DispatcherAllToAll}},
		{"tpu", on, v5p256(), nil},
		{"framework without hybridep", Limits{SearchDispatchers: true, Dispatchers: []string{DispatcherAllToAll, DispatcherDeepEP}}, nvl72, []string{DispatcherAllToAll}},
	} {
		if got := tc.lim.SearchedDispatchers(&tc.cluster); !slices.Equal(got, tc.want) {
			t.Errorf("%s: SearchedDispatchers = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDispatcherSearched checks the dispatcher choice of the layout gene:
// each layout with ep > 1 comes once per searched dispatcher, next to each
// other, the others once with the default; every strategy decodes with
// its layout's dispatcher and encodes back to its own gene vector; a pin
// leaves one dispatcher.
func TestDispatcherSearched(t *testing.T) {
	w := Workload{Batch: 64, SeqLen: 4096}
	c := gpuCluster(16)
	c.Chip.Family = "nvidia-hopper"
	lim := Limits{SearchDispatchers: true}
	plain, err := NewLimited(mixtral(), c, w, Fix{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := NewLimited(mixtral(), c, w, Fix{}, lim)
	if err != nil {
		t.Fatal(err)
	}
	withEP := 0
	for i := range plain.layouts {
		if plain.layouts[i].deg[EP] > 1 {
			withEP++
		}
	}
	if withEP == 0 {
		t.Fatal("no layout with ep > 1")
	}
	// Two dispatchers on Hopper nodes of 8: one more layout per ep > 1.
	if got, want := sp.Layouts(), plain.Layouts()+withEP; got != want {
		t.Errorf("layouts = %d, want %d (%d without the dispatchers, %d with ep > 1)", got, want, plain.Layouts(), withEP)
	}
	seen := map[string]int{}
	genes := make([]int, NumGenes)
	var got Strategy
	for i := range sp.Size() {
		if !sp.DecodeIndex(i, genes, &got) {
			continue
		}
		want := ""
		if got.Degree[EP] > 1 {
			want = sp.dispatchers[sp.layouts[genes[GeneLayout]].disp]
		}
		if got.Dispatcher != want {
			t.Fatalf("%s decoded with dispatcher %q, want %q", got, got.Dispatcher, want)
		}
		seen[got.Dispatcher]++
		if back, ok := sp.Encode(got); !ok || !slices.Equal(back, genes) {
			t.Fatalf("Encode(%s) = %v, %v; want %v", got, back, ok, genes)
		}
	}
	for _, d := range []string{"", DispatcherAllToAll, DispatcherDeepEP} {
		if seen[d] == 0 {
			t.Errorf("no strategy decoded with dispatcher %q (%v)", d, seen)
		}
	}
	if seen[DispatcherAllToAll] != seen[DispatcherDeepEP] {
		t.Errorf("alltoall %d strategies, deepep %d: want as many", seen[DispatcherAllToAll], seen[DispatcherDeepEP])
	}
	s, err := Parse("fsdp=16,ep=8,dispatcher=hybridep")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sp.Encode(s); ok {
		t.Errorf("Encode(%s) in a space that searches alltoall and deepep", s)
	}
	fix, err := ParseFix("dispatcher=alltoall")
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := NewLimited(mixtral(), c, w, fix, lim)
	if err != nil {
		t.Fatal(err)
	}
	if pinned.Layouts() != plain.Layouts() {
		t.Errorf("pinned dispatcher: %d layouts, want %d", pinned.Layouts(), plain.Layouts())
	}
}
