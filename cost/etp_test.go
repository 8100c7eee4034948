package cost

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestWholeExperts checks expert-tensor parallelism of 1 under tp=4
// (model.ProgramOptions.ExpertsWhole) against the experts split over tp:
// the expert matmuls need no tensor-parallel collective (each tp chip runs
// its own slots through whole experts), the expert weights' gradients are
// reduced over the tp chips as well as the expert data-parallel ones
// (tp x edp = 4 x 2 chips on gpu and node) at 4x the bytes, and ZeRO-1
// shards the experts' optimizer step over those 8 chips, as it shards the
// split experts over edp's 2: the same parameters per chip.
func TestWholeExperts(t *testing.T) {
	m, _ := model.Preset("mixtral-8x7b")
	c, err := profiles.Parse("h100-64")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 256, SeqLen: 4096}
	run := func(whole bool, spec string) Estimate {
		t.Helper()
		s, err := space.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = s.Place(c); err != nil {
			t.Fatal(err)
		}
		e, err := NewModel(program(m, model.ProgramOptions{ExpertsWhole: whole})).Evaluate(c, w, s, Options{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	split := run(false, "dp=16,zero=1,tp=4,ep=8,etp=4")
	// ep placed where the split run has it (the dp chips only), to compare
	// like with like; carved takes Megatron's expert grid, ep over the tp
	// ranks first (gpu*8), leaving the expert data-parallel group node*8.
	whole := run(true, "dp=16,zero=1,tp=4,ep=8,etp=1,mesh=tp:gpu*4;dp:gpu*2.node*8;ep:gpu*2.node*4")
	carved := run(true, "dp=16,zero=1,tp=4,ep=8,etp=1")
	expertTP := func(e Estimate) int {
		n := 0
		for _, cl := range e.Collectives {
			if strings.Contains(cl.Why, "expert_") && slices.Equal(cl.Axes, []string{"gpu"}) {
				n++
			}
		}
		return n
	}
	if expertTP(split) == 0 {
		t.Fatal("split experts: no tensor-parallel collective on the expert matmuls")
	}
	if n := expertTP(whole); n != 0 {
		t.Errorf("whole experts: %d tensor-parallel collectives on the expert matmuls, want 0", n)
	}
	grad := func(e Estimate) (axes []string, bytes float64) {
		for _, cl := range e.Collectives {
			if strings.HasPrefix(cl.Why, "gradient of We_in") {
				return cl.Axes, cl.Bytes
			}
		}
		t.Fatal("no gradient reduction of We_in")
		return nil, 0
	}
	sa, sb := grad(split)
	wa, wb := grad(whole)
	if !slices.Equal(sa, []string{"node"}) || !slices.Equal(wa, []string{"gpu", "node"}) {
		t.Errorf("gradient of We_in over %v (split) and %v (whole), want [node] and [gpu node]", sa, wa)
	}
	if math.Abs(wb/sb-4) > 1e-9 {
		t.Errorf("whole experts' gradient is %.4gx the split one's, want 4x", wb/sb)
	}
	// ep over tp's ranks: the same experts per chip, reduced over the 8
	// nodes of the expert data-parallel group alone.
	if ca, cb := grad(carved); !slices.Equal(ca, []string{"node"}) || math.Abs(cb/wb-1) > 1e-9 {
		t.Errorf("ep across tp: gradient of We_in over %v at %.4gx the whole one's, want [node] at 1x", ca, cb/wb)
	}
	if math.Abs(carved.OptimizerSeconds/whole.OptimizerSeconds-1) > 1e-9 || carved.MatmulSeconds != whole.MatmulSeconds {
		t.Errorf("ep across tp: optimizer %.6g s, matmuls %.6g s; want %.6g s and %.6g s as with ep on dp", carved.OptimizerSeconds, carved.MatmulSeconds, whole.OptimizerSeconds, whole.MatmulSeconds)
	}
	if math.Abs(whole.OptimizerSeconds/split.OptimizerSeconds-1) > 1e-9 {
		t.Errorf("optimizer step %.6g s whole, %.6g s split: ZeRO-1 over edp x tp must give the same shard", whole.OptimizerSeconds, split.OptimizerSeconds)
	}
	if whole.MatmulSeconds != split.MatmulSeconds {
		t.Errorf("matmuls %.6g s whole, %.6g s split: the same FLOPs per chip", whole.MatmulSeconds, split.MatmulSeconds)
	}
}
