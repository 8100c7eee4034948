package cost

import (
	"strings"
	"testing"

	"github.com/meshplan/meshplan/space"
)

// TestWeightGradientGathersTheSmallerOperand: under FSDP with sequence-
// parallel tensor parallelism the q, k, v weight gradient dW = xnᵀ·dqkv
// has xn split on the sequence by tp and dqkv on the heads. Gathering xn
// over tp (one sequence's 8192 x 4096 bf16 input, 67 MB) and
// reduce-scattering the product over fsdp alone is the cheap resolution
// ([MEG-TP]: Megatron re-gathers the input for the weight gradient).
// Summing the product over the sequence shards instead leaves it to be
// reduce-scattered whole over fsdp and tp (the 4096 x 6144 fp32 gradient,
// 101 MB, on InfiniBand), which the rules used to price as if fsdp had
// already divided it by 8: a reduction still pending must not count as
// done when pricing another role's.
func TestWeightGradientGathersTheSmallerOperand(t *testing.T) {
	m := llama3("8b")
	c := gpuCluster("h100-64", chipH100, 64, 450e9, 50e9)
	w := space.Workload{Batch: 64, SeqLen: 8192}
	s := strategy(space.Strategy{Degree: space.Degrees{space.TP: 8, space.FSDP: 8}, SP: true})
	s.Mesh[space.TP], s.Mesh[space.FSDP] = share("gpu", 8), share("node", 8)
	e, err := evaluate(m, c, w, s, Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range e.Ops {
		if o.Pass != "bwd" || !strings.Contains(o.Text, "-> dWqkv") {
			continue
		}
		found = true
		if !strings.Contains(o.Text, "AllGather(tp)") || !strings.Contains(o.Text, "ReduceScatter(fsdp)") || strings.Contains(o.Text, "ReduceScatter(fsdp,tp)") {
			t.Errorf("dWqkv resolved as %q; want xn gathered over tp and the product reduce-scattered over fsdp alone", o.Text)
		}
	}
	if !found {
		t.Fatal("no dWqkv op in the trace")
	}
}
