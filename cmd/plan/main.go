// Command plan searches parallel training strategies for transformers on
// TPU and GPU clusters. See the cmd package and the README for its usage.
package main

import (
	"context"
	"os"

	"github.com/meshplan/meshplan/cmd"
)

func main() { os.Exit(cmd.Execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }
