package results

import (
	"fmt"
	"io"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// PlanModel identifies the model of a plan.
type PlanModel struct {
	Name         string `json:"name"`
	Params       int64  `json:"params"`
	ActiveParams int64  `json:"active_params"`
}

// PlanCluster identifies the cluster of a plan.
type PlanCluster struct {
	Name  string `json:"name"`
	Chip  string `json:"chip"`
	Chips int    `json:"chips"`
}

// Batch is the global batch of one step.
type Batch struct {
	Sequences int `json:"sequences"`
	SeqLen    int `json:"seq_len"`
	Tokens    int `json:"tokens"`
}

// SearchSummary says how a plan was searched. ElapsedS is the only field of
// a plan that differs between two runs with the same input and seed.
type SearchSummary struct {
	// Method is the method that ran: "exhaustive" or "evolve" (auto resolves to one).
	Method string `json:"method"`
	// Evaluated is the number of strategies scored.
	Evaluated int64 `json:"evaluated"`
	// Feasible is the number of scored strategies that fit and have a step time.
	Feasible int64 `json:"feasible"`
	// ElapsedS is the wall time of the search in seconds.
	ElapsedS float64 `json:"elapsed_s"`
	// SpaceSize is the number of gene vectors of the strategy space.
	SpaceSize int64 `json:"space_size"`
	// Seed is the random seed of the evolutionary search.
	Seed int64 `json:"seed"`
	// Fix is the --fix string every strategy agrees with ("" for none).
	Fix string `json:"fix"`
	// Visited is the number of gene vectors decoded, Valid the number that
	// decoded to a valid strategy.
	Visited int64 `json:"visited"`
	Valid   int64 `json:"valid"`
	// Generations is the number of generations evolved (0 for exhaustive).
	Generations int `json:"generations"`
	// FrontSize is the number of strategies on the whole Pareto front;
	// --top may print fewer.
	FrontSize int `json:"front_size"`
}

// Plan is the contract's output of `plan --format json`.
type Plan struct {
	Model   PlanModel     `json:"model"`
	Cluster PlanCluster   `json:"cluster"`
	Batch   Batch         `json:"batch"`
	Search  SearchSummary `json:"search"`
	// Recommended is the index in Pareto of the recommended strategy, -1 when the front is empty.
	Recommended int `json:"recommended"`
	// Pareto is the front of step time against memory per chip, fastest first.
	Pareto []Result `json:"pareto"`

	// ModelArg and ClusterArg are what the user passed to --model and
	// --cluster (a name or a file); the table's explain hint repeats them.
	// They default to the model and cluster names.
	ModelArg, ClusterArg string `json:"-"`
}

// NewPlan builds a plan from its inputs, a search summary and the front's
// evaluations (fastest first); recommended indexes front.
func NewPlan(m model.Spec, c profiles.Cluster, w space.Workload, s SearchSummary, front []Evaluation, recommended int) Plan {
	counts := m.Counts()
	pareto := make([]Result, len(front))
	for i, e := range front {
		pareto[i] = NewResult(e)
	}
	if recommended >= len(front) {
		recommended = -1
	}
	return Plan{
		Model:       PlanModel{Name: m.Name, Params: counts.Total, ActiveParams: counts.Active},
		Cluster:     PlanCluster{Name: c.Name, Chip: c.Chip.Name, Chips: c.Chips()},
		Batch:       Batch{Sequences: w.Batch, SeqLen: w.SeqLen, Tokens: w.Tokens()},
		Search:      s,
		Recommended: recommended,
		Pareto:      pareto,
		ModelArg:    m.Name,
		ClusterArg:  c.Name,
	}
}

// WriteJSON writes the plan as indented JSON.
func (p Plan) WriteJSON(w io.Writer) error { return writeJSON(w, p) }

// WriteTable writes the plan for people: a header naming the inputs and the
// search, then one row per Pareto strategy (fastest first) with a '*' on the
// recommended row and the --strategy string that `plan explain` takes to
// reproduce the row. The search's wall time is left out so that the table
// repeats byte for byte.
func (p Plan) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("model    %s: %s params (%s active)\n", p.Model.Name, Count(float64(p.Model.Params)), Count(float64(p.Model.ActiveParams)))
	ew.printf("cluster  %s: %d x %s\n", p.Cluster.Name, p.Cluster.Chips, p.Cluster.Chip)
	ew.printf("batch    %d sequences x %d tokens = %s tokens per step\n", p.Batch.Sequences, p.Batch.SeqLen, Count(float64(p.Batch.Tokens)))
	fix := ""
	if p.Search.Fix != "" {
		fix = fmt.Sprintf(" with %s fixed", p.Search.Fix)
	}
	shown := ""
	if len(p.Pareto) < p.Search.FrontSize {
		shown = fmt.Sprintf(", the %d fastest shown", len(p.Pareto))
	}
	ew.printf("search   %s%s: %d of %d strategies evaluated, %d feasible, %d on the Pareto front%s (seed %d)\n\n",
		p.Search.Method, fix, p.Search.Evaluated, p.Search.SpaceSize, p.Search.Feasible, max(p.Search.FrontSize, len(p.Pareto)), shown, p.Search.Seed)
	if ew.err != nil {
		return ew.err
	}
	tw := newTable(ew)
	fmt.Fprintln(tw, "\tRANK\tSTEP\tTOKENS/S\tTOKENS/S/CHIP\tMFU\tMEMORY/CHIP\tSTRATEGY")
	for i, r := range p.Pareto {
		mark := ""
		if i == p.Recommended {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", mark, i+1, Seconds(r.StepTimeS), Count(r.TokensPerS),
			Count(r.TokensPerSPerChip), Percent(r.MFU), Bytes(r.MemoryGBPerChip*GB), r.Strategy.Spec)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if p.Recommended >= 0 {
		ew.printf("\n* recommended. See one row in full with: plan explain --model %s --cluster %s --batch %d --seq %d --strategy SPEC\n",
			p.ModelArg, p.ClusterArg, p.Batch.Sequences, p.Batch.SeqLen)
	}
	return ew.err
}
