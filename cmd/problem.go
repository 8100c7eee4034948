package cmd

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/meshplan/meshplan/internal/settings"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/profiles/framework"
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
	fs.String("model", "", "model: a preset `name` (see plan models), a YAML file or a Hugging Face config.json")
	fs.String("cluster", "", "cluster: a `name` such as v5p-256, 2xv5p-256 or h100-1024 (see plan clusters), or a YAML file")
	fs.Var(settings.NewInt(0, 0), "batch", "global batch in `sequences` per step (default: chosen from the cluster and the model, see --help)")
	fs.Var(settings.NewInt(0, 0), "batch-tokens", "global batch in `tokens` per step (4M, 4Mi, 2e6, ...), rounded to whole sequences")
	fs.Var(settings.NewInt(0, 0), "seq", "sequence length in `tokens` (8192, 8Ki, ...; default: the model's seq_len)")
	fs.String("framework", "", "training framework whose kernels, precision and optimizer are modelled: a `name` ("+
		strings.Join(framework.Names(), ", ")+"; default "+framework.Default+") or a YAML file")
}

// loadFramework resolves --framework: a built-in profile or a YAML file.
func loadFramework(arg string) (framework.Profile, error) {
	if arg == "" {
		arg = framework.Default
	}
	f, err := framework.Load(arg)
	if err != nil {
		return framework.Profile{}, badInput(err)
	}
	return f, nil
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
	w, rule, err := workload(a.cfg, m, c.Chips())
	if err != nil {
		return problem{}, err
	}
	f, err := a.framework()
	if err != nil {
		return problem{}, err
	}
	return problem{model: m, cluster: c, workload: w, framework: f, batchRule: rule}, nil
}

// framework resolves the framework of the configuration: --framework, or
// --emit's framework (--emit F implies --framework F, so that the
// recommended strategy is one F can launch).
func (a *app) framework() (framework.Profile, error) {
	arg := a.cfg.Framework
	if a.cfg.Emit != "" {
		switch {
		case arg == "":
			arg = a.cfg.Emit
		case arg != a.cfg.Emit:
			return framework.Profile{}, badInputf("--emit %s plans for %s: drop --framework %s or emit for it", a.cfg.Emit, a.cfg.Emit, arg)
		}
	}
	return loadFramework(arg)
}

// workload returns the global batch and sequence length for a cluster of
// chips: --seq or the model's seq_len; --batch, or --batch-tokens, or
// DefaultBatchTokens(chips) when neither is given, rounded to the nearest
// whole number of sequences, at least one. rule is empty when the user gave
// the batch, else the default's rule in words and how to set the batch,
// which every output repeats.
func workload(cfg Config, m model.Spec, chips int) (w space.Workload, rule string, err error) {
	seq := cfg.Seq
	if seq == 0 {
		seq = m.SeqLen
	}
	if seq <= 0 {
		return space.Workload{}, "", badInputf("model %s has no seq_len: give --seq", results.Label(m.Name))
	}
	batch := cfg.Batch
	if batch == 0 {
		tokens := cfg.BatchTokens
		if tokens == 0 {
			tokens = DefaultBatchTokens(chips)
			rule = defaultBatchRule(chips, tokens)
		}
		batch = max(1, (tokens+seq/2)/seq)
	}
	return space.Workload{Batch: batch, SeqLen: seq}, rule, nil
}

// modelOptions are the models' options of every evaluation under framework
// profile f, shared by plan, explain, sweep, validate and calibrate so that
// explain reproduces a plan's rows exactly.
func modelOptions(f framework.Profile) search.Options { return f.SearchOptions() }
