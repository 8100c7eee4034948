package results

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/validate/steps"
)

// WriteStepsJSON prints the report of plan validate --steps as one JSON
// object: {"rows": [...], "frameworks": [...], "overall": {...}} (the
// fields are documented in package steps).
func WriteStepsJSON(w io.Writer, rep steps.Report, cov *profiles.CoverageReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		steps.Report
		// Coverage is the single-chip band's coverage, each model left out.
		Coverage *profiles.CoverageReport `json:"coverage,omitempty"`
	}{rep, cov})
}

// WriteStepsTable prints the report of plan validate --steps: one line per
// measured step (its line in the file, id, framework, measured and
// predicted step time and memory with their errors, and the predicted and
// measured fit verdicts, "!" marking a wrong one), then the MAPEs of each
// framework profile and of all rows, and the single-chip band's coverage
// (WriteCoverage) when cov is not nil.
func WriteStepsTable(w io.Writer, rep steps.Report, cov *profiles.CoverageReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "line\tid\tframework\tmeasured s\tpredicted s\terror\tmeasured GB\tpredicted GB\terror\tfits pred/meas\toom risk")
	for _, r := range rep.Rows {
		measStep, stepErr, measMem, memErr := "-", "-", "-", "-"
		if r.MeasuredStepS != nil && r.StepError != nil {
			measStep, stepErr = fmt.Sprintf("%.4f", *r.MeasuredStepS), fmt.Sprintf("%+.1f%%", 100**r.StepError)
		}
		if r.MeasuredMemoryGB != nil && r.MemoryError != nil {
			measMem, memErr = fmt.Sprintf("%.1f", *r.MeasuredMemoryGB), fmt.Sprintf("%+.1f%%", 100**r.MemoryError)
		}
		fits := yesNo(r.PredictedFits) + "/" + yesNo(r.MeasuredFits)
		if !r.VerdictOK {
			fits += " !"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.4f\t%s\t%s\t%.1f\t%s\t%s\t%s\n",
			r.Line, r.ID, r.Framework, measStep, r.PredictedStepS, stepErr, measMem, r.PredictedMemoryGB, memErr, fits, Percent(r.OOMRisk))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range rep.Frameworks {
		writeStepsSummary(tw, s.Framework, s)
	}
	writeStepsSummary(tw, "all", rep.Overall)
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, "error = predicted/measured - 1; MAPE over the steps that ran; memory is the peak allocated, in 10^9 bytes; \"!\" marks a wrong fit verdict."); err != nil {
		return err
	}
	return WriteCoverage(w, cov)
}

// writeStepsSummary prints one summary line under label.
func writeStepsSummary(w io.Writer, label string, s steps.Summary) {
	fmt.Fprintf(w, "%s\tstep-time MAPE %.1f%%\tmemory MAPE %.1f%%\tsteps that ran: %d of %d\twrong fit verdicts: %d\n",
		label, 100*s.StepMAPE, 100*s.MemoryMAPE, s.Ran, s.Rows, s.WrongVerdicts)
}

// yesNo writes a verdict.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
