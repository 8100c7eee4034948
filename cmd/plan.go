package cmd

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// newPlanCommand builds the root command, which searches the strategy
// space and prints the Pareto front.
func newPlanCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan --model M --cluster C [--batch N | --batch-tokens N] [--seq S]",
		Short: "Search parallel training strategies for a transformer on a TPU or GPU cluster",
		Long: fmt.Sprintf(`Search the parallel training strategies of a model on a cluster and print the
Pareto front of step time against memory per chip, fastest first. The
recommended row (marked *) is the fastest strategy that fits; each row ends
with the strategy string that 'plan explain --strategy' takes to show it in
full.

The global batch is --batch sequences, or --batch-tokens tokens rounded to the
nearest whole number of sequences; with neither, %d tokens (4Mi). The
sequence length is --seq, or the model's seq_len.

Flags can also come from a YAML file (--config FILE, keys as the flags with _
for -) or from PLAN_ environment variables (PLAN_MODEL, PLAN_BATCH_TOKENS, ...).

Exit codes: 0 success; 1 nothing fits (the message says what would) or an
internal error; 2 bad input.`, DefaultBatchTokens),
		Example: `  plan --model llama70b --cluster v5p-256
  plan --model llama3-8b --cluster h100-64 --batch 256 --seq 8192 --format json
  plan --model llama3-405b --cluster 2xv5p-256 --fix tp=8 --search evolve --seed 7`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runPlan(cmd) },
	}
	fs := cmd.Flags()
	addProblemFlags(fs)
	fs.String("fix", "", "partial strategy `SPEC` every searched strategy must agree with, e.g. tp=8,pp=4")
	fs.String("search", DefaultConfig().Search, "search `method`: auto (exhaustive when the space is small, else evolve), exhaustive or evolve")
	fs.Int64("seed", DefaultConfig().Seed, "random `seed` of the evolutionary search; the same seed and input give the same output")
	fs.Int("top", 0, "print only the `K` fastest rows of the Pareto front (0: all)")
	fs.Bool("quiet", false, "no progress bar on stderr")
	_ = cmd.RegisterFlagCompletionFunc("cluster", cobra.FixedCompletions(profiles.Names(), cobra.ShellCompDirectiveDefault))
	_ = cmd.RegisterFlagCompletionFunc("search", cobra.FixedCompletions([]string{"auto", "exhaustive", "evolve"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// runPlan searches the configured problem and prints its Pareto front.
func (a *app) runPlan(cmd *cobra.Command) error {
	p, err := a.loadProblem()
	if err != nil {
		return err
	}
	fix, err := space.ParseFix(a.cfg.Fix)
	if err != nil {
		return badInputf("--fix %q: %w", a.cfg.Fix, err)
	}
	mo, co := modelOptions()
	prob, err := search.NewProblem(p.model, p.cluster, p.workload, fix, mo, co)
	if err != nil {
		return badInputf("cannot search %s on %s: %w", p.model.Name, p.cluster.Name, err)
	}
	prob.ResolveCluster = profiles.Parse

	bar := newProgressBar(a.stderr, "searching", a.cfg.Quiet)
	method, err := search.NewMethod(a.cfg.Search, a.cfg.Seed, bar.update)
	if err != nil {
		return badInput(err)
	}
	res, err := method.Search(cmd.Context(), prob)
	bar.finish()
	if err != nil {
		return err
	}

	front := res.Top(a.cfg.Top)
	evals := make([]results.Evaluation, len(front))
	for i, c := range front {
		evals[i] = results.Evaluation{
			Model: p.model, Cluster: p.cluster, Workload: p.workload,
			Strategy: c.Strategy, Time: c.Time, Memory: c.Memory, UsableBytes: c.UsableBytes,
		}
	}
	summary := results.SearchSummary{
		Method:      res.Method,
		Evaluated:   res.Evaluated,
		Feasible:    res.Feasible,
		ElapsedS:    res.Elapsed.Seconds(),
		SpaceSize:   res.SpaceSize,
		Seed:        a.cfg.Seed,
		Fix:         a.cfg.Fix,
		Visited:     res.Visited,
		Valid:       res.Valid,
		Generations: res.Generations,
		FrontSize:   len(res.Front),
	}
	// The recommended strategy is the front's first row (search.Result.Recommended).
	plan := results.NewPlan(p.model, p.cluster, p.workload, summary, evals, 0)
	plan.ModelArg, plan.ClusterArg = a.cfg.Model, a.cfg.Cluster
	return a.emit(func(w io.Writer) error {
		if a.cfg.Format == formatJSON {
			return plan.WriteJSON(w)
		}
		return plan.WriteTable(w)
	})
}

// isNoFit reports whether err says that nothing fits (exit 1).
func isNoFit(err error) bool {
	var nf *search.NoFitError
	return errors.As(err, &nf)
}

// progressBar draws a one-line progress bar on a terminal. It stays hidden
// for the first second, when quiet, and when the writer is not a terminal.
type progressBar struct {
	w     io.Writer
	label string
	start time.Time
	off   bool
	shown bool
}

// newProgressBar returns a bar on w; it is off when quiet or when w is not
// a terminal.
func newProgressBar(w io.Writer, label string, quiet bool) *progressBar {
	return &progressBar{w: w, label: label, start: time.Now(), off: quiet || !isTerminal(w)}
}

// update redraws the bar; it matches the search's progress callback.
func (b *progressBar) update(done, total int64) {
	if b.off || total <= 0 {
		return
	}
	elapsed := time.Since(b.start)
	if !b.shown && (elapsed < time.Second || done >= total) {
		return
	}
	b.shown = true
	const width = 30
	frac := min(1, float64(done)/float64(total))
	filled := int(frac * width)
	bar := make([]byte, width)
	for i := range bar {
		switch {
		case i < filled:
			bar[i] = '='
		case i == filled:
			bar[i] = '>'
		default:
			bar[i] = ' '
		}
	}
	fmt.Fprintf(b.w, "\r%s [%s] %3.0f%% %s", b.label, bar, 100*frac, elapsed.Round(100*time.Millisecond))
}

// finish erases the bar if it was drawn.
func (b *progressBar) finish() {
	if b.shown {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
