package cmd

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/internal/settings"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/planner"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// problem is what both plan and explain read first: the model, the
// cluster and the workload.
type problem struct {
	model     model.Spec
	cluster   profiles.Cluster
	workload  space.Workload
	framework framework.Profile
	// batchRule says how the batch was defaulted; empty when it was given.
	batchRule string
}

// addProblemFlags registers the flags that name a problem.
func addProblemFlags(fs *pflag.FlagSet) {
	fs.Var(settings.NewOnce(""), "model", "model: a preset `name` (see plan models), a YAML file or a Hugging Face config.json")
	fs.Var(settings.NewOnce(""), "cluster", "cluster: a `name` such as v5p-256, 2xv5p-256 or h100-1024 (see plan clusters), or a YAML file")
	fs.Var(settings.NewInt(0, 0), "batch", "global batch in `sequences` per step (default: chosen from the cluster and the model, see --help)")
	fs.Var(settings.NewInt(0, 0), "batch-tokens", "global batch in `tokens` per step (4M, 4Mi, 2e6, ...), rounded to whole sequences")
	fs.Var(settings.NewInt(0, 0), "seq", "sequence length in `tokens` (8192, 8Ki, ...; default: the model's seq_len)")
	fs.String("framework", "", "training framework whose kernels, precision and optimizer are modelled: a `name` ("+
		strings.Join(framework.Names(), ", ")+"; default "+framework.Default+") or a YAML file")
}

// loadFramework resolves --framework: a built-in profile or a YAML file.
func loadFramework(arg string) (framework.Profile, error) {
	f, err := planner.LoadFramework(arg)
	return f, inputErr(err)
}

// inputErr turns a *search.InputError into bad input (exit 2); other
// errors, and nil, stay as they are.
func inputErr(err error) error {
	var in *search.InputError
	if errors.As(err, &in) {
		return badInput(in.Err)
	}
	return err
}

// loadProblem resolves the model, cluster and workload of the configuration.
func (a *app) loadProblem() (problem, error) {
	m, err := loadModel(a.cfg.Model, a.stderr)
	if err != nil {
		return problem{}, err
	}
	c, err := loadCluster(a.cfg.Cluster)
	if err != nil {
		return problem{}, err
	}
	f, err := a.framework()
	if err != nil {
		return problem{}, err
	}
	w, rule, err := workload(a.cfg, m, c.Chips(), f.Limits.SplitsSequences())
	if err != nil {
		return problem{}, err
	}
	return problem{model: m, cluster: c, workload: w, framework: f, batchRule: rule}, nil
}

// framework resolves the framework of the configuration: --framework, or
// --emit's framework (--emit F implies --framework F, so that the
// recommended strategy is one F can launch). A profile file whose base is
// F plans for F too (its limits are F's): an fp8 recipe of its own, such
// as nvfp4, is launched by F's flags.
func (a *app) framework() (framework.Profile, error) {
	arg := a.cfg.Framework
	if a.cfg.Emit == "" {
		return loadFramework(arg)
	}
	if arg == "" {
		arg = a.cfg.Emit
	}
	f, err := loadFramework(arg)
	if err == nil && arg != a.cfg.Emit && f.Limits.Framework != a.cfg.Emit {
		return framework.Profile{}, badInputf("--emit %s plans for %s: drop --framework %s, emit for it, or give a profile file with base: %s", a.cfg.Emit, a.cfg.Emit, arg, a.cfg.Emit)
	}
	return f, err
}

// workload returns the global batch and sequence length of the
// configuration for a cluster of chips under a framework that can split a
// sequence over chips or not (planner.Workload, split); rule is empty
// when the user gave the batch.
func workload(cfg Config, m model.Spec, chips int, split bool) (w space.Workload, rule string, err error) {
	w, rule, err = planner.Workload(m, cfg.Seq, cfg.Batch, cfg.BatchTokens, chips, split)
	return w, rule, inputErr(err)
}

// modelOptions are the models' options of every evaluation under framework
// profile f, shared by plan, explain, sweep, validate and calibrate so that
// explain reproduces a plan's rows exactly.
func modelOptions(f framework.Profile) search.Options { return f.SearchOptions() }

// addReportFlags registers the flags plan and explain share for reports:
// time and cost to train and the launch configuration; what is emitted names
// what --emit prints: plan's recommended strategy or explain's --strategy.
func addReportFlags(fs *pflag.FlagSet, emitted string) {
	fs.String("tokens", "", "train on `N` tokens (15T, 300B, 2.5M, 2e12): adds the days and chip-hours to train to each row")
	fs.Float64("price", 0, "price of one chip for one `hour`: adds the cost to train (needs --tokens)")
	fs.String("emit", "", "print "+emitted+" as a `framework`'s launch flags or config instead: "+strings.Join(results.Frameworks(), ", "))
	addBudgetFlags(fs)
}

// registerEmitCompletion completes --emit's values.
func registerEmitCompletion(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("emit", cobra.FixedCompletions(results.Frameworks(), cobra.ShellCompDirectiveNoFileComp))
}
