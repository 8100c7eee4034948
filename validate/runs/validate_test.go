package runs

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/space"
)

// TestValidateDefault runs Validate on the built-in runs and checks every
// expressible run gets a finite positive prediction, in input order. It
// does not pin the MAPE: that is the cost model's business.
func TestValidateDefault(t *testing.T) {
	rs, err := Default()
	if err != nil {
		t.Fatalf("Default() error: %v", err)
	}
	rep := Validate(rs, nil, Options{})
	if got := len(rep.Rows) + len(rep.Skipped); got != len(rs) {
		t.Errorf("Validate reported %d rows and skips for %d runs", got, len(rs))
	}
	expressible := 0
	for _, r := range rs {
		if _, _, _, _, err := r.Plan(nil); err == nil {
			expressible++
		}
	}
	if len(rep.Rows) != expressible {
		for _, s := range rep.Skipped {
			t.Logf("skipped %s: %s", s.ID, s.Reason)
		}
		t.Errorf("Validate predicted %d runs, want all %d expressible ones", len(rep.Rows), expressible)
	}
	order := map[string]int{}
	for i, r := range rs {
		order[r.ID] = i
	}
	sum := 0.0
	for i, row := range rep.Rows {
		if !(row.PredictedTokensPerSPerChip > 0) || math.IsInf(row.PredictedTokensPerSPerChip, 0) {
			t.Errorf("%s: predicted %v tok/s/chip, want finite and positive", row.ID, row.PredictedTokensPerSPerChip)
		}
		if !(row.MeasuredTokensPerSPerChip > 0) {
			t.Errorf("%s: measured %v tok/s/chip, want positive", row.ID, row.MeasuredTokensPerSPerChip)
		}
		if want := row.PredictedTokensPerSPerChip/row.MeasuredTokensPerSPerChip - 1; math.Abs(row.Error-want) > 1e-12 {
			t.Errorf("%s: error %v, want predicted/measured-1 = %v", row.ID, row.Error, want)
		}
		if i > 0 && order[row.ID] < order[rep.Rows[i-1].ID] {
			t.Errorf("row %s comes after %s but precedes it in the input", row.ID, rep.Rows[i-1].ID)
		}
		sum += math.Abs(row.Error)
	}
	if len(rep.Rows) > 0 && math.Abs(rep.MAPE-sum/float64(len(rep.Rows))) > 1e-12 {
		t.Errorf("MAPE = %v, want the mean |error| %v", rep.MAPE, sum/float64(len(rep.Rows)))
	}
}

// TestValidateOverrideOtherChip checks that a --cluster profile on another
// chip skips the runs, with the reason.
func TestValidateOverrideOtherChip(t *testing.T) {
	r := defaultRun(t, "kor22_22b_full_recompute")
	v5e, err := Run{Cluster: "v5e-8"}.ClusterOf(nil)
	if err != nil {
		t.Fatalf("ClusterOf(v5e-8) error: %v", err)
	}
	rep := Validate([]Run{r}, &v5e, Options{})
	if len(rep.Rows) != 0 || len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, "not on the --cluster chip") {
		t.Errorf("Validate(A100 run, v5e override) = %+v, want one skip about the chip", rep)
	}
	if strings.HasPrefix(rep.Skipped[0].Reason, "runs:") {
		t.Errorf("skip reason %q keeps the package prefix", rep.Skipped[0].Reason)
	}
}

// TestReportJSON checks the contract's field names and that an empty
// report encodes lists, not null.
func TestReportJSON(t *testing.T) {
	b, err := json.Marshal(Validate(nil, nil, Options{}))
	if err != nil {
		t.Fatalf("Marshal error: %v", err)
	}
	if got, want := string(b), `{"rows":[],"mape":0,"skipped":[],"by_framework":[],"by_chip":[]}`; got != want {
		t.Errorf("empty report = %s, want %s", got, want)
	}
	b, err = json.Marshal(Row{ID: "x"})
	if err != nil {
		t.Fatalf("Marshal error: %v", err)
	}
	for _, k := range []string{`"id"`, `"measured_tokens_per_s_per_chip"`, `"predicted_tokens_per_s_per_chip"`, `"error"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("row JSON %s lacks %s", b, k)
		}
	}
}

// TestValidateFigures pins the model against the published runs: the mean
// absolute error over every expressible run, per framework profile, and the
// worst rows of DeepSpeed's ZeRO-3 baseline, which only its framework
// profile (synchronous per-tensor fetch over a flat ring) explains. The
// figures it checks are those the closing notes and README report.
func TestValidateFigures(t *testing.T) {
	rs, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	rep := Validate(rs, nil, Options{})
	if rep.MAPE > 0.10 {
		t.Errorf("MAPE over %d runs = %.1f%%, want <= 10%%", len(rep.Rows), 100*rep.MAPE)
	}
	limits := map[string]float64{"megatron": 0.05, "deepspeed": 0.20, "maxtext": 0.15, "pytorch": 0.15, "torchtitan": 0.20}
	for _, g := range rep.ByFramework {
		if lim, ok := limits[g.Name]; !ok || g.MAPE > lim {
			t.Errorf("framework %s: MAPE %.1f%% over %d rows, want <= %.0f%%", g.Name, 100*g.MAPE, g.Rows, 100*lim)
		}
	}
	for _, row := range rep.Rows {
		if strings.Contains(row.ID, "zero3") && math.Abs(row.Error) > 0.20 {
			t.Errorf("%s: error %+.1f%%, want within 20%%", row.ID, 100*row.Error)
		}
	}
}

// TestUnpublishedSettings checks that a published row that leaves out a
// setting the run needed to fit is predicted with one that lets its
// layout fit, and says so: the activation offload Megatron-Bridge's tables
// have no column for (Llama 3 70B under Megatron-FSDP over 64 GB200 with 2
// sequences of 8,192 tokens per micro-batch needs far more than 186 GB
// without it; its recipe keeps 40 layers' activations in the Grace
// host's memory, bridgeActOffload), MaxText's bf16 weights, which
// only the tpu-recipes config name says (Llama 3.1 70B on v6e-32: 35 GB
// with fp32 weights against 33.6 usable), and the pipeline layout of a
// DeepSeek-V3 row (its recipe's or its notes', pipelineLayout).
func TestUnpublishedSettings(t *testing.T) {
	f, err := os.Open("testdata/published-runs-2.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Run{}
	for _, r := range all {
		byID[r.ID] = r
	}
	for _, tc := range []struct {
		id, note string
		chosen   func(space.Strategy) bool
	}{
		{"mb2511_gb200_llama3_70b_fp8cs", "act_offload=40: the release's performance recipe", func(s space.Strategy) bool {
			return s.ActOffload == 40 && s.Recompute == space.RecomputeNone
		}},
		{"tpurec_v6e_llama31_70b_32", "nothing fits with fp32 weights", func(s space.Strategy) bool { return s.BF16Weights() }},
		{"mb2511_b200_dsv3_fp8mx", "last=1: the pipeline layout Et*4|(t*4|)*14tmL", func(s space.Strategy) bool {
			return s.Split == space.Split{Last: 1}
		}},
		{"mlm_dsv3_gb200_mxfp8_final", "first=7,last=6: the pipeline layout Et|(tt|)*30L", func(s space.Strategy) bool {
			return s.Split == space.Split{First: 7, Last: 6} && s.Schedule == space.Interleaved && s.V == 4
		}},
	} {
		r, ok := byID[tc.id]
		if !ok {
			t.Fatalf("no row %s", tc.id)
		}
		rep := Validate([]Run{r}, nil, Options{})
		if len(rep.Rows) != 1 {
			t.Fatalf("%s: rows %d, skipped %v", tc.id, len(rep.Rows), rep.Skipped)
		}
		row := rep.Rows[0]
		s, err := space.Parse(row.Strategy)
		if err != nil {
			t.Fatal(err)
		}
		if !tc.chosen(s) || !row.Fits || !strings.Contains(row.Note, tc.note) {
			t.Errorf("%s: strategy %s, fits %v, note %q; want the setting that fits, and a note with %q", tc.id, row.Strategy, row.Fits, row.Note, tc.note)
		}
	}
}
