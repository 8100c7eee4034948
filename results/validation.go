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

// WriteValidationJSON prints the report of plan validate in the contract's form:
// {"rows": [...], "mape": ..., "skipped": [...]}.
func WriteValidationJSON(w io.Writer, rep runs.Report, cov Coverages) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		runs.Report
		// Coverage is the bands' coverage under leave-one-source-out,
		// CoverageSearched the searched plans' (--searched).
		Coverage         *profiles.CoverageReport `json:"coverage,omitempty"`
		CoverageSearched *profiles.CoverageReport `json:"coverage_searched,omitempty"`
	}{rep, cov.Fixed, cov.Searched})
}

// WriteValidationTable prints plan validate's report: one line per predicted run, the MAPE, the
// skipped runs with their reasons, and the bands' coverage (WriteCoverage) of each report cov holds.
func WriteValidationTable(w io.Writer, rep runs.Report, cov Coverages) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tchip\tchips\tstrategy\tmeasured tok/s/chip\tpredicted\terror\tMFU meas\tMFU pred\tmem GB\toom risk")
	for _, r := range rep.Rows {
		mem := fmt.Sprintf("%.1f", r.MemoryGBPerChip)
		if !r.Fits {
			mem += " !"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.1f\t%.1f\t%+.1f%%\t%.1f%%\t%.1f%%\t%s\t%s\n",
			Label(r.ID), r.Chip, r.Chips, r.Strategy, r.MeasuredTokensPerSPerChip, r.PredictedTokensPerSPerChip,
			100*r.Error, 100*r.MeasuredMFU, 100*r.PredictedMFU, mem, Percent(r.OOMRisk))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nMAPE %.1f%% over %d runs", 100*rep.MAPE, len(rep.Rows))
	// Per chip, in order of first appearance.
	var chips []string
	sum, n := map[string]float64{}, map[string]int{}
	for _, r := range rep.Rows {
		if n[r.Chip] == 0 {
			chips = append(chips, r.Chip)
		}
		sum[r.Chip] += math.Abs(r.Error)
		n[r.Chip]++
	}
	if len(chips) > 1 {
		parts := make([]string, len(chips))
		for i, c := range chips {
			parts[i] = fmt.Sprintf("%s %.1f%% over %d", c, 100*sum[c]/float64(n[c]), n[c])
		}
		fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w, "\nMFU columns use the contract's FLOP count; \"!\" marks a strategy the memory model says does not fit.")
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(w, "\nskipped %d runs:\n", len(rep.Skipped))
		for _, s := range rep.Skipped {
			fmt.Fprintf(w, "  %s: %s\n", Label(s.ID), strings.TrimSpace(s.Reason))
		}
	}
	return cov.write(w)
}

// calibrateJSON is the --format json report: the contract's before_mape,
// after_mape, cv_mape and params (name -> fitted value), and the details.
type calibrateJSON struct {
	Cluster         string             `json:"cluster"`
	Chip            string             `json:"chip"`
	Runs            int                `json:"runs"`
	BeforeMAPE      float64            `json:"before_mape"`
	AfterMAPE       float64            `json:"after_mape"`
	CVMAPE          *float64           `json:"cv_mape"`
	Folds           int                `json:"folds"`
	Params          map[string]float64 `json:"params"`
	Defaults        map[string]float64 `json:"defaults"`
	Parameters      []calibrate.Param  `json:"parameters"`
	Rows            []calibrate.Row    `json:"rows"`
	Warnings        []string           `json:"warnings"`
	Notes           []string           `json:"notes"`
	Skipped         []runs.Skip        `json:"skipped"`
	Scatter         float64            `json:"scatter"`
	HuberK          float64            `json:"huber_k"`
	Evaluations     int                `json:"evaluations"`
	ObjectiveBefore float64            `json:"objective_before"`
	ObjectiveAfter  float64            `json:"objective_after"`
	// Profile is the --out file the fitted profile was written to ("" for none).
	Profile string `json:"profile"`
}

// WriteCalibrationJSON prints plan calibrate's report as one JSON object (out is the
// --out profile file, "" for none); cv_mape is null
// when there were too few runs to cross-validate.
func WriteCalibrationJSON(w io.Writer, rep calibrate.Report, out string) error {
	j := calibrateJSON{
		Cluster: rep.Base.Name, Chip: rep.Base.Chip.Name, Runs: len(rep.Rows),
		BeforeMAPE: rep.BeforeMAPE, AfterMAPE: rep.AfterMAPE, Folds: rep.Folds,
		Params: map[string]float64{}, Defaults: map[string]float64{},
		Parameters: rep.Params, Rows: rep.Rows, Warnings: rep.Warnings, Notes: rep.Notes, Skipped: rep.Skipped,
		Scatter: calibrate.DefaultScatter, HuberK: calibrate.HuberK, Evaluations: rep.Evaluations,
		ObjectiveBefore: rep.ObjectiveBefore, ObjectiveAfter: rep.ObjectiveAfter, Profile: out,
	}
	if !math.IsNaN(rep.CVMAPE) {
		cv := rep.CVMAPE
		j.CVMAPE = &cv
	}
	for _, p := range rep.Params {
		j.Params[p.Name], j.Defaults[p.Name] = p.Value, p.Default
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// WriteCalibrationTable prints plan calibrate's report: one line per run, the MAPEs, the parameters,
// the warnings and notes, and where the profile went.
func WriteCalibrationTable(w io.Writer, rep calibrate.Report, out, runsPath string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tmeasured tok/s/chip\tdefaults\terror\tfitted\terror\tcross-validated\terror")
	for _, r := range rep.Rows {
		cv, cvErr := "-", "-"
		if rep.Folds > 0 {
			cv, cvErr = fmt.Sprintf("%.1f", r.CV), fmt.Sprintf("%+.1f%%", 100*r.CVError)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%+.1f%%\t%.1f\t%+.1f%%\t%s\t%s\n",
			Label(r.ID), r.Measured, r.Before, 100*r.BeforeError, r.After, 100*r.AfterError, cv, cvErr)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nMAPE over %d %s on %s: defaults %.1f%%, fitted %.1f%%", len(rep.Rows), plural(len(rep.Rows), "run", "runs"),
		rep.Base.Chip.Name, 100*rep.BeforeMAPE, 100*rep.AfterMAPE)
	if rep.Folds > 0 {
		fmt.Fprintf(w, ", cross-validated %.1f%% (%d folds: each run predicted by a fit that did not see it)\n", 100*rep.CVMAPE, rep.Folds)
	} else {
		fmt.Fprintf(w, "; too few runs to cross-validate\n")
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "parameter\tbounds\tprior\tdefault\tfitted\tsensitivity\tstatus")
	for _, p := range rep.Params {
		prior := fmt.Sprintf("±%s", calibrate.FormatValue(p.Prior))
		if p.Transform == calibrate.LogLogistic {
			prior = fmt.Sprintf("×%s", calibrate.FormatValue(math.Exp(p.Prior)))
		}
		status := "identified"
		switch {
		case p.Held:
			status = "held at default"
		case !p.Identified:
			status = "not separable"
		}
		if p.AtBound != "" {
			status += ", on its " + p.AtBound + " bound"
		}
		fmt.Fprintf(tw, "%s\t%s to %s\t%s\t%s\t%s\t%.1f%%\t%s\n", p.Name, calibrate.FormatValue(p.Lo), calibrate.FormatValue(p.Hi),
			prior, calibrate.FormatValue(p.Default), calibrate.FormatValue(p.Value), 100*p.Sensitivity, status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "bounds: the physical range of the parameter; prior: the standard deviation of the pull towards the default (× for a factor);\n")
	fmt.Fprintf(w, "sensitivity: the largest change of a run's prediction when the parameter moves ±%.0f%%.\n", 100*calibrate.SensitivityStep)

	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, l := range lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	section("warnings", rep.Warnings)
	section("notes", rep.Notes)
	skipped := make([]string, len(rep.Skipped))
	for i, s := range rep.Skipped {
		skipped[i] = Label(s.ID) + ": " + strings.TrimSpace(s.Reason)
	}
	section(fmt.Sprintf("skipped %d %s", len(rep.Skipped), plural(len(rep.Skipped), "run", "runs")), skipped)

	if out != "" {
		check := "plan validate --cluster " + out
		if runsPath != "" {
			check = "plan validate --runs " + runsPath + " --cluster " + out
		}
		fmt.Fprintf(w, "\nwrote the fitted profile to %s; check it with: %s\n", out, check)
	} else {
		fmt.Fprintln(w, "\nno profile written; add --out FILE to write the fitted cluster YAML.")
	}
	return nil
}

// plural picks the singular or plural word for count n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
