package results

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
)

// The HTML report is drawn by hand with html/template rather than with a
// plotting library: gonum.org/v1/plot's SVG canvas (vg/vgsvg) draws a
// scatter as anonymous paths, so a point can carry neither a hover label
// (an SVG <title> child) nor a data attribute that a test or a reader's
// script can find; and it would add a module with font and image
// dependencies for a few dozen shapes. Every point here is one <circle
// data-point="RANK"> with a <title>, every bar segment a <rect> with a
// <title>, and html/template escapes every user-supplied string.

//go:embed report.html.tmpl
var reportTemplate string

// reportTmpl parses the report template; it is a function, not a package
// variable, so that the package has no global state.
func reportTmpl() (*template.Template, error) {
	return template.New("report").Funcs(template.FuncMap{
		"seconds":  Seconds,
		"span":     stepSpan,
		"bytes":    func(gb float64) string { return Bytes(gb * GB) },
		"rawbytes": Bytes,
		"count":    Count,
		"percent":  Percent,
		"days":     Days,
		"money":    Money,
		"spec":     specHTML,
	}).Parse(reportTemplate)
}

// htmlReport is what the template renders: a plan or one explained
// strategy, with the charts already laid out.
type htmlReport struct {
	Title  string
	Inputs [][2]string
	// BandNote explains the front table's shaded rows (the
	// recommendation's band); empty without a recommendation.
	BandNote string
	// Summary is the recommended strategy and its figures, with the days,
	// chip-hours and cost to train when they were asked for.
	Summary  *htmlSummary
	Training Training
	HasCost  bool

	// Plan only.
	Front      []htmlRow
	Scatter    *scatter
	TimeBars   *bars
	MemBars    *bars
	Clusters   []htmlCluster
	Frameworks []FrameworkOption
	SizeChart  *scatter
	ExplainCmd string
	// BudgetHead heads the front's goodput and energy columns (--goodput,
	// --deadline); each htmlRow carries its cells.
	BudgetHead []string
	// Deadline is the --deadline section; nil without one.
	Deadline *htmlDeadline

	// Detail is the breakdown of the recommended (or explained) strategy.
	Detail *htmlDetail
}

// htmlSummary is the recommended strategy (Spec) and its figures in words.
type htmlSummary struct {
	Spec, Figures string
}

// htmlRow is one row of the front table.
type htmlRow struct {
	Rank        int
	Recommended bool
	// InBand marks a row within the recommendation's step-time band.
	InBand bool
	R      Result
	// Budget is the row's goodput and energy cells, under BudgetHead.
	Budget []string
}

// htmlCluster is one row of the clusters table.
type htmlCluster struct {
	O ClusterOption
	// Budget is the cluster's goodput and energy cells, under BudgetHead.
	Budget []string
}

// htmlDetail is the explain breakdown of one strategy.
type htmlDetail struct {
	Spec     string
	R        Result
	Usable   float64
	TimeBar  *bars
	MemBar   *bars
	MemRows  []htmlMem
	Ops      []htmlOp
	Fits     bool
	ModelTF  string
	HWTF     string
	Replicas int
	// Budget is the goodput and energy in words ("" without --goodput).
	Budget string

	// Timeline is the step per pipeline rank and stream (nil when the
	// estimate carries no passes).
	Timeline *htmlTimeline
}

// htmlMem is one memory component.
type htmlMem struct {
	Name  string
	GB    float64
	Share string
}

// htmlOp is one traced op of the program.
type htmlOp struct {
	Pass, FLOPs, Time, Collective, Text string
}

// scatter is an SVG scatter plot laid out in pixels.
type scatter struct {
	Width, Height         int
	Left, Right, Top, Bot float64
	XTicks, YTicks        []tick
	XLabel, YLabel        string
	Points                []point
	VLine                 *tick // a vertical marker (usable memory)
	PlotWidth, PlotHeight float64
	LabelX, LabelY, YLabX float64
	YLabY                 float64
	RecLabelX, RecLabelY  float64
	HasRec                bool
	RecLabel              string
}

// tick is one axis tick: its pixel position and label.
type tick struct {
	Pos   float64
	Label string
	// Alt marks every other tick, whose label a narrow screen hides.
	Alt bool
}

// point is one scatter point.
type point struct {
	X, Y        float64
	Rank        int
	Label       string
	Title       string
	Recommended bool
	Optimal     bool
	// ShowLabel is false for a point whose label would collide with a
	// point, another label or the plot's edge (its <title> still names it
	// on hover); LabelX and LabelY are where a shown label starts.
	ShowLabel      bool
	LabelX, LabelY float64
	// HasBand draws the 80% interval of the point's step time as a
	// vertical line from BandLo to BandHi (pixels).
	HasBand        bool
	BandLo, BandHi float64
}

// bars is a chart of horizontal stacked bars, one per row.
type bars struct {
	Width, Height int
	LabelWidth    float64
	Rows          []barRow
	Legend        []legendItem
	Scale         string
}

// barRow is one stacked bar.
type barRow struct {
	Y     float64
	Label string
	Total string
	TextX float64
	Segs  []segment
}

// segment is one part of a stacked bar.
type segment struct {
	X, W  float64
	Class string
	Title string
}

// legendItem is one entry of a bar chart's legend.
type legendItem struct {
	Class, Name string
	X           float64
}

// WriteHTML writes the plan as one self-contained HTML page (no network
// assets): the inputs, the Pareto front as an SVG scatter of step time
// against memory per chip with the recommended point marked and every
// point labelled on hover, stacked bars of compute / exposed communication
// / bubble and of the memory components per front row, the front as a
// table and, when p.Detail is set, the breakdown of the recommended
// strategy. A plan over several clusters adds a scatter of days (or
// seconds per token) against cost (or chip-hours) with one point per
// cluster, and the clusters table.
func (p Plan) WriteHTML(w io.Writer) error {
	t := p.training()
	rep := htmlReport{
		Title:      fmt.Sprintf("%s on %s", p.Model.Name, p.Cluster.Name),
		Training:   t,
		HasCost:    t.PricePerChipHour > 0,
		ExplainCmd: p.explainHint(),
	}
	rep.Inputs = append(rep.Inputs,
		[2]string{"model", fmt.Sprintf("%s: %s parameters (%s active)", p.Model.Name, Count(float64(p.Model.Params)), Count(float64(p.Model.ActiveParams)))},
		[2]string{"cluster", fmt.Sprintf("%s: %d x %s", p.Cluster.Name, p.Cluster.Chips, p.Cluster.Chip)},
		[2]string{"batch", p.Batch.Text()},
	)
	if t.Given() {
		rep.Inputs = append(rep.Inputs, [2]string{"training", trainingText(t)})
	}
	if p.MinChips != nil {
		rep.Inputs = append(rep.Inputs, [2]string{"smallest cluster", p.MinChips.text(p.Model.Name)})
	}
	rep.Frameworks = p.Frameworks
	rep.Inputs = append(rep.Inputs, [2]string{"framework", p.Framework}, [2]string{"band", p.bandText()})
	rep.Inputs = append(rep.Inputs, [2]string{"search", p.searchText()})
	if p.Recommendation != nil {
		rep.Inputs = append(rep.Inputs, [2]string{"recommend", p.Recommendation.Rule})
		rep.BandNote = fmt.Sprintf("Shaded rows are within the model's band, ±%s of the fastest step time; ★ marks the recommended row (%s).",
			Percent(p.Recommendation.Band), p.objectiveText())
	}
	for i, r := range p.Pareto {
		rep.Front = append(rep.Front, htmlRow{Rank: i + 1, Recommended: i == p.Recommended, InBand: p.Recommendation.InBand(i), R: r,
			Budget: splitCells(budgetCells(r, t, "\x00"))})
	}
	if len(p.Pareto) > 0 {
		rep.Scatter = frontScatter(p)
		rep.TimeBars, rep.MemBars = frontBars(p.Pareto)
	}
	rep.BudgetHead = splitCells(budgetHead(t, "\x00"))
	if r := p.budgetRow(); r != nil && p.Deadline == nil {
		for _, l := range budgetText(*r) {
			rep.Inputs = append(rep.Inputs, [2]string{"goodput and energy", l})
		}
	}
	if p.Deadline != nil {
		rep.Deadline = p.htmlDeadline()
		rep.Inputs = append(rep.Inputs, [2]string{"deadline", p.Deadline.text()})
	}
	if len(p.Clusters) > 0 {
		for _, o := range p.Clusters {
			hc := htmlCluster{O: o}
			if o.Best != nil {
				hc.Budget = splitCells(budgetCells(*o.Best, t, "\x00"))
			} else {
				hc.Budget = make([]string, budgetColumns(t))
			}
			rep.Clusters = append(rep.Clusters, hc)
		}
		rep.SizeChart = clusterScatter(p.Clusters, t)
	}
	if p.Detail != nil {
		rep.Detail = newHTMLDetail(*p.Detail, t)
	}
	if p.Recommended >= 0 && p.Recommended < len(p.Pareto) {
		r := p.Pareto[p.Recommended]
		rep.Summary = &htmlSummary{Spec: r.Strategy.Spec, Figures: summaryText(r)}
	}
	return renderHTML(w, rep)
}

// summaryText is one result's figures in words: the step time and its
// band, the throughput, MFU and memory, and the days, chip-hours and cost
// to train when the result carries them.
func summaryText(r Result) string {
	s := Seconds(r.StepTimeS) + " per step"
	if r.StepTimeSRange != nil {
		s += " (80% band " + stepSpan(r.StepTimeSRange) + ")"
	}
	s += fmt.Sprintf(", %s tokens/s, MFU %s, %s per chip (out-of-memory risk %s)", Count(r.TokensPerS), Percent(r.MFU), Bytes(r.MemoryGBPerChip*GB), Percent(r.OOMRisk))
	if r.Days != nil {
		s += fmt.Sprintf("; %s to train, %s chip-hours", Days(*r.Days), Count(*r.ChipHours))
		if r.Cost != nil {
			s += ", cost " + Money(*r.Cost)
		}
	}
	return s + budgetSummary(r) + "."
}

// specHTML renders a strategy string so that a browser wraps it only
// between its key=value items (after a comma) and between the dimensions
// of its mesh (after a semicolon), never inside one: each item is a
// no-wrap span, with a <wbr> break opportunity between them. The text is
// escaped; the page's text content is the string unchanged.
func specHTML(spec string) template.HTML {
	var b strings.Builder
	start := 0
	for i := 0; i < len(spec); i++ {
		if spec[i] != ',' && spec[i] != ';' {
			continue
		}
		if start > 0 {
			b.WriteString("<wbr>")
		}
		b.WriteString(`<span class="tok">` + template.HTMLEscapeString(spec[start:i+1]) + "</span>")
		start = i + 1
	}
	if start < len(spec) {
		if start > 0 {
			b.WriteString("<wbr>")
		}
		b.WriteString(`<span class="tok">` + template.HTMLEscapeString(spec[start:]) + "</span>")
	}
	return template.HTML(b.String())
}

// WriteExplainHTML writes one evaluated strategy as one self-contained
// HTML page: the inputs and the breakdown of time, memory, collectives and
// the traced program, with stacked bars of the time and memory components.
func WriteExplainHTML(w io.Writer, e Evaluation, t Training) error {
	c := e.Model.Counts()
	rep := htmlReport{
		Title:    fmt.Sprintf("%s on %s: %s", e.Model.Name, e.Cluster.Name, e.Strategy.String()),
		Training: t,
		HasCost:  t.PricePerChipHour > 0,
		Inputs: [][2]string{
			{"model", fmt.Sprintf("%s: %s parameters (%s active), %d layers, hidden %d", e.Model.Name, Count(float64(c.Total)), Count(float64(c.Active)), e.Model.Layers, e.Model.Hidden)},
			{"cluster", fmt.Sprintf("%s: %d x %s, %s and %s per chip", e.Cluster.Name, e.Cluster.Chips(), e.Cluster.Chip.Name, FLOPRate(e.Cluster.Chip.PeakBF16FLOPs), Bytes(e.Cluster.Chip.HBMBytes))},
			{"mesh", Mesh(e.Cluster.Axes)},
			{"batch", e.Batch().Text()},
		},
		Detail: newHTMLDetail(e, t),
	}
	if t.Given() {
		rep.Inputs = append(rep.Inputs, [2]string{"training", trainingText(t)})
	}
	r := NewTrainingResult(e, t)
	for _, l := range budgetText(r) {
		rep.Inputs = append(rep.Inputs, [2]string{"goodput and energy", l})
	}
	return renderHTML(w, rep)
}

func renderHTML(w io.Writer, rep htmlReport) error {
	tmpl, err := reportTmpl()
	if err != nil {
		return fmt.Errorf("results: parsing the HTML template: %w", err)
	}
	ew := &errWriter{w: w}
	if err := tmpl.Execute(ew, rep); err != nil {
		return fmt.Errorf("results: writing HTML: %w", err)
	}
	return ew.err
}

// newHTMLDetail lays out the breakdown of e.
func newHTMLDetail(e Evaluation, t Training) *htmlDetail {
	r := NewTrainingResult(e, t)
	total := e.Memory.TotalBytes()
	d := &htmlDetail{
		Spec: r.Strategy.Spec, R: r, Usable: e.UsableBytes / GB, Fits: r.Fits,
		ModelTF: FLOPs(e.Time.ModelFLOPs), HWTF: FLOPs(e.Time.HardwareFLOPs), Replicas: e.Strategy.Replicas(),
		Budget: strings.TrimPrefix(budgetSummary(r), "; "),
	}
	for _, m := range memoryRows(e) {
		d.MemRows = append(d.MemRows, htmlMem{Name: m.name, GB: m.bytes / GB, Share: percentOf(m.bytes, total)})
	}
	for _, op := range e.Time.Ops {
		axes := ""
		if op.Collective.Count > 0 {
			axes = axesText(op.Collective.Axes)
		}
		d.Ops = append(d.Ops, htmlOp{Pass: op.Pass, FLOPs: FLOPs(op.FLOPs), Time: Seconds(op.Seconds), Collective: axes, Text: op.Text})
	}
	if e.Time.Passes != nil {
		if tl, err := Timeline(e); err == nil {
			d.Timeline = newHTMLTimeline(tl)
		}
	}
	d.TimeBar, d.MemBar = frontBars([]Result{r})
	d.TimeBar.Rows[0].Label, d.MemBar.Rows[0].Label = "step", "chip"
	return d
}

// Chart geometry, in pixels.
const (
	chartWidth  = 760
	chartHeight = 420
	marginLeft  = 72
	marginRight = 24
	marginTop   = 24
	marginBot   = 56
)

// frontScatter lays out the scatter of step time (y) against memory per
// chip (x) for the plan's front, with the usable memory as a dashed line.
func frontScatter(p Plan) *scatter {
	maxX, maxY := 0.0, 0.0
	usable := 0.0
	for _, r := range p.Pareto {
		maxX = math.Max(maxX, r.MemoryGBPerChip)
		maxY = math.Max(maxY, r.StepTimeS)
		if r.StepTimeSRange != nil {
			maxY = math.Max(maxY, r.StepTimeSRange[1])
		}
		usable = math.Max(usable, r.UsableGBPerChip)
	}
	maxX = math.Max(maxX, usable)
	s := newScatter("memory per chip (GB)", "step time (s)", maxX, maxY)
	if usable > 0 {
		s.VLine = &tick{Pos: s.x(usable, maxX), Label: "usable " + Bytes(usable*GB)}
	}
	for i, r := range p.Pareto {
		title := fmt.Sprintf("#%d %s: %s per step (80%% band %s), %s per chip (out-of-memory risk %s), %s tokens/s, MFU %s",
			i+1, r.Strategy.Spec, Seconds(r.StepTimeS), stepSpan(r.StepTimeSRange), Bytes(r.MemoryGBPerChip*GB), Percent(r.OOMRisk), Count(r.TokensPerS), Percent(r.MFU))
		if r.Days != nil {
			title += fmt.Sprintf(", %s to train", Days(*r.Days))
			if r.Cost != nil {
				title += ", cost " + Money(*r.Cost)
			}
		}
		pt := point{
			X: s.x(r.MemoryGBPerChip, maxX), Y: s.y(r.StepTimeS, maxY),
			Rank: i + 1, Label: strconv.Itoa(i + 1), Title: title, Recommended: i == p.Recommended, Optimal: true,
		}
		if r.StepTimeSRange != nil {
			pt.HasBand, pt.BandLo, pt.BandHi = true, s.y(r.StepTimeSRange[0], maxY), s.y(r.StepTimeSRange[1], maxY)
		}
		s.Points = append(s.Points, pt)
	}
	s.placeLabels("recommended")
	return s
}

// clusterScatter lays out the scatter of time to train against its cost,
// one point per cluster that fits: days against cost with --tokens and
// --price, days against chip-hours with --tokens, and otherwise seconds per
// million tokens against chip-seconds per million tokens.
func clusterScatter(opts []ClusterOption, t Training) *scatter {
	xl, yl := "chip-hours per 1M tokens", "hours per 1M tokens"
	xv := func(r Result, chips int) float64 { return 1e6 / r.TokensPerS / 3600 * float64(chips) }
	yv := func(r Result, _ int) float64 { return 1e6 / r.TokensPerS / 3600 }
	if t.Given() {
		yl, yv = "days to train", func(r Result, _ int) float64 { return t.Days(r.TokensPerS) }
		xl, xv = "chip-hours to train (millions)", func(r Result, chips int) float64 { return t.ChipHours(r.TokensPerS, chips) / 1e6 }
		if t.PricePerChipHour > 0 {
			xl, xv = "cost to train (millions)", func(r Result, chips int) float64 { return t.Cost(r.TokensPerS, chips) / 1e6 }
		}
	}
	maxX, maxY := 0.0, 0.0
	for _, o := range opts {
		if o.Best != nil && o.Best.TokensPerS > 0 {
			maxX = math.Max(maxX, xv(*o.Best, o.Cluster.Chips))
			maxY = math.Max(maxY, yv(*o.Best, o.Cluster.Chips))
		}
	}
	if maxX == 0 {
		return nil
	}
	s := newScatter(xl, yl, maxX, maxY)
	for _, o := range opts {
		if o.Best == nil || o.Best.TokensPerS <= 0 {
			continue
		}
		r := *o.Best
		title := fmt.Sprintf("%s (%d chips): %s per step, %s tokens/s, %s", o.Cluster.Name, o.Cluster.Chips,
			Seconds(r.StepTimeS), Count(r.TokensPerS), r.Strategy.Spec)
		if r.Days != nil {
			title += fmt.Sprintf(", %s to train, %s chip-hours", Days(*r.Days), Count(*r.ChipHours))
			if r.Cost != nil {
				title += ", cost " + Money(*r.Cost)
			}
		}
		s.Points = append(s.Points, point{
			X: s.x(xv(r, o.Cluster.Chips), maxX), Y: s.y(yv(r, o.Cluster.Chips), maxY),
			Rank: o.Cluster.Chips, Label: o.Cluster.Name, Title: title, Recommended: o.Recommended, Optimal: o.ParetoOptimal,
		})
	}
	s.placeLabels("recommended")
	return s
}

// newScatter sets up the axes of a scatter whose data run from 0 to maxX
// and 0 to maxY.
func newScatter(xlabel, ylabel string, maxX, maxY float64) *scatter {
	s := &scatter{
		Width: chartWidth, Height: chartHeight,
		Left: marginLeft, Right: chartWidth - marginRight, Top: marginTop, Bot: chartHeight - marginBot,
		XLabel: xlabel, YLabel: ylabel,
	}
	s.PlotWidth, s.PlotHeight = s.Right-s.Left, s.Bot-s.Top
	s.LabelX, s.LabelY = (s.Left+s.Right)/2, chartHeight-12
	s.YLabX, s.YLabY = 18, (s.Top+s.Bot)/2
	for i, v := range niceTicks(maxX) {
		s.XTicks = append(s.XTicks, tick{Pos: s.x(v, maxX), Label: tickLabel(v), Alt: i%2 == 1})
	}
	for i, v := range niceTicks(maxY) {
		s.YTicks = append(s.YTicks, tick{Pos: s.y(v, maxY), Label: tickLabel(v), Alt: i%2 == 1})
	}
	return s
}

// x maps a data value to a pixel column; the axis ends at the last tick.
func (s *scatter) x(v, max float64) float64 {
	return round1(s.Left + v/axisEnd(max)*s.PlotWidth)
}

// y maps a data value to a pixel row, upwards.
func (s *scatter) y(v, max float64) float64 {
	return round1(s.Bot - v/axisEnd(max)*s.PlotHeight)
}

// niceTicks returns about five round tick values from 0 to at least max.
func niceTicks(max float64) []float64 {
	if !(max > 0) {
		return []float64{0, 1}
	}
	step := niceStep(max)
	var ts []float64
	for i := 0; ; i++ {
		v := float64(i) * step
		ts = append(ts, v)
		if v >= max-step*1e-9 || i > 20 {
			break
		}
	}
	return ts
}

// niceStep is a step of 1, 2 or 5 times a power of ten giving at most six intervals.
func niceStep(max float64) float64 {
	raw := max / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// axisEnd is the value of the last tick for data up to max.
func axisEnd(max float64) float64 {
	ts := niceTicks(max)
	return ts[len(ts)-1]
}

// tickLabel formats a tick value without trailing zeros.
func tickLabel(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// frontBars lays out two charts of stacked horizontal bars, one bar per
// row: the step time as compute + exposed communication + bubble, and the
// memory per chip as its five components, each on a common scale.
func frontBars(rows []Result) (timeBars, memBars *bars) {
	maxT, maxM := 0.0, 0.0
	for _, r := range rows {
		maxT = math.Max(maxT, r.Time.ComputeS+r.Time.ExposedCommS+r.Time.BubbleS)
		maxT = math.Max(maxT, r.StepTimeS)
		m := r.Memory
		maxM = math.Max(maxM, m.ParamsGB+m.GradsGB+m.OptimizerGB+m.ActivationsGB+m.BuffersGB)
		maxM = math.Max(maxM, r.UsableGBPerChip)
	}
	const rowH, labelW, width, totalW = 22.0, 40.0, 560, 80.0
	barW := float64(width) - labelW - totalW
	mk := func(names []legendItem) *bars {
		b := &bars{Width: width, Height: int(rowH*float64(len(rows))) + 34, LabelWidth: labelW}
		x := labelW
		for _, n := range names {
			n.X = round1(x)
			b.Legend = append(b.Legend, n)
			x += 14 + 8.6*float64(len(n.Name)) + 10 // room for 15 px text (a phone draws it so)
		}
		return b
	}
	timeBars = mk([]legendItem{{Class: "c-compute", Name: "compute"}, {Class: "c-comm", Name: "exposed communication"}, {Class: "c-bubble", Name: "pipeline bubble"}})
	memBars = mk([]legendItem{{Class: "m-params", Name: "parameters"}, {Class: "m-grads", Name: "gradients"}, {Class: "m-opt", Name: "optimizer"}, {Class: "m-act", Name: "activations"}, {Class: "m-buf", Name: "buffers"}})
	timeBars.Scale = "bar length: step time, up to " + Seconds(maxT)
	memBars.Scale = "bar length: memory per chip, up to " + Bytes(maxM*GB)
	for i, r := range rows {
		y := 28 + rowH*float64(i)
		label := "#" + strconv.Itoa(i+1)
		tb := barRow{Y: y, Label: label, Total: Seconds(r.StepTimeS)}
		x := labelW
		for _, s := range []struct {
			class, name string
			v           float64
		}{{"c-compute", "compute", r.Time.ComputeS}, {"c-comm", "exposed communication", r.Time.ExposedCommS}, {"c-bubble", "pipeline bubble", r.Time.BubbleS}} {
			w := 0.0
			if maxT > 0 {
				w = s.v / maxT * barW
			}
			tb.Segs = append(tb.Segs, segment{X: round1(x), W: round1(w), Class: s.class,
				Title: fmt.Sprintf("%s %s: %s (%s of the step)", label, s.name, Seconds(s.v), percentOf(s.v, r.StepTimeS))})
			x += w
		}
		tb.TextX = round1(x + 6)
		timeBars.Rows = append(timeBars.Rows, tb)

		m := r.Memory
		total := m.ParamsGB + m.GradsGB + m.OptimizerGB + m.ActivationsGB + m.BuffersGB
		mb := barRow{Y: y, Label: label, Total: Bytes(r.MemoryGBPerChip * GB)}
		x = labelW
		for _, s := range []struct {
			class, name string
			v           float64
		}{{"m-params", "parameters", m.ParamsGB}, {"m-grads", "gradients", m.GradsGB}, {"m-opt", "optimizer state", m.OptimizerGB}, {"m-act", "activations", m.ActivationsGB}, {"m-buf", "buffers", m.BuffersGB}} {
			w := 0.0
			if maxM > 0 {
				w = s.v / maxM * barW
			}
			mb.Segs = append(mb.Segs, segment{X: round1(x), W: round1(w), Class: s.class,
				Title: fmt.Sprintf("%s %s: %s (%s of the memory)", label, s.name, Bytes(s.v*GB), percentOf(s.v, total))})
			x += w
		}
		mb.TextX = round1(x + 6)
		memBars.Rows = append(memBars.Rows, mb)
	}
	return timeBars, memBars
}

// stepSpan renders a step-time range as "12.0 s to 14.0 s", or "-" without one.
func stepSpan(r *[2]float64) string {
	if r == nil {
		return "-"
	}
	return Seconds(r[0]) + " to " + Seconds(r[1])
}
