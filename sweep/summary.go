package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/meshplan/meshplan/internal/text"
	"io"
	"strconv"

	"github.com/meshplan/meshplan/internal/outfile"
	"github.com/meshplan/meshplan/results"
)

// SummaryHeader is the header row of summary.csv. Each further row is one
// cell: its inputs, the search's counts and the recommended strategy with
// its 80% step-time interval and out-of-memory risk, or the error when
// nothing fits. Wall times are left
// out so that the file repeats byte for byte.
var SummaryHeader = []string{
	"model", "cluster", "batch", "seq", "fix", "status",
	"chips", "method", "evaluated", "feasible", "front_size",
	"strategy", "step_time_s", "tokens_per_s", "tokens_per_s_per_chip", "mfu", "memory_gb_per_chip",
	"step_time_s_lo", "step_time_s_hi", "oom_risk",
	"error",
}

// summaryRow returns the CSV row of r.
func summaryRow(r Record) ([]string, error) {
	row := []string{results.CSVText(r.Cell.Model), results.CSVText(r.Cell.Cluster), strconv.Itoa(r.Cell.Batch), strconv.Itoa(r.Cell.Seq), results.CSVText(r.Cell.Fix)}
	if r.Error != "" {
		row = append(row, "error")
		for range len(SummaryHeader) - len(row) - 1 {
			row = append(row, "")
		}
		return append(row, results.CSVText(r.Error)), nil
	}
	var p results.Plan
	if err := json.Unmarshal(r.Plan, &p); err != nil {
		return nil, fmt.Errorf("cell %s: its plan is not a plan object: %s", r.Cell, text.OneLine(err.Error()))
	}
	row = append(row, "ok", strconv.Itoa(p.Cluster.Chips), results.CSVText(p.Search.Method),
		strconv.FormatInt(p.Search.Evaluated, 10), strconv.FormatInt(p.Search.Feasible, 10), strconv.Itoa(p.Search.FrontSize))
	if p.Recommended < 0 || p.Recommended >= len(p.Pareto) {
		row[5] = "empty"
		for range len(SummaryHeader) - len(row) {
			row = append(row, "")
		}
		return row, nil
	}
	best := p.Pareto[p.Recommended]
	lo, hi := "", ""
	if r := best.StepTimeSRange; r != nil {
		lo, hi = num(r[0]), num(r[1])
	}
	return append(row, results.CSVText(best.Strategy.Spec), num(best.StepTimeS), num(best.TokensPerS), num(best.TokensPerSPerChip),
		num(best.MFU), num(best.MemoryGBPerChip), lo, hi, num(best.OOMRisk), ""), nil
}

// num formats a float in the shortest form that reads back exactly.
func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// WriteSummary writes the summary CSV of recs (in the order given) to w.
func WriteSummary(w io.Writer, recs []Record) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(SummaryHeader); err != nil {
		return fmt.Errorf("writing the summary: %w", err)
	}
	for _, r := range recs {
		row, err := summaryRow(r)
		if err != nil {
			return err
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("writing the summary: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing the summary: %w", err)
	}
	return nil
}

// WriteSummaryFile writes the summary CSV of recs to path as outfile.Write
// does: a regular file atomically, a device or pipe directly.
func WriteSummaryFile(path string, recs []Record) error {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, recs); err != nil {
		return err
	}
	return outfile.Write(path, buf.Bytes(), nil)
}
