package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/bounded"
	"io"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/validate/bands"
	"github.com/meshplan/meshplan/validate/calibrate"
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

The published data sets are read as they are written, and so is a file of
your own runs in their columns (the format is detected from the header):
published-runs-2.csv (89 multi-chip runs: measured_tokens_per_s_per_chip,
measured_step_s or measured_tflops_per_chip with the source's flops_basis;
tp, pp, cp, ep, etp, dp, vp, micro_batch, zero_or_fsdp, recompute, precision;
the model by model_name or its columns, with moe_experts, moe_topk,
moe_shared_experts, moe_expert_ffn, moe_layer_pattern and mla) and
published-memory.csv (measured_peak_gb in GiB, peak_kind, oom). Each row is
predicted with its published layout; the report gives per source, chip and
framework the time MAPE and bias, the memory MAPE and the fit verdicts right
and wrong, and one line per row that is not posable with the planner's own
reason. Its headline is the leave-one-source-out time error: per chip, the
coefficients plan calibrate fits are refitted without each source, and that
source is predicted with the refit; the in-sample error stands beside it.
README.md lists every column.

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
framework.

Each runs report ends with the bands' coverage: how often the 80% and 95%
intervals of a strategy explained on each run's layout, drawn without the
run's source (the shipped bands for a file of one source), hold the measured
figure. --searched adds the same for the plan the search promises: each run
planned with its published degrees fixed and the rest searched, the best
plan's searched band.`,
		Example: `  plan validate
  plan validate --format json
  plan validate --runs my-runs.csv --cluster fitted-a100.yaml
  plan validate --runs validate/runs/testdata/published-runs-2.csv
  plan validate --runs my-runs.csv --searched
  plan validate --runs validate/runs/testdata/published-memory.csv --format json
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
			case stepsPath != "" && fs.Changed("searched"):
				return badInputf("--searched does not apply to --steps: single-chip steps have no degrees to search; use it with --runs")
			case stepsPath != "" && fs.Changed("cluster"):
				return badInputf("--cluster does not apply to --steps: the steps file's cluster column names each row's cluster (default %s)", steps.DefaultCluster)
			case stepsPath != "":
				return a.runValidateSteps(stepsPath)
			}
			quiet, err := fs.GetBool("quiet")
			if err != nil {
				return err
			}
			searched, err := fs.GetBool("searched")
			if err != nil {
				return err
			}
			return a.runValidate(cmd.Context(), path, validateOptions{quiet: quiet, searched: searched})
		},
	}
	cmd.Flags().Bool("quiet", false, "no progress bar on stderr (it counts the runs predicted, on a terminal, after a second)")
	cmd.Flags().Bool("searched", false, "also plan every run as its user would (its published degrees fixed, the rest searched) and print how often the band of the best plan holds it")
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
	samples, err := bands.Single(rep)
	if err != nil {
		return fmt.Errorf("--steps %s: %w", path, err)
	}
	cov := bands.Coverage(profiles.RegimeSingle, samples)
	return a.emit(func(w io.Writer) error {
		if a.cfg.Format == formatJSON {
			return results.WriteStepsJSON(w, rep, &cov)
		}
		return results.WriteStepsTable(w, rep, &cov)
	})
}

// leaveOneSourceOut refits the coefficients without each source of rs
// (calibrate.LeaveOneSourceOut, with a progress bar unless vo.quiet) and
// returns the report with the bands' coverage on it (coverages).
func (a *app) leaveOneSourceOut(ctx context.Context, rs []runs.Run, o runs.Options, vo validateOptions) (calibrate.SourceReport, results.Coverages, error) {
	bar := newProgress(a.stderr, "leaving each source out", vo.quiet)
	loso, err := calibrate.LeaveOneSourceOut(rs, calibrate.Options{Runs: o, Progress: bar.update})
	bar.finish()
	if err != nil {
		return loso, results.Coverages{}, fmt.Errorf("leave-one-source-out: %w", err)
	}
	cov, err := a.coverages(ctx, loso, rs, o, vo)
	return loso, cov, err
}

// coverages is the bands' coverage on the runs rs of a
// leave-one-source-out report: the fixed layouts' (coverageOf) and, with
// vo.searched, the searched plans' (searchedCoverageOf, with a progress bar
// unless vo.quiet).
func (a *app) coverages(ctx context.Context, loso calibrate.SourceReport, rs []runs.Run, o runs.Options, vo validateOptions) (results.Coverages, error) {
	var cov results.Coverages
	var err error
	if cov.Fixed, err = coverageOf(loso, rs); err != nil || !vo.searched || cov.Fixed == nil {
		return cov, err
	}
	bar := newProgress(a.stderr, "planning each run as its user would", vo.quiet)
	cov.Searched, err = searchedCoverageOf(ctx, loso, rs, o, bar.update)
	bar.finish()
	return cov, err
}

// searchedCoverageOf is the searched bands' coverage on the runs rs of a
// leave-one-source-out report: each run planned as its user would
// (bands.Searched: its published degrees fixed, the rest searched), the
// best plan's error drawn against the searched intervals fitted without
// its source (regimeCoverage), nil without samples.
func searchedCoverageOf(ctx context.Context, loso calibrate.SourceReport, rs []runs.Run, o runs.Options, progress func(done, total int64)) (*profiles.CoverageReport, error) {
	samples, err := bands.Searched(ctx, rs, loso.Rows, o, progress)
	if err != nil {
		return nil, err
	}
	return regimeCoverage(profiles.RegimeSearched, samples, rs)
}

// coverageOf is the fixed-layout bands' coverage on the runs rs of a
// leave-one-source-out report (regimeCoverage), nil without runs.
func coverageOf(loso calibrate.SourceReport, rs []runs.Run) (*profiles.CoverageReport, error) {
	if len(loso.Rows) == 0 {
		return nil, nil
	}
	samples, err := bands.Fixed(loso)
	if err != nil {
		return nil, err
	}
	return regimeCoverage(profiles.RegimeFixed, samples, rs)
}

// regimeCoverage is the coverage of a regime's intervals on samples of
// the runs rs (bands.CoverageWith), their MoE runs marked as the shipped
// bands mark them, nil without samples. A file of one source (a user's own
// runs) leaves no other source to fit a band on: its runs take the shipped
// bands, as plan prints them.
func regimeCoverage(regime string, samples []bands.Sample, rs []runs.Run) (*profiles.CoverageReport, error) {
	if len(samples) == 0 {
		return nil, nil
	}
	if err := bands.MarkMoE(samples, rs); err != nil {
		return nil, err
	}
	shipped := profiles.DefaultBands()
	cov := bands.CoverageWith(regime, samples, &shipped)
	return &cov, nil
}

// validateOptions are plan validate's report options: quiet drops the
// progress bars, searched adds the searched plans' band coverage.
type validateOptions struct {
	quiet, searched bool
}

// runValidate reads the runs, predicts them with a progress bar on stderr
// unless vo.quiet, and prints the report.
func (a *app) runValidate(ctx context.Context, path string, vo validateOptions) error {
	rs, format, err := readRuns(path)
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
	if format != runs.FormatRuns {
		return a.runValidatePublished(ctx, rs, format, override, o, vo)
	}
	bar := newProgress(a.stderr, "validating", vo.quiet)
	o.Progress = bar.update
	rep := runs.Validate(rs, override, o)
	bar.finish()
	var cov results.Coverages
	if override == nil {
		// The bands' coverage: every run predicted with the coefficients
		// fitted without its source, its interval drawn without it.
		o.Progress = nil
		if _, cov, err = a.leaveOneSourceOut(ctx, rs, o, vo); err != nil {
			return err
		}
	}
	return a.emit(func(w io.Writer) error {
		if a.cfg.Format == formatJSON {
			return results.WriteValidationJSON(w, rep, cov)
		}
		return results.WriteValidationTable(w, rep, cov)
	})
}

// readRuns reads the --runs file (at most bounded.TableBytes of it, from
// any source) in whichever of its formats it is, or the built-in runs when
// path is empty. Every failure is bad input.
func readRuns(path string) ([]runs.Run, runs.Format, error) {
	if path == "" {
		rs, err := runs.Default()
		if err != nil {
			return nil, 0, fmt.Errorf("the built-in runs: %w", err)
		}
		return rs, runs.FormatRuns, nil
	}
	data, err := bounded.ReadFile(path, bounded.TableBytes)
	if err != nil {
		return nil, 0, badInputf("--runs %s: cannot read it: %v", path, err)
	}
	rs, format, err := runs.ReadFormat(bytes.NewReader(data))
	if err != nil {
		return nil, 0, badInputf("--runs %s: %w", path, err)
	}
	if len(rs) == 0 {
		return nil, 0, badInputf("--runs %s: no runs: the file has a header but no rows; add one row per measured run", path)
	}
	return rs, format, nil
}

// runValidatePublished predicts the rows of a published-runs-2 or
// published-memory file (or a user file in their columns) and prints the
// per-source, per-chip and per-framework errors with the
// leave-one-source-out time error beside the in-sample one, with a
// progress bar on stderr for the refits unless quiet.
func (a *app) runValidatePublished(ctx context.Context, rs []runs.Run, format runs.Format, override *profiles.Cluster, o runs.Options, vo validateOptions) error {
	rep := runs.ValidatePublished(rs, format, override, o)
	var loso calibrate.SourceReport
	var cov results.Coverages
	if override == nil {
		var err error
		if loso, cov, err = a.leaveOneSourceOut(ctx, rs, o, vo); err != nil {
			return err
		}
	}
	return a.emit(func(w io.Writer) error {
		if a.cfg.Format == formatJSON {
			return results.WritePublishedJSON(w, rep, loso, cov)
		}
		return results.WritePublishedTable(w, rep, loso, cov)
	})
}
