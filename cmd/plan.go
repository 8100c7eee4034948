package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/internal/settings"
	"github.com/meshplan/meshplan/planner"
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
recommended row (marked *) is, among the rows whose step time is within the
band that tells two strategies of one model apart (the measured steps' errors
about their model's mean) of the fastest and whose out-of-memory risk is at
most --max-oom-risk, the one with the least risk, then the fewest chips, then
the fewest parallel dimensions (--objective balanced); --objective time
recommends the fastest, memory the least memory per chip, cost the cheapest
(with --price). Each row's step time carries an 80%% interval drawn from the
published runs' errors with their source left out. Each row ends with the
strategy string that 'plan explain --strategy' takes to show it in full.

The global batch is --batch sequences, or --batch-tokens tokens rounded to the
nearest whole number of sequences. With neither, it is %d tokens per chip,
at least 4Mi and at most 16Mi tokens (the batches of Llama 3 405B on 8,192
and 16,384 H100 and of Megatron-LM's largest runs), in whole sequences, and a
multiple of the chip count where there are as many sequences as chips (504,
not 512, on 72 GPUs), else of a power-of-two share of it (768, not 512, on
1,536 GPUs), and at least one sequence a chip under a framework without
tensor, context or pipeline parallelism (deepspeed, pytorch; for a list of
frameworks, if any of them is one); for a cluster list, the largest
cluster's. Every output
says when the batch was defaulted. The sequence length is --seq, or the
model's seq_len.

--cluster also takes a list (h100-512,h100-1024,h100-2048) or a range
(v5p-128..v5p-2048, doubling): each cluster is searched and the table shows
the best strategy of each, marking the clusters on the front of (days to
train, cost); the JSON object is the plan of the recommended cluster with a
"clusters" array. --min-chips plans on the smallest cluster of the family on
which the model fits.

--tokens N (15T, 300B, 2e12) adds the days and chip-hours to train on N
tokens to each row, --price P (per chip-hour) the cost. --format csv, md and
html print a CSV row per strategy, a Markdown review summary or one
self-contained HTML report with charts. --emit megatron|maxtext|torchtitan|
deepspeed prints the recommended strategy as that framework's launch flags or
config instead of the plan.

Flags can also come from a YAML file (--config FILE, keys as the flags with _
for -) or from PLAN_ environment variables (PLAN_MODEL, PLAN_BATCH_TOKENS, ...).

Exit codes: 0 success; 1 nothing fits (the message says what would) or an
internal error; 2 bad input.`, planner.DefaultBatchTokensPerChip),
		Example: `  plan --model llama70b --cluster v5p-256
  plan --model llama3-8b --cluster h100-64 --batch 256 --seq 8192 --format json
  plan --model llama3-405b --cluster 2xv5p-256 --fix tp=8 --search evolve --seed 7
  plan --model llama3-405b --cluster h100-16384 --tokens 15T --price 2.5
  plan --model llama3-70b --cluster h100-256..h100-2048 --tokens 2T --price 2.5
  plan --model llama3-8b --cluster v5p-64 --format html --out plan.html
  plan --model llama3-70b --cluster h100-512 --fix fsdp=1,schedule=1f1b --emit megatron`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runPlan(cmd) },
	}
	fs := cmd.Flags()
	addProblemFlags(fs)
	fs.Var(settings.NewOnce(""), "fix", "partial strategy `SPEC` every searched strategy must agree with, e.g. tp=8,pp=4")
	fs.String("search", DefaultConfig().Search, "search `method`: auto (exhaustive when the space is small, else evolve), exhaustive or evolve")
	fs.String("objective", DefaultConfig().Objective, "what the recommended `row` optimises: balanced (among the rows within the model's error band of the fastest, the least out-of-memory risk), time (the fastest), memory (the least) or cost (the cheapest, needs --price)")
	fs.Float64("max-oom-risk", DefaultConfig().MaxOOMRisk, "out-of-memory `probability` above which no row is recommended (each row's risk is drawn from the memory model's measured error)")
	fs.Var(settings.NewInt(DefaultConfig().Seed, 64), "seed", "random `seed` of the evolutionary search; the same seed and input give the same output")
	fs.Var(settings.NewInt(0, 0), "top", "print the `K` fastest rows of the Pareto front, or down to the recommended row when it is slower (0: all)")
	fs.Bool("quiet", false, "no progress bar on stderr")
	addReportFlags(fs, "the recommended strategy")
	fs.String("deadline", "", "with --tokens, plan the sizes of --cluster's family (h100 or h100-1024 alike) and pick the smallest that trains within this wall `time` (90d, 2160h, 13w), or with --price the cheapest")
	fs.Bool("min-chips", false, "search the sizes of --cluster's family upwards and plan on the smallest on which the model fits")
	registerEmitCompletion(cmd)
	_ = cmd.RegisterFlagCompletionFunc("cluster", cobra.FixedCompletions(profiles.Names(), cobra.ShellCompDirectiveDefault))
	_ = cmd.RegisterFlagCompletionFunc("objective", cobra.FixedCompletions(search.Objectives(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("search", cobra.FixedCompletions([]string{"auto", "exhaustive", "evolve"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// runPlan searches the configured problem and prints its Pareto front: on
// one cluster, on each cluster of a list or range (--cluster a,b or
// a..b), or on the smallest cluster of the family that fits (--min-chips).
func (a *app) runPlan(cmd *cobra.Command) error {
	if a.cfg.Deadline != "" {
		return a.runDeadline(cmd) // deadline.go
	}
	names := []string{a.cfg.Cluster}
	if a.cfg.Cluster != "" {
		var err error
		if names, err = profiles.ExpandNames(a.cfg.Cluster); err != nil {
			return badInputf("--cluster %w", err)
		}
	}
	if a.cfg.MinChips && len(names) > 1 {
		return badInputf("--min-chips takes one cluster name, not the list %q", a.cfg.Cluster)
	}
	fix, err := space.ParseFix(a.cfg.Fix)
	if err != nil {
		return badInputf("--fix %q: %w", a.cfg.Fix, err)
	}
	m, err := loadModel(a.cfg.Model, a.stderr)
	if err != nil {
		return err
	}
	clusters := make([]profiles.Cluster, len(names))
	chips := 0
	for i, name := range names {
		if clusters[i], err = loadCluster(name); err != nil {
			return err
		}
		chips = max(chips, clusters[i].Chips())
	}
	// One default batch for every cluster of a list (the largest's), so
	// that they are compared at one batch; --min-chips takes the named
	// cluster's. The default follows the framework's rules
	// (space.Limits.SplitsSequences); frameworks compared on one cluster
	// share one batch, one sequence a chip if any of them cannot split a
	// sequence (a name that does not load is reported below).
	var f framework.Profile
	split := true
	if strings.Contains(a.cfg.Framework, ",") {
		for _, n := range strings.Split(a.cfg.Framework, ",") {
			if p, err := loadFramework(strings.TrimSpace(n)); err == nil && !p.Limits.SplitsSequences() {
				split = false
			}
		}
	} else {
		if f, err = a.framework(); err != nil {
			return err
		}
		split = f.Limits.SplitsSequences()
	}
	w, rule, err := workload(a.cfg, m, chips, split)
	if err != nil {
		return err
	}
	if rule != "" && len(clusters) > 1 {
		rule = "the largest cluster's batch, " + rule
	}
	if strings.Contains(a.cfg.Framework, ",") {
		if a.cfg.MinChips || len(names) > 1 || a.cfg.Emit != "" {
			return badInputf("--framework %s compares frameworks on one cluster: it does not combine with --min-chips, a cluster list or --emit", a.cfg.Framework)
		}
		fws := strings.Split(a.cfg.Framework, ",")
		if err := frameworkList(fws); err != nil {
			return err
		}
		base := a.request(problem{model: m, cluster: clusters[0], workload: w}, fix)
		plan, err := planner.Frameworks(cmd.Context(), base, fws, a.solve)
		if err != nil {
			return inputErr(err)
		}
		plan.ModelArg, plan.ClusterArg = a.cfg.Model, a.cfg.Cluster
		plan.SetBatchDefault(rule)
		return a.printPlan(plan)
	}
	base := a.request(problem{model: m, workload: w, framework: f}, fix)
	seen := map[string]bool{}
	for _, c := range clusters {
		r := base
		r.Cluster = c
		for _, n := range []string{r.EightBitNote(), r.ALiBiNote()} {
			if n != "" && !seen[n] {
				seen[n] = true
				fmt.Fprintf(a.stderr, "plan: note: %s\n", n)
			}
		}
	}
	var plan results.Plan
	switch {
	case a.cfg.MinChips:
		plan, err = planner.MinChips(cmd.Context(), base, names[0], a.solve)
	case len(names) > 1:
		plan, err = planner.Clusters(cmd.Context(), base, clusters, a.solve)
	default:
		base.Cluster = clusters[0]
		plan, err = a.solve(cmd.Context(), base, true)
	}
	if err != nil {
		return inputErr(err)
	}
	plan.SetBatchDefault(rule)
	plan.ModelArg = a.cfg.Model
	if len(names) == 1 && !a.cfg.MinChips {
		plan.ClusterArg = a.cfg.Cluster
	}
	return a.printPlan(plan)
}

// printPlan writes the plan in the configured format, or the launch
// configuration of its recommended strategy with --emit.
func (a *app) printPlan(plan results.Plan) error {
	if a.cfg.Emit != "" {
		if plan.Detail == nil {
			return fmt.Errorf("no recommended strategy to emit: %s", plan.WhyNoneRecommended())
		}
		return a.emitFramework(*plan.Detail)
	}
	return a.emit(func(w io.Writer) error { return plan.Write(w, a.cfg.Format) })
}

// emitFramework prints e's strategy as the --emit framework's launch
// configuration; a strategy the framework cannot express is bad input.
func (a *app) emitFramework(e results.Evaluation) error {
	if e.BatchDefault != "" {
		// The launch configuration must stay valid: the note goes to stderr.
		fmt.Fprintf(a.stderr, "plan: note: the global batch of %d sequences was %s\n", e.Workload.Batch, e.BatchDefault)
	}
	return a.emit(func(w io.Writer) error {
		if err := results.Emit(w, a.cfg.Emit, e); err != nil {
			if results.IsEmitError(err) {
				return badInputf("--emit %s: %w", a.cfg.Emit, err)
			}
			return err
		}
		for _, n := range results.EmitNotes(a.cfg.Emit, e) {
			fmt.Fprintf(a.stderr, "plan: note: --emit %s: %s\n", a.cfg.Emit, n)
		}
		return nil
	})
}

// request returns the planning request of problem p under fix, with the
// configuration's top and objective.
func (a *app) request(p problem, fix space.Fix) planner.Request {
	return planner.Request{Model: p.model, Cluster: p.cluster, Workload: p.workload, Fix: fix.String(),
		Options: modelOptions(p.framework), Top: a.cfg.Top, Framework: p.framework.Name, Objective: a.cfg.Objective,
		MaxOOMRisk: maxOOMRisk(a.cfg.MaxOOMRisk), OffloadWhenNothingFits: true}
}

// maxOOMRisk is the request's risk limit for --max-oom-risk r: an explicit
// 0 (no risk at all) is negative there, as 0 is the default.
func maxOOMRisk(r float64) float64 {
	if r == 0 {
		return -1
	}
	return r
}

// solve searches one request and returns its plan with the training
// figures of --tokens and --price and, when the output needs it (md, html,
// --emit), the traced evaluation of the recommended strategy (the one
// planning path, planner.Solve), drawing a progress bar. suggest lets a
// plan that does not fit search for what would (larger clusters, shorter
// sequences, smaller batches); --min-chips turns it off. It is the
// planner.SolveFunc of the command line.
func (a *app) solve(ctx context.Context, req planner.Request, suggest bool) (results.Plan, error) {
	if err := search.CheckMethod(a.cfg.Search); err != nil {
		return results.Plan{}, badInput(err)
	}
	bar := newProgress(a.stderr, "searching "+results.Label(req.Cluster.Name), a.cfg.Quiet)
	settings := search.Settings{Method: a.cfg.Search, Seed: a.cfg.Seed, Progress: bar.update, Stage: bar.stage, Suggest: suggest}
	detail := a.cfg.Emit != "" || a.cfg.Format == results.FormatMarkdown || a.cfg.Format == results.FormatHTML
	plan, err := planner.Solve(ctx, req, settings, detail)
	bar.finish()
	var in *search.InputError
	if errors.As(err, &in) {
		// Still a *search.InputError beneath, so that a cluster list
		// (planner.Clusters) can tell a cluster without a layout.
		return results.Plan{}, badInput(&search.InputError{Err: fmt.Errorf("cannot search %s on %s: %w", results.Label(req.Model.Name), results.Label(req.Cluster.Name), in.Err)})
	}
	if err != nil {
		return results.Plan{}, err
	}
	if n := req.OffloadNote(plan); n != "" {
		fmt.Fprintf(a.stderr, "plan: note: %s\n", n)
	}
	plan.Search.Fix = a.cfg.Fix
	for _, n := range plan.Notes {
		fmt.Fprintf(a.stderr, "plan: note: %s: %s\n", results.Label(req.Cluster.Name), n)
	}
	plan.SetTraining(a.cfg.Training())
	if err := plan.ApplyBudget(req.Cluster); err != nil {
		return results.Plan{}, badInput(err)
	}
	return plan, nil
}

// isNoFit reports whether err says that nothing fits (exit 1).
func isNoFit(err error) bool {
	var nf *search.NoFitError
	return errors.As(err, &nf)
}

// frameworkList checks the entries of a --framework list: none empty and
// none named twice (a repeated framework would print the same row twice).
func frameworkList(names []string) error {
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			return badInputf("--framework has an empty entry; list framework names or YAML files separated by commas, e.g. megatron,maxtext")
		}
		if seen[n] {
			return badInputf("--framework names %s twice; name each framework once", n)
		}
		seen[n] = true
	}
	return nil
}
