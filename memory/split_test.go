package memory

import (
	"reflect"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestSplitMemory: an explicit split equal to the default one gives the
// same breakdown, bit for bit; the busiest rank is the maximum over the
// stages, so 26 layers on the first stage (with the embedding and, under
// 1F1B, pp = 4 micro-batches in flight) need more than 26 on a middle
// stage (3 in flight) or on the last; and an Estimator that meets the
// splits in turn gives each Estimate's breakdown.
func TestSplitMemory(t *testing.T) {
	m, c := llama70B(), h100(64) // 80 layers
	w := space.Workload{Batch: 64, SeqLen: 4096}
	mm := NewModel(model.MustProgram(m, model.ProgramOptions{}))
	parse := func(spec string) space.Strategy {
		s, err := space.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(m, c, w); err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		return s
	}
	even, explicit := parse("dp=2,tp=8,pp=4"), parse("dp=2,tp=8,pp=4,first=20,last=20")
	heavyFirst, heavyMiddle := parse("dp=2,tp=8,pp=4,first=26,last=2"), parse("dp=2,tp=8,pp=4,first=2,last=26")
	est := func(s space.Strategy) Breakdown {
		b, err := mm.Estimate(c, w, s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if a, b := est(even), est(explicit); !reflect.DeepEqual(a, b) {
		t.Errorf("first=20,last=20: %+v, want the default split's %+v", b, a)
	}
	f, mid := est(heavyFirst), est(heavyMiddle)
	if !(f.TotalBytes() > mid.TotalBytes()) || !(mid.TotalBytes() > est(even).TotalBytes()) {
		t.Errorf("peak bytes: first=26 %.4g, first=2,last=26 %.4g, even %.4g; want them falling", f.TotalBytes(), mid.TotalBytes(), est(even).TotalBytes())
	}
	e := mm.NewEstimator(c, w)
	for _, s := range []space.Strategy{even, heavyFirst, explicit, heavyMiddle, even} {
		got, err := e.Estimate(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := est(s); !reflect.DeepEqual(got, want) {
			t.Errorf("Estimator on %s: %+v, want %+v", s, got, want)
		}
	}
}
