package cmd

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/sweep"
)

// newMergeCommand builds `plan merge`: combine the shard files of a sweep.
func newMergeCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "merge DIR... [--out FILE] [--summary FILE]",
		Short: "Merge the shard outputs of a sweep into one JSON-lines file",
		Long: `Merge the cells-I-of-N.jsonl files of one or more sweep directories into one
JSON-lines file with every cell of the sweep exactly once, in grid order.
The grid comes from each directory's sweep.json, which every shard writes;
the directories must all hold the same sweep.

A cell found twice is kept once when both lines agree apart from the
search's elapsed_s, and is an error naming both files when they differ. A
cell of the grid found in no file is an error giving how many are missing
and the first few: run their shards again with --resume, then merge.`,
		Example: `  plan merge out/ --out all.jsonl --summary summary.csv
  plan merge node-0/ node-1/ node-2/ > all.jsonl`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badInputf("merge needs at least one sweep directory (the --out of plan sweep)")
			}
			return nil
		},
		// Merge reads no configuration of its own.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			a.started = true
			return nil
		},
		RunE: func(cmd *cobra.Command, dirs []string) error { return a.runMerge(cmd, dirs) },
	}
	cmd.Flags().String("out", "", "write the merged JSON lines to this `file` (atomically; - is stdout, the default)")
	cmd.Flags().String("summary", "", "also write the summary CSV of every cell, in grid order, to this `file` (- is stdout)")
	return cmd
}

// runMerge merges dirs and writes the result.
func (a *app) runMerge(cmd *cobra.Command, dirs []string) error {
	for _, f := range []string{"format", "config"} {
		if cmd.Flags().Changed(f) {
			v, _ := cmd.Flags().GetString(f)
			return badInputf("--%s %s does not apply to plan merge: it writes JSON lines and, with --summary, a CSV; drop --%s", f, v, f)
		}
	}
	out, _ := cmd.Flags().GetString("out")
	summary, _ := cmd.Flags().GetString("summary")
	if summary == "-" && isStdout(out) {
		return badInputf("--summary - and the merged cells (no --out, or --out -) would both go to standard output; give one of them a file")
	}
	m, err := sweep.Merge(dirs)
	if err != nil {
		return badInput(err)
	}
	var buf bytes.Buffer
	if err := m.WriteJSONL(&buf); err != nil {
		return err
	}
	if err := a.writeOut("--out", out, buf.Bytes()); err != nil {
		return err
	}
	if summary != "" {
		var sb bytes.Buffer
		if err := sweep.WriteSummary(&sb, m.Records()); err != nil {
			return err
		}
		if err := a.writeOut("--summary", summary, sb.Bytes()); err != nil {
			return err
		}
	}
	torn := ""
	if len(m.Torn) > 0 {
		torn = fmt.Sprintf(", ignored the torn last line of %d files", len(m.Torn))
	}
	fmt.Fprintf(a.stderr, "plan merge: %d cells from %d files (%d identical repeats dropped%s)\n", len(m.Lines), len(m.Files), m.Dropped, torn)
	return nil
}
