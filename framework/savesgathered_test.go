package framework

import "testing"

// TestSavesGathered checks that every built-in profile whose tensor
// parallelism is a DTensor plan (cost.Comm.TPPlan, whose backward pass
// reads the kept all-gathered input) has its program keep that input
// whole over tp (model.ProgramOptions.SavesGathered), in its sharded
// variant too, and that the others keep the shard: the cost and memory
// models read the same saving.
func TestSavesGathered(t *testing.T) {
	plans := 0
	for _, name := range Names() {
		p, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		o := p.SearchOptions()
		if o.Program.SavesGathered != p.Comm.TPPlan {
			t.Errorf("%s: SavesGathered %v, TPPlan %v", name, o.Program.SavesGathered, p.Comm.TPPlan)
		}
		if o.ShardedProgram != nil && o.ShardedProgram.SavesGathered != p.Comm.TPPlan {
			t.Errorf("%s: sharded SavesGathered %v, TPPlan %v", name, o.ShardedProgram.SavesGathered, p.Comm.TPPlan)
		}
		if p.Comm.TPPlan {
			plans++
		}
	}
	if plans == 0 {
		t.Error("no built-in profile runs a DTensor plan; torchtitan does")
	}
}
