package cmd

import (
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/text"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/internal/settings"
	"github.com/meshplan/meshplan/sweep"
)

// newSweepCommand builds `plan sweep`: run a grid of plans (or one shard
// of it) into a directory.
func newSweepCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sweep --config FILE --out DIR [--shard I/N] [--resume]",
		Short: "Run a grid of plans as a batch job, sharded and resumable",
		Long: `Run every cell of a sweep: the product of the configuration's models,
clusters, batches, seqs and fix lists (models outermost, fix innermost),
then its explicit cells. Each cell's result is one JSON line
{"cell": {...}, "plan": <plan --format json>} (or "error" instead of "plan"
when nothing fits) appended and synced to DIR/cells-I-of-N.jsonl as soon as
the cell finishes; DIR/sweep.json records the whole grid, and
DIR/summary.csv (summary-I-of-N.csv for a shard) the recommended row of
each cell.

Cell i of the grid belongs to shard i mod N. The shard is --shard I/N, else
a Kubernetes Indexed Job's JOB_COMPLETION_INDEX with JOB_COMPLETIONS, else a
Slurm array's SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT, else 0/1.
--resume skips the cells already in the shard's file and redoes a torn last
line, so a killed run continues where it stopped. Merge the shards with
plan merge.

The configuration (YAML):

  models: [llama3-8b, llama2-7b]
  clusters: [h100-8, h100-16]
  batches: [16, 32]
  seqs: [4096]          # optional; default each model's seq_len
  fix: ["", "tp=1"]     # optional strategy constraints
  cells:                # optional explicit cells, after the grid's
    - {model: llama3-70b, cluster: v5p-128, batch: 256, seq: 8192, fix: ""}
  framework: megatron   # optional; as plan --framework (default generic)
  search: {method: auto, seed: 1, top: 5}

Every cell is planned under the one framework profile, which every plan
names and the manifest records: sweeps with different frameworks never
share a directory.

Every key can also come from a PLAN_ environment variable (PLAN_MODELS=a,b,
PLAN_FRAMEWORK=megatron, PLAN_SEARCH_SEED=7, ...); --framework overrides
framework, and --search, --seed and --top override search.*.`,
		Example: `  plan sweep --config sweep.yaml --out out/
  for i in 0 1 2 3; do plan sweep --config sweep.yaml --out out/ --shard $i/4 --resume; done
  plan merge out/ --out all.jsonl --summary summary.csv`,
		Args: cobra.NoArgs,
		// The sweep reads its own configuration instead of plan's.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			a.started = true
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runSweep(cmd) },
	}
	fs := cmd.Flags()
	fs.String("config", "", "the sweep configuration, a YAML `file`")
	fs.String("out", "", "the output `directory` (created if needed; shards may share it)")
	fs.String("shard", "", "run shard `I/N` (0 <= I < N) of the grid: cells i with i mod N = I (default: from the batch scheduler's environment, else 0/1)")
	fs.Bool("resume", false, "skip the cells already in the shard's file and redo a torn last line")
	fs.Var(settings.NewInt(0, 0), "jobs", "cells searched at once (default: the number of cores)")
	fs.String("framework", "", "training framework profile of every cell: a `name` ("+strings.Join(framework.Names(), ", ")+
		"; default "+framework.Default+") or a YAML file (overrides framework)")
	fs.String("search", sweep.DefaultConfig().Search.Method, "search `method` of every cell: auto, exhaustive or evolve (overrides search.method)")
	fs.Var(settings.NewInt(sweep.DefaultConfig().Search.Seed, 64), "seed", "random `seed` of the evolutionary search (overrides search.seed)")
	fs.Var(settings.NewInt(sweep.DefaultTop, 0), "top", "keep only the `K` fastest rows of each cell's front, 0 all (overrides search.top)")
	fs.String("objective", "", "what each cell's recommended `row` optimises: balanced (the default), time or memory (overrides search.objective)")
	fs.Bool("quiet", false, "no progress bar on stderr")
	return cmd
}

// sweepFlagKeys maps the flags that override configuration keys to them.
var sweepFlagKeys = map[string]string{"framework": "framework", "search": "search.method", "seed": "search.seed", "top": "search.top", "objective": "search.objective"}

// runSweep loads the configuration, picks the shard and runs it.
func (a *app) runSweep(cmd *cobra.Command) error {
	fs := cmd.Flags()
	if fs.Changed("format") {
		f, _ := fs.GetString("format")
		return badInputf("--format %s does not apply to plan sweep: it writes JSON lines (cells-I-of-N.jsonl) and a summary CSV; drop --format", f)
	}
	out, _ := fs.GetString("out")
	if out == "" {
		return badInputf("--out is required: the directory the sweep writes its cells to")
	}
	if out == "-" {
		return badInputf("--out - names standard output, but plan sweep writes a directory of files: name a directory")
	}
	cfg, err := loadSweepConfig(cmd)
	if err != nil {
		return err
	}
	grid, err := sweep.Expand(cfg)
	if err != nil {
		return badInput(err)
	}
	for _, w := range grid.Warnings {
		fmt.Fprintf(a.stderr, "plan: warning: %s\n", w)
	}
	var sh sweep.Shard
	if s, _ := fs.GetString("shard"); fs.Changed("shard") {
		if sh, err = sweep.ParseShard(s); err != nil {
			return badInput(err)
		}
	} else if sh, _, err = sweep.ShardFromEnv(os.Getenv); err != nil {
		return badInput(err)
	}
	jobs, _ := fs.GetInt("jobs")
	// A sweep searches at most one cell per worker goroutine; more than
	// maxJobs is a typo, not a machine.
	const maxJobs = 1 << 16
	if jobs < 0 || jobs > maxJobs {
		return badInputf("--jobs must be between 0 (one per core) and %d, got %d", maxJobs, jobs)
	}
	if jobs == 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	resume, _ := fs.GetBool("resume")
	quiet, _ := fs.GetBool("quiet")

	// Every cell is planned under the configuration's framework profile,
	// loaded once by Expand, with the options plan --framework gives it.
	solver := &sweep.Solver{Grid: grid, Options: modelOptions(grid.Framework), Workers: max(1, runtime.GOMAXPROCS(0)/jobs)}
	bar := newProgress(a.stderr, "sweep", quiet)
	bar.resumed = resume
	r := &sweep.Runner{Dir: out, Shard: sh, Resume: resume, Jobs: jobs, Solve: solver.Solve, Progress: bar.updateInt}
	st, err := r.Run(cmd.Context(), grid)
	bar.finish()
	if err != nil {
		var in *sweep.InputError
		if errors.As(err, &in) {
			return badInput(err)
		}
		if isDiskError(err) {
			return badInputf("--out %s: cannot write the sweep: %w", out, err)
		}
		return err
	}
	torn := ""
	if st.Torn {
		torn = ", a torn last line redone"
	}
	fmt.Fprintf(a.stderr, "plan sweep: shard %s: %d cells (%d resumed, %d run%s, %d with an error) in %s, %.3g cells/s; wrote %s and %s\n",
		st.Shard, st.Total, st.Resumed, st.Ran, torn, st.Errors, st.Elapsed.Round(time.Millisecond), st.CellsPerSecond(), st.CellsFile, st.SummaryFile)
	return nil
}

// loadSweepConfig reads the sweep configuration: defaults, then the
// --config file, then PLAN_ environment variables, then the flags given on
// the command line that override the framework and search settings.
func loadSweepConfig(cmd *cobra.Command) (sweep.Config, error) {
	v, err := sweep.NewViper()
	if err != nil {
		return sweep.Config{}, err
	}
	path, _ := cmd.Flags().GetString("config")
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return sweep.Config{}, badInputf("--config %s: cannot read it: %s", path, text.OneLine(errors.Unwrap(err).Error()))
		}
		defer f.Close()
		if err := sweep.ReadConfig(v, "--config "+path, f); err != nil {
			return sweep.Config{}, badInput(err)
		}
	}
	for flag, key := range sweepFlagKeys {
		if err := v.BindPFlag(key, cmd.Flags().Lookup(flag)); err != nil {
			return sweep.Config{}, fmt.Errorf("binding --%s: %w", flag, err)
		}
	}
	cfg, err := sweep.Decode(v)
	if err != nil && path == "" {
		return sweep.Config{}, badInputf("--config FILE is required unless PLAN_ environment variables give the whole sweep:\n%w", err)
	}
	if err != nil {
		return sweep.Config{}, badInput(err)
	}
	return cfg, nil
}

// isDiskError reports whether err is a failure to write the --out
// directory (a full or read-only disk, a quota, a permission): bad input
// (exit 2), as for plan --out, not a failure of the planner.
func isDiskError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EROFS) ||
		errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}
