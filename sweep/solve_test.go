package sweep

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/results"
)

func TestSolver(t *testing.T) {
	g, err := Expand(Config{
		Models: []string{"llama3-8b"}, Clusters: []string{"h100-8", "v5e-8"}, Batches: []int{16}, Seqs: []int{4096},
		Fix: []string{"", "tp=3"}, Search: Search{Method: "auto", Seed: 1, Top: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &Solver{Grid: g, Workers: 1}
	for _, tc := range []struct {
		cell      Cell
		wantError string
	}{
		{Cell{"llama3-8b", "h100-8", 16, 4096, ""}, ""},
		{Cell{"llama3-8b", "h100-8", 16, 4096, "tp=3"}, "cannot search llama3-8b on h100-8"},
		{Cell{"llama3-8b", "v5e-8", 16, 4096, ""}, "does not fit"},
	} {
		t.Run(tc.cell.String(), func(t *testing.T) {
			rec, err := s.Solve(context.Background(), tc.cell)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Cell != tc.cell {
				t.Errorf("record of cell %s", rec.Cell)
			}
			if tc.wantError != "" {
				if !strings.Contains(rec.Error, tc.wantError) || rec.Plan != nil {
					t.Errorf("record %+v, want error %q", rec, tc.wantError)
				}
				return
			}
			var p results.Plan
			if err := json.Unmarshal(rec.Plan, &p); err != nil {
				t.Fatal(err)
			}
			// --top 2 prints at least up to the recommended row.
			if rec.Error != "" || len(p.Pareto) != max(2, p.Recommended+1) || p.Search.FrontSize < 2 || p.Recommended < 0 ||
				p.Recommendation == nil || !p.Recommendation.InBand(p.Recommended) || p.Batch.SeqLen != 4096 {
				t.Errorf("plan %+v", p)
			}
		})
	}
	if _, err := s.Solve(context.Background(), Cell{"llama3-8b", "h100-16", 16, 4096, ""}); err == nil {
		t.Error("a cell outside the grid was solved")
	}
}

// TestSolverObjective checks that the sweep's search.objective chooses each
// cell's recommended row as plan's --objective does.
func TestSolverObjective(t *testing.T) {
	for _, tc := range []struct {
		objective string
		want      func(p *results.Plan) bool
	}{
		{"time", func(p *results.Plan) bool {
			// The fastest row within the out-of-memory risk allowed: every
			// faster row is above it.
			r := p.Recommendation
			if p.Recommended < 0 || p.Pareto[p.Recommended].OOMRisk > r.MaxOOMRisk {
				return false
			}
			for _, row := range p.Pareto[:p.Recommended] {
				if row.OOMRisk <= r.MaxOOMRisk {
					return false
				}
			}
			return true
		}},
		{"memory", func(p *results.Plan) bool { return p.Recommended == len(p.Pareto)-1 }},
	} {
		g, err := Expand(Config{Models: []string{"llama3-8b"}, Clusters: []string{"h100-8"}, Batches: []int{16}, Seqs: []int{4096},
			Search: Search{Method: "auto", Seed: 1, Objective: tc.objective}})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := (&Solver{Grid: g, Workers: 1}).Solve(context.Background(), Cell{"llama3-8b", "h100-8", 16, 4096, ""})
		if err != nil {
			t.Fatal(err)
		}
		var p results.Plan
		if err := json.Unmarshal(rec.Plan, &p); err != nil {
			t.Fatal(err)
		}
		if p.Recommendation == nil || p.Recommendation.Objective != tc.objective || !tc.want(&p) || len(p.Pareto) < 2 {
			t.Errorf("objective %s: row %d of %d recommended (%+v)", tc.objective, p.Recommended, len(p.Pareto), p.Recommendation)
		}
	}
}
