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

// TestSolveRelaxes: where nothing fits as the search prunes and prices by
// default, Solve plans MaxText's own way out and says which: fsdp across
// the two slices of 2xv6e-256 for Llama 3.1 405B (the tpu-recipes'
// dcn_fsdp_parallelism=2, fp32 weights), bf16 weights for Llama 3.1 70B on
// v6e-32 (weight_dtype: bfloat16); a fix pinning fp32 weights keeps the
// refusal.
func TestSolveRelaxes(t *testing.T) {
	mt, err := framework.Builtin("maxtext")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model, cluster, fix string
		batch               int
		note, spec          string // "" note: no fit
	}{
		{"llama3-405b", "2xv6e-256", "tp=1,pp=1,cp=1", 512, "fsdp allowed across the 2 slices", "fsdp=512"},
		{"llama3-70b", "v6e-32", "tp=1,pp=1", 64, "planned with weights=bf16", "weights=bf16"},
		{"llama3-70b", "v6e-32", "tp=1,pp=1,weights=fp32", 64, "", ""},
	} {
		m, err := model.Preset(tc.model)
		if err != nil {
			t.Fatal(err)
		}
		c, err := profiles.Parse(tc.cluster)
		if err != nil {
			t.Fatal(err)
		}
		r := Request{Model: m, Cluster: c, Workload: space.Workload{Batch: tc.batch, SeqLen: 8192}, Fix: tc.fix,
			Options: mt.SearchOptions(), Framework: "maxtext"}
		plan, err := Solve(context.Background(), r, search.Settings{Seed: 1}, false)
		if tc.note == "" {
			var nf *search.NoFitError
			if !errors.As(err, &nf) {
				t.Errorf("%s on %s --fix %s: error %v, want no fit", tc.model, tc.cluster, tc.fix, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s on %s: %v", tc.model, tc.cluster, err)
		}
		if len(plan.Notes) != 1 || !strings.Contains(plan.Notes[0], tc.note) {
			t.Errorf("%s on %s: notes %q, want one with %q", tc.model, tc.cluster, plan.Notes, tc.note)
		}
		if spec := plan.Pareto[plan.Recommended].Strategy.Spec; !strings.Contains(spec, tc.spec) {
			t.Errorf("%s on %s: recommended %s, want %s", tc.model, tc.cluster, spec, tc.spec)
		}
	}
}
