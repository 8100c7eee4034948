package results

import (
	"fmt"
	"io"
	"strings"

	"github.com/meshplan/meshplan/search"
)

// ClusterOption is one cluster of a plan over several clusters (--cluster
// with a list or a range): its best strategy, its plan's recommended row, with
// the days, chip-hours and cost of training when --tokens and --price are
// given.
//
// ParetoOptimal marks the clusters that no other cluster beats on both the
// time to train and its cost: the Pareto front of (days, cost). Since one
// price applies to every cluster, cost is proportional to chip-hours, so the
// front is computed on (1/tokens_per_s, chips/tokens_per_s) and is the same
// with or without --tokens and --price. Recommended marks the fastest
// Pareto-optimal cluster (ties: fewer chip-hours), or with --objective cost
// the cheapest (ties: the faster), whose full plan is the rest of the plan
// object.
type ClusterOption struct {
	Cluster PlanCluster `json:"cluster"`
	// Best is the cluster's recommended strategy; nil when nothing fits.
	Best *Result `json:"best,omitempty"`
	// Feasible is the number of strategies of the cluster that fit.
	Feasible      int64 `json:"feasible"`
	ParetoOptimal bool  `json:"pareto_optimal"`
	Recommended   bool  `json:"recommended"`
	// Error says why nothing fits on the cluster; empty when something does.
	Error string `json:"error,omitempty"`
	// NoLayout says that no layout of the cluster's chips suits the model,
	// batch and sequence at all (Error says which rule fails), rather than
	// that none fits in memory.
	NoLayout bool `json:"no_layout,omitempty"`
}

// Why is the short reason of a cluster without a best strategy: "no
// layout" or "nothing fits".
func (o ClusterOption) Why() string {
	if o.NoLayout {
		return "no layout"
	}
	return "nothing fits"
}

// MarkClusterFront sets ParetoOptimal and Recommended on the options and
// returns the index of the recommended one, -1 when no cluster fits: the
// fastest Pareto-optimal cluster, or for objective search.ObjectiveCost
// the cheapest.
func MarkClusterFront(opts []ClusterOption, objective string) int {
	type point struct{ time, chipTime float64 }
	pts := make([]point, len(opts))
	for i, o := range opts {
		opts[i].ParetoOptimal, opts[i].Recommended = false, false
		if o.Best != nil && o.Best.TokensPerS > 0 {
			pts[i] = point{1 / o.Best.TokensPerS, float64(o.Cluster.Chips) / o.Best.TokensPerS}
		}
	}
	rec := -1
	for i, o := range opts {
		if o.Best == nil || o.Best.TokensPerS <= 0 {
			continue
		}
		dominated := false
		for j, q := range opts {
			if j == i || q.Best == nil || q.Best.TokensPerS <= 0 {
				continue
			}
			a, b := pts[j], pts[i]
			if a.time <= b.time && a.chipTime <= b.chipTime && (a.time < b.time || a.chipTime < b.chipTime) {
				dominated = true
				break
			}
		}
		opts[i].ParetoOptimal = !dominated
		if dominated {
			continue
		}
		better := rec < 0 || pts[i].time < pts[rec].time || pts[i].time == pts[rec].time && pts[i].chipTime < pts[rec].chipTime
		if objective == search.ObjectiveCost {
			better = rec < 0 || pts[i].chipTime < pts[rec].chipTime || pts[i].chipTime == pts[rec].chipTime && pts[i].time < pts[rec].time
		}
		if better {
			rec = i
		}
	}
	if rec >= 0 {
		opts[rec].Recommended = true
	}
	return rec
}

// writeClustersTable is WriteTable for a plan over several clusters: one
// row per cluster with its best strategy.
func (p Plan) writeClustersTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("model    %s: %s params (%s active)\n", Label(p.Model.Name), Count(float64(p.Model.Params)), Count(float64(p.Model.ActiveParams)))
	ew.printf("batch    %s\n", p.Batch.Text())
	t := p.training()
	if t.Given() {
		ew.printf("train    %s\n", trainingText(t))
	}
	p.writeBudgetLines(ew)
	ew.printf("clusters %d, best strategy of each (search %s, seed %d)\n", len(p.Clusters), p.Search.Method, p.Search.Seed)
	if p.Recommendation != nil {
		ew.printf("recommend on each cluster %s\n", objectiveRule(p.Recommendation.Objective))
	}
	ew.printf("\n")
	if ew.err != nil {
		return ew.err
	}
	tw := newTable(ew)
	head := "\tCLUSTER\tCHIPS\tSTEP\tBAND 80%\tTOKENS/S\tMFU\tMEMORY/CHIP\tOOM RISK"
	if t.Given() {
		head += "\tDAYS\tCHIP-HOURS"
		if t.PricePerChipHour > 0 {
			head += "\tCOST"
		}
	}
	head += budgetHead(t, "\t")
	fmt.Fprintln(tw, head+"\tSTRATEGY")
	for _, o := range p.Clusters {
		mark := ""
		if o.ParetoOptimal {
			mark = "+"
		}
		if o.Recommended {
			mark = "*"
		}
		if o.Best == nil {
			fmt.Fprintf(tw, "%s\t%s\t%d\t-\t-\t-\t-\t-\t-", mark, Label(o.Cluster.Name), o.Cluster.Chips)
			fmt.Fprintf(tw, "%s\t%s\n", strings.Repeat("\t-", trainingColumns(t)), o.Why())
			continue
		}
		r := *o.Best
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s", mark, Label(o.Cluster.Name), o.Cluster.Chips,
			Seconds(r.StepTimeS), stepSpan(r.StepTimeSRange), Count(r.TokensPerS), Percent(r.MFU), Bytes(r.MemoryGBPerChip*GB), Percent(r.OOMRisk))
		fmt.Fprintf(tw, "%s\t%s\n", trainingCells(r, t, "\t"), r.Strategy.Spec)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ew.printf("\n")
	for _, o := range p.Clusters {
		if o.Best == nil && o.Error != "" {
			ew.printf("%s: %s\n", Label(o.Cluster.Name), o.Error)
		}
	}
	ew.printf("* recommended: the fastest cluster on the front of (days, cost); + also on that front.\n")
	ew.printf("See a cluster's whole front with: plan --model %s --cluster NAME --batch %d --seq %d\n",
		p.ModelArg, p.Batch.Sequences, p.Batch.SeqLen)
	return ew.err
}

// trainingColumns is the number of training columns a table has for t.
func trainingColumns(t Training) int {
	switch {
	case !t.Given():
		return 0
	case t.PricePerChipHour > 0:
		return 3 + budgetColumns(t)
	default:
		return 2 + budgetColumns(t)
	}
}

// MinChips is the answer to --min-chips: the smallest cluster of the
// family on which the model fits, and the smaller clusters tried on the way.
type MinChips struct {
	// Cluster and Chips name the smallest cluster that fits.
	Cluster string `json:"cluster"`
	Chips   int    `json:"chips"`
	// Tried lists the smaller clusters, smallest first, and why nothing fits on them.
	Tried []SizeTried `json:"tried"`
}

// SizeTried is a cluster --min-chips tried on which nothing fits.
type SizeTried struct {
	Cluster string `json:"cluster"`
	Chips   int    `json:"chips"`
	Reason  string `json:"reason"`
}

// text is the one-line account of the table's header.
func (m MinChips) text(model string) string {
	s := fmt.Sprintf("%s (%d chips) is the smallest cluster of its family on which %s fits", m.Cluster, m.Chips, model)
	if n := len(m.Tried); n > 0 {
		s += fmt.Sprintf("; %s (%d chips) does not", m.Tried[n-1].Cluster, m.Tried[n-1].Chips)
	}
	return s
}
