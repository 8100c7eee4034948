package cost

import (
	"reflect"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestBanksKeepBlocks checks the block banks of an Evaluator
// (evaluator.banks): deepseek-v3's attention block does not read the
// expert roles, so a strategy that changes only EP keeps its bank, and the
// expert block, whose signature changes, finds its first bank again when
// the first degrees come back; every estimate is a fresh evaluation's,
// bit for bit. A dense model's blocks share one signature, so its
// evaluator keeps one bank per block (Model.banked).
func TestBanksKeepBlocks(t *testing.T) {
	m, c := presets(t, "deepseek-v3", "h800-64")
	w := space.Workload{Batch: 64, SeqLen: 4096}
	cm := NewModel(program(m, model.ProgramOptions{}))
	if !cm.banked {
		t.Fatal("deepseek-v3's blocks share one signature")
	}
	var dense, expert = -1, -1
	for b, set := range cm.sigRoles {
		switch {
		case cm.idle[b]:
		case !set.Has(space.RoleEP) && dense < 0:
			dense = b
		case set.Has(space.RoleEP) && expert < 0:
			expert = b
		}
	}
	if dense < 0 || expert < 0 {
		t.Fatalf("no block without expert roles (%d) or with (%d)", dense, expert)
	}
	ep2 := parseStrategy(t, "dp=4,fsdp=2,tp=8,ep=2,mb=1,zero=1,schedule=1f1b,recompute=full")
	ep8 := parseStrategy(t, "dp=4,fsdp=2,tp=8,ep=8,mb=1,zero=1,schedule=1f1b,recompute=full")
	o := Options{SkipCollectives: true}
	ev := cm.NewEvaluator(c, w, o)
	e := &ev.st.e
	var gens [][2]uint64 // per strategy, the dense and the expert block's bank generations
	for _, s := range []space.Strategy{ep2, ep8, ep2} {
		got, err := ev.Evaluate(s)
		if err != nil {
			t.Fatal(err)
		}
		want, err := cm.NewEvaluator(c, w, o).Evaluate(s)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %+v, %v; fresh %+v", &s, got, err, want)
		}
		gens = append(gens, [2]uint64{e.bgen[dense], e.bgen[expert]})
	}
	if gens[1][0] != gens[0][0] || gens[2][0] != gens[0][0] {
		t.Errorf("block %d (no expert roles) changed banks with EP: generations %v", dense, gens)
	}
	if gens[1][1] == gens[0][1] || gens[2][1] != gens[0][1] {
		t.Errorf("block %d (expert roles): generations %v; want a new bank for ep=8 and the first again for ep=2", expert, gens)
	}

	d, _ := presets(t, "llama3-8b", "h100-32")
	if dm := NewModel(program(d, model.ProgramOptions{})); dm.banked {
		t.Error("llama3-8b's blocks have different signatures")
	}
}
