package cmd

import (
	"strings"
	"testing"
)

// TestObjective checks which row each --objective recommends on one
// front, and that every output says the rule and the band.
func TestObjective(t *testing.T) {
	clearEnv(t)
	base := []string{"--model", "llama3-8b", "--cluster", "h100-64", "--batch", "64"}
	fastest, _ := runPlanJSON(t, append(base, "--objective", "time")...)
	if fastest.Recommended != 0 || fastest.Recommendation.Objective != "time" {
		t.Fatalf("--objective time recommends row %d (%s); want 0", fastest.Recommended, fastest.Recommendation.Objective)
	}
	front := fastest.Pareto
	step := func(i int) float64 { return front[i]["step_time_s"].(float64) }
	mem := func(i int) float64 { return front[i]["memory_gb_per_chip"].(float64) }

	least, _ := runPlanJSON(t, append(base, "--objective", "memory")...)
	if int(least.Recommended) != len(front)-1 {
		t.Errorf("--objective memory recommends row %d; want the last, %d", least.Recommended, len(front)-1)
	}
	cheapest, _ := runPlanJSON(t, append(base, "--objective", "cost", "--tokens", "1T", "--price", "2")...)
	if cheapest.Recommended != 0 {
		t.Errorf("--objective cost recommends row %d; want the fastest on one cluster, 0", cheapest.Recommended)
	}

	for _, args := range [][]string{base, append(base, "--objective", "balanced")} {
		p, _ := runPlanJSON(t, args...)
		r := p.Recommendation
		if r.Objective != "balanced" || !(r.Band > 0) || !strings.Contains(r.Rule, "the least risk") {
			t.Fatalf("plan %s: recommendation %+v; want balanced with a band", strings.Join(args, " "), r)
		}
		rows := 0
		for i := range front {
			if step(i) <= step(0)*(1+r.Band) {
				rows++
			}
		}
		if r.BandRows != rows || int(p.Recommended) >= rows {
			t.Errorf("band of %d rows, row %d recommended; want %d rows and a row within them", r.BandRows, p.Recommended, rows)
		}
		risk := func(i int) float64 { return front[i]["oom_risk"].(float64) }
		for i := 0; i < rows; i++ {
			if risk(i) <= r.MaxOOMRisk && risk(i) < risk(int(p.Recommended))-0.01 {
				t.Errorf("row %d (risk %g, %g GB) within the band is safer by more than a point than the recommended row %d (risk %g, %g GB)",
					i, risk(i), mem(i), p.Recommended, risk(int(p.Recommended)), mem(int(p.Recommended)))
			}
		}
	}

	// Every format says the rule and marks the band.
	for _, tc := range []struct {
		format string
		want   []string
	}{
		{"table", []string{"recommend balanced: among the strategies within ±", "* recommended (balanced; --objective"}},
		{"md", []string{"| recommend | balanced: among the strategies within ±", "★ recommended, balanced:"}},
		{"csv", []string{",objective,in_band,first,last,spec", ",balanced,true,", ",balanced,false,"}},
		{"html", []string{"<th>recommend</th>", `class="band"`, `data-band="true"`, "Shaded rows are within the model"}},
		{"json", []string{`"recommendation": {`, `"band_rows":`, `"band_basis":`}},
	} {
		stdout, stderr, code := run(t, append(base, "--quiet", "--format", tc.format)...)
		if code != 0 {
			t.Fatalf("--format %s: exit %d: %s", tc.format, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("--format %s lacks %q", tc.format, w)
			}
		}
	}
}

// TestObjectiveTopKeepsRecommended checks that --top prints at least up to
// the recommended row.
func TestObjectiveTopKeepsRecommended(t *testing.T) {
	clearEnv(t)
	p, _ := runPlanJSON(t, "--model", "llama3-8b", "--cluster", "h100-64", "--batch", "64", "--top", "1", "--objective", "memory")
	if p.Recommended < 0 || len(p.Pareto) != int(p.Recommended)+1 {
		t.Errorf("--top 1 --objective memory: %d rows, row %d recommended; want the rows up to the recommended one", len(p.Pareto), p.Recommended)
	}
}
