package cmd

import (
	"bytes"
	"io"

	"github.com/meshplan/meshplan/internal/outfile"
	"github.com/meshplan/meshplan/results"
)

// emit renders the output into memory and then writes it to standard
// output or to the --out path (see writeOut), so that a failed run never
// leaves half a file behind.
func (a *app) emit(render func(w io.Writer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	data := buf.Bytes()
	if a.forTerminal() {
		data = []byte(results.EscapeControls(buf.String()))
	}
	return a.writeOut("--out", a.cfg.Out, data)
}

// forTerminal reports whether the output is text for a terminal (a table
// or --emit's launch flags) rather than a machine format, whose own
// escaping (JSON, CSV, Markdown, HTML) keeps user input inert.
func (a *app) forTerminal() bool {
	return a.cfg.Emit != "" || a.cfg.Format == results.FormatTable
}

// writeOut writes data to the path a flag named: empty or "-" is standard
// output, a regular file (or a new one) is written atomically, a device,
// pipe or open descriptor directly, a symbolic link at its target
// (outfile.Write). A failed write is bad input (exit 2) naming the flag and
// the path.
func (a *app) writeOut(flag, path string, data []byte) error {
	if path == "" {
		path = outfile.Stdout
	}
	if err := outfile.Write(path, data, a.stdout); err != nil {
		return badInputf("%s: %w", flag, err)
	}
	return nil
}

// isStdout reports whether an output path means standard output.
func isStdout(path string) bool { return path == "" || path == outfile.Stdout }
