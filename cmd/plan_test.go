package cmd

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// planJSON is the part of `plan --format json` the tests read; RESULTs are
// kept as generic values so that they compare field by field.
type planJSON struct {
	Model struct {
		Name string `json:"name"`
	} `json:"model"`
	Cluster struct {
		Chips int `json:"chips"`
	} `json:"cluster"`
	Batch struct {
		Sequences int `json:"sequences"`
		SeqLen    int `json:"seq_len"`
		Tokens    int `json:"tokens"`
	} `json:"batch"`
	Search struct {
		Method    string  `json:"method"`
		Evaluated int64   `json:"evaluated"`
		Feasible  int64   `json:"feasible"`
		ElapsedS  float64 `json:"elapsed_s"`
	} `json:"search"`
	Pareto []map[string]any `json:"pareto"`
}

func runPlanJSON(t *testing.T, args ...string) (planJSON, string) {
	t.Helper()
	stdout, stderr, code := run(t, append(args, "--format", "json", "--quiet")...)
	if code != 0 {
		t.Fatalf("plan %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	var p planJSON
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatalf("plan %s: output is not the plan object: %v", strings.Join(args, " "), err)
	}
	return p, stdout
}

// TestPlanFront checks the README's command: a non-empty front, sorted by
// step time, every row fits, no row dominates another, and `plan explain
// --strategy SPEC` reproduces each row exactly.
func TestPlanFront(t *testing.T) {
	clearEnv(t)
	args := []string{"--model", "llama70b", "--cluster", "v5p-256"}
	p, _ := runPlanJSON(t, args...)
	if len(p.Pareto) == 0 {
		t.Fatal("empty Pareto front")
	}
	// v5p-256 is 128 chips: the default batch is the floor, 4Mi tokens.
	if p.Batch.Tokens != p.Batch.Sequences*p.Batch.SeqLen || p.Batch.Sequences != (MinDefaultBatchTokens+p.Batch.SeqLen/2)/p.Batch.SeqLen {
		t.Errorf("batch = %+v, want the default %d tokens in whole sequences", p.Batch, MinDefaultBatchTokens)
	}
	if p.Search.Evaluated <= 0 || p.Search.Feasible <= 0 || p.Search.Feasible > p.Search.Evaluated {
		t.Errorf("search counts = %+v", p.Search)
	}
	num := func(r map[string]any, k string) float64 { return r[k].(float64) }
	for i, r := range p.Pareto {
		if r["fits"] != true {
			t.Errorf("row %d does not fit: %v", i+1, r)
		}
		if i > 0 && num(r, "step_time_s") < num(p.Pareto[i-1], "step_time_s") {
			t.Errorf("row %d is faster than row %d: the front is not sorted by step time", i+1, i)
		}
		for j, o := range p.Pareto {
			ts, ms := num(r, "step_time_s"), num(r, "memory_gb_per_chip")
			to, mo := num(o, "step_time_s"), num(o, "memory_gb_per_chip")
			if i != j && ts <= to && ms <= mo && (ts < to || ms < mo) {
				t.Errorf("row %d (%g s, %g GB) dominates row %d (%g s, %g GB)", i+1, ts, ms, j+1, to, mo)
			}
		}
	}
	for i, r := range p.Pareto {
		spec := r["strategy"].(map[string]any)["spec"].(string)
		ex := []string{"explain", "--model", "llama70b", "--cluster", "v5p-256", "--format", "json",
			"--batch", strconv.Itoa(p.Batch.Sequences), "--seq", strconv.Itoa(p.Batch.SeqLen), "--strategy", spec}
		stdout, stderr, code := run(t, ex...)
		if code != 0 {
			t.Errorf("row %d: plan %s: exit %d: %s", i+1, strings.Join(ex, " "), code, stderr)
			continue
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("explain output is not JSON: %v", err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("row %d: explain --strategy %s does not reproduce the row:\n got %v\nwant %v", i+1, spec, got, r)
		}
	}
}

// TestPlanDeterministic checks that the same input and seed give the same
// bytes apart from search.elapsed_s, for both search methods.
func TestPlanDeterministic(t *testing.T) {
	clearEnv(t)
	elapsed := regexp.MustCompile(`"elapsed_s": [0-9.e+-]+`)
	for _, args := range [][]string{
		{"--model", "llama70b", "--cluster", "v5p-256", "--seed", "3"},
		{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "128", "--search", "exhaustive"},
	} {
		_, a := runPlanJSON(t, args...)
		_, b := runPlanJSON(t, args...)
		a, b = elapsed.ReplaceAllString(a, ""), elapsed.ReplaceAllString(b, "")
		if a != b {
			t.Errorf("plan %s: two runs differ beyond elapsed_s", strings.Join(args, " "))
		}
		ta, _, _ := run(t, args...)
		tb, _, _ := run(t, args...)
		if ta != tb {
			t.Errorf("plan %s: two table outputs differ", strings.Join(args, " "))
		}
	}
}

// TestExplainEPSpansDataAxes explains a Mixtral strategy whose ep share
// (gpu*8) spans both the fsdp (gpu*2) and the dp (gpu*4) part of one axis:
// EP is carved out of FSDP first, then DP (issue 10: it exited 1).
func TestExplainEPSpansDataAxes(t *testing.T) {
	clearEnv(t)
	stdout, stderr, code := run(t, "explain", "--model", "mixtral-8x7b", "--cluster", "h100-64", "--batch", "256", "--seq", "4096",
		"--strategy", "dp=32,fsdp=2,ep=8", "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		StepTimeS   float64 `json:"step_time_s"`
		Collectives []struct {
			Op   string   `json:"op"`
			Axes []string `json:"axes"`
		} `json:"collectives"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	a2a := 0
	for _, c := range r.Collectives {
		if c.Op == "AllToAll" {
			a2a++
			if strings.Join(c.Axes, ",") != "gpu" {
				t.Errorf("AllToAll on %v, want the ep share on gpu", c.Axes)
			}
		}
	}
	if !(r.StepTimeS > 0) || a2a == 0 {
		t.Errorf("step %g s, %d AllToAll kinds", r.StepTimeS, a2a)
	}
}
