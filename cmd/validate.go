package cmd

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search/runs"
)

// newValidateCommand builds `plan validate`: predict measured training runs
// and print the error of each prediction. The root registers it with
// root.AddCommand(newValidateCommand(a)).
func newValidateCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate [--runs FILE] [--cluster FILE_OR_NAME]",
		Short: "Compare predictions with measured training runs and print the error",
		Long: `Predict every run of a runs file (by default the built-in published runs:
Megatron-LM, MT-NLG, BLOOM, MaxText, MosaicML, torchtitan, ...) with the
run's own model, cluster, batch and parallel layout, and compare the predicted
tokens/s per chip with the measured one. Each measured figure is converted with
its source's own FLOP convention (HFU-style TFLOP/s are not model FLOPs).
error = predicted/measured - 1; MAPE is the mean |error|. Runs that cannot be
expressed (no published layout, a batch that does not divide) are listed as
skipped with the reason.

A runs file is a CSV with a header row: id; model (a preset or file) or
layers, hidden, heads, vocab; cluster or chip and chips; batch (or
global_batch_seqs or global_batch_tokens); seq; strategy (a strategy string)
or tp, pp, dp, ...; and measured_step_s or measured_tokens_per_s (whole job).

--cluster applies a cluster profile (e.g. one fitted by plan calibrate) to the
runs on its chip; runs on other chips are skipped.`,
		Example: `  plan validate
  plan validate --format json
  plan validate --runs my-runs.csv --cluster fitted-a100.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := cmd.Flags().GetString("runs")
			if err != nil {
				return err
			}
			return a.runValidate(path)
		},
	}
	cmd.Flags().String("runs", "", "a runs `file` (CSV); default: the built-in published runs")
	cmd.Flags().String("cluster", "", "apply this cluster `name` or YAML file to the runs on its chip (default: each run's own cluster)")
	return cmd
}

// runValidate reads the runs, predicts them and prints the report.
func (a *app) runValidate(path string) error {
	rs, err := readRuns(path)
	if err != nil {
		return err
	}
	var override *profiles.Cluster
	if a.cfg.Cluster != "" {
		c, err := loadCluster(a.cfg.Cluster)
		if err != nil {
			return err
		}
		override = &c
	}
	rep := runs.Validate(rs, override, defaultOptions())
	return a.emit(func(w io.Writer) error {
		if a.cfg.Format == formatJSON {
			return results.WriteValidationJSON(w, rep)
		}
		return results.WriteValidationTable(w, rep)
	})
}

// readRuns reads the --runs file, or the built-in runs when path is empty.
// Every failure is bad input.
func readRuns(path string) ([]runs.Run, error) {
	if path == "" {
		rs, err := runs.Default()
		if err != nil {
			return nil, fmt.Errorf("the built-in runs: %w", err)
		}
		return rs, nil
	}
	f, err := os.Open(path)
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			err = pe.Err
		}
		return nil, badInputf("--runs %s: cannot read it: %v", path, err)
	}
	defer f.Close()
	rs, err := runs.Read(f)
	if err != nil {
		return nil, badInputf("--runs %s: %w", path, err)
	}
	return rs, nil
}
