package cmd

import (
	"context"
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/text"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/internal/settings"
	"github.com/meshplan/meshplan/results"
)

// Exit codes of Execute.
const (
	// ExitOK means success.
	ExitOK = 0
	// ExitNoFit means the input was understood but nothing fits, or the
	// planner failed internally.
	ExitNoFit = 1
	// ExitBadInput means bad input: flags, files, names, numbers or strategy.
	ExitBadInput = 2
)

// app is the state of one Execute: the output streams and the
// configuration read by the root's PersistentPreRunE. Nothing here outlives
// the call.
type app struct {
	stdout, stderr io.Writer
	// cfg is filled by loadConfig from a viper instance of this run.
	cfg Config
	// started is set once a command's own code runs; an error before that
	// (an unknown flag or command, a bad argument count) is a usage error.
	started bool
}

// Execute runs the plan command line with args (without the program name),
// writing results to stdout and the one-sentence error, the progress bar
// and warnings to stderr. It returns the process exit code: ExitOK,
// ExitNoFit or ExitBadInput (see the package documentation).
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	a := &app{stdout: stdout, stderr: stderr}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "plan: internal error: %v (please report it with the command line that caused it)\n", text.OneLine(fmt.Sprint(r)))
			code = ExitNoFit
		}
	}()
	root := newRootCommand(a)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	printError(stderr, err)
	return a.exitCode(err)
}

// exitCode maps an error to the exit code of the contract.
func (a *app) exitCode(err error) int {
	var bad *inputError
	switch {
	case isNoFit(err):
		return ExitNoFit
	case errors.As(err, &bad), !a.started:
		return ExitBadInput
	default:
		return ExitNoFit
	}
}

// newRootCommand builds the command tree of one Execute. The root command
// itself searches the strategy space (plan.go).
func newRootCommand(a *app) *cobra.Command {
	root := newPlanCommand(a)
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.CompletionOptions.HiddenDefaultCmd = true
	root.PersistentFlags().String("config", "", "read flag values from this YAML `file` (keys as the flags, with _ for -)")
	root.PersistentFlags().String("format", DefaultConfig().Format, "output format: table, json, csv, md or html (plan and explain), trace (explain only); the other commands print table or json")
	root.PersistentFlags().String("out", "", "write the output to this `file` instead of stdout: a regular file atomically, a device or pipe directly, - for stdout")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		a.started = true
		return a.loadConfig(cmd)
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return badInput(settings.FlagError(err))
	})
	root.AddCommand(
		newModelsCommand(a),
		newClustersCommand(a),
		newExplainCommand(a),
		newValidateCommand(a), // cmd/validate.go
		newSweepCommand(a),
		newMergeCommand(a),
		newCalibrateCommand(a), // cmd/calibrate.go
	)
	return root
}

// inputError marks an error as bad input (exit 2).
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// badInput marks err as bad input; nil stays nil.
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return &inputError{err}
}

// badInputf formats a bad-input error.
func badInputf(format string, args ...any) error {
	return &inputError{fmt.Errorf(format, args...)}
}

// printError writes err once: "plan: first line", with any further lines
// (a list of violated rules) indented below it.
func printError(w io.Writer, err error) {
	lines := strings.Split(strings.TrimSpace(results.EscapeControls(err.Error())), "\n")
	fmt.Fprintf(w, "plan: %s\n", lines[0])
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(l); l != "" {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}
