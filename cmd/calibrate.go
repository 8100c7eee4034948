package cmd

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/validate/calibrate"
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
gonum's Nelder-Mead minimises Huber's loss of the log error of the predicted
throughput (a few outlier runs cannot drag the fit) plus a Gaussian prior
per coefficient centred on its default, over: matmul_fraction,
matmul_half_flops, hbm_fraction, overlap_fraction and, for each link tier of
the cluster the runs use, its efficiency and latency_s. Every coefficient
has physical bounds it never leaves (a link cannot exceed its line rate nor
fall below half of it; go doc ./validate/calibrate gives each one's bounds,
prior and source).

The report gives each run's measured and predicted tokens/s per chip with
the defaults, with the fit, and cross-validated (k = min(5, runs) folds: each
run predicted by a fit that did not see it), the three MAPEs, the fitted
coefficients with their bounds and priors, and warnings: for coefficients
the runs cannot identify (held at their defaults) or cannot separate from
the others, for a coefficient that ended on a bound (naming the runs that
pushed it there) and for any run the fit makes more than 10 points worse.

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
			quiet, err := cmd.Flags().GetBool("quiet")
			if err != nil {
				return err
			}
			return a.runCalibrate(path, quiet)
		},
	}
	cmd.Flags().Bool("quiet", false, "no progress bar on stderr")
	cmd.Flags().String("runs", "", "a runs `file` (CSV); default: the built-in published runs")
	cmd.Flags().String("cluster", "", "the base cluster `name` or YAML file: its chip's runs are fitted, its coefficients are the defaults")
	return cmd
}

// runCalibrate reads the runs and the base cluster, fits, prints the
// report to stdout and writes the profile to --out.
// A progress bar on stderr counts the runs read, the fits and the
// cross-validation folds, unless quiet.
func (a *app) runCalibrate(path string, quiet bool) error {
	if a.cfg.Out == "-" {
		return badInputf("--out - would send the fitted profile to standard output, where the report goes; name a file for the profile")
	}
	if a.cfg.Cluster == "" {
		return badInputf("--cluster is required: the cluster (e.g. a100-16 or a YAML file) whose chip the runs are fitted for")
	}
	base, err := loadCluster(a.cfg.Cluster)
	if err != nil {
		return err
	}
	rs, _, err := readRuns(path)
	if err != nil {
		return err
	}
	bar := newProgress(a.stderr, "calibrating "+results.Label(base.Name), quiet)
	rep, err := calibrate.Calibrate(rs, base, calibrate.Options{Progress: bar.update})
	bar.finish()
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
		if err := a.writeOut("--out", a.cfg.Out, data); err != nil {
			return err
		}
	}
	var render func(io.Writer) error
	if a.cfg.Format == formatJSON {
		render = func(w io.Writer) error { return results.WriteCalibrationJSON(w, rep, a.cfg.Out) }
	} else {
		render = func(w io.Writer) error { return results.WriteCalibrationTable(w, rep, a.cfg.Out, path) }
	}
	// --out names the profile here, so the report always goes to stdout.
	var b strings.Builder
	if err := render(&b); err != nil {
		return err
	}
	text := b.String()
	if a.forTerminal() {
		text = results.EscapeControls(text)
	}
	if _, err := io.WriteString(a.stdout, text); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	return nil
}
