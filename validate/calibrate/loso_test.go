package calibrate

import (
	"fmt"
	"math"
	"testing"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/validate/runs"
)

// losoLayouts are compute-bound layouts on one A100 node: their time is
// mostly matmuls, so matmul_fraction alone sets their throughput.
var losoLayouts = []struct {
	source, model string
	batch, seq    int
	strategy      string
}{
	{"lab-a/one", "llama2-7b", 64, 4096, "fsdp=8,mb=2,recompute=full"},
	{"lab-a/one", "llama2-13b", 64, 4096, "tp=8,mb=4"},
	{"lab-b/two", "llama3-8b", 64, 8192, "fsdp=8,mb=1,recompute=full"},
	{"lab-b/two", "gpt-7.5b", 256, 2048, "dp=2,tp=4,mb=8"},
}

// TestLeaveOneSourceOut makes noise-free runs from the a100-8 defaults
// with matmul_fraction 0.6 instead of 0.77, from two sources. The known
// answer: with the defaults every run is predicted too fast; in sample
// and out of source (each source predicted by a fit on the other alone,
// which sees matmul_fraction just as well) the error falls to near zero.
// A third source alone on h100 has nothing to refit on: its out-of-source
// prediction is exactly the default one, and the report says so.
func TestLeaveOneSourceOut(t *testing.T) {
	base, err := profiles.Parse("a100-8")
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := defaultsOf(base, map[profiles.Tier]bool{profiles.NVLink: true})
	vals := map[string]float64{}
	for _, p := range ps {
		vals[p.Name] = p.Default
	}
	vals["matmul_fraction"] = 0.6
	truthCluster := withValues(t, base, vals)

	var rs []runs.Run
	for i, l := range losoLayouts {
		rs = append(rs, runs.Run{ID: fmt.Sprintf("syn_%d", i), Source: l.source + "@1", Model: l.model, Cluster: "a100-8",
			GlobalBatchSeqs: l.batch, SeqLen: l.seq, Strategy: l.strategy, MeasuredTokensPerS: 1})
	}
	truthRep := runs.Validate(rs, &truthCluster, runs.Options{})
	if len(truthRep.Rows) != len(rs) {
		t.Fatalf("synthetic runs skipped: %v", truthRep.Skipped)
	}
	for i, row := range truthRep.Rows {
		rs[i].MeasuredTokensPerS = row.PredictedTokensPerSPerChip * float64(row.Chips)
	}
	rs = append(rs, runs.Run{ID: "alone", Source: "lab-c/three", Model: "llama3-8b", Cluster: "h100-8",
		GlobalBatchSeqs: 64, SeqLen: 8192, Strategy: "fsdp=8,mb=1,recompute=full", MeasuredTokensPerS: 8 * 3000})

	rep, err := LeaveOneSourceOut(rs, Options{Scatter: syntheticScatter})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != len(rs) || len(rep.Chips) != 2 {
		t.Fatalf("%d rows on %d chips, want %d on 2", len(rep.Rows), len(rep.Chips), len(rs))
	}
	for _, h := range rep.Rows[:len(losoLayouts)] {
		t.Logf("%s: default %+.2f%%, in-sample %+.2f%%, out-of-source %+.2f%%", h.ID, 100*h.DefaultError, 100*h.InSampleError, 100*h.OutOfSourceError)
		if h.DefaultError < 0.1 {
			t.Errorf("%s: default error %+.1f%%, want the defaults' matmul_fraction 0.77 against 0.6 to show (over +10%%)", h.ID, 100*h.DefaultError)
		}
		if !h.Refit || math.Abs(h.OutOfSourceError) > 0.02 || math.Abs(h.InSampleError) > 0.02 {
			t.Errorf("%s: refit %v, in-sample %+.2f%%, out-of-source %+.2f%%; want a refit and both within 2%%", h.ID, h.Refit, 100*h.InSampleError, 100*h.OutOfSourceError)
		}
	}
	alone := rep.Rows[len(rs)-1]
	if alone.Refit || alone.OutOfSourceError != alone.DefaultError || alone.OutOfSource != alone.Default {
		t.Errorf("alone: refit %v, out-of-source %g (%g), default %g (%g); want no refit and the default", alone.Refit,
			alone.OutOfSource, alone.OutOfSourceError, alone.Default, alone.DefaultError)
	}
	if c := rep.Chips[1]; c.Chip != "h100" || c.Note == "" {
		t.Errorf("chip %s note %q: want h100 with a note that one source leaves nothing to refit", c.Chip, c.Note)
	}
	if !(rep.OutOfSourceMAPE < rep.DefaultMAPE) {
		t.Errorf("out-of-source MAPE %.2f%% is not below the defaults' %.2f%%", 100*rep.OutOfSourceMAPE, 100*rep.DefaultMAPE)
	}
}
