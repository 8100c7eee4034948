package results

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Deadline objectives: the smallest cluster that meets the deadline, or
// with --price the cheapest.
const (
	DeadlineSmallest = "smallest"
	DeadlineCheapest = "cheapest"
)

// Deadline is the answer to --deadline: the sizes of a cluster family
// planned with their effective days, cost and energy, and the one chosen.
// The rest of the plan is the plan of the chosen size.
type Deadline struct {
	// Days is the deadline in days.
	Days float64 `json:"days"`
	// Objective is DeadlineSmallest, or DeadlineCheapest with --price.
	Objective string `json:"objective"`
	// Met says whether any size meets the deadline; Cluster and Chips name
	// the chosen size, or, when none meets it, the fastest.
	Met     bool   `json:"met"`
	Cluster string `json:"cluster"`
	Chips   int    `json:"chips"`
	// Sizes are the sizes considered, smallest first.
	Sizes []DeadlineSize `json:"sizes"`
}

// DeadlineSize is one size of the family under --deadline.
type DeadlineSize struct {
	Cluster PlanCluster `json:"cluster"`
	// Best is the size's recommended strategy, with its goodput and
	// energy; nil when the size was not searched or nothing fits.
	Best *Result `json:"best,omitempty"`
	// MeetsDeadline says whether Best's effective days are within the
	// deadline.
	MeetsDeadline bool `json:"meets_deadline"`
	// Chosen marks the size whose plan the rest of the plan is.
	Chosen bool `json:"chosen"`
	// Note says why the size has no Best: too small to meet the deadline
	// even at full peak, or why nothing fits.
	Note string `json:"note,omitempty"`
}

// text is the header's one-line account of the deadline.
func (d Deadline) text() string {
	rule := "the smallest size that meets it"
	if d.Objective == DeadlineCheapest {
		rule = "the cheapest size that meets it"
	}
	if !d.Met {
		return fmt.Sprintf("%s: no size meets it; %s (%d chips) is the fastest", Days(d.Days), d.Cluster, d.Chips)
	}
	return fmt.Sprintf("%s: %s (%d chips) is %s, with interruptions, checkpoints and restarts", Days(d.Days), d.Cluster, d.Chips, rule)
}

// deadlineCells are a size's cells for the deadline tables: chips, step, MFU, goodput, effective days, effective cost (with
// a price), MWh, energy cost (with an energy price) and whether it meets
// the deadline.
func (p Plan) deadlineCells(s DeadlineSize) []string {
	t := p.training()
	r := s.Best
	if r == nil || r.Goodput == nil {
		n := len(p.deadlineHead()) - 2 // all but chips and meets
		cells := []string{fmt.Sprint(s.Cluster.Chips)}
		for range n {
			cells = append(cells, "-")
		}
		return append(cells, "no")
	}
	g := r.Goodput
	cells := []string{fmt.Sprint(s.Cluster.Chips), Seconds(r.StepTimeS), stepSpan(r.StepTimeSRange), Percent(r.OOMRisk), Percent(r.MFU), Percent(g.Fraction), Days(g.Days)}
	if t.PricePerChipHour > 0 {
		cells = append(cells, optional(g.Cost, Money))
	}
	mwh, ecost := "-", "-"
	if r.Energy != nil {
		mwh = Count(r.Energy.MWh)
		ecost = optional(r.Energy.Cost, Money)
	}
	cells = append(cells, mwh)
	if t.Budget != nil && t.Budget.EnergyPricePerKWh > 0 {
		cells = append(cells, ecost)
	}
	meets := "no"
	if s.MeetsDeadline {
		meets = "yes"
	}
	return append(cells, meets)
}

// deadlineHead is the head of the deadline tables, lower case.
func (p Plan) deadlineHead() []string {
	t := p.training()
	head := []string{"chips", "step", "80% band", "oom risk", "MFU", "goodput", "effective days"}
	if t.PricePerChipHour > 0 {
		head = append(head, "effective cost")
	}
	head = append(head, "MWh")
	if t.Budget != nil && t.Budget.EnergyPricePerKWh > 0 {
		head = append(head, "energy cost")
	}
	return append(head, "meets")
}

// sizeMark is "*" for the chosen size, "" otherwise.
func sizeMark(s DeadlineSize) string {
	if s.Chosen {
		return "*"
	}
	return ""
}

// sizeWhat is the last cell of a size: its strategy or its note.
func sizeWhat(s DeadlineSize) string {
	if s.Best != nil {
		return s.Best.Strategy.Spec
	}
	return s.Note
}

// writeDeadlineTable is WriteTable for a plan under --deadline: one row
// per size of the family, then the chosen size's own plan.
func (p Plan) writeDeadlineTable(w io.Writer) error {
	ew := &errWriter{w: w}
	d := p.Deadline
	ew.printf("model    %s: %s params (%s active)\n", Label(p.Model.Name), Count(float64(p.Model.Params)), Count(float64(p.Model.ActiveParams)))
	ew.printf("batch    %s\n", p.Batch.Text())
	ew.printf("train    %s\n", trainingText(p.training()))
	ew.printf("deadline %s\n", d.text())
	p.writeBudgetLines(ew)
	ew.printf("\n")
	if ew.err != nil {
		return ew.err
	}
	tw := newTable(ew)
	head := p.deadlineHead()
	for i := range head {
		head[i] = strings.ToUpper(strings.ReplaceAll(head[i], " ", "-"))
		if head[i] == "MWH" {
			head[i] = "MWh"
		}
	}
	fmt.Fprintf(tw, "\tCLUSTER\t%s\tSTRATEGY\n", strings.Join(head, "\t"))
	for _, s := range d.Sizes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sizeMark(s), Label(s.Cluster.Name), strings.Join(p.deadlineCells(s), "\t"), sizeWhat(s))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ew.printf("\n* chosen. Effective days and cost include interruptions, checkpoints and restarts; MWh is the facility's energy over the effective days.\n")
	price := ""
	if t := p.training(); t.PricePerChipHour > 0 {
		price = " --price " + strconv.FormatFloat(t.PricePerChipHour, 'f', -1, 64)
	}
	ew.printf("See the chosen size's whole front with: plan --model %s --cluster %s --batch %d --seq %d --tokens %s%s --goodput\n",
		p.ModelArg, d.Cluster, p.Batch.Sequences, p.Batch.SeqLen, strconv.FormatFloat(p.training().Tokens, 'f', -1, 64), price)
	return ew.err
}

// writeDeadlineMarkdown writes the deadline section of the Markdown report.
func (p Plan) writeDeadlineMarkdown(ew *errWriter) {
	d := p.Deadline
	ew.printf("## Deadline: %s\n\n%s.\n\n", Days(d.Days), mdText(d.text()))
	head := p.deadlineHead()
	ew.printf("| | cluster | %s | strategy |\n| --- | --- |%s --- |\n", strings.Join(head, " | "), strings.Repeat(" ---: |", len(head)))
	for _, s := range d.Sizes {
		mark := ""
		if s.Chosen {
			mark = "★"
		}
		what := mdText(s.Note)
		if s.Best != nil {
			what = "`" + mdCode(s.Best.Strategy.Spec) + "`"
		}
		ew.printf("| %s | %s | %s | %s |\n", mark, mdText(s.Cluster.Name), strings.Join(p.deadlineCells(s), " | "), what)
	}
	if r := p.budgetRow(); r != nil {
		ew.printf("\nInputs of the chosen size, each with its source and the flag that changes it:\n\n")
		for _, l := range budgetText(*r) {
			ew.printf("- %s\n", mdText(l))
		}
	}
	ew.printf("\n")
}

// htmlDeadline is the --deadline section of the HTML report.
type htmlDeadline struct {
	Text   string
	Head   []string
	Rows   []htmlSize
	Chart  *scatter
	Inputs []string
}

// htmlSize is one row of the deadline table.
type htmlSize struct {
	Name, Spec, Note string
	Chosen           bool
	Cells            []string
}

// splitCells splits cells joined by NUL separators (each cell preceded by
// one) into a list.
func splitCells(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")[1:]
}

// htmlDeadline lays out the deadline section: the sizes' table and a
// scatter of effective days against effective cost (or chip-hours).
func (p Plan) htmlDeadline() *htmlDeadline {
	d := p.Deadline
	h := &htmlDeadline{Text: d.text(), Head: p.deadlineHead()}
	for _, s := range d.Sizes {
		row := htmlSize{Name: s.Cluster.Name, Note: s.Note, Chosen: s.Chosen, Cells: p.deadlineCells(s)}
		if s.Best != nil {
			row.Spec = s.Best.Strategy.Spec
		}
		h.Rows = append(h.Rows, row)
	}
	if r := p.budgetRow(); r != nil {
		h.Inputs = budgetText(*r)
	}
	h.Chart = deadlineScatter(d, p.training().PricePerChipHour > 0)
	return h
}

// deadlineScatter plots each searched size's effective days against its
// effective cost (or, without a price, chip-hours), in millions; nil when
// no size has a goodput.
func deadlineScatter(d *Deadline, price bool) *scatter {
	xl := "effective chip-hours (millions)"
	if price {
		xl = "effective cost (millions)"
	}
	xv := func(g *Goodput) float64 {
		if price && g.Cost != nil {
			return *g.Cost / 1e6
		}
		return g.ChipHours / 1e6
	}
	maxX, maxY := 0.0, 0.0
	for _, s := range d.Sizes {
		if s.Best != nil && s.Best.Goodput != nil {
			maxX, maxY = max(maxX, xv(s.Best.Goodput)), max(maxY, s.Best.Goodput.Days, d.Days)
		}
	}
	if maxX == 0 {
		return nil
	}
	sc := newScatter(xl, "effective days to train", maxX, maxY)
	for _, s := range d.Sizes {
		if s.Best == nil || s.Best.Goodput == nil {
			continue
		}
		g := s.Best.Goodput
		title := fmt.Sprintf("%s (%d chips): %s effective (goodput %s), MFU %s", s.Cluster.Name, s.Cluster.Chips, Days(g.Days), Percent(g.Fraction), Percent(s.Best.MFU))
		if g.Cost != nil {
			title += ", cost " + Money(*g.Cost)
		}
		if s.Best.Energy != nil {
			title += ", " + MWh(s.Best.Energy.MWh)
		}
		sc.Points = append(sc.Points, point{
			X: sc.x(xv(g), maxX), Y: sc.y(g.Days, maxY), Rank: s.Cluster.Chips, Label: s.Cluster.Name, Title: title,
			Recommended: s.Chosen, Optimal: s.MeetsDeadline,
		})
	}
	sc.placeLabels("chosen")
	return sc
}
