package cmd

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/planner"
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
	Recommended    recIndex `json:"recommended"`
	Recommendation struct {
		Objective  string  `json:"objective"`
		Rule       string  `json:"rule"`
		Band       float64 `json:"band"`
		BandRows   int     `json:"band_rows"`
		MaxOOMRisk float64 `json:"max_oom_risk"`
	} `json:"recommendation"`
	Pareto []map[string]any `json:"pareto"`
}

// recIndex reads the contract's "recommended": {"rank", "rule"} as the
// recommended row's index in pareto (rank - 1), refusing a rank without
// its rule.
type recIndex int

func (r *recIndex) UnmarshalJSON(data []byte) error {
	var v struct {
		Rank *int    `json:"rank"`
		Rule *string `json:"rule"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if v.Rank == nil || v.Rule == nil {
		return fmt.Errorf("recommended %s lacks rank or rule", data)
	}
	if *v.Rank > 0 && *v.Rule == "" {
		return fmt.Errorf("recommended %s has a rank but no rule", data)
	}
	*r = recIndex(*v.Rank - 1)
	return nil
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
	if p.Batch.Tokens != p.Batch.Sequences*p.Batch.SeqLen || p.Batch.Sequences != (planner.MinDefaultBatchTokens+p.Batch.SeqLen/2)/p.Batch.SeqLen {
		t.Errorf("batch = %+v, want the default %d tokens in whole sequences", p.Batch, planner.MinDefaultBatchTokens)
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
		// explain adds the memory's breakdown by part, which plan rows leave out.
		if mem, ok := got["memory"].(map[string]any); !ok || mem["parts"] == nil {
			t.Errorf("row %d: explain lists no memory parts", i+1)
		} else {
			delete(mem, "parts")
		}
		// A plan's row carries the searched band (the search's pick
		// included), explain the fixed strategy's: both have one.
		for _, k := range []string{"step_time_s_range", "step_time_s_range_95", "tokens_per_s_range"} {
			if got[k] == nil || r[k] == nil {
				t.Errorf("row %d: %s missing (explain %v, plan %v)", i+1, k, got[k], r[k])
			}
			delete(got, k)
			delete(r, k)
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

// TestExplainDeepSeekMLA explains DeepSeek-V3 on h800-2048 in its published
// layout (pp=16, ep=64, zero-1 over dp; arXiv:2412.19437 §3.2): the
// program shows multi-head latent attention at its own widths and the
// multi-token-prediction module; with tensor and sequence parallelism the
// up-projections all-gather the latents, not the residual stream (issue 13).
func TestExplainDeepSeekMLA(t *testing.T) {
	clearEnv(t)
	args := []string{"explain", "--model", "deepseek-v3", "--cluster", "h800-2048", "--batch", "15360", "--seq", "4096"}
	stdout, stderr, code := run(t, append(args, "--strategy", "dp=128,zero=1,pp=16,ep=64")...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, op := range []string{
		"xn[B_{dp}, S, D] · Wdq[D, Cq] -> cq[B_{dp}, S, Cq]",
		"q_norm(cq[B_{dp}, S, Cq])",
		"cqn[B_{dp}, S, Cq] · Wuq[Cq, A, Dqk] -> q[B_{dp}, S, A, Dqk]",
		"xn[B_{dp}, S, D] · Wdkv[D, Ckv] -> ckv[B_{dp}, S, Ckv]",
		"ckvn[B_{dp}, S, Ckv] · Wukv[Ckv, A, Dkv] -> kv[B_{dp}, S, A, Dkv]",
		"xn[B_{dp}, S, D] · Wkr[D, Dr] -> k_rope[B_{dp}, S, Dr]",
		"q[B_{dp}, S, A, Dqk] · k[B_{dp}, T, A, Dqk] -> P[B_{dp}, A, S, T]",
		"P[B_{dp}, A, S, T] · v[B_{dp}, T, A, Dv] -> o[B_{dp}, S, A, Dv]",
		"o[B_{dp}, S, A, Dv] · Wo[A, Dv, D] -> y[B_{dp}, S, D]",
		"eh[B_{dp}, S, D2] · Wmtp[D2, D] -> x[B_{dp}, S, D]",
	} {
		if !strings.Contains(stdout, op) {
			t.Errorf("explain does not show %s", op)
		}
	}
	stdout, stderr, code = run(t, append(args, "--strategy", "dp=64,tp=2,zero=1,pp=16,ep=64", "--format", "json")...)
	if code != ExitOK {
		t.Fatalf("tp=2: exit %d: %s", code, stderr)
	}
	var r struct {
		Collectives []struct {
			Op   string   `json:"op"`
			Axes []string `json:"axes"`
			Why  string   `json:"why"`
		} `json:"collectives"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, c := range r.Collectives {
		for _, want := range []string{"q_up: gather cqn", "kv_up: gather ckvn"} {
			if strings.HasPrefix(c.Why, want) && c.Op == "AllGather" && strings.Join(c.Axes, ",") == "gpu" {
				found[want] = true
			}
		}
		if strings.HasPrefix(c.Why, "q_up: gather xn") || strings.HasPrefix(c.Why, "kv_down: gather xn") || strings.HasPrefix(c.Why, "q_down: gather xn") {
			t.Errorf("MLA gathers the residual stream: %s", c.Why)
		}
	}
	if len(found) != 2 {
		t.Errorf("latent all-gathers over tp found: %v, want q_up's and kv_up's", found)
	}
}

// TestModelsJSONMLA checks the model JSON of an MLA model with an MTP
// module: the mla object, mtp_layers and mtp_params (DeepSeek-V3: 3·7168 +
// 2·7168² + one MoE layer of 11,507,286,016 = 11,610,067,968, apart from
// params).
func TestModelsJSONMLA(t *testing.T) {
	clearEnv(t)
	stdout, stderr, code := run(t, "models", "--format", "json", "deepseek-v3")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []struct {
		Params    int64 `json:"params"`
		MTPLayers int   `json:"mtp_layers"`
		MTPParams int64 `json:"mtp_params"`
		MLA       *struct {
			QLoRARank     int `json:"q_lora_rank"`
			KVLoRARank    int `json:"kv_lora_rank"`
			QKNopeHeadDim int `json:"qk_nope_head_dim"`
			QKRopeHeadDim int `json:"qk_rope_head_dim"`
			VHeadDim      int `json:"v_head_dim"`
		} `json:"mla"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got) != 1 {
		t.Fatalf("output %q: %v", stdout, err)
	}
	m := got[0]
	if m.Params != 671026404352 || m.MTPLayers != 1 || m.MTPParams != 11610067968 || m.MLA == nil ||
		m.MLA.QLoRARank != 1536 || m.MLA.KVLoRARank != 512 || m.MLA.QKNopeHeadDim != 128 || m.MLA.QKRopeHeadDim != 64 || m.MLA.VHeadDim != 128 {
		t.Errorf("deepseek-v3 JSON %+v (mla %+v)", m, m.MLA)
	}
}
