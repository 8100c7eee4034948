package cost

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// TestOffloadStep pins the optimizer step under host offload for a shard
// of 1e9 parameters with mixed precision (bf16 weights, fp32 gradients,
// 30 bytes a parameter for the step) on an H100 host (PCIe Gen5 at 51.2
// GB/s, 76.8 GB/s of DRAM): all of it on the host moves 1e9·(4 + 2)
// bytes over the link, 0.1171875 s, and steps 1e9·30 bytes through DRAM,
// 0.390625 s; a quarter of it on the host is a quarter of both plus the
// chip's step over the rest, 0.75e9·30 bytes at 2e12·0.8 B/s.
func TestOffloadStep(t *testing.T) {
	s, _ := model.Preset("llama3-8b")
	p, err := model.NewProgram(s, model.ProgramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm := NewModel(p)
	if cm.optimizerBytes != 30 {
		t.Fatalf("optimizer bytes %v, want 30 (mixed precision)", cm.optimizerBytes)
	}
	chip := profiles.Chip{HostBandwidthBytesPerS: 51.2e9}
	e := &evaluator{hbm: 2e12, eff: profiles.Efficiency{HBMFraction: 0.8}}
	for _, tt := range []struct {
		h    hostOffload
		want float64
	}{
		{hostOffload{opt: 1}, 6e9/51.2e9 + 30e9/76.8e9},
		{hostOffload{opt: 0.25}, 0.75e9*30/(2e12*0.8) + 0.25*(6e9/51.2e9+30e9/76.8e9)},
	} {
		if got := cm.offloadStep(e, &chip, tt.h, 1e9); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("offload %+v: step %.9g s, want %.9g", tt.h, got, tt.want)
		}
	}
	for _, tt := range []struct {
		host, want float64
	}{{25.6e9, 51.2e9}, {51.2e9, 76.8e9}, {360e9, 256e9}} {
		if got := (&profiles.Chip{HostBandwidthBytesPerS: tt.host}).HostDRAMBytesPerS(); got != tt.want {
			t.Errorf("host link %g: DRAM %g, want %g", tt.host, got, tt.want)
		}
	}
	// Full duplex: 1e9 parameters of 2-byte weights and 4-byte gradients
	// with 3e9 bytes of activations, over 1e9 B/s each way. Forward: the
	// activations out (3 s) against the weights in (2 s); backward: the
	// activations and weights in (5 s) against the gradients out (4 s).
	for _, tt := range []struct {
		h            hostOffload
		act          float64
		wantF, wantB float64
	}{
		{hostOffload{opt: 1, params: true}, 3e9, 3, 5},
		{hostOffload{opt: 1, params: true}, 0, 2, 4},
		{hostOffload{}, 3e9, 3, 3},
	} {
		f, b := cm.offloadPassSeconds(tt.h, 1e9, tt.act, 1e9)
		if math.Abs(f-tt.wantF) > 1e-12 || math.Abs(b-tt.wantB) > 1e-12 {
			t.Errorf("%+v act %g: passes %g s and %g s, want %g and %g", tt.h, tt.act, f, b, tt.wantF, tt.wantB)
		}
	}
}
