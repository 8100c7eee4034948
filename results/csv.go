package results

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
)

// CSVColumns are the columns of `--format csv`, in order. They are stable:
// new columns are only ever added before spec, never renamed or removed.
// Each row is one strategy (one Pareto row of a plan, the one strategy of
// `plan explain`, or the best strategy of each cluster of a plan over
// several clusters). Numbers are in the JSON's units (seconds, 10^9 bytes,
// fractions) at full precision; days, chip_hours and cost are empty unless
// --tokens (and --price) are given; cluster_pareto_optimal is empty unless
// the plan spans several clusters; batch_default is empty unless the batch
// was defaulted, and then says how it was chosen and how to set it;
// objective (the recommendation's) and in_band (whether the row's step time
// is within the model's band of the fastest, the rows the balanced
// objective chooses among) are empty except on the rows of a plan's front;
// first and last (the decoder layers of the first and last pipeline stage,
// the strategy's keys) are empty for the default split.
var CSVColumns = []string{
	"rank", "recommended", "model", "cluster", "chips", "batch_sequences", "seq_len",
	"step_time_s", "tokens_per_s", "tokens_per_s_per_chip", "mfu", "hfu",
	"memory_gb_per_chip", "usable_gb_per_chip", "fits",
	"compute_s", "exposed_comm_s", "bubble_s",
	"params_gb", "grads_gb", "optimizer_gb", "activations_gb", "buffers_gb",
	"dp", "zero", "fsdp", "tp", "sp", "cp", "pp", "ep", "mb", "num_microbatches",
	"schedule", "v", "recompute",
	"days", "chip_hours", "cost", "cluster_pareto_optimal",
	"matmul_s", "attention_s", "memory_bound_s", "optimizer_s",
	"step_time_s_lo", "step_time_s_hi", "framework", "precision", "batch_default",
	"objective", "in_band", "first", "last", "spec",
	"step_time_s_lo95", "step_time_s_hi95", "oom_risk",
}

// WriteCSV writes the plan as CSV: a header of [CSVColumns], then one row
// per Pareto strategy, fastest first, or one row per cluster for a plan
// over several clusters.
func (p Plan) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	t := p.training()
	_ = cw.Write(csvHeader(t))
	if p.Deadline != nil {
		for i, sz := range p.Deadline.Sizes {
			row := csvRow(i+1, sz.Chosen, p.Model.Name, p.Framework, sz.Cluster, p.Batch, sz.Best)
			_ = cw.Write(withBudgetCSV(row, t, sz.Best, &sz.MeetsDeadline))
		}
		cw.Flush()
		return cw.Error()
	}
	if len(p.Clusters) > 0 {
		for i, o := range p.Clusters {
			row := csvRow(i+1, o.Recommended, p.Model.Name, p.Framework, o.Cluster, p.Batch, o.Best)
			row[slices.Index(CSVColumns, "cluster_pareto_optimal")] = strconv.FormatBool(o.ParetoOptimal)
			_ = cw.Write(withBudgetCSV(row, t, o.Best, nil))
		}
	} else {
		for i := range p.Pareto {
			row := csvRow(i+1, i == p.Recommended, p.Model.Name, p.Framework, p.Cluster, p.Batch, &p.Pareto[i])
			if p.Recommendation != nil {
				row[slices.Index(CSVColumns, "objective")] = p.Recommendation.Objective
				row[slices.Index(CSVColumns, "in_band")] = strconv.FormatBool(p.Recommendation.InBand(i))
			}
			_ = cw.Write(withBudgetCSV(row, t, &p.Pareto[i], nil))
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteExplainCSV writes one evaluated strategy as CSV: the header of
// [CSVColumns] and one row.
func WriteExplainCSV(w io.Writer, e Evaluation, t Training) error {
	r := NewTrainingResult(e, t)
	cl := PlanCluster{Name: e.Cluster.Name, Chip: e.Cluster.Chip.Name, Chips: e.Cluster.Chips()}
	b := e.Batch()
	cw := csv.NewWriter(w)
	_ = cw.Write(csvHeader(t))
	_ = cw.Write(withBudgetCSV(csvRow(1, true, e.Model.Name, e.FrameworkName(), cl, b, &r), t, &r, nil))
	cw.Flush()
	return cw.Error()
}

// csvRow is one row of CSVColumns; r nil (a cluster where nothing fits)
// leaves the strategy's cells empty and fits false.
func csvRow(rank int, rec bool, model, framework string, c PlanCluster, b Batch, r *Result) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	i := strconv.Itoa
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return f(*v)
	}
	row := []string{i(rank), strconv.FormatBool(rec), CSVText(model), CSVText(c.Name), i(c.Chips), i(b.Sequences), i(b.SeqLen)}
	if r == nil {
		row = append(row, "", "", "", "", "", "", "", "false")
		for len(row) < len(CSVColumns) {
			row = append(row, "")
		}
		return row
	}
	s := r.Strategy
	row = append(row,
		f(r.StepTimeS), f(r.TokensPerS), f(r.TokensPerSPerChip), f(r.MFU), f(r.HFU),
		f(r.MemoryGBPerChip), f(r.UsableGBPerChip), strconv.FormatBool(r.Fits),
		f(r.Time.ComputeS), f(r.Time.ExposedCommS), f(r.Time.BubbleS),
		f(r.Memory.ParamsGB), f(r.Memory.GradsGB), f(r.Memory.OptimizerGB), f(r.Memory.ActivationsGB), f(r.Memory.BuffersGB),
		i(s.DP), i(s.Zero), i(s.FSDP), i(s.TP), strconv.FormatBool(s.SP), i(s.CP), i(s.PP), i(s.EP), i(s.MB), i(s.NumMicrobatches),
		CSVText(s.Schedule), i(s.V), CSVText(s.Recompute),
		opt(r.Days), opt(r.ChipHours), opt(r.Cost), "",
		f(r.Time.MatmulS), f(r.Time.AttentionS), f(r.Time.MemoryBoundS), f(r.Time.OptimizerS),
		rangeCell(r.StepTimeSRange, 0), rangeCell(r.StepTimeSRange, 1), CSVText(framework), s.Precision, CSVText(b.Default), "", "", optInt(s.First), optInt(s.Last), CSVText(s.Spec),
		rangeCell(r.StepTimeSRange95, 0), rangeCell(r.StepTimeSRange95, 1), f(r.OOMRisk),
	)
	return row
}

// rangeCell is end i of a range, or empty without one.
func rangeCell(r *[2]float64, i int) string {
	if r == nil {
		return ""
	}
	return strconv.FormatFloat(r[i], 'g', -1, 64)
}

// optInt formats a count that is 0 when not set as "" or the number.
func optInt(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
