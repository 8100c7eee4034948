package memory

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestImbalance: Mixtral 8x7B (32 layers) on 8 H100s, dp=8 and ep=8, one
// 4,096-token sequence per replica, with moe.imbalance 1.5 against 1. By
// hand: the rank's one expert receives B·S·R/E = 8·4096·2/8 = 8,192
// tokens a layer and keeps its input (4,096 wide), the gate-and-up output
// (2·14,336) and the activation (14,336) in bf16, 8,192·47,104·2 =
// 771,751,936 bytes a layer; the busiest rank holds half as much again.
//   - No recompute: 32 layers of it, 12,348,030,976 bytes more activations.
//   - Full recompute: the layer re-run in the backward holds it,
//     385,875,968 bytes more; the dispatch and combine buffers, the rank's
//     own 4,096·2 copies out (67,108,864 bytes) and as many in, take 1.5
//     times as many in: 2 -> 2.5 copies, 33,554,432 bytes more.
//
// Nothing else moves. A capacity factor above 1, which pads every rank's
// buffers, leaves the imbalance out (model.MoE.Load), and so does dp=8
// without expert parallelism, where each chip holds every expert and the
// mean of the tokens.
func TestImbalance(t *testing.T) {
	c := h100(8)
	w := space.Workload{Batch: 8, SeqLen: 4096}
	parts := func(ep int, recompute string, imbalance, capacity float64) map[string]float64 {
		t.Helper()
		s := strat(space.Strategy{Degree: space.Degrees{space.DP: 8, space.EP: ep}, Zero: 1, Recompute: recompute})
		placed, err := s.Place(c)
		if err != nil {
			t.Fatal(err)
		}
		sp := mixtral()
		sp.MoE.Imbalance, sp.MoE.CapacityFactor = imbalance, capacity
		ps, err := NewModel(model.MustProgram(sp, model.ProgramOptions{})).Parts(c, w, placed)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{}
		for _, p := range ps {
			m[p.Component+"/"+p.Name] += p.Bytes
		}
		return m
	}
	for _, tc := range []struct {
		ep        int
		recompute string
		extra     map[string]float64
	}{
		{8, "", map[string]float64{"activations/routed experts (dispatched copies)": 12348030976}},
		{8, "full", map[string]float64{
			"buffers/recomputed activations (transient)":   385875968,
			"buffers/MoE dispatch and combine (transient)": 33554432,
		}},
		{1, "", nil},
		{1, "full", nil},
	} {
		base, got := parts(tc.ep, tc.recompute, 1, 1), parts(tc.ep, tc.recompute, 1.5, 1)
		for k, v := range base {
			if want := v + tc.extra[k]; !within(got[k], want, 1e-12) {
				t.Errorf("ep=%d, recompute %q: %s = %.10g bytes, want %.10g", tc.ep, tc.recompute, k, got[k], want)
			}
		}
		padded, both := parts(tc.ep, tc.recompute, 1, 1.25), parts(tc.ep, tc.recompute, 1.5, 1.25)
		for k, v := range padded {
			if both[k] != v {
				t.Errorf("ep=%d, recompute %q, capacity factor 1.25: %s = %.10g bytes with imbalance 1.5, want %.10g (the padding alone)", tc.ep, tc.recompute, k, both[k], v)
			}
		}
	}
}
