package cost

import (
	"math"
	"testing"
)

// TestSyncLoadsExposed checks the exposure of the weight traffic and of the
// once-per-step data-parallel collectives against hand-computed values:
// the gradient reduction hides only under what the last backward's weight
// traffic leaves of that backward, and the last backward's weight traffic
// only under that backward.
func TestSyncLoadsExposed(t *testing.T) {
	for _, c := range []struct {
		name                 string
		l                    syncLoads
		weights, grad, param float64
	}{
		{
			// ZeRO-1 over many nodes, one micro-batch: 0.9 - 0.85·0.6 and
			// 0.5 - 0.85·0.3 exposed.
			name: "zero1 one micro-batch",
			l:    syncLoads{m: 1, fwd: 0.3, bwd: 0.6, compute: 0.9, wof: 0.85, gof: 0.85, grad: 0.9, gradEdge: 0.03, param: 0.5, paramEdge: 0.02},
			grad: 0.39, param: 0.245,
		},
		{
			// A reduction shorter than 0.85 of the backward: the last bucket only.
			name: "hidden but the last bucket",
			l:    syncLoads{m: 1, fwd: 0.3, bwd: 0.6, compute: 0.9, wof: 0.85, gof: 0.85, grad: 0.2, gradEdge: 0.03},
			grad: 0.03,
		},
		{
			// Hybrid sharding, one micro-batch: the backward's 0.6 s of
			// weight traffic leaves 0.09 s exposed past 0.85·0.6 = 0.51
			// (the forward's 0.2 s hide under 0.255), more than the pooled
			// 0.8 - 0.85·0.9 = 0.035; no window is left for the 0.4 s
			// all-reduce over the replicas.
			name:    "hsdp one micro-batch",
			l:       syncLoads{m: 1, fwd: 0.3, bwd: 0.6, compute: 0.9, wof: 0.85, gof: 0.85, weights: 0.8, weightsBwd: 0.6, weightEdge: 0.02, grad: 0.4, gradEdge: 0.01},
			weights: 0.09, grad: 0.4,
		},
		{
			// Four micro-batches of ZeRO-2 reductions, 0.3 s each: pooled
			// 1.2 - 0.85·3.6 < 0 and 0.3 < 0.85·0.6, so the edge only.
			name:    "zero2 four micro-batches",
			l:       syncLoads{m: 4, fwd: 0.3, bwd: 0.6, compute: 3.6, wof: 0.85, gof: 0.85, weights: 0.3, weightsBwd: 0.3, weightEdge: 0.01},
			weights: 0.01,
		},
		{
			// The parameter gather after the forward's 0.2 s of gathers:
			// window 0.85·0.3 - 0.2 = 0.055, 0.3 - 0.055 exposed; the
			// gathers themselves 0.2 - 0.255 < 0, the pooled 0.2 - 0.85·0.9
			// < 0: the edge.
			name:    "param gather after fsdp gathers",
			l:       syncLoads{m: 1, fwd: 0.3, bwd: 0.6, compute: 0.9, wof: 0.85, gof: 0.85, weights: 0.2, weightEdge: 0.015, param: 0.3, paramEdge: 0.01},
			weights: 0.015, param: 0.245,
		},
	} {
		w, g, p := c.l.exposed()
		for _, x := range []struct {
			what      string
			got, want float64
		}{{"weights", w, c.weights}, {"grad", g, c.grad}, {"param", p, c.param}} {
			if math.Abs(x.got-x.want) > 1e-12 {
				t.Errorf("%s: exposed %s %g, want %g", c.name, x.what, x.got, x.want)
			}
		}
	}
}
