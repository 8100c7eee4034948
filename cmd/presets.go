package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
)

// newModelsCommand builds `plan models`.
func newModelsCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "models [NAME|FILE...]",
		Short: "Show models: the named presets or files, or every preset",
		Long: `Show models: each argument is a preset name, a YAML file in the contract's
form or a Hugging Face config.json; with no argument, every preset.
Parameter counts include the embeddings.`,
		Example: `  plan models
  plan models --format json llama3-8b mixtral-8x7b
  plan models my-model.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			specs := model.Presets()
			if len(args) > 0 {
				specs = specs[:0:0]
				for _, arg := range args {
					m, err := loadModel(arg, a.stderr)
					if err != nil {
						return err
					}
					specs = append(specs, m)
				}
			}
			return a.emit(func(w io.Writer) error {
				if a.cfg.Format == formatJSON {
					return results.WriteModelsJSON(w, specs)
				}
				return results.WriteModelsTable(w, specs)
			})
		},
		ValidArgsFunction: cobra.FixedCompletions(model.Names(), cobra.ShellCompDirectiveDefault),
	}
}

// newClustersCommand builds `plan clusters`.
func newClustersCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "clusters [NAME|FILE...]",
		Short: "Show clusters: the named presets, names or files, or every preset",
		Long: `Show clusters: each argument is a cluster name CHIP-N (TPU names count
TensorCores for v4 and v5p, chips for v5e and v6e; a prefix Kx joins K slices
over the data-centre network; GPU names count GPUs) or a YAML file; with no
argument, every preset.`,
		Example: `  plan clusters
  plan clusters v5p-256 h100-1024
  plan clusters --format json 2xv5p-256`,
		RunE: func(cmd *cobra.Command, args []string) error {
			names := args
			if len(names) == 0 {
				names = profiles.Names()
			}
			cs := make([]profiles.Cluster, 0, len(names))
			for _, arg := range names {
				c, err := loadCluster(arg)
				if err != nil {
					return err
				}
				cs = append(cs, c)
			}
			return a.emit(func(w io.Writer) error {
				if a.cfg.Format == formatJSON {
					return results.WriteClustersJSON(w, cs)
				}
				return results.WriteClustersTable(w, cs)
			})
		},
		ValidArgsFunction: cobra.FixedCompletions(profiles.Names(), cobra.ShellCompDirectiveDefault),
	}
}

// loadModel resolves --model or a models argument; every failure is bad
// input. The warnings of a config.json read by assumption (a model_type
// the planner does not know) go to stderr, one line each.
func loadModel(arg string, stderr io.Writer) (model.Spec, error) {
	if arg == "" {
		return model.Spec{}, badInputf("--model is required: a preset name (see plan models), a YAML file or a config.json")
	}
	m, warnings, err := model.LoadWarnings(arg)
	if err != nil {
		return model.Spec{}, badInput(err)
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "plan: warning: %s: %s\n", arg, w)
	}
	return m, nil
}

// loadCluster resolves --cluster or a clusters argument; every failure is bad input.
func loadCluster(arg string) (profiles.Cluster, error) {
	if arg == "" {
		return profiles.Cluster{}, badInputf("--cluster is required: a name such as v5p-256 or h100-1024 (see plan clusters) or a YAML file")
	}
	c, err := profiles.Load(arg)
	if err != nil {
		return profiles.Cluster{}, badInput(err)
	}
	return c, nil
}
