package results

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

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
	// Default says how the batch was chosen when the user gave none, and
	// how to set it; absent when the batch was given.
	Default string `json:"default,omitempty"`
}

// Text is the batch in words, with the default's rule when it was
// defaulted: "2048 sequences x 8192 tokens = 16.8M tokens per step
// (defaulted to ...; set --batch or --batch-tokens)".
func (b Batch) Text() string {
	s := fmt.Sprintf("%d sequences x %d tokens = %s tokens per step", b.Sequences, b.SeqLen, Count(float64(b.Tokens)))
	if b.Default != "" {
		s += " (" + b.Default + ")"
	}
	return s
}

// SetBatchDefault records how the plan's batch was defaulted (rule, empty
// when the user gave it) in the plan and in its recommended strategy's
// detail, so that every format says so.
func (p *Plan) SetBatchDefault(rule string) {
	p.Batch.Default = rule
	if p.Detail != nil {
		p.Detail.BatchDefault = rule
	}
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
	// Failed is the number of valid strategies the models could not score
	// (the contract requires 0; a nonzero count is a bug to report).
	Failed int64 `json:"failed"`
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
	// Framework is the framework profile the plan models ("generic" by default).
	Framework string `json:"framework"`
	// Notes are what the planner changed of the problem as given, one
	// sentence each (e.g. weights=bf16 planned because nothing fits with
	// fp32 weights); absent when none.
	Notes []string `json:"notes,omitempty"`
	// Uncertainty is the measured error of step times on the cluster's
	// chip family, the band every row's step_time_s_range spans; absent
	// when the family has no measurements.
	Uncertainty *PlanUncertainty `json:"uncertainty,omitempty"`
	// Recommended is the index in Pareto of the recommended strategy, -1
	// when the front is empty. In JSON it is the contract's
	// {"rank": index + 1, "rule": the rule in words} (Plan.MarshalJSON).
	Recommended int `json:"-"`
	// Recommendation says how the recommended strategy was chosen: the
	// objective, the rule and the step-time band; absent when nothing fits.
	Recommendation *Recommendation `json:"recommendation,omitempty"`
	// Pareto is the front of step time against memory per chip, fastest first.
	Pareto []Result `json:"pareto"`
	// Training is the --tokens and --price the rows' days, chip_hours and
	// cost are computed for; absent when --tokens is not given.
	Training *Training `json:"training,omitempty"`
	// Clusters is present when --cluster names several clusters (a list or
	// a range): one entry per cluster, in the order given, with the best
	// strategy of each. The rest of the plan is then the plan of the
	// recommended cluster (see [ClusterOption]).
	Clusters []ClusterOption `json:"clusters,omitempty"`
	// Frameworks is present when --framework names several frameworks:
	// one entry per framework, in the order given, with the best strategy
	// of each. The rest of the plan is then the plan of the fastest (see
	// [FrameworkOption]).
	Frameworks []FrameworkOption `json:"frameworks,omitempty"`
	// MinChips is present with --min-chips: the smallest cluster of the
	// family on which the model fits, and the smaller ones tried. The rest of
	// the plan is then the plan of that cluster.
	MinChips *MinChips `json:"min_chips,omitempty"`
	// Deadline is present with --deadline: the sizes of the family planned
	// with their effective days, cost and energy, and the one chosen. The
	// rest of the plan is then the plan of that size.
	Deadline *Deadline `json:"deadline,omitempty"`

	// Detail is the traced evaluation of the recommended strategy, which
	// the md and html reports break down; nil leaves the breakdown out.
	Detail *Evaluation `json:"-"`

	// ModelArg and ClusterArg are what the user passed to --model and
	// --cluster (a name or a file); the table's explain hint repeats them.
	// They default to the model and cluster names.
	ModelArg, ClusterArg string `json:"-"`
}

// PlanUncertainty is the band of the plan's step times
// (profiles.Band): the interval, as multiples of a predicted step time,
// that 80% (and 95%) of the runs it was measured on fall in.
type PlanUncertainty struct {
	// Fraction is the 80% interval's half-width, a fraction of the step time.
	Fraction float64 `json:"fraction"`
	// Interval80 and Interval95 are the intervals' ends as multiples of the
	// predicted step time ([lo, hi]; lo above 1 when the model is optimistic).
	Interval80 [2]float64 `json:"interval_80"`
	Interval95 [2]float64 `json:"interval_95"`
	// Coverage80 is the share of its runs that the 80% interval, drawn
	// without their own source, contained.
	Coverage80 float64 `json:"coverage_80"`
	// Regime is "searched" for a plan's rows (the search's selection error
	// included), "fixed" or "single".
	Regime string `json:"regime"`
	// Novel lists what no run covers: "family", "framework", "precision",
	// "scale"; the band is the pool's, widened.
	Novel []string `json:"novel,omitempty"`
	// Basis says which measurements it comes from.
	Basis string `json:"basis"`
}

// NewPlanUncertainty is the plan form of a band.
func NewPlanUncertainty(b profiles.Band) *PlanUncertainty {
	return &PlanUncertainty{Fraction: b.HalfWidth(), Interval80: [2]float64{b.Lo80, b.Hi80}, Interval95: [2]float64{b.Lo95, b.Hi95},
		Coverage80: b.Coverage80, Regime: b.Regime, Novel: b.Novel, Basis: b.Basis()}
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
		Framework:   DefaultFramework,
		Uncertainty: planUncertainty(m, c, front, recommended),
	}
}

// DefaultFramework is the framework a plan names when none is given.
const DefaultFramework = "generic"

// planUncertainty is the band of the plan's recommended row (else its
// first), or that of a searched bf16 plan of m on c when the front is empty.
func planUncertainty(m model.Spec, c profiles.Cluster, front []Evaluation, recommended int) *PlanUncertainty {
	if len(front) == 0 {
		return NewPlanUncertainty(profiles.StepTimeBand(profiles.BandQuery{Family: c.Chip.Family, Chips: c.Chips(), Chip: c.Chip.Name, Searched: true, MoE: m.MoE != nil}))
	}
	e := front[max(recommended, 0)]
	return NewPlanUncertainty(e.Band())
}

// SetTraining adds the days, chip-hours and (with a price) cost of
// training t to every row of the front; a zero t changes nothing.
func (p *Plan) SetTraining(t Training) {
	if !t.Given() {
		return
	}
	p.Training = &t
	for i := range p.Pareto {
		t.apply(&p.Pareto[i], p.Cluster.Chips)
	}
}

// training returns the plan's Training, the zero value when none.
func (p Plan) training() Training {
	if p.Training == nil {
		return Training{}
	}
	return *p.Training
}

// WriteJSON writes the plan as indented JSON.
func (p Plan) WriteJSON(w io.Writer) error { return writeJSON(w, p) }

// WriteTable writes the plan for people: a header naming the inputs and the
// search, then one row per Pareto strategy (fastest first) with a '*' on the
// recommended row and the --strategy string that `plan explain` takes to
// reproduce the row. With --tokens the rows also give the days and
// chip-hours to train (and the cost, with --price). A plan over several
// clusters prints one row per cluster instead (see [ClusterOption]). The
// search's wall time is left out so that the table repeats byte for byte.
func (p Plan) WriteTable(w io.Writer) error {
	if p.Deadline != nil {
		return p.writeDeadlineTable(w)
	}
	if len(p.Clusters) > 0 {
		return p.writeClustersTable(w)
	}
	if len(p.Frameworks) > 0 {
		return p.writeFrameworksTable(w)
	}
	ew := &errWriter{w: w}
	ew.printf("model    %s: %s params (%s active)\n", Label(p.Model.Name), Count(float64(p.Model.Params)), Count(float64(p.Model.ActiveParams)))
	ew.printf("cluster  %s: %d x %s\n", Label(p.Cluster.Name), p.Cluster.Chips, p.Cluster.Chip)
	ew.printf("batch    %s\n", p.Batch.Text())
	if t := p.training(); t.Given() {
		ew.printf("train    %s\n", trainingText(t))
	}
	if p.MinChips != nil {
		ew.printf("min      %s\n", p.MinChips.text(Label(p.Model.Name)))
	}
	p.writeBudgetLines(ew)
	ew.printf("framework %s\n", Label(p.Framework))
	ew.printf("band     %s\n", p.bandText())
	ew.printf("search   %s\n", p.searchText())
	for _, n := range p.Notes {
		ew.printf("note     %s\n", n)
	}
	if p.Recommendation != nil {
		ew.printf("recommend %s\n", p.Recommendation.Rule)
	}
	ew.printf("\n")
	if ew.err != nil {
		return ew.err
	}
	t := p.training()
	tw := newTable(ew)
	head := "\tRANK\tSTEP\tBAND 80%\tTOKENS/S\tTOKENS/S/CHIP\tMFU\tMEMORY/CHIP\tOOM RISK"
	if t.Given() {
		head += "\tDAYS\tCHIP-HOURS"
		if t.PricePerChipHour > 0 {
			head += "\tCOST"
		}
	}
	head += budgetHead(t, "\t")
	fmt.Fprintln(tw, head+"\tSTRATEGY")
	for i, r := range p.Pareto {
		mark := ""
		if i == p.Recommended {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s", mark, i+1, Seconds(r.StepTimeS), stepSpan(r.StepTimeSRange), Count(r.TokensPerS),
			Count(r.TokensPerSPerChip), Percent(r.MFU), Bytes(r.MemoryGBPerChip*GB), Percent(r.OOMRisk))
		fmt.Fprintf(tw, "%s\t%s\n", trainingCells(r, t, "\t"), r.Strategy.Spec)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if p.Recommended >= 0 {
		rec := "recommended"
		if p.Recommendation != nil {
			rec += " (" + p.objectiveText() + ")"
		}
		ew.printf("\n* %s. See one row in full with: %s\n", rec, p.explainHint())
	}
	return ew.err
}

// objectiveText names the recommendation's objective and how to change
// it: "balanced; --objective balanced|time|memory|cost". p must have a
// Recommendation.
func (p Plan) objectiveText() string {
	return p.Recommendation.Objective + "; --objective balanced|time|memory|cost"
}

// bandText is the header's account of the step-time band.
func (p Plan) bandText() string {
	if p.Uncertainty == nil {
		return "none"
	}
	u := p.Uncertainty
	return fmt.Sprintf("80%% of measured runs fall within x%s to x%s of the predicted step time (95%%: x%s to x%s): %s",
		sig3(u.Interval80[0]), sig3(u.Interval80[1]), sig3(u.Interval95[0]), sig3(u.Interval95[1]), u.Basis)
}

// searchText is the header's one-line account of the search.
func (p Plan) searchText() string {
	fix := ""
	if p.Search.Fix != "" {
		fix = fmt.Sprintf(" with %s fixed", p.Search.Fix)
	}
	shown := ""
	if len(p.Pareto) < p.Search.FrontSize {
		shown = fmt.Sprintf(", the %d fastest shown", len(p.Pareto))
	}
	return fmt.Sprintf("%s%s: %s, %d strategies evaluated, %d feasible, %d on the Pareto front%s (seed %d)",
		p.Search.Method, fix, p.Search.coverageText(), p.Search.Evaluated, p.Search.Feasible, max(p.Search.FrontSize, len(p.Pareto)), shown, p.Search.Seed)
}

// coverageText says how much of the space the search saw: "all 4156020
// gene vectors" for an exhaustive search, "saw 270478 of 4156020 gene
// vectors (6.5%)" for an evolutionary one.
func (s SearchSummary) coverageText() string {
	if s.Method != "evolve" || s.Visited >= s.SpaceSize {
		return fmt.Sprintf("all %d gene vectors", s.SpaceSize)
	}
	return fmt.Sprintf("saw %d of %d gene vectors (%s)", s.Visited, s.SpaceSize, Percent(s.Coverage()))
}

// Coverage is the fraction of the space's gene vectors the search decoded:
// 1 for an exhaustive search, Visited / SpaceSize for an evolutionary one.
func (s SearchSummary) Coverage() float64 {
	if s.Method != "evolve" {
		return 1
	}
	if s.SpaceSize <= 0 {
		return 0
	}
	return float64(s.Visited) / float64(s.SpaceSize)
}

// explainHint is the command line that shows one row in full.
func (p Plan) explainHint() string {
	return fmt.Sprintf("plan explain --model %s --cluster %s --batch %d --seq %d --strategy SPEC",
		p.ModelArg, p.ClusterArg, p.Batch.Sequences, p.Batch.SeqLen)
}

// trainingText is "15.0T tokens at 2.5 per chip-hour".
func trainingText(t Training) string {
	s := Count(t.Tokens) + " tokens"
	if t.PricePerChipHour > 0 {
		s += fmt.Sprintf(" at %s per chip-hour", strconv.FormatFloat(t.PricePerChipHour, 'f', -1, 64))
	}
	return s
}

// trainingCells returns the days, chip-hours and cost cells of r, each
// preceded by sep, or "" when t asks for none.
func trainingCells(r Result, t Training, sep string) string {
	if !t.Given() {
		return ""
	}
	s := sep + optional(r.Days, Days) + sep + optional(r.ChipHours, Count)
	if t.PricePerChipHour > 0 {
		s += sep + optional(r.Cost, Money)
	}
	return s + budgetCells(r, t, sep)
}

// optional formats *v with f, or "-" when v is nil.
func optional(v *float64, f func(float64) string) string {
	if v == nil {
		return "-"
	}
	return f(*v)
}

// recommendedJSON is Plan.Recommended as the contract writes it: the
// recommended row's 1-based rank in pareto and the rule that chose it; rank
// 0 and no rule when nothing fits.
type recommendedJSON struct {
	Rank int    `json:"rank"`
	Rule string `json:"rule"`
}

// planJSON is Plan without its methods, for its JSON encoding.
type planJSON Plan

// MarshalJSON writes the plan with "recommended" as {"rank", "rule"}
// (docs/contract.md).
func (p Plan) MarshalJSON() ([]byte, error) {
	rec := recommendedJSON{}
	if p.Recommended >= 0 && p.Recommended < len(p.Pareto) {
		rec.Rank = p.Recommended + 1
		if p.Recommendation != nil {
			rec.Rule = p.Recommendation.Rule
		}
	}
	return json.Marshal(struct {
		planJSON
		Recommended recommendedJSON `json:"recommended"`
	}{planJSON(p), rec})
}

// UnmarshalJSON reads a plan MarshalJSON wrote, or one whose "recommended"
// is the bare index earlier versions wrote (sweep files written before).
func (p *Plan) UnmarshalJSON(data []byte) error {
	aux := struct {
		*planJSON
		Recommended json.RawMessage `json:"recommended"`
	}{planJSON: (*planJSON)(p)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	p.Recommended = -1
	var rec recommendedJSON
	var index int
	switch {
	case len(aux.Recommended) == 0:
	case json.Unmarshal(aux.Recommended, &rec) == nil:
		p.Recommended = rec.Rank - 1
	case json.Unmarshal(aux.Recommended, &index) == nil:
		p.Recommended = index
	default:
		return fmt.Errorf("plan: \"recommended\" is neither {\"rank\", \"rule\"} nor an index: %s", aux.Recommended)
	}
	return nil
}
