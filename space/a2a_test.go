package space

import (
	"slices"
	"strings"
	"testing"
)

// TestA2AOverlapMicrobatches: the forward-backward pairs of the 1F1B steady
// state, by hand. Without a pipeline, 8 micro-batches make 7 pairs; on 4
// stages with v=2, rank 0 warms up over 2·3 + 1·4 = 10 of its 16 chunks,
// leaving 6 paired chunks, 3 micro-batches of its layers; with v=1 it
// warms up over 6 of 8, leaving 2; too few micro-batches leave none.
func TestA2AOverlapMicrobatches(t *testing.T) {
	for _, tt := range []struct {
		p, v, m int
		want    float64
	}{
		{1, 1, 8, 7}, {1, 1, 1, 0}, {4, 2, 8, 2.5}, {4, 1, 8, 1}, {4, 2, 4, 0}, {8, 4, 64, (256 - (14 + 24 + 1)) / 4.0},
	} {
		if got := A2AOverlapMicrobatches(tt.p, tt.v, tt.m); got != tt.want {
			t.Errorf("p=%d v=%d m=%d: %g overlapped, want %g", tt.p, tt.v, tt.m, got, tt.want)
		}
	}
}

// TestA2AOverlapRules: the strategy key round-trips, and Validate refuses
// what Megatron-Core refuses with the overlap.
func TestA2AOverlapRules(t *testing.T) {
	s, err := Parse("dp=2,ep=8,a2a_overlap=true")
	if err != nil || !s.A2AOverlap {
		t.Fatalf("Parse: %+v, %v", s, err)
	}
	if got := s.String(); !strings.Contains(got, "a2a_overlap=true") {
		t.Errorf("String() = %q, want a2a_overlap=true in it", got)
	}
	if _, err := Parse("a2a_overlap=maybe"); err == nil || !strings.Contains(err.Error(), "a2a_overlap=maybe must be true or false") {
		t.Errorf("Parse(a2a_overlap=maybe) = %v", err)
	}
	w := Workload{Batch: 64, SeqLen: 4096}
	for _, tt := range []struct {
		spec, want string // want "" for valid
	}{
		{"fsdp=16,ep=8,a2a_overlap=true", ""},
		{"fsdp=8,pp=2,ep=8,schedule=interleaved,v=2,a2a_overlap=true", ""},
		{"fsdp=16,a2a_overlap=true", "ep=1"},
		{"fsdp=8,pp=2,ep=8,a2a_overlap=true", "needs schedule=interleaved"},
		{"fsdp=16,ep=8,recompute=full,a2a_overlap=true", "recompute=full"},
		{"fsdp=16,ep=8,recompute=core_attn+moe,a2a_overlap=true", "moe module"},
		{"fsdp=8,pp=2,ep=8,schedule=dualpipe,a2a_overlap=true", "DualPipe overlaps the all-to-all by itself"},
	} {
		s, err := Parse(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Validate(mixtral(), gpuCluster(16), w)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.spec, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want an error naming %q", tt.spec, err, tt.want)
		}
	}
	if err := (Limits{Framework: "torchtitan", NoA2AOverlap: true}).Check(s, mixtral().Layers); err == nil || !strings.Contains(err.Error(), "cannot express a2a_overlap") {
		t.Errorf("torchtitan's limits: %v, want a refusal of a2a_overlap", err)
	}
}

// TestA2AOverlapSearched: with experts, a framework that runs the overlap
// and no pin, the space turns a2a_overlap on exactly where Validate
// allows it (by hand: ep=8 without a pipeline, or interleaved under one,
// and no full or moe recompute) and it hides the all-to-all: where ep
// spans the InfiniBand node axis, or anywhere under a framework whose step
// runs as one CUDA graph (Limits.A2AOverlapScaleUp); off elsewhere, ep
// within one node's NVLink included. A framework without it, or a pin to
// false, keeps it off; every valid vector round-trips through Encode.
func TestA2AOverlapSearched(t *testing.T) {
	w := Workload{Batch: 64, SeqLen: 4096}
	out := ",mesh=fsdp:gpu*8.node*2;ep:gpu*4.node*2" // ep over both nodes
	in := ",mesh=fsdp:gpu*8.node*2;ep:gpu*8"         // ep within a node
	graphed := Limits{A2AOverlapScaleUp: true}
	for _, tt := range []struct {
		name, fix string
		lim       Limits
		spec      string
		want      bool
	}{
		{"no pipeline", "", Limits{}, "fsdp=16,ep=8" + out, true},
		{"within a node", "", Limits{}, "fsdp=16,ep=8" + in, false},
		{"within a node, graphed", "", graphed, "fsdp=16,ep=8" + in, true},
		{"selective", "", Limits{}, "fsdp=16,ep=8,recompute=selective" + out, true},
		{"full recompute", "", graphed, "fsdp=16,ep=8,recompute=full" + in, false},
		{"ep=1", "", graphed, "fsdp=16", false},
		{"1f1b pipeline", "", graphed, "fsdp=8,pp=2,ep=8", false},
		{"interleaved", "", graphed, "fsdp=8,pp=2,ep=8,schedule=interleaved,v=2", true},
		{"pinned false", "a2a_overlap=false", graphed, "fsdp=16,ep=8" + out, false},
		{"torchtitan", "", Limits{Framework: "torchtitan", NoA2AOverlap: true}, "fsdp=16,ep=8" + out, false},
	} {
		fix, err := ParseFix(tt.fix)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := NewLimited(mixtral(), gpuCluster(16), w, fix, tt.lim)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		s, err := Parse(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		s.A2AOverlap = tt.want
		genes, ok := sp.Encode(s)
		if !ok {
			t.Errorf("%s: Encode(%s, a2a_overlap=%v) not in the space", tt.name, tt.spec, tt.want)
			continue
		}
		var got Strategy
		if !sp.Decode(genes, &got) || got.A2AOverlap != tt.want {
			t.Errorf("%s: Decode(Encode(%s)) = %s, want a2a_overlap=%v", tt.name, tt.spec, got, tt.want)
		}
		s.A2AOverlap = !tt.want
		if _, ok := sp.Encode(s); ok {
			t.Errorf("%s: Encode(%s, a2a_overlap=%v) in the space, want it out", tt.name, tt.spec, !tt.want)
		}
		genes = make([]int, NumGenes)
		for i := range sp.Size() {
			if !sp.DecodeIndex(i, genes, &got) {
				continue
			}
			c := gpuCluster(16)
			allowed := a2aOverlapProblem(got.Degree[EP], got.Degree[PP], got.Schedule, got.Recompute) == "" &&
				(EPScaleOut(&c, &got) || tt.lim.A2AOverlapScaleUp)
			if want := allowed && !tt.lim.NoA2AOverlap && tt.fix == ""; got.A2AOverlap != want {
				t.Fatalf("%s: %s decoded with a2a_overlap=%v, want %v", tt.name, got, got.A2AOverlap, want)
			}
			if err := got.Validate(mixtral(), gpuCluster(16), w); err != nil {
				t.Fatalf("%s: %s decoded as valid: %v", tt.name, got, err)
			}
			if back, ok := sp.Encode(got); !ok || !slices.Equal(back, genes) {
				t.Fatalf("%s: Encode(%s) = %v, %v; want %v", tt.name, got, back, ok, genes)
			}
		}
	}
}
