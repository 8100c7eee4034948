package steps

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/validate/internal/cells"

	"github.com/meshplan/meshplan/model"
)

// Outcomes of a measured step (the outcome column).
const (
	// OutcomeRan marks a step that ran.
	OutcomeRan = "ran"
	// OutcomeOutOfMemory marks a step that did not fit in memory.
	OutcomeOutOfMemory = "out of memory"
)

// maxBatch bounds micro_batch x accumulated_micro_batches, as cmd bounds
// --batch: larger numbers are typos, not training steps.
const maxBatch = 10_000_000

// Row is one measured training step: a row of a steps file. Optional
// cells left blank are zero (or nil, or empty).
type Row struct {
	// Line is the 1-based line of the row in its file (the header is line 1).
	Line int
	// Model is the model cell: a model file or a preset name.
	Model string
	// Params is the model's parameter count as the file gives it (0 when
	// blank); not used.
	Params int
	// Seq is the sequence length in tokens.
	Seq int
	// MicroBatch is the number of sequences per micro-batch.
	MicroBatch int
	// Accumulated is the number of micro-batches per optimizer step
	// (accumulated_micro_batches; 1 when blank or absent).
	Accumulated int
	// Recompute is the activation recomputation policy, as the strategy
	// string's recompute key takes it.
	Recompute string
	// Compiled reports a compiled (true) or eager (false) step; nil when
	// the file does not say.
	Compiled *bool
	// Framework is the framework cell: a profile name or YAML file; empty
	// when blank or absent.
	Framework string
	// Cluster is the cluster cell: a name or YAML file; empty means h100-1.
	Cluster string
	// Ran reports that the step ran (outcome "ran"); false means it ran
	// out of memory.
	Ran bool
	// StepS is the measured time of one step in seconds (rows that ran).
	StepS float64
	// PeakAllocatedBytes is the allocator's measured peak in bytes (rows
	// that ran).
	PeakAllocatedBytes float64
	// PeakReservedBytes, TokensPerS and OptimizerStepS are the other
	// measured figures, when given; not used.
	PeakReservedBytes, TokensPerS, OptimizerStepS float64
}

// Batch is the step's batch in sequences: MicroBatch x Accumulated.
func (r Row) Batch() int { return r.MicroBatch * r.Accumulated }

// ID names the row, e.g. "llama32-1b s2048 mb2 k1 none compiled": the model
// cell, the sequence length, the micro-batch, the accumulated micro-batches,
// the recompute policy and, when the file says, compiled or eager. Two rows
// that measure the same configuration have the same ID; Line tells them apart.
func (r Row) ID() string {
	id := fmt.Sprintf("%s s%d mb%d k%d %s", r.Model, r.Seq, r.MicroBatch, r.Accumulated, r.Recompute)
	if r.Compiled != nil {
		if *r.Compiled {
			return id + " compiled"
		}
		return id + " eager"
	}
	return id
}

// column is one known column: its name and how it sets a Row field from a
// cell that is not blank.
type column struct {
	name string
	set  func(r *Row, v string) error
}

// requiredColumns returns the columns every steps file must have.
func requiredColumns() []string {
	return []string{"model", "seq", "micro_batch", "recompute", "outcome"}
}

// columns returns every column Read accepts, in the reference file's order
// followed by the optional ones it does not have.
func columns() []column {
	count := func(name string, f func(*Row) *int) column {
		return column{name, func(r *Row, v string) error {
			n, err := parseCount(v)
			*f(r) = n
			return err
		}}
	}
	number := func(name string, f func(*Row) *float64) column {
		return column{name, func(r *Row, v string) error {
			x, err := cells.Number(v)
			*f(r) = x
			return err
		}}
	}
	return []column{
		{"model", func(r *Row, v string) error { r.Model = v; return nil }},
		{"params", func(r *Row, v string) error {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil || n < 0 || n > model.MaxParams || n != math.Trunc(n) {
				return fmt.Errorf("%q is not a parameter count", v)
			}
			r.Params = int(n)
			return nil
		}},
		count("seq", func(r *Row) *int { return &r.Seq }),
		count("micro_batch", func(r *Row) *int { return &r.MicroBatch }),
		count("accumulated_micro_batches", func(r *Row) *int { return &r.Accumulated }),
		{"recompute", func(r *Row, v string) error {
			if strings.IndexFunc(v, func(c rune) bool {
				return !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
			}) >= 0 {
				return fmt.Errorf("%q is not a recompute policy (none, selective, full or a framework's policy name)", v)
			}
			r.Recompute = v
			return nil
		}},
		{"compiled", func(r *Row, v string) error {
			switch v {
			case "0":
				r.Compiled = new(bool)
			case "1":
				r.Compiled = new(bool)
				*r.Compiled = true
			default:
				return fmt.Errorf("%q is not 0 (eager) or 1 (compiled)", v)
			}
			return nil
		}},
		number("step_s", func(r *Row) *float64 { return &r.StepS }),
		number("tokens_per_s", func(r *Row) *float64 { return &r.TokensPerS }),
		number("optimizer_step_s", func(r *Row) *float64 { return &r.OptimizerStepS }),
		number("peak_allocated_bytes", func(r *Row) *float64 { return &r.PeakAllocatedBytes }),
		number("peak_reserved_bytes", func(r *Row) *float64 { return &r.PeakReservedBytes }),
		{"outcome", func(r *Row, v string) error {
			switch strings.Join(strings.Fields(strings.ToLower(v)), " ") {
			case OutcomeRan:
				r.Ran = true
			case OutcomeOutOfMemory:
				r.Ran = false
			default:
				return fmt.Errorf("%q is not %q or %q", v, OutcomeRan, OutcomeOutOfMemory)
			}
			return nil
		}},
		{"framework", func(r *Row, v string) error { r.Framework = v; return nil }},
		{"cluster", func(r *Row, v string) error { r.Cluster = v; return nil }},
	}
}

// ColumnNames returns the names of every column Read accepts.
func ColumnNames() []string {
	cs := columns()
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.name
	}
	return names
}

// Read parses a steps file (see the package documentation). Its errors
// name the line and, for a cell, the column: "steps: line 4: column
// "micro_batch": "-2" is negative".
func Read(r io.Reader) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 0 // every row as long as the header
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("steps: the file is empty; it needs a header row naming the columns (" +
			strings.Join(requiredColumns(), ", ") + ", ...)")
	}
	if err != nil {
		return nil, fmt.Errorf("steps: %w", cells.CSVError(err))
	}
	cols, err := readHeader(header)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("steps: %w", cells.CSVError(err))
		}
		if cells.Blank(rec) {
			continue
		}
		line, _ := cr.FieldPos(0)
		row, err := readRow(rec, header, cols, line)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, errors.New("steps: the file has a header but no rows")
	}
	return rows, nil
}

// readHeader normalises the header's names in place and returns each
// column's definition; it rejects unknown, repeated and missing columns.
func readHeader(header []string) ([]column, error) {
	known := columns()
	names := ColumnNames()
	cols := make([]column, len(header))
	if i := cells.HeaderNames(header); i > 0 {
		return nil, fmt.Errorf("steps: line 1: header column %d has no name", i)
	}
	for i, name := range header {
		j := slices.IndexFunc(known, func(c column) bool { return c.name == name })
		if j < 0 {
			short := truncate(name)
			return nil, fmt.Errorf("steps: line 1: unknown column %q (did you mean %q? known: %s)",
				short, cells.Nearest(short, names, -1), strings.Join(names, ", "))
		}
		if slices.Contains(header[:i], name) {
			return nil, fmt.Errorf("steps: line 1: column %q appears twice", name)
		}
		cols[i] = known[j]
	}
	for _, req := range requiredColumns() {
		if !slices.Contains(header, req) {
			return nil, fmt.Errorf("steps: line 1: missing required column %q (required: %s)", req, strings.Join(requiredColumns(), ", "))
		}
	}
	return cols, nil
}

// readRow fills a Row from one record and checks that it is complete.
func readRow(rec, header []string, cols []column, line int) (Row, error) {
	row := Row{Line: line, Accumulated: 1}
	for i, c := range cols {
		v := strings.TrimSpace(rec[i])
		if v == "" {
			continue
		}
		if err := c.set(&row, v); err != nil {
			return Row{}, fmt.Errorf("steps: line %d: column %q: %w", line, header[i], err)
		}
	}
	cell := func(name string) string {
		if i := slices.Index(header, name); i >= 0 {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	for _, req := range requiredColumns() {
		if cell(req) == "" {
			return Row{}, fmt.Errorf("steps: line %d: column %q is blank", line, req)
		}
	}
	if row.MicroBatch > maxBatch/row.Accumulated {
		return Row{}, fmt.Errorf("steps: line %d: micro_batch %d x accumulated_micro_batches %d is more than %d sequences",
			line, row.MicroBatch, row.Accumulated, maxBatch)
	}
	if row.Seq > model.MaxSeqLen {
		return Row{}, fmt.Errorf("steps: line %d: column \"seq\": %d is longer than %d tokens", line, row.Seq, model.MaxSeqLen)
	}
	if row.Ran {
		for _, m := range []struct {
			name, what string
			v          float64
		}{{"step_s", "its step time in seconds", row.StepS}, {"peak_allocated_bytes", "its peak allocated memory in bytes", row.PeakAllocatedBytes}} {
			switch {
			case !slices.Contains(header, m.name):
				return Row{}, fmt.Errorf("steps: line %d: the step ran, so it needs a %q column with %s", line, m.name, m.what)
			case cell(m.name) == "":
				return Row{}, fmt.Errorf("steps: line %d: column %q is blank; a step that ran needs %s", line, m.name, m.what)
			case m.v <= 0:
				return Row{}, fmt.Errorf("steps: line %d: column %q: %s is not positive", line, m.name, cell(m.name))
			}
		}
	}
	return row, nil
}

// parseCount reads a positive whole number; "2048.0" and "4e3" are
// accepted when whole.
func parseCount(v string) (int, error) {
	n, err := cells.Whole(v, maxBatch*model.MaxSeqLen)
	if err == nil && n == 0 {
		return 0, fmt.Errorf("%q is zero; it must be at least 1", v)
	}
	return n, err
}

// truncate shortens a long cell for an error message.
func truncate(s string) string {
	const n = 64
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}
