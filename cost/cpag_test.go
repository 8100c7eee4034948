package cost

import (
	"math"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/space"
)

// TestCPAllGather: Llama 3 8B at 8,192 tokens over cp 4. Its keys and
// values (8 heads of 128) are 8,192 x 1,024 x 2 bytes = 16,777,216 a
// layer each; repeated to the 32 query heads (Comm.CPRepeatedKV) four
// times that; their gradients' reduce-scatters in fp32 under
// Comm.CPAllGather twice the activations' 2 bytes. Under CPAllGather no cp
// collective of the core hides: the step's critical communication is the
// sum of their times.
func TestCPAllGather(t *testing.T) {
	m := llama3("8b")
	w := space.Workload{Batch: 1, SeqLen: 8192}
	st := strategy(space.Strategy{})
	st.Degree[space.CP] = 4
	st.Mesh[space.CP] = share("gpu", 4)
	cl := gpuCluster("h100-4", chipH100, 4, 450e9, 50e9)
	const kv = 8192 * 1024 * 2
	for _, tt := range []struct {
		comm           Comm
		gather, reduce float64
		overlapped     bool
	}{
		{Comm{}, kv, kv, true},
		{Comm{CPAllGather: true}, kv, 2 * kv, false},
		{Comm{CPRepeatedKV: true}, 4 * kv, 4 * kv, true},
		{Comm{CPAllGather: true, CPRepeatedKV: true}, 4 * kv, 8 * kv, false},
		{Comm{CPAllGather: true, CPRepeatedKV: true, TPPlan: true}, 4 * kv, 8 * kv, false},
	} {
		est, err := evaluate(m, cl, w, st, Options{Comm: tt.comm, Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		var gathers, reduces int
		var sum float64
		for _, c := range est.Collectives {
			if c.Kind != KindActivation {
				continue
			}
			want := tt.gather
			if c.Op == "ReduceScatter" {
				want = tt.reduce
				reduces++
			} else {
				gathers++
			}
			if c.Bytes != want || c.Overlapped != tt.overlapped || c.Count != 32 {
				t.Errorf("%+v: %s %q: %g bytes x%d, overlapped %v; want %g x32, %v", tt.comm, c.Op, c.Why, c.Bytes, c.Count, c.Overlapped, want, tt.overlapped)
			}
			if !strings.Contains(c.Why, "gather k") && !strings.Contains(c.Why, "gather v") && !strings.Contains(c.Why, "partial d") {
				t.Errorf("%+v: unexpected collective %q", tt.comm, c.Why)
			}
			sum += c.Seconds
		}
		// Forward k and v, the backward's v and its recomputed scores' k;
		// dk and dv reduced.
		if gathers != 4 || reduces != 2 {
			t.Errorf("%+v: %d gathers and %d reduce-scatters over cp, want 4 and 2", tt.comm, gathers, reduces)
		}
		if crit := est.Passes.CriticalSeconds; !tt.overlapped && math.Abs(crit-sum) > 1e-12 {
			t.Errorf("%+v: critical communication %g s, want the cp collectives' %g s", tt.comm, crit, sum)
		}
	}
}
