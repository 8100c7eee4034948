package results

import (
	"fmt"
	"io"
	"strings"
)

// Output formats, as --format spells them.
const (
	FormatTable    = "table"
	FormatJSON     = "json"
	FormatCSV      = "csv"
	FormatMarkdown = "md"
	FormatHTML     = "html"
	// FormatTrace is `plan explain`'s only: the step's timeline as
	// Chrome/Perfetto trace-event JSON (package timeline).
	FormatTrace = "trace"
)

// Formats returns every output format of `plan` and `plan explain`.
func Formats() []string {
	return []string{FormatTable, FormatJSON, FormatCSV, FormatMarkdown, FormatHTML}
}

// ExplainFormats returns every output format of `plan explain`: those of
// `plan` and trace.
func ExplainFormats() []string { return append(Formats(), FormatTrace) }

// Write renders the plan in format: table, json, csv, md or html.
func (p Plan) Write(w io.Writer, format string) error {
	switch format {
	case FormatTable:
		return p.WriteTable(w)
	case FormatJSON:
		return p.WriteJSON(w)
	case FormatCSV:
		return p.WriteCSV(w)
	case FormatMarkdown:
		return p.WriteMarkdown(w)
	case FormatHTML:
		return p.WriteHTML(w)
	}
	return unknownFormat(format)
}

// WriteExplain renders one evaluated strategy in format, with the days,
// chip-hours and cost of training t when t is not zero.
func WriteExplain(w io.Writer, format string, e Evaluation, t Training) error {
	switch format {
	case FormatTable:
		return writeExplainTable(w, e, t)
	case FormatJSON:
		r := NewTrainingResult(e, t)
		r.BatchDefault = e.BatchDefault
		return writeJSON(w, r)
	case FormatCSV:
		return WriteExplainCSV(w, e, t)
	case FormatMarkdown:
		return WriteExplainMarkdown(w, e, t)
	case FormatHTML:
		return WriteExplainHTML(w, e, t)
	case FormatTrace:
		return WriteExplainTrace(w, e)
	}
	return unknownFormat(format)
}

func unknownFormat(f string) error {
	return fmt.Errorf("results: unknown format %q (want %s)", f, strings.Join(Formats(), ", "))
}
