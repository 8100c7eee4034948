package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/search/calibrate"
	"github.com/meshplan/meshplan/search/runs"
)

// newCalibrateCommand builds `plan calibrate`: fit a chip's cost-model
// coefficients to measured runs and write the fitted cluster profile. The
// root registers it with root.AddCommand(newCalibrateCommand(a)).
func newCalibrateCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "calibrate --runs FILE --cluster NAME_OR_FILE [--out profile.yaml]",
		Short: "Fit a chip's cost-model coefficients to measured runs",
		Long: `Fit the cost model's coefficients for the chip of --cluster to the measured
runs of --runs (a runs file as plan validate takes; default: the built-in
published runs) and report the fit. Runs on other chips are ignored.

Each run's strategy is fixed once with the cluster's own coefficients (the
fastest micro-batch that fits, when the run does not publish one); then
gonum's Nelder-Mead minimises the mean squared log error of the predicted
throughput, with a small pull towards the defaults, over: matmul_fraction,
matmul_half_flops, hbm_fraction, overlap_fraction and, for each link tier of
the cluster the runs use, its efficiency and latency_s. Fractions are fitted
through a logistic transform and scales through exp, so every value stays
in its range.

The report gives each run's measured and predicted tokens/s per chip with
the defaults, with the fit, and cross-validated (k = min(5, runs) folds: each
run predicted by a fit that did not see it), the three MAPEs, the fitted
coefficients, and warnings for coefficients the runs cannot identify (held at
their defaults) or cannot separate from the others.

--out writes the fitted profile as a cluster YAML file that --cluster
accepts, e.g. plan validate --runs FILE --cluster fitted.yaml or
plan --model M --cluster fitted.yaml.`,
		Example: `  plan calibrate --runs my-runs.csv --cluster a100-16 --out a100-fitted.yaml
  plan validate --runs my-runs.csv --cluster a100-fitted.yaml
  plan calibrate --cluster a100-16 --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := cmd.Flags().GetString("runs")
			if err != nil {
				return err
			}
			return a.runCalibrate(path)
		},
	}
	cmd.Flags().String("runs", "", "a runs `file` (CSV); default: the built-in published runs")
	cmd.Flags().String("cluster", "", "the base cluster `name` or YAML file: its chip's runs are fitted, its coefficients are the defaults")
	return cmd
}

// runCalibrate reads the runs and the base cluster, fits, prints the
// report to stdout and writes the profile to --out.
func (a *app) runCalibrate(path string) error {
	if a.cfg.Cluster == "" {
		return badInputf("--cluster is required: the cluster (e.g. a100-16 or a YAML file) whose chip the runs are fitted for")
	}
	base, err := loadCluster(a.cfg.Cluster)
	if err != nil {
		return err
	}
	rs, err := readRuns(path)
	if err != nil {
		return err
	}
	_, co := modelOptions()
	rep, err := calibrate.Calibrate(rs, base, calibrate.Options{Cost: co})
	if errors.Is(err, calibrate.ErrNoRuns) {
		return badInput(err)
	}
	if err != nil {
		return err
	}
	if a.cfg.Out != "" {
		data, err := calibrate.ProfileYAML(rep)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(a.cfg.Out, data); err != nil {
			return err
		}
	}
	var render func(io.Writer) error
	if a.cfg.Format == formatJSON {
		render = func(w io.Writer) error { return writeCalibrateJSON(w, rep, a.cfg.Out) }
	} else {
		render = func(w io.Writer) error { return writeCalibrateTable(w, rep, a.cfg.Out, path) }
	}
	// --out names the profile here, so the report always goes to stdout.
	var b strings.Builder
	if err := render(&b); err != nil {
		return err
	}
	if _, err := io.WriteString(a.stdout, b.String()); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	return nil
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
	Lambda          float64            `json:"lambda"`
	Evaluations     int                `json:"evaluations"`
	ObjectiveBefore float64            `json:"objective_before"`
	ObjectiveAfter  float64            `json:"objective_after"`
	// Profile is the --out file the fitted profile was written to ("" for none).
	Profile string `json:"profile"`
}

// writeCalibrateJSON prints the report as one JSON object; cv_mape is null
// when there were too few runs to cross-validate.
func writeCalibrateJSON(w io.Writer, rep calibrate.Report, out string) error {
	j := calibrateJSON{
		Cluster: rep.Base.Name, Chip: rep.Base.Chip.Name, Runs: len(rep.Rows),
		BeforeMAPE: rep.BeforeMAPE, AfterMAPE: rep.AfterMAPE, Folds: rep.Folds,
		Params: map[string]float64{}, Defaults: map[string]float64{},
		Parameters: rep.Params, Rows: rep.Rows, Warnings: rep.Warnings, Notes: rep.Notes, Skipped: rep.Skipped,
		Lambda: calibrate.DefaultLambda, Evaluations: rep.Evaluations,
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

// writeCalibrateTable prints one line per run, the MAPEs, the parameters,
// the warnings and notes, and where the profile went.
func writeCalibrateTable(w io.Writer, rep calibrate.Report, out, runsPath string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tmeasured tok/s/chip\tdefaults\terror\tfitted\terror\tcross-validated\terror")
	for _, r := range rep.Rows {
		cv, cvErr := "-", "-"
		if rep.Folds > 0 {
			cv, cvErr = fmt.Sprintf("%.1f", r.CV), fmt.Sprintf("%+.1f%%", 100*r.CVError)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%+.1f%%\t%.1f\t%+.1f%%\t%s\t%s\n",
			r.ID, r.Measured, r.Before, 100*r.BeforeError, r.After, 100*r.AfterError, cv, cvErr)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nMAPE over %d %s on %s: defaults %.1f%%, fitted %.1f%%", len(rep.Rows), calibratePlural(len(rep.Rows), "run", "runs"),
		rep.Base.Chip.Name, 100*rep.BeforeMAPE, 100*rep.AfterMAPE)
	if rep.Folds > 0 {
		fmt.Fprintf(w, ", cross-validated %.1f%% (%d folds: each run predicted by a fit that did not see it)\n", 100*rep.CVMAPE, rep.Folds)
	} else {
		fmt.Fprintf(w, "; too few runs to cross-validate\n")
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "parameter\ttransform\tdefault\tfitted\tsensitivity\tstatus")
	for _, p := range rep.Params {
		tr := string(p.Transform)
		if p.Transform == calibrate.Logistic {
			tr = fmt.Sprintf("logistic (%g, %g)", p.Lo, p.Hi)
		}
		status := "identified"
		switch {
		case p.Held:
			status = "held at default"
		case !p.Identified:
			status = "not separable"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f%%\t%s\n", p.Name, tr, calibrate.FormatValue(p.Default),
			calibrate.FormatValue(p.Value), 100*p.Sensitivity, status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
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
		skipped[i] = s.ID + ": " + strings.TrimSpace(s.Reason)
	}
	section(fmt.Sprintf("skipped %d %s", len(rep.Skipped), calibratePlural(len(rep.Skipped), "run", "runs")), skipped)

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

// calibratePlural picks the singular or plural word for count n.
func calibratePlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
