package space

import (
	"slices"
	"strings"
	"testing"
)

// TestActOffloadKey: the key round-trips and takes whole layers only, and
// Validate refuses what Megatron-Core's CPU offloading refuses: a
// pipeline, any recomputation, and as many layers as the model has
// (Llama 3 70B: 80).
func TestActOffloadKey(t *testing.T) {
	s, err := Parse("fsdp=16,act_offload=40")
	if err != nil || s.ActOffload != 40 {
		t.Fatalf("Parse: %+v, %v", s, err)
	}
	if got := s.String(); got != "fsdp=16,act_offload=40" {
		t.Errorf("String() = %q, want fsdp=16,act_offload=40", got)
	}
	if got, _ := Parse("fsdp=16,act_offload=0"); got.String() != "fsdp=16" {
		t.Errorf("act_offload=0 prints as %q, want it left out (the default)", got.String())
	}
	for _, bad := range []string{"act_offload=-1", "act_offload=half", "act_offload=1.5"} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "whole number of layers") {
			t.Errorf("Parse(%s) = %v, want an error naming whole layers", bad, err)
		}
	}
	w := Workload{Batch: 64, SeqLen: 4096}
	for _, tt := range []struct {
		spec, want string // want "" for valid
	}{
		{"fsdp=16,act_offload=40", ""},
		{"fsdp=16,act_offload=79", ""},
		{"fsdp=8,pp=2,act_offload=40", "pp=2"},
		{"fsdp=16,recompute=selective,act_offload=40", "recompute=selective"},
		{"fsdp=16,act_offload=80", "at most 79"},
	} {
		s, err := Parse(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Validate(llama3_70b(), gpuCluster(16), w)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.spec, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want an error naming %q", tt.spec, err, tt.want)
		}
	}
	if err := (Limits{Framework: "maxtext"}).Check(s, 80); err == nil || !strings.Contains(err.Error(), "cannot express act_offload=40") {
		t.Errorf("maxtext's limits: %v, want a refusal of act_offload", err)
	}
	if err := (Limits{Framework: "megatron", ActOffload: true}).Check(s, 80); err != nil {
		t.Errorf("megatron's limits: %v", err)
	}
}

// TestActOffloadChoices: 1/16, 1/8, 1/4, 3/8, 1/2 and 3/4 of the layers,
// rounded, each once, by hand: 80 layers 5, 10, 20, 30, 40 and 60 (the
// recipes' values); 126 (Llama 3.1 405B) 8, 16, 32, 47, 63 and 95; 3
// layers 1 and 2; 1 layer none.
func TestActOffloadChoices(t *testing.T) {
	for _, tt := range []struct {
		layers int
		want   []int
	}{
		{80, []int{5, 10, 20, 30, 40, 60}}, {126, []int{8, 16, 32, 47, 63, 95}}, {32, []int{2, 4, 8, 12, 16, 24}}, {3, []int{1, 2}}, {2, []int{1}}, {1, nil},
	} {
		if got := ActOffloadChoices(tt.layers); !slices.Equal(got, tt.want) {
			t.Errorf("ActOffloadChoices(%d) = %v, want %v", tt.layers, got, tt.want)
		}
	}
}

// TestActOffloadSearched: a framework that offloads activations gets
// each of ActOffloadChoices as a choice of recompute none, valid only
// without a pipeline, every valid vector round-tripping through Encode
// and CountValid counting them; a pin puts one value on every strategy
// and refuses a pipeline or recomputation beside it in one sentence; a
// framework without it has none.
func TestActOffloadSearched(t *testing.T) {
	w := Workload{Batch: 64, SeqLen: 4096}
	m, c := llama3_70b(), gpuCluster(16)
	megatron := Limits{Framework: "megatron", ActOffload: true}
	sp, err := NewLimited(m, c, w, Fix{}, megatron)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	var got Strategy
	genes := make([]int, NumGenes)
	var valid int64
	for i := range sp.Size() {
		if !sp.DecodeIndex(i, genes, &got) {
			continue
		}
		valid++
		if got.ActOffload > 0 {
			seen[got.ActOffload] = true
			if got.Degree[PP] > 1 || got.Recompute != RecomputeNone {
				t.Fatalf("%s decoded as valid with a pipeline or recomputation", got)
			}
		}
		if err := got.Validate(m, c, w); err != nil {
			t.Fatalf("%s decoded as valid: %v", got, err)
		}
		if back, ok := sp.Encode(got); !ok || !slices.Equal(back, genes) {
			t.Fatalf("Encode(%s) = %v, %v; want %v", got, back, ok, genes)
		}
	}
	for _, n := range []int{5, 10, 20, 30, 40, 60} {
		if !seen[n] || len(seen) != 6 {
			t.Errorf("offloads searched %v, want 5, 10, 20, 30, 40 and 60", seen)
			break
		}
	}
	if n := sp.CountValid(); n != valid {
		t.Errorf("CountValid() = %d, want %d (decoded)", n, valid)
	}

	fix, _ := ParseFix("act_offload=30")
	sp, err = NewLimited(m, c, w, fix, megatron)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sp.Size() {
		if sp.DecodeIndex(i, genes, &got) && got.ActOffload != 30 {
			t.Fatalf("pinned act_offload=30, decoded %s", got)
		}
	}
	for _, tt := range []struct {
		fix  string
		lim  Limits
		want string
	}{
		{"act_offload=30,pp=2", megatron, "pp=2"},
		{"act_offload=30,recompute=full", megatron, "recompute=full"},
		{"act_offload=30", Limits{Framework: "torchtitan"}, "torchtitan keeps every layer's activations in HBM"},
	} {
		fix, _ := ParseFix(tt.fix)
		if _, err := NewLimited(m, c, w, fix, tt.lim); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("--fix %s: %v, want an error naming %q", tt.fix, err, tt.want)
		}
	}
	sp, err = NewLimited(m, c, w, Fix{}, Limits{Framework: "maxtext"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range sp.Size() {
		if sp.DecodeIndex(i, genes, &got) && got.ActOffload != 0 {
			t.Fatalf("maxtext decoded %s", got)
		}
	}
}
