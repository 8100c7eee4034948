package results

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/validate/calibrate"
	"github.com/meshplan/meshplan/validate/runs"
)

// publishedJSON is plan validate's JSON report for a published-runs-2 or
// published-memory file: the runs.PublishedReport fields and the
// leave-one-source-out time errors.
type publishedJSON struct {
	runs.PublishedReport
	LeaveOneSourceOut calibrate.SourceReport `json:"leave_one_source_out"`
	// Coverage is the 80% and 95% intervals' coverage under
	// leave-one-source-out (WriteCoverage), absent without time rows;
	// CoverageSearched the searched plans' (Coverages.Searched), absent
	// without --searched.
	Coverage         *profiles.CoverageReport `json:"coverage,omitempty"`
	CoverageSearched *profiles.CoverageReport `json:"coverage_searched,omitempty"`
}

// WritePublishedJSON prints plan validate's report of a published-runs-2
// or published-memory file as one JSON object (docs/contract.md).
func WritePublishedJSON(w io.Writer, rep runs.PublishedReport, loso calibrate.SourceReport, cov Coverages) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(publishedJSON{PublishedReport: rep, LeaveOneSourceOut: loso, Coverage: cov.Fixed, CoverageSearched: cov.Searched})
}

// WritePublishedTable prints plan validate's report of a published-runs-2
// or published-memory file: one line per posable row, the errors per
// source, chip and framework with the leave-one-source-out time error
// beside the in-sample one, the headline, and one line per row that is
// not posable with the planner's reason; then the bands' coverage
// (WriteCoverage) of each report cov holds.
func WritePublishedTable(w io.Writer, rep runs.PublishedReport, loso calibrate.SourceReport, cov Coverages) error {
	fmt.Fprintf(w, "%s: %d rows, %d posable, %d not posable\n\n", rep.Format,
		len(rep.Rows)+len(rep.NotPosable), len(rep.Rows), len(rep.NotPosable))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tframework\tchip\tchips\tstrategy\tmeasured tok/s/chip\tpredicted\terror\tmeasured GiB\tpredicted GiB\terror\toom\tfits\toom risk")
	for _, r := range rep.Rows {
		meas, timeErr := "-", "-"
		if r.TimeError != nil {
			meas, timeErr = fmt.Sprintf("%.1f", r.MeasuredTokensPerSPerChip), fmt.Sprintf("%+.1f%%", 100**r.TimeError)
		}
		peak, memErr := "-", "-"
		if r.MeasuredPeakBytes > 0 {
			peak = fmt.Sprintf("%.1f", r.MeasuredPeakBytes/(1<<30))
		}
		if r.MemoryError != nil {
			memErr = fmt.Sprintf("%+.1f%%", 100**r.MemoryError)
		}
		oom := "-"
		if r.OOM != nil {
			oom = map[bool]string{true: "yes", false: "no"}[*r.OOM]
		}
		fits := map[bool]string{true: "yes", false: "no"}[r.Fits]
		if r.FitRight != nil && !*r.FitRight {
			fits += " (wrong)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%.1f\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\n", Label(r.ID), r.Framework, r.Chip, r.Chips,
			r.Strategy, meas, r.PredictedTokensPerSPerChip, timeErr, peak, r.PredictedPeakBytes/(1<<30), memErr, oom, fits, Percent(r.OOMRisk))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	out := map[string]calibrate.HeldOut{}
	for _, h := range loso.Rows {
		out[h.ID] = h
	}
	source := map[string]string{}
	chip := map[string]string{}
	framework := map[string]string{}
	for _, r := range rep.Rows {
		source[r.ID], chip[r.ID], framework[r.ID] = r.Source, r.Chip, r.Framework
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "group\tn\ttime n\ttime MAPE\tbias\tin-sample\tleave-one-source-out\tmemory n\tmemory MAPE\tfit right\tfit wrong")
	line := func(kind string, s runs.Summary, key map[string]string) {
		in, lo := heldOutMAPE(loso.Rows, func(h calibrate.HeldOut) bool {
			return s.Name == "all" && key == nil || key != nil && key[h.ID] == s.Name
		})
		fmt.Fprintf(tw, "%s %s\t%d\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t%d\n", kind, s.Name, s.Rows, s.TimeRows,
			pct(s.TimeMAPE, s.TimeRows), signedPct(s.TimeBias, s.TimeRows), in, lo, s.MemoryRows, pct(s.MemoryMAPE, s.MemoryRows), s.FitRight, s.FitWrong)
	}
	for _, s := range rep.BySource {
		line("source", s, source)
	}
	for _, s := range rep.ByChip {
		line("chip", s, chip)
	}
	for _, s := range rep.ByFramework {
		line("framework", s, framework)
	}
	line("", rep.All, nil)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "time MAPE and bias: default coefficients; in-sample: coefficients fitted per chip on every run; leave-one-source-out: fitted without the run's source.")

	if len(loso.Rows) > 0 {
		fmt.Fprintf(w, "\nheadline: time MAPE %.1f%% leave-one-source-out over %d runs (in-sample %.1f%%, defaults %.1f%%)\n",
			100*loso.OutOfSourceMAPE, len(loso.Rows), 100*loso.InSampleMAPE, 100*loso.DefaultMAPE)
		for _, c := range loso.Chips {
			if c.Note != "" {
				fmt.Fprintf(w, "  %s: %s\n", c.Chip, c.Note)
			}
		}
	} else if rep.All.TimeRows == 0 {
		fmt.Fprintln(w, "\nno time rows: no coefficient is fitted, so there is no leave-one-source-out error.")
	} else {
		fmt.Fprintln(w, "\nno leave-one-source-out error: --cluster fixes the coefficients, so none is refitted.")
	}

	if len(rep.NotPosable) > 0 {
		fmt.Fprintf(w, "\nnot posable, %d %s:\n", len(rep.NotPosable), plural(len(rep.NotPosable), "row", "rows"))
		for _, s := range rep.NotPosable {
			fmt.Fprintf(w, "  %s: %s\n", Label(s.ID), strings.TrimSpace(s.Reason))
		}
	}
	return cov.write(w)
}

// heldOutMAPE returns the in-sample and leave-one-source-out MAPEs of the
// rows in, formatted, or "-" when none is.
func heldOutMAPE(rows []calibrate.HeldOut, in func(calibrate.HeldOut) bool) (string, string) {
	n, sumIn, sumOut := 0, 0.0, 0.0
	for _, h := range rows {
		if in(h) {
			n++
			sumIn += math.Abs(h.InSampleError)
			sumOut += math.Abs(h.OutOfSourceError)
		}
	}
	if n == 0 {
		return "-", "-"
	}
	return pct(sumIn/float64(n), n), pct(sumOut/float64(n), n)
}

// pct formats a fraction as a percentage, or "-" for an empty group.
func pct(x float64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// signedPct formats a fraction as a signed percentage, or "-" for an empty group.
func signedPct(x float64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}
