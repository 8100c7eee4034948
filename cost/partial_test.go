package cost

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/model"
)

// TestAddPartialReruns checks the recompute pass's share of the ops a
// policy re-runs in part (model.Policy.Partial): each adds its share of
// its forward time to the pass and to the op's category; an op without a
// share adds nothing. Here a q, k, v projection of 6 ms with wk's 1/6
// re-run adds 1 ms of matmul, a gate and up projection of 8 ms with w3's
// half 4 ms: 5 ms over the pass's 2 ms of re-run norms.
func TestAddPartialReruns(t *testing.T) {
	ops := []model.Op{
		{Kind: model.Elementwise, Name: "norm1", Group: model.GroupNorm},
		{Kind: model.Einsum, Name: "qkv", Group: model.GroupProjection},
		{Kind: model.Einsum, Name: "out", Group: model.GroupProjection},
		{Kind: model.Einsum, Name: "ffn_in", Group: model.GroupProjection},
	}
	for _, c := range []struct {
		name            string
		shares          []float64
		seconds, matmul float64
	}{
		{"wk and w3", []float64{0, 1.0 / 6, 0, 0.5}, 0.002 + 0.001 + 0.004, 0.005},
		{"none", []float64{0, 0, 0, 0}, 0.002, 0},
		{"short forward", []float64{0, 1.0 / 6}, 0.002 + 0.001, 0.001},
	} {
		fw := &runResult{opSeconds: []float64{0.001, 0.006, 0.004, 0.008}}
		rc := &runResult{seconds: 0.002}
		rc.cat[catMemory] = 0.002
		addPartialReruns(rc, fw, ops, c.shares, nil)
		if math.Abs(rc.seconds-c.seconds) > 1e-15 || math.Abs(rc.cat[catMatmul]-c.matmul) > 1e-15 || rc.cat[catMemory] != 0.002 {
			t.Errorf("%s: recompute %v s (matmul %v, memory %v), want %v (matmul %v, memory 0.002)",
				c.name, rc.seconds, rc.cat[catMatmul], rc.cat[catMemory], c.seconds, c.matmul)
		}
	}
}
