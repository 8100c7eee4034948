package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/bounded"
	"io"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/validate/runs"
	"github.com/meshplan/meshplan/validate/steps"
)

// newValidateCommand builds `plan validate`: predict measured training runs
// and print the error of each prediction. The root registers it with
// root.AddCommand(newValidateCommand(a)).
func newValidateCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate [--runs FILE] [--cluster FILE_OR_NAME] | validate --steps FILE [--framework NAME|FILE]",
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
runs on its chip; runs on other chips are skipped. Each run is predicted with
the framework it was measured on (its framework column, else its source's:
Megatron-LM, DeepSpeed, MaxText, torchtitan, PyTorch); --framework predicts
every run with one profile instead. The MAPE is printed per framework and per
chip.

--steps FILE instead compares the planner with single-chip training steps
measured on your own hardware: a CSV with the columns model, seq,
micro_batch, recompute, outcome ("ran" or "out of memory"), and, for steps
that ran, step_s and peak_allocated_bytes; optionally
accumulated_micro_batches, compiled (0/1), framework and cluster (default
h100-1). Each row is predicted as plan explain predicts
--batch micro_batch*accumulated_micro_batches --strategy mb=MB,recompute=R,
with the row's framework, else --framework, else torchtitan for compiled and
pytorch for eager steps, else generic. It prints the step-time and memory
errors of each row, whether the fit verdict was right, and the MAPEs per
framework.`,
		Example: `  plan validate
  plan validate --format json
  plan validate --runs my-runs.csv --cluster fitted-a100.yaml
  plan validate --steps train-steps.csv
  plan validate --steps train-steps.csv --framework my-stack.yaml --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fs := cmd.Flags()
			path, err := fs.GetString("runs")
			if err != nil {
				return err
			}
			stepsPath, err := fs.GetString("steps")
			if err != nil {
				return err
			}
			switch {
			case stepsPath != "" && path != "":
				return badInputf("give --steps (measured single-chip steps) or --runs (measured training runs), not both")
			case stepsPath != "" && fs.Changed("cluster"):
				return badInputf("--cluster does not apply to --steps: the steps file's cluster column names each row's cluster (default %s)", steps.DefaultCluster)
			case stepsPath != "":
				return a.runValidateSteps(stepsPath)
			}
			return a.runValidate(path)
		},
	}
	cmd.Flags().String("runs", "", "a runs `file` (CSV); default: the built-in published runs")
	cmd.Flags().String("cluster", "", "apply this cluster `name` or YAML file to the runs on its chip (default: each run's own cluster)")
	cmd.Flags().String("steps", "", "a `file` (CSV) of single-chip training steps measured on your hardware, instead of the runs")
	cmd.Flags().String("framework", "", "predict every run with this framework profile `name` or YAML file (default: each run's own; with --steps, rows without a framework cell: torchtitan for compiled, pytorch for eager steps)")
	return cmd
}

// runValidateSteps predicts the measured steps of the steps file at path
// and prints the report.
func (a *app) runValidateSteps(path string) error {
	rep, err := steps.ValidateFile(path, steps.Options{Framework: a.cfg.Framework})
	var in *search.InputError
	if errors.As(err, &in) {
		return badInputf("--steps %s: %w", path, in.Err)
	}
	if err != nil {
		return fmt.Errorf("--steps %s: %w", path, err)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(a.stderr, "plan: warning: %s\n", w)
	}
	return a.emit(func(w io.Writer) error {
		if a.cfg.Format == formatJSON {
			return results.WriteStepsJSON(w, rep)
		}
		return results.WriteStepsTable(w, rep)
	})
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
	var o runs.Options
	if a.cfg.Framework != "" {
		f, err := loadFramework(a.cfg.Framework)
		if err != nil {
			return err
		}
		o.Framework = &f
	}
	rep := runs.Validate(rs, override, o)
	return a.emit(func(w io.Writer) error {
		if a.cfg.Format == formatJSON {
			return results.WriteValidationJSON(w, rep)
		}
		return results.WriteValidationTable(w, rep)
	})
}

// readRuns reads the --runs file (at most bounded.TableBytes of it, from
// any source), or the built-in runs when path is empty. Every failure is
// bad input.
func readRuns(path string) ([]runs.Run, error) {
	if path == "" {
		rs, err := runs.Default()
		if err != nil {
			return nil, fmt.Errorf("the built-in runs: %w", err)
		}
		return rs, nil
	}
	data, err := bounded.ReadFile(path, bounded.TableBytes)
	if err != nil {
		return nil, badInputf("--runs %s: cannot read it: %v", path, err)
	}
	rs, err := runs.Read(bytes.NewReader(data))
	if err != nil {
		return nil, badInputf("--runs %s: %w", path, err)
	}
	if len(rs) == 0 {
		return nil, badInputf("--runs %s: no runs: the file has a header but no rows; add one row per measured run", path)
	}
	return rs, nil
}
