package planner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// TestOffloadFallback: Llama 3 8B on one H100 does not fit in HBM (16
// bytes of model state a parameter are 128 GB); DeepSpeed plans it with
// the optimizer state offloaded (96 GB in the host's 250 GB; 6 bytes a
// parameter, 48 GB, left in HBM), saying so, while a framework that keeps
// every state in HBM still reports that nothing fits, a search that does
// not suggest never offloads, and Llama 3 405B on 8 H100s, whose 6.5 TB
// of model state no 8 hosts' 2 TB hold, is not offloaded.
func TestOffloadFallback(t *testing.T) {
	m, _ := model.Preset("llama3-8b")
	c, err := profiles.Load("h100-1")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := framework.Load("deepspeed")
	if err != nil {
		t.Fatal(err)
	}
	r := Request{Model: m, Cluster: c, Workload: space.Workload{Batch: 1, SeqLen: 1024}, Options: ds.SearchOptions(), Top: 1, Framework: "deepspeed", OffloadWhenNothingFits: true}
	plan, err := Solve(context.Background(), r, search.Settings{Suggest: true}, false)
	if err != nil {
		t.Fatalf("Solve: %v", err)
	}
	spec := plan.Pareto[plan.Recommended].Strategy.Spec
	if !strings.Contains(spec, "offload=optimizer") {
		t.Errorf("recommended %s, want the optimizer state offloaded", spec)
	}
	if n := r.OffloadNote(plan); !strings.Contains(n, "nothing fits in HBM without host offload") {
		t.Errorf("OffloadNote = %q", n)
	}
	var nf *search.NoFitError
	if _, err := Solve(context.Background(), r, search.Settings{}, false); !errors.As(err, &nf) {
		t.Errorf("Solve without Suggest = %v, want a NoFitError (no offload fallback)", err)
	}
	big, _ := model.Preset("llama3-405b")
	c8, _ := profiles.Load("h100-8")
	r405 := Request{Model: big, Cluster: c8, Workload: space.Workload{Batch: 8, SeqLen: 1024}, Options: ds.SearchOptions(), Top: 1, Framework: "deepspeed", OffloadWhenNothingFits: true}
	if _, err := Solve(context.Background(), r405, search.Settings{Suggest: true}, false); !errors.As(err, &nf) {
		t.Errorf("Solve of 405B on 8 H100s = %v, want a NoFitError (its states exceed the hosts' memory)", err)
	}
	r.Options.Limits.Offloads = []string{}
	if _, err := Solve(context.Background(), r, search.Settings{Suggest: true}, false); !errors.As(err, &nf) {
		t.Errorf("Solve under a framework without offload = %v, want a NoFitError", err)
	}
}
