// Command plan searches parallel training strategies for transformers on
// TPU and GPU clusters. See the cmd package and the README for its usage.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/meshplan/meshplan/cmd"
)

// main runs the command line. The first Ctrl-C cancels the run's context,
// so that a search stops, ends its progress bar on a newline and says that
// it stopped; a second one kills the process at once.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	go func() {
		<-ctx.Done()
		stop() // the next Ctrl-C gets the default behaviour
	}()
	code := cmd.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
