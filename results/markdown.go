package results

import (
	"fmt"
	"io"
	"strings"
	"unicode"
)

// WriteMarkdown writes the plan as a review-ready Markdown summary: the
// inputs, the recommended strategy in one paragraph, the Pareto front as a
// table (or, over several clusters, one row per cluster) and, when
// p.Detail is set, the time, memory and collective breakdown of the
// recommended strategy. Every user-supplied string is escaped.
func (p Plan) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	t := p.training()
	ew.printf("# Training plan: %s on %s\n\n", mdText(p.Model.Name), mdText(p.Cluster.Name))
	ew.printf("| input | value |\n| --- | --- |\n")
	ew.printf("| model | %s: %s parameters (%s active) |\n", mdText(p.Model.Name), Count(float64(p.Model.Params)), Count(float64(p.Model.ActiveParams)))
	if len(p.Clusters) > 0 {
		names := make([]string, len(p.Clusters))
		for i, o := range p.Clusters {
			names[i] = mdText(o.Cluster.Name)
		}
		ew.printf("| clusters | %s |\n", strings.Join(names, ", "))
	}
	ew.printf("| cluster | %s: %d x %s |\n", mdText(p.Cluster.Name), p.Cluster.Chips, mdText(p.Cluster.Chip))
	ew.printf("| batch | %s |\n", mdText(p.Batch.Text()))
	if t.Given() {
		ew.printf("| training | %s |\n", trainingText(t))
	}
	if p.MinChips != nil {
		ew.printf("| smallest cluster | %s |\n", mdText(p.MinChips.text(p.Model.Name)))
	}
	if p.Deadline != nil {
		ew.printf("| deadline | %s |\n", mdText(p.Deadline.text()))
	}
	ew.printf("| framework | %s |\n", mdText(p.Framework))
	ew.printf("| band | %s |\n", mdText(p.bandText()))
	ew.printf("| search | %s |\n", mdText(p.searchText()))
	if p.Recommendation != nil {
		ew.printf("| recommend | %s |\n", mdText(p.Recommendation.Rule))
	}
	ew.printf("\n")

	if p.Recommended >= 0 && p.Recommended < len(p.Pareto) {
		r := p.Pareto[p.Recommended]
		ew.printf("## Recommended\n\n`%s`\n\n", mdCode(r.Strategy.Spec))
		ew.printf("%s per step, %s tokens/s (%s per chip), MFU %s, %s per chip of %s usable",
			Seconds(r.StepTimeS), Count(r.TokensPerS), Count(r.TokensPerSPerChip), Percent(r.MFU),
			Bytes(r.MemoryGBPerChip*GB), Bytes(r.UsableGBPerChip*GB))
		if r.Days != nil {
			ew.printf("; %s and %s chip-hours to train", Days(*r.Days), Count(*r.ChipHours))
			if r.Cost != nil {
				ew.printf(", costing %s", Money(*r.Cost))
			}
		}
		ew.printf("%s.\n\n", budgetSummary(r))
	}

	if p.Deadline != nil {
		p.writeDeadlineMarkdown(ew)
	}
	if len(p.Clusters) > 0 {
		ew.printf("## Clusters\n\nThe best strategy on each cluster; **bold** clusters are on the front of (days to train, cost), the recommended one is marked ★.\n\n")
		head, sep := "| cluster | chips | step | 80% band | tokens/s | MFU | memory/chip | OOM risk", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---:"
		head, sep = withTrainingHead(head, sep, t)
		ew.printf("%s | strategy |\n%s | --- |\n", head, sep)
		for _, o := range p.Clusters {
			name := mdText(o.Cluster.Name)
			if o.ParetoOptimal {
				name = "**" + name + "**"
			}
			if o.Recommended {
				name += " ★"
			}
			if o.Best == nil {
				ew.printf("| %s | %d | - | - | - | - | - | -%s | %s: %s |\n", name, o.Cluster.Chips, strings.Repeat(" | -", trainingColumns(t)), o.Why(), mdText(o.Error))
				continue
			}
			r := *o.Best
			ew.printf("| %s | %d | %s | %s | %s | %s | %s | %s%s | `%s` |\n", name, o.Cluster.Chips, Seconds(r.StepTimeS), stepSpan(r.StepTimeSRange),
				Count(r.TokensPerS), Percent(r.MFU), Bytes(r.MemoryGBPerChip*GB), Percent(r.OOMRisk), trainingCells(r, t, " | "), mdCode(r.Strategy.Spec))
		}
		ew.printf("\n")
	}

	if len(p.Frameworks) > 0 {
		ew.printf("## Frameworks\n\nThe best strategy each framework can express; the fastest is marked ★ and the rest of the report is its plan.\n\n")
		ew.printf("| framework | step | 80%% band | tokens/s | MFU | memory/chip | OOM risk | strategy |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
		for _, o := range p.Frameworks {
			name := mdText(o.Framework)
			if o.Recommended {
				name += " ★"
			}
			if o.Best == nil {
				ew.printf("| %s | - | - | - | - | - | - | nothing fits |\n", name)
				continue
			}
			r := *o.Best
			ew.printf("| %s | %s | %s | %s | %s | %s | %s | `%s` |\n", name, Seconds(r.StepTimeS), stepSpan(r.StepTimeSRange), Count(r.TokensPerS), Percent(r.MFU),
				Bytes(r.MemoryGBPerChip*GB), Percent(r.OOMRisk), mdCode(r.Strategy.Spec))
		}
		ew.printf("\n")
	}

	ew.printf("## Pareto front on %s: step time against memory per chip\n\n", mdText(p.Cluster.Name))
	head, sep := "| | rank | step | 80% band | tokens/s | MFU | memory/chip | OOM risk", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---:"
	head, sep = withTrainingHead(head, sep, t)
	ew.printf("%s | strategy |\n%s | --- |\n", head, sep)
	for i, r := range p.Pareto {
		mark := ""
		if i == p.Recommended {
			mark = "★"
		}
		ew.printf("| %s | %d | %s | %s | %s | %s | %s | %s%s | `%s` |\n", mark, i+1, Seconds(r.StepTimeS), stepSpan(r.StepTimeSRange), Count(r.TokensPerS),
			Percent(r.MFU), Bytes(r.MemoryGBPerChip*GB), Percent(r.OOMRisk), trainingCells(r, t, " | "), mdCode(r.Strategy.Spec))
	}
	rule := "the fastest strategy that fits"
	if p.Recommendation != nil {
		rule = p.Recommendation.Rule
	}
	ew.printf("\n★ recommended, %s. See any row in full with `%s`.\n", mdText(rule), mdCode(p.explainHint()))
	if p.Detail != nil {
		ew.printf("\n## Breakdown of the recommended strategy\n\n")
		writeBreakdownMarkdown(ew, *p.Detail)
	}
	return ew.err
}

// WriteExplainMarkdown writes one evaluated strategy as Markdown: the
// inputs, the headline figures (with the days, chip-hours and cost of
// training t, when given) and the time, memory and collective breakdown.
func WriteExplainMarkdown(w io.Writer, e Evaluation, t Training) error {
	ew := &errWriter{w: w}
	r := NewTrainingResult(e, t)
	c := e.Model.Counts()
	ew.printf("# Strategy `%s`\n\n", mdCode(r.Strategy.Spec))
	ew.printf("| input | value |\n| --- | --- |\n")
	ew.printf("| model | %s: %s parameters (%s active), %d layers, hidden %d |\n", mdText(e.Model.Name), Count(float64(c.Total)), Count(float64(c.Active)), e.Model.Layers, e.Model.Hidden)
	ew.printf("| cluster | %s: %d x %s |\n", mdText(e.Cluster.Name), e.Cluster.Chips(), mdText(e.Cluster.Chip.Name))
	ew.printf("| mesh | %s |\n", mdText(Mesh(e.Cluster.Axes)))
	ew.printf("| batch | %s |\n", mdText(e.Batch().Text()))
	if t.Given() {
		ew.printf("| training | %s |\n", trainingText(t))
	}
	ew.printf("\n%s per step, %s tokens/s (%s per chip), MFU %s, HFU %s", Seconds(r.StepTimeS), Count(r.TokensPerS),
		Count(r.TokensPerSPerChip), Percent(r.MFU), Percent(r.HFU))
	if r.Days != nil {
		ew.printf("; %s and %s chip-hours to train", Days(*r.Days), Count(*r.ChipHours))
		if r.Cost != nil {
			ew.printf(", costing %s", Money(*r.Cost))
		}
	}
	ew.printf("%s.\n\n", budgetSummary(r))
	for _, l := range budgetText(r) {
		ew.printf("- %s\n", mdText(l))
	}
	if r.Goodput != nil {
		ew.printf("\n")
	}
	writeBreakdownMarkdown(ew, e)
	return ew.err
}

// writeBreakdownMarkdown writes the time, memory and collective tables of e.
func writeBreakdownMarkdown(ew *errWriter, e Evaluation) {
	r := NewResult(e)
	share := func(v, total float64) string {
		if total <= 0 {
			return "-"
		}
		return Percent(v / total)
	}
	ew.printf("### Time per step\n\n| component | time | share |\n| --- | ---: | ---: |\n")
	for _, row := range []struct {
		name string
		v    float64
	}{{"compute", r.Time.ComputeS}, {"&nbsp;&nbsp;matmuls", r.Time.MatmulS}, {"&nbsp;&nbsp;&nbsp;&nbsp;of which per-call tails (t₀)", r.Time.MatmulTailS}, {"&nbsp;&nbsp;attention kernels", r.Time.AttentionS},
		{"&nbsp;&nbsp;memory-bound passes", r.Time.MemoryBoundS}, {"&nbsp;&nbsp;optimizer step", r.Time.OptimizerS},
		{"exposed communication", r.Time.ExposedCommS}, {"pipeline bubble", r.Time.BubbleS}} {
		ew.printf("| %s | %s | %s |\n", row.name, Seconds(row.v), share(row.v, r.StepTimeS))
	}
	ew.printf("| **step** | **%s** | |\n\n", Seconds(r.StepTimeS))

	total := e.Memory.TotalBytes()
	ew.printf("### Memory per chip\n\n| component | bytes | share |\n| --- | ---: | ---: |\n")
	for _, row := range memoryRows(e) {
		ew.printf("| %s | %s | %s |\n", row.name, Bytes(row.bytes), share(row.bytes, total))
	}
	verdict := "fits"
	if !r.Fits {
		verdict = "does not fit"
	}
	ew.printf("| **total** | **%s** of %s usable | %s |\n\n", Bytes(total), Bytes(e.UsableBytes), verdict)

	if len(r.Collectives) > 0 {
		ew.printf("### Collectives per step\n\n| op | axes | bytes | count | time | overlapped | why |\n| --- | --- | ---: | ---: | ---: | --- | --- |\n")
		for _, c := range r.Collectives {
			ew.printf("| %s | %s | %s | %d | %s | %t | %s |\n", mdText(c.Op), mdText(axesText(c.Axes)), Bytes(c.Bytes), c.Count,
				Seconds(c.TimeS), c.Overlapped, mdText(c.Why))
		}
		ew.printf("\n")
	}
}

// memoryRow is one component of the memory breakdown.
type memoryRow struct {
	name, key string
	bytes     float64
}

// memoryRows lists e's memory components in a fixed order.
func memoryRows(e Evaluation) []memoryRow {
	m := e.Memory
	return []memoryRow{
		{"parameters", "params", m.ParamsBytes},
		{"gradients", "grads", m.GradsBytes},
		{"optimizer state", "optimizer", m.OptimizerBytes},
		{"activations", "activations", m.ActivationsBytes},
		{"buffers", "buffers", m.BuffersBytes},
	}
}

// withTrainingHead appends the training columns to a Markdown table head
// and its separator row.
func withTrainingHead(head, sep string, t Training) (string, string) {
	if !t.Given() {
		return head, sep
	}
	head += " | days | chip-hours"
	sep += " | ---: | ---:"
	if t.PricePerChipHour > 0 {
		head += " | cost"
		sep += " | ---:"
	}
	head += budgetHead(t, " | ")
	sep += strings.Repeat(" | ---:", budgetColumns(t))
	return head, sep
}

// mdText escapes the characters Markdown would read as markup, so that a
// user-supplied name shows as written; a control byte (an escape sequence
// that would drive the terminal showing the file) shows as U+XXXX, and a
// newline or tab as a space.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteByte(' ')
			continue
		case unicode.IsControl(r):
			fmt.Fprintf(&b, "U+%04X", r)
			continue
		case strings.ContainsRune("\\`*_{}[]<>()#+!|~", r):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdCode makes s safe inside a Markdown code span: no backticks, no pipes
// (which would split a table cell), no newlines and no control bytes
// (shown as U+XXXX).
func mdCode(s string) string {
	s = strings.NewReplacer("`", "'", "|", "/", "\n", " ", "\r", " ", "\t", " ").Replace(strings.ToValidUTF8(s, "\uFFFD"))
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			fmt.Fprintf(&b, "U+%04X", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// percentOf is v as a share of total, formatted; "-" for a zero total.
func percentOf(v, total float64) string {
	if total <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*v/total)
}
