package sweep

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/results"
)

// TestSweepTraining checks that a sweep's training section reaches every
// cell's plan as plan --tokens --price --goodput puts it there: the days
// to train are tokens over tokens per second, the cost chip-hours times
// the price, and every row has its goodput and energy; and that the
// section is part of the sweep's identity.
func TestSweepTraining(t *testing.T) {
	cfg, err := ParseConfig("sweep.yaml", []byte(`models: [llama3-8b]
clusters: [h100-8]
batches: [16]
seqs: [4096]
search: {top: 1}
training:
  tokens: 1T
  price: 2
  goodput: true
  restart_minutes: 5
`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Expand(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := (&Solver{Grid: g, Workers: 1}).Solve(context.Background(), g.Cells[0])
	if err != nil || rec.Error != "" {
		t.Fatalf("%v %s", err, rec.Error)
	}
	var p results.Plan
	if err := json.Unmarshal(rec.Plan, &p); err != nil {
		t.Fatal(err)
	}
	if p.Training == nil || p.Training.Tokens != 1e12 || p.Training.Budget == nil || p.Training.Budget.RestartMinutes != 5 {
		t.Fatalf("training %+v", p.Training)
	}
	for i, r := range p.Pareto {
		days := 1e12 / r.TokensPerS / 86400 // tokens over tokens per second, in days
		if r.Days == nil || math.Abs(*r.Days/days-1) > 1e-9 {
			t.Errorf("row %d: days %v, want %.6g", i+1, r.Days, days)
		}
		if r.Cost == nil || r.ChipHours == nil || math.Abs(*r.Cost/(*r.ChipHours*2)-1) > 1e-9 {
			t.Errorf("row %d: cost %v for %v chip-hours at 2", i+1, r.Cost, r.ChipHours)
		}
		if r.Goodput == nil || !(r.Goodput.Fraction > 0 && r.Goodput.Fraction < 1) || r.Energy == nil || !(r.Energy.MWh > 0) {
			t.Errorf("row %d: goodput %+v, energy %+v", i+1, r.Goodput, r.Energy)
		}
	}
	plain := cfg
	plain.Training = Training{}
	gp, err := Expand(plain)
	if err != nil {
		t.Fatal(err)
	}
	if NewManifest(g).Fingerprint == NewManifest(gp).Fingerprint {
		t.Error("a sweep with a training section has the fingerprint of one without")
	}
}

// TestSweepTrainingRefused lists the training sections a sweep refuses,
// each with the key it names.
func TestSweepTrainingRefused(t *testing.T) {
	for _, tc := range []struct {
		training Training
		want     string
	}{
		{Training{Tokens: "lots"}, "training.tokens"},
		{Training{Price: 2}, "need training.tokens"},
		{Training{Tokens: "1T", Price: -1}, "training.price"},
		{Training{Tokens: "1T", PUE: 1.2}, "need training.goodput"},
		{Training{Tokens: "1T", Goodput: true, PUE: 0.5}, "training.pue"},
		{Training{Tokens: "1T", Goodput: true, RestartMinutes: -3}, "training.restart_minutes"},
	} {
		c := Config{Models: []string{"llama3-8b"}, Clusters: []string{"h100-8"}, Batches: []int{16}, Training: tc.training}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %q", tc.training, err, tc.want)
		}
	}
}
