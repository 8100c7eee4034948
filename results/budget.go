package results

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/meshplan/meshplan/goodput"
	"github.com/meshplan/meshplan/profiles"
)

// Budget asks for the time to train as a budget sees it (--goodput,
// --deadline): interruptions, checkpoints and restarts, and the energy of
// the run. A zero field takes the default of package goodput for the
// cluster's chip, which every output names with its source.
type Budget struct {
	// InterruptionsPerChipDay overrides the chip family's interruption rate
	// (--interruptions-per-chip-day).
	InterruptionsPerChipDay float64 `json:"interruptions_per_chip_day,omitempty"`
	// CheckpointGBPerSPerChip overrides the storage bandwidth per chip, in
	// 10^9 bytes/s (--checkpoint-bandwidth).
	CheckpointGBPerSPerChip float64 `json:"checkpoint_gb_per_s_per_chip,omitempty"`
	// RestartMinutes overrides the restart time (--restart-minutes).
	RestartMinutes float64 `json:"restart_minutes,omitempty"`
	// ChipWatts overrides the chip's full power: its TDP or a power cap
	// (--chip-watts).
	ChipWatts float64 `json:"chip_watts,omitempty"`
	// PUE overrides the facility's power usage effectiveness (--pue).
	PUE float64 `json:"pue,omitempty"`
	// EnergyPricePerKWh is the price of a kilowatt-hour (--energy-price);
	// zero leaves the energy cost out.
	EnergyPricePerKWh float64 `json:"energy_price_per_kwh,omitempty"`
	// DeadlineDays is the wall time the run must finish in (--deadline);
	// zero means none.
	DeadlineDays float64 `json:"deadline_days,omitempty"`
}

// Goodput is a result's time to train with interruptions, checkpoints and
// restarts (package goodput), next to the failure-free days, chip_hours
// and cost of the result; every input is given with its source.
type Goodput struct {
	// Fraction is the share of wall time spent on useful steps.
	Fraction float64 `json:"fraction"`
	// Days, ChipHours and Cost are the failure-free figures divided by
	// Fraction; Cost is absent without --price.
	Days      float64  `json:"days"`
	ChipHours float64  `json:"chip_hours"`
	Cost      *float64 `json:"cost,omitempty"`
	// Interruptions is the expected number of interruptions of the run.
	Interruptions float64 `json:"interruptions"`
	// InterruptionsPerChipDay is the rate used and InterruptionsSource
	// where it comes from.
	InterruptionsPerChipDay float64 `json:"interruptions_per_chip_day"`
	InterruptionsSource     string  `json:"interruptions_source"`
	// MeanTimeBetweenInterruptionsS is 86400 / (rate · chips).
	MeanTimeBetweenInterruptionsS float64 `json:"mean_time_between_interruptions_s"`
	// CheckpointGBPerChip is the state each chip saves (its weights and
	// optimizer state over their replicas); CheckpointGB the whole checkpoint.
	CheckpointGBPerChip float64 `json:"checkpoint_gb_per_chip"`
	CheckpointGB        float64 `json:"checkpoint_gb"`
	// StorageGBPerSPerChip is the storage bandwidth per chip and
	// StorageSource where it comes from.
	StorageGBPerSPerChip float64 `json:"storage_gb_per_s_per_chip"`
	StorageSource        string  `json:"storage_source"`
	// Async says whether the framework checkpoints asynchronously (only the
	// snapshot to host memory blocks), AsyncSource why.
	Async       bool   `json:"async"`
	AsyncSource string `json:"async_source"`
	// CheckpointWriteS and CheckpointReadS are the checkpoint's write and
	// read times; CheckpointBlockingS the part of the write steps wait for.
	CheckpointWriteS    float64 `json:"checkpoint_write_s"`
	CheckpointReadS     float64 `json:"checkpoint_read_s"`
	CheckpointBlockingS float64 `json:"checkpoint_blocking_s"`
	// CheckpointIntervalSteps is the Young/Daly interval in steps,
	// CheckpointIntervalS in seconds of work.
	CheckpointIntervalSteps int     `json:"checkpoint_interval_steps"`
	CheckpointIntervalS     float64 `json:"checkpoint_interval_s"`
	// RestartS is the restart time and RestartSource where it comes from.
	RestartS      float64 `json:"restart_s"`
	RestartSource string  `json:"restart_source"`
	// LostSPerInterruption is what one interruption costs: the restart,
	// the read and the work since the last checkpoint.
	LostSPerInterruption float64 `json:"lost_s_per_interruption"`
	// MeetsDeadline says whether Days is within the deadline; absent
	// without --deadline.
	MeetsDeadline *bool `json:"meets_deadline,omitempty"`
}

// Energy is the energy of a result's run over its effective days.
type Energy struct {
	// MWh is the facility's energy for the whole run; Cost is MWh x 1000 x
	// PricePerKWh, absent without --energy-price.
	MWh         float64  `json:"mwh"`
	Cost        *float64 `json:"cost,omitempty"`
	PricePerKWh float64  `json:"price_per_kwh,omitempty"`
	// ChipWatts is the chip's full power and ChipSource where it comes from.
	ChipWatts  float64 `json:"chip_watts"`
	ChipSource string  `json:"chip_source"`
	// IdleFraction is the share of ChipWatts drawn while waiting; BusyFraction
	// the share of a step the chip computes (compute_s / step_time_s).
	IdleFraction float64 `json:"idle_fraction"`
	BusyFraction float64 `json:"busy_fraction"`
	// ChipAverageWatts is the chip's average power over a step.
	ChipAverageWatts float64 `json:"chip_average_watts"`
	// HostWattsPerChip is the host's and network's share per chip.
	HostWattsPerChip float64 `json:"host_watts_per_chip"`
	HostSource       string  `json:"host_source"`
	// PUE is the facility's power usage effectiveness and PUESource where it
	// comes from.
	PUE       float64 `json:"pue"`
	PUESource string  `json:"pue_source"`
	// WattsPerChip is the facility's power per chip: (chip + host) x PUE.
	WattsPerChip float64 `json:"watts_per_chip"`
}

// applyBudget adds r's Goodput and, when the chip's power is known or
// given, its Energy, for a run of t on cluster c under the framework named
// framework. r must carry the failure-free days (Training.apply).
func (t Training) applyBudget(r *Result, c profiles.Cluster, framework string) error {
	b := t.Budget
	if b == nil || r.Days == nil || r.StepTimeS <= 0 {
		return nil
	}
	chips := c.Chips()
	rate := goodput.InterruptionsPerChipDay(c.Chip.Family)
	if b.InterruptionsPerChipDay > 0 {
		rate = goodput.Sourced{Value: b.InterruptionsPerChipDay, Source: "given"}
	}
	storage := goodput.StorageBytesPerSPerChip()
	if b.CheckpointGBPerSPerChip > 0 {
		storage = goodput.Sourced{Value: b.CheckpointGBPerSPerChip * GB, Source: "given"}
	}
	restart := goodput.RestartSeconds()
	if b.RestartMinutes > 0 {
		restart = goodput.Sourced{Value: b.RestartMinutes * 60, Source: "given"}
	}
	async, asyncWhy := goodput.Async(framework)
	s := r.Strategy
	// Weights are replicated over the data-parallel and context-parallel
	// chips; the optimizer state too, unless ZeRO shards it over dp.
	paramReplicas, optReplicas := max(1, s.DP)*max(1, s.CP), max(1, s.CP)
	if s.Zero == 0 {
		optReplicas *= max(1, s.DP)
	}
	perChip := goodput.CheckpointBytesPerChip(r.Memory.ParamsGB*GB, r.Memory.OptimizerGB*GB, paramReplicas, optReplicas)
	job := goodput.Job{
		Chips: chips, StepSeconds: r.StepTimeS, InterruptionsPerChipDay: rate.Value,
		CheckpointBytesPerChip: perChip, StorageBytesPerSPerChip: storage.Value, RestartSeconds: restart.Value,
	}
	if async {
		job.SnapshotBytesPerSPerChip = c.Chip.HostBandwidthBytesPerS
	}
	e, err := goodput.Plan(job)
	if err != nil {
		return fmt.Errorf("goodput of %s on %s: %w", s.Spec, c.Name, err)
	}
	g := &Goodput{
		Fraction:                      e.Goodput,
		InterruptionsPerChipDay:       rate.Value,
		InterruptionsSource:           rate.Source,
		MeanTimeBetweenInterruptionsS: e.MeanSecondsBetweenInterruptions,
		CheckpointGBPerChip:           perChip / GB,
		CheckpointGB:                  perChip * float64(chips) / GB,
		StorageGBPerSPerChip:          storage.Value / GB,
		StorageSource:                 storage.Source,
		Async:                         async,
		AsyncSource:                   asyncWhy,
		CheckpointWriteS:              e.WriteSeconds,
		CheckpointReadS:               e.ReadSeconds,
		CheckpointBlockingS:           e.BlockingSeconds,
		CheckpointIntervalSteps:       e.IntervalSteps,
		CheckpointIntervalS:           e.IntervalSeconds,
		RestartS:                      restart.Value,
		RestartSource:                 restart.Source,
		LostSPerInterruption:          e.LostSecondsPerInterruption,
	}
	if e.Goodput <= 0 {
		return fmt.Errorf("goodput of %s on %s is zero: an interruption every %s costs %s of restart and lost work; lower --interruptions-per-chip-day or --restart-minutes", s.Spec, c.Name,
			hours(e.MeanSecondsBetweenInterruptions), hours(e.LostSecondsPerInterruption))
	}
	g.Days = *r.Days / e.Goodput               // wall time = failure-free time / goodput
	g.ChipHours = g.Days * 24 * float64(chips) // days x 24 x chips
	if t.PricePerChipHour > 0 {
		cost := g.ChipHours * t.PricePerChipHour
		g.Cost = &cost
	}
	g.Interruptions = g.Days * rate.Value * float64(chips) // rate per chip-day x chip-days
	if b.DeadlineDays > 0 {
		meets := g.Days <= b.DeadlineDays
		g.MeetsDeadline = &meets
	}
	r.Goodput = g
	en, err := t.energy(*r, c, g.Days)
	if err != nil {
		return err
	}
	r.Energy = en
	return nil
}

// energy is the energy of r's run of days wall days on c; nil when the
// chip's power is neither known nor given.
func (t Training) energy(r Result, c profiles.Cluster, days float64) (*Energy, error) {
	b := t.Budget
	p, ok := goodput.ChipPower(c.Chip.Name)
	if b.ChipWatts > 0 {
		if !ok {
			p = goodput.Power{IdleFraction: goodput.IdleFraction, HostSource: "assumed: no host power for this chip"}
		}
		p.ChipWatts, p.ChipSource = b.ChipWatts, "given"
		ok = true
	}
	if !ok {
		return nil, nil
	}
	pue := goodput.PUE()
	if b.PUE > 0 {
		pue = goodput.Sourced{Value: b.PUE, Source: "given"}
	}
	busy := min(1, max(0, r.Time.ComputeS/r.StepTimeS)) // the share of a step the chip computes
	e, err := goodput.RunEnergy(p, busy, pue.Value, c.Chips(), days*goodput.SecondsPerDay)
	if err != nil {
		return nil, fmt.Errorf("energy on %s: %w", c.Name, err)
	}
	en := &Energy{
		MWh: e.MWh, ChipWatts: p.ChipWatts, ChipSource: p.ChipSource, IdleFraction: p.IdleFraction, BusyFraction: busy,
		ChipAverageWatts: e.ChipWatts, HostWattsPerChip: p.HostWattsPerChip, HostSource: p.HostSource,
		PUE: pue.Value, PUESource: pue.Source, WattsPerChip: e.WattsPerChip,
	}
	if b.EnergyPricePerKWh > 0 {
		cost := e.MWh * 1000 * b.EnergyPricePerKWh // MWh x 1000 kWh/MWh x price per kWh
		en.Cost, en.PricePerKWh = &cost, b.EnergyPricePerKWh
	}
	return en, nil
}

// ApplyBudget adds the goodput and energy of the plan's Training.Budget to
// every row of its front, for the cluster c the plan was searched on; it
// does nothing without a budget.
func (p *Plan) ApplyBudget(c profiles.Cluster) error {
	t := p.training()
	if t.Budget == nil {
		return nil
	}
	for i := range p.Pareto {
		if err := t.applyBudget(&p.Pareto[i], c, p.Framework); err != nil {
			return err
		}
	}
	return nil
}

// budgetText is the header's account of the budget's inputs, from the
// figures of r: "goodput: interruptions 5.27e-4 per chip-day (source;
// --interruptions-per-chip-day), ...".
func budgetText(r Result) []string {
	g := r.Goodput
	if g == nil {
		return nil
	}
	lines := []string{
		fmt.Sprintf("interruptions %s per chip-day (%s; --interruptions-per-chip-day): one every %s, %s in the run", sci(g.InterruptionsPerChipDay), g.InterruptionsSource, hours(g.MeanTimeBetweenInterruptionsS), Count(g.Interruptions)),
		fmt.Sprintf("checkpoint %s per chip (%s in all) at %s per chip (%s; --checkpoint-bandwidth in GB/s): written in %s, read in %s; %s; %s blocking, every %d steps (Young/Daly)",
			Bytes(g.CheckpointGBPerChip*GB), Bytes(g.CheckpointGB*GB), ByteRate(g.StorageGBPerSPerChip*GB), g.StorageSource,
			Seconds(g.CheckpointWriteS), Seconds(g.CheckpointReadS), g.AsyncSource, Seconds(g.CheckpointBlockingS), g.CheckpointIntervalSteps),
		fmt.Sprintf("restart %s (%s; --restart-minutes); %s lost per interruption; goodput %s", hours(g.RestartS), g.RestartSource, hours(g.LostSPerInterruption), Percent(g.Fraction)),
	}
	if e := r.Energy; e != nil {
		lines = append(lines, fmt.Sprintf("power %s per chip at full load (%s; --chip-watts), %s idle (assumed), busy %s of a step: %s on average; host %s per chip (%s); PUE %s (%s; --pue)",
			watts(e.ChipWatts), e.ChipSource, Percent(e.IdleFraction), Percent(e.BusyFraction), watts(e.ChipAverageWatts), watts(e.HostWattsPerChip), e.HostSource,
			strconv.FormatFloat(e.PUE, 'f', -1, 64), e.PUESource))
	} else {
		lines = append(lines, "power unknown for this chip: give --chip-watts for the energy")
	}
	return lines
}

// hours formats a wall time in seconds, minutes or hours: "45.0 s",
// "12.1 min", "2.78 h".
func hours(s float64) string {
	switch {
	case s >= 3600:
		return sig3(s/3600) + " h"
	case s >= 60:
		return sig3(s/60) + " min"
	}
	return Seconds(s)
}

// sci formats a small rate with 3 significant digits: 5.27e-04.
func sci(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

// watts formats a power: "602 W", "1.29 kW".
func watts(w float64) string {
	if w >= 1000 {
		return sig3(w/1000) + " kW"
	}
	return sig3(w) + " W"
}

// MWh formats an energy in megawatt-hours: "1.23K MWh".
func MWh(v float64) string { return Count(v) + " MWh" }

// budgetColumns is the number of budget columns a table has for t:
// goodput, effective days, effective cost (with --price), MWh and energy
// cost (with --energy-price).
func budgetColumns(t Training) int {
	if t.Budget == nil || !t.Given() {
		return 0
	}
	n := 3
	if t.PricePerChipHour > 0 {
		n++
	}
	if t.Budget.EnergyPricePerKWh > 0 {
		n++
	}
	return n
}

// budgetHead is the heads of the budget columns, each preceded by sep;
// upper case in a table (sep a tab), lower case elsewhere.
func budgetHead(t Training, sep string) string {
	if budgetColumns(t) == 0 {
		return ""
	}
	upper := sep == "\t"
	name := func(lower, table string) string {
		if upper {
			return sep + table
		}
		return sep + lower
	}
	s := name("goodput", "GOODPUT") + name("effective days", "EFF-DAYS")
	if t.PricePerChipHour > 0 {
		s += name("effective cost", "EFF-COST")
	}
	s += name("MWh", "MWh")
	if t.Budget.EnergyPricePerKWh > 0 {
		s += name("energy cost", "ENERGY-COST")
	}
	return s
}

// budgetCells is the budget cells of r, each preceded by sep; "-" where r
// has none.
func budgetCells(r Result, t Training, sep string) string {
	if budgetColumns(t) == 0 {
		return ""
	}
	g, e := r.Goodput, r.Energy
	cell := func(ok bool, f func() string) string {
		if !ok {
			return sep + "-"
		}
		return sep + f()
	}
	s := cell(g != nil, func() string { return Percent(g.Fraction) })
	s += cell(g != nil, func() string { return Days(g.Days) })
	if t.PricePerChipHour > 0 {
		s += cell(g != nil && g.Cost != nil, func() string { return Money(*g.Cost) })
	}
	s += cell(e != nil, func() string { return Count(e.MWh) })
	if t.Budget.EnergyPricePerKWh > 0 {
		s += cell(e != nil && e.Cost != nil, func() string { return Money(*e.Cost) })
	}
	return s
}

// budgetRow is the row whose inputs the header names: the recommended
// row, else the first; nil without a budget.
func (p Plan) budgetRow() *Result {
	if p.Training == nil || p.Training.Budget == nil || len(p.Pareto) == 0 {
		return nil
	}
	i := p.Recommended
	if i < 0 || i >= len(p.Pareto) {
		i = 0
	}
	return &p.Pareto[i]
}

// writeBudgetLines writes the table header's account of the budget's
// inputs, with their sources and flags, for the recommended row.
func (p Plan) writeBudgetLines(ew *errWriter) {
	r := p.budgetRow()
	if r == nil {
		return
	}
	for i, l := range budgetText(*r) {
		head := "         "
		if i == 0 {
			head = "goodput  "
		}
		ew.printf("%s%s\n", head, l)
	}
}

// BudgetCSVColumns are the columns `--format csv` inserts before spec with
// --goodput or --deadline, in order: the goodput fraction, the effective
// days, chip-hours and cost (empty without --price), the run's MWh and
// energy cost (empty without the chip's power or --energy-price), the
// checkpoint interval in steps and, under --deadline, whether the row
// meets it.
var BudgetCSVColumns = []string{
	"goodput", "effective_days", "effective_chip_hours", "effective_cost", "mwh", "energy_cost",
	"checkpoint_interval_steps", "meets_deadline",
}

// csvHeader is CSVColumns, with BudgetCSVColumns before spec when t has a
// budget.
func csvHeader(t Training) []string {
	if t.Budget == nil || !t.Given() {
		return CSVColumns
	}
	n := len(CSVColumns) - 1 // spec is last
	return slices.Concat(CSVColumns[:n], BudgetCSVColumns, CSVColumns[n:])
}

// withBudgetCSV inserts r's budget cells before the last cell of row, the
// spec, when t has a budget; meets is the row's deadline verdict, nil to
// take r's own.
func withBudgetCSV(row []string, t Training, r *Result, meets *bool) []string {
	if t.Budget == nil || !t.Given() {
		return row
	}
	cells := make([]string, len(BudgetCSVColumns))
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if r != nil && r.Goodput != nil {
		g := r.Goodput
		cells[0], cells[1], cells[2] = f(g.Fraction), f(g.Days), f(g.ChipHours)
		if g.Cost != nil {
			cells[3] = f(*g.Cost)
		}
		cells[6] = strconv.Itoa(g.CheckpointIntervalSteps)
		if g.MeetsDeadline != nil && meets == nil {
			meets = g.MeetsDeadline
		}
	}
	if r != nil && r.Energy != nil {
		cells[4] = f(r.Energy.MWh)
		if r.Energy.Cost != nil {
			cells[5] = f(*r.Energy.Cost)
		}
	}
	if meets != nil {
		cells[7] = strconv.FormatBool(*meets)
	}
	spec := row[len(row)-1]
	return append(append(row[:len(row)-1:len(row)-1], cells...), spec)
}

// budgetSummary is r's goodput and energy in words for a summary
// sentence, "" without them: "; with interruptions, checkpoints and
// restarts (goodput 91.7%), 78.7 d, 30.9M chip-hours, cost 77.4M; 38.5K MWh".
func budgetSummary(r Result) string {
	g := r.Goodput
	if g == nil {
		return ""
	}
	s := fmt.Sprintf("; with interruptions, checkpoints and restarts (goodput %s), %s, %s chip-hours", Percent(g.Fraction), Days(g.Days), Count(g.ChipHours))
	if g.Cost != nil {
		s += ", cost " + Money(*g.Cost)
	}
	if e := r.Energy; e != nil {
		s += "; " + MWh(e.MWh)
		if e.Cost != nil {
			s += ", energy cost " + Money(*e.Cost)
		}
	}
	return s
}

// writeBudgetExplain writes explain's account of r's goodput and energy:
// the effective figures, then every input with its source and flag.
func writeBudgetExplain(ew *errWriter, r Result) {
	g := r.Goodput
	if g == nil {
		return
	}
	ew.printf("\nWITH INTERRUPTIONS, CHECKPOINTS AND RESTARTS\n")
	tw := newTable(ew)
	fmt.Fprintf(tw, "goodput\t%s of wall time on useful steps\n", Percent(g.Fraction))
	fmt.Fprintf(tw, "effective days\t%s\n", Days(g.Days))
	fmt.Fprintf(tw, "effective chip-hours\t%s\n", Count(g.ChipHours))
	if g.Cost != nil {
		fmt.Fprintf(tw, "effective cost\t%s\n", Money(*g.Cost))
	}
	if e := r.Energy; e != nil {
		fmt.Fprintf(tw, "energy\t%s at %s per chip with host and PUE\n", MWh(e.MWh), watts(e.WattsPerChip))
		if e.Cost != nil {
			fmt.Fprintf(tw, "energy cost\t%s at %s per kWh\n", Money(*e.Cost), strconv.FormatFloat(e.PricePerKWh, 'f', -1, 64))
		}
	}
	if ew.err == nil {
		ew.err = tw.Flush()
	}
	for _, l := range budgetText(r) {
		ew.printf("  %s\n", l)
	}
}

// CheckBudget reports why the goodput of evaluation e cannot be computed
// for t (a job interrupted faster than it restarts), nil when it can or t
// asks for none. The renderers leave such a row without a goodput.
func (t Training) CheckBudget(e Evaluation) error {
	r := NewResult(e)
	t.apply(&r, e.Cluster.Chips())
	return t.applyBudget(&r, e.Cluster, e.FrameworkName())
}
