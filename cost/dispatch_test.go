package cost

import (
	"reflect"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestDispatcherEvaluate: Mixtral 8x7B (2 of 8 experts) with ep=16 over
// two nodes of 8 H100s. DeepEP sends a token to 2·(1 - C(4,2)/C(8,2)) =
// 1.5714 of the 2 nodes, 0.7857 of its 2 copies (routing.under), so the
// network leg of the dispatch and combine is shorter than the plain
// AllToAll's, which the default matches for this routing (no group
// limit); nothing but the exposed all-to-all moves. One evaluator that
// meets the same named placement under each dispatcher in turn gives what
// a fresh evaluator gives (the kept dispatch models follow the routing).
func TestDispatcherEvaluate(t *testing.T) {
	m, _ := model.Preset("mixtral-8x7b")
	c := gpuCluster("h100-16", chipH100, 16, 450e9, 50e9)
	w := space.Workload{Batch: 64, SeqLen: 4096}
	cm := NewModel(program(m, model.ProgramOptions{}))
	base := parseStrategy(t, "dp=16,zero=1,ep=16")
	placed, err := base.Place(c)
	if err != nil {
		t.Fatal(err)
	}
	fresh := map[string]Estimate{}
	for _, d := range []string{"", space.DispatcherAllToAll, space.DispatcherDeepEP, space.DispatcherHybridEP} {
		s := placed
		s.Dispatcher = d
		est, err := cm.NewEvaluator(c, w, Options{}).Evaluate(s)
		if err != nil {
			t.Fatal(err)
		}
		fresh[d] = est
	}
	def, a2a, deep := fresh[""], fresh[space.DispatcherAllToAll], fresh[space.DispatcherDeepEP]
	if !reflect.DeepEqual(def, a2a) {
		t.Errorf("default %.6g s, alltoall %.6g s: the same without a group limit", def.StepSeconds, a2a.StepSeconds)
	}
	if !(deep.ExposedA2ASeconds < a2a.ExposedA2ASeconds) || !near(deep.ComputeSeconds, a2a.ComputeSeconds, 1e-12) {
		t.Errorf("deepep exposes %.6g s of all-to-all, alltoall %.6g s (compute %.6g vs %.6g s): want less, the same compute",
			deep.ExposedA2ASeconds, a2a.ExposedA2ASeconds, deep.ComputeSeconds, a2a.ComputeSeconds)
	}
	if !reflect.DeepEqual(deep, fresh[space.DispatcherHybridEP]) {
		t.Errorf("deepep %.6g s, hybridep %.6g s: the same per-node dispatch", deep.StepSeconds, fresh[space.DispatcherHybridEP].StepSeconds)
	}
	ev := cm.NewEvaluator(c, w, Options{})
	for _, d := range []string{"", space.DispatcherDeepEP, space.DispatcherAllToAll, space.DispatcherDeepEP, ""} {
		s := placed
		s.Dispatcher = d
		var got Estimate
		if err := ev.EvaluatePlacedTo(&s, 7, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, fresh[d]) {
			t.Errorf("dispatcher %q after others: step %.9g s, fresh %.9g s", d, got.StepSeconds, fresh[d].StepSeconds)
		}
	}
}
