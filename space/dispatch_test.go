package space

import (
	"strings"
	"testing"
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
