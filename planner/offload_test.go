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

// TestOffloadFallback: Llama 3 8B on one 40 GB A100 does not fit in HBM
// (16 bytes of model state a parameter are 128 GB); DeepSpeed plans it
// with the optimizer state and then the parameters offloaded, saying so,
// while a framework that keeps every state in HBM still reports that
// nothing fits, and a search that does not suggest never offloads.
func TestOffloadFallback(t *testing.T) {
	m, _ := model.Preset("llama3-8b")
	c, err := profiles.Load("a100-40gb-1")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := framework.Load("deepspeed")
	if err != nil {
		t.Fatal(err)
	}
	r := Request{Model: m, Cluster: c, Workload: space.Workload{Batch: 1, SeqLen: 1024}, Options: ds.SearchOptions(), Top: 1, Framework: "deepspeed"}
	plan, err := Solve(context.Background(), r, search.Settings{Suggest: true}, false)
	if err != nil {
		t.Fatalf("Solve: %v", err)
	}
	spec := plan.Pareto[plan.Recommended].Strategy.Spec
	if !strings.Contains(spec, "offload=params+optimizer") {
		t.Errorf("recommended %s, want params+optimizer offload (the optimizer state alone leaves 16 GB of weights and gradients with the activations)", spec)
	}
	if n := r.OffloadNote(plan); !strings.Contains(n, "nothing fits in HBM without host offload") {
		t.Errorf("OffloadNote = %q", n)
	}
	var nf *search.NoFitError
	if _, err := Solve(context.Background(), r, search.Settings{}, false); !errors.As(err, &nf) {
		t.Errorf("Solve without Suggest = %v, want a NoFitError (no offload fallback)", err)
	}
	r.Options.Limits.Offloads = []string{}
	if _, err := Solve(context.Background(), r, search.Settings{Suggest: true}, false); !errors.As(err, &nf) {
		t.Errorf("Solve under a framework without offload = %v, want a NoFitError", err)
	}
}
