package results

import (
	"fmt"
	"io"
)

// FrameworkOption is one framework of a plan over several frameworks
// (--framework a,b,c): the best strategy of the same problem under it.
type FrameworkOption struct {
	// Framework is the profile's name.
	Framework string `json:"framework"`
	// Best is its recommended strategy; nil when nothing it can express
	// fits.
	Best *Result `json:"best,omitempty"`
	// Feasible is the number of its strategies that fit.
	Feasible int64 `json:"feasible"`
	// Recommended marks the fastest framework.
	Recommended bool `json:"recommended"`
	// Error says why nothing fits; empty when something does.
	Error string `json:"error,omitempty"`
}

// MarkFastestFramework sets Recommended on the fastest option that fits
// and returns its index, -1 when none fits.
func MarkFastestFramework(opts []FrameworkOption) int {
	rec := -1
	for i := range opts {
		opts[i].Recommended = false
		if b := opts[i].Best; b != nil && (rec < 0 || b.StepTimeS < opts[rec].Best.StepTimeS) {
			rec = i
		}
	}
	if rec >= 0 {
		opts[rec].Recommended = true
	}
	return rec
}

// writeFrameworksTable writes a plan over several frameworks: one row per
// framework with its best strategy and its speed relative to the fastest.
func (p Plan) writeFrameworksTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("model    %s: %s params (%s active)\n", Label(p.Model.Name), Count(float64(p.Model.Params)), Count(float64(p.Model.ActiveParams)))
	ew.printf("cluster  %s: %d x %s\n", Label(p.Cluster.Name), p.Cluster.Chips, p.Cluster.Chip)
	ew.printf("batch    %s\n", p.Batch.Text())
	ew.printf("band     %s\n", p.bandText())
	ew.printf("frameworks %d, best strategy of each (search %s, seed %d)\n", len(p.Frameworks), p.Search.Method, p.Search.Seed)
	if p.Recommendation != nil {
		ew.printf("recommend for each framework %s\n", objectiveRule(p.Recommendation.Objective))
	}
	ew.printf("\n")
	if ew.err != nil {
		return ew.err
	}
	var fastest float64
	for _, o := range p.Frameworks {
		if o.Recommended && o.Best != nil {
			fastest = o.Best.StepTimeS
		}
	}
	tw := newTable(ew)
	fmt.Fprintln(tw, "\tFRAMEWORK\tSTEP\tBAND 80%\tVS FASTEST\tTOKENS/S\tMFU\tMEMORY/CHIP\tOOM RISK\tSTRATEGY")
	for _, o := range p.Frameworks {
		mark := ""
		if o.Recommended {
			mark = "*"
		}
		if o.Best == nil {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\t-\tnothing fits\n", mark, Label(o.Framework))
			continue
		}
		r := *o.Best
		rel := "-"
		if fastest > 0 {
			rel = fmt.Sprintf("%+.1f%%", 100*(r.StepTimeS/fastest-1))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", mark, Label(o.Framework), Seconds(r.StepTimeS), stepSpan(r.StepTimeSRange), rel,
			Count(r.TokensPerS), Percent(r.MFU), Bytes(r.MemoryGBPerChip*GB), Percent(r.OOMRisk), r.Strategy.Spec)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ew.printf("\n* fastest. Each framework searches only the strategies it can express; see one in full with: plan explain --framework NAME --model %s --cluster %s --batch %d --seq %d --strategy SPEC\n",
		p.ModelArg, p.ClusterArg, p.Batch.Sequences, p.Batch.SeqLen)
	return ew.err
}
