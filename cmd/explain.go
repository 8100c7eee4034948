package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/space"
)

// newExplainCommand builds `plan explain`.
func newExplainCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain --model M --cluster C --batch N [--seq S] --strategy SPEC",
		Short: "Evaluate one strategy and print its program, time and memory breakdowns",
		Long: `Evaluate one strategy: check it against the model, cluster and batch (every
violated rule is listed), place it on the mesh, and print the program op by op
in sharding notation with the collective each op causes, then the step-time and
memory breakdowns and every collective of the step.

The strategy string is comma-separated key=value (every key optional):
` + strings.Join(space.Keys(), ", ") + ` (docs/contract.md).
Each row of a plan prints the string that reproduces it here.

--format csv, md and html print the same breakdown as a CSV row, a Markdown
summary or a self-contained HTML page (with the step's timeline as an SVG);
--format trace prints the step's timeline per pipeline rank and stream as
Chrome/Perfetto trace-event JSON (open it in ui.perfetto.dev); --tokens and --price add the days,
chip-hours and cost to train; --emit prints the strategy as a training
framework's launch flags or config instead.`,
		Example: `  plan explain --model llama3-8b --cluster v5p-16 --batch 32 --strategy fsdp=8
  plan explain --model llama70b --cluster v5p-256 --batch 512 --strategy 'fsdp=16,tp=8,mesh=tp:z;fsdp:x.y' --format json
  plan explain --model llama3-8b --cluster h100-64 --batch 256 --strategy tp=8,dp=8 --emit megatron
  plan explain --model llama3-70b --cluster h100-1024 --batch 1024 --strategy tp=8,pp=4,dp=32,schedule=interleaved,v=5 --format trace --out step.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runExplain() },
	}
	addProblemFlags(cmd.Flags())
	cmd.Flags().String("strategy", "", "the strategy `SPEC` to evaluate, e.g. fsdp=16,tp=8,mb=1")
	addReportFlags(cmd.Flags(), "the strategy (--strategy)")
	return cmd
}

// runExplain evaluates the configured strategy and prints it.
func (a *app) runExplain() error {
	p, err := a.loadProblem()
	if err != nil {
		return err
	}
	if a.cfg.Strategy == "" {
		return badInputf("--strategy is required, e.g. --strategy fsdp=8,tp=4")
	}
	s, err := space.Parse(a.cfg.Strategy)
	if err != nil {
		return badInputf("--strategy %q: %w", a.cfg.Strategy, err)
	}
	ev, err := evaluate(p, s)
	if err != nil {
		return err
	}
	if n := a.request(p, space.Fix{}).ALiBiNote(); n != "" {
		fmt.Fprintf(a.stderr, "plan: note: %s\n", n)
	}
	ev.BatchDefault = p.batchRule
	if a.cfg.Emit != "" {
		return a.emitFramework(ev)
	}
	t := a.cfg.Training()
	if err := t.CheckBudget(ev); err != nil {
		return badInput(err)
	}
	return a.emit(func(w io.Writer) error { return results.WriteExplain(w, a.cfg.Format, ev, t) })
}
