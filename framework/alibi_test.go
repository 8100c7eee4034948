package framework_test

import (
	"testing"

	"github.com/meshplan/meshplan/framework"
)

// TestALiBiFused checks which profiles pass ALiBi to a fused kernel:
// Megatron's (Transformer Engine's cuDNN attention) and none of the others
// by default; a profile file sets it either way.
func TestALiBiFused(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"megatron", true}, {"generic", false}, {"pytorch", false}, {"torchtitan", false}, {"deepspeed", false}, {"maxtext", false},
	} {
		if got := mustBuiltin(t, tt.name).Kernels.ALiBiFused; got != tt.want {
			t.Errorf("%s: ALiBiFused %v, want %v", tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct {
		yaml string
		want bool
	}{
		{"base: generic\nalibi_fused: true\n", true},
		{"base: megatron\nalibi_fused: false\n", false},
		{"base: megatron\n", true},
	} {
		p, err := framework.Parse([]byte(tt.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tt.yaml, err)
		}
		if p.Kernels.ALiBiFused != tt.want {
			t.Errorf("%q: ALiBiFused %v, want %v", tt.yaml, p.Kernels.ALiBiFused, tt.want)
		}
	}
}

// TestChunkSync checks which profiles synchronise each interleaved model
// chunk on its own (Megatron-Core's per-chunk grad and param sync) and
// that a profile file sets it.
func TestChunkSync(t *testing.T) {
	for _, name := range framework.Names() {
		if got, want := mustBuiltin(t, name).Comm.ChunkSync, name == "megatron"; got != want {
			t.Errorf("%s: ChunkSync %v, want %v", name, got, want)
		}
	}
	p, err := framework.Parse([]byte("base: generic\nchunk_sync: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Comm.ChunkSync || !p.SearchOptions().Cost.Comm.ChunkSync {
		t.Error("chunk_sync: true in a file based on generic did not set it")
	}
}
