package cost

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestSeparateProjectionsSum works by hand the pass that sums the input
// gradients of separate projections on one input (model.Op.Calls,
// torchtitan's wq, wk, wv and w1, w3) for Llama 3 8B on one H100, one
// 8,192-token sequence: each layer's q, k and v gradients of xn are read
// and their sum written (3 + 1 arrays), the gate and up ones likewise
// (2 + 1), each array 8192·4096·2 = 67,108,864 bytes; over 32 layers at
// 0.76 of 3,350 GB/s, 32·7·67,108,864/(0.76·3350e9) = 5.904 ms more
// memory-bound time than the fused projections.
func TestSeparateProjectionsSum(t *testing.T) {
	m := llama3("8b")
	cl := gpuCluster("h100-1", chipH100, 1, 450e9, 50e9)
	w := space.Workload{Batch: 1, SeqLen: 8192}
	st := strategy(space.Strategy{})
	memBound := func(separate bool) float64 {
		k := model.FusedKernels()
		k.SeparateProjections = separate
		est, err := Evaluate(program(m, model.ProgramOptions{Kernels: k}), cl, w, st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return est.MemoryBoundSeconds
	}
	const arr = 8192 * 4096 * 2
	want := 32 * 7 * arr / (0.76 * 3350e9)
	if got := memBound(true) - memBound(false); math.Abs(got-want) > 1e-9 {
		t.Errorf("separate projections add %.6g s of memory-bound time, want %.6g s", got, want)
	}
}
