// Package bands fits the planner's prediction intervals and out-of-memory
// risk from the public measurements, and checks them the way a new source
// would: each run's interval is drawn without its own source.
//
// A sample is one run's log error ln(measured/predicted step time) (or
// peak memory). Fit turns the samples of a regime (a fixed strategy, a
// search's best plan, a single chip) into a profiles.BandTable: quantiles
// per chip family with at least profiles.BandMinRuns runs,
// per kind of chip, and of the pool of every run, which
// profiles.Bands.StepTimeBand draws intervals from. Coverage measures how
// often those intervals contain a run of a source they were not drawn
// from. Build fits every table from the public measurements and WriteGo
// prints them as the Go source of profiles.DefaultBands.
package bands

import (
	"math"
	"slices"

	"github.com/meshplan/meshplan/profiles"
)

// Sample is one run's error.
type Sample struct {
	// ID names the run; Source is where it was published or measured.
	ID, Source string
	// Family is the chip family, Chip the chip (profiles.Chip.Name),
	// Framework the framework profile and Precision the matmul precision
	// class (profiles.PrecisionKey).
	Family, Chip, Framework, Precision string
	// Chips is the job's chip count.
	Chips int
	// MoE says the run's model routes its tokens to experts.
	MoE bool
	// LogError is ln(measured/predicted): positive where the model is
	// optimistic (the run was slower or bigger than predicted).
	LogError float64
}

// query is the band query of s.
func (s Sample) query(searched bool) profiles.BandQuery {
	return profiles.BandQuery{Family: s.Family, Chips: s.Chips, Chip: s.Chip, Framework: s.Framework, Precision: s.Precision, Searched: searched, MoE: s.MoE}
}

// Fit returns the band table of a regime from its samples: the quantiles
// (profiles.BandQuantiles) of the pool, of the dense runs, of every family
// and kind of chip's dense runs and of the MoE runs, the frameworks and
// precisions covered, and each fit's leave-one-source-out coverage of its
// 80% interval over the runs it is the band of (Coverage).
func Fit(regime string, samples []Sample, basis string) profiles.BandTable {
	t := fitOnly(regime, samples, basis)
	in, _ := covered(regime, samples, nil)
	dense := func(keep func(Sample) bool) func(Sample) bool {
		return func(s Sample) bool { return !s.MoE && keep(s) }
	}
	t.Pooled.Coverage80 = tally("", samples, in, func(Sample) bool { return true }).Coverage80
	t.Dense.Coverage80 = tally("", samples, in, dense(func(Sample) bool { return true })).Coverage80
	for i := range t.Families {
		f := t.Families[i].Family
		t.Families[i].Coverage80 = tally("", samples, in, dense(func(s Sample) bool { return s.Family == f })).Coverage80
	}
	for i := range t.Kinds {
		k := t.Kinds[i].Family
		t.Kinds[i].Coverage80 = tally("", samples, in, dense(func(s Sample) bool { return kind(s) == k })).Coverage80
	}
	t.MoE.Coverage80 = tally("", samples, in, moe).Coverage80
	return t
}

// fitOnly is Fit without the coverage. The families and kinds are fitted
// on their dense runs (profiles.BandTable.Families); their largest job is
// of any model, as is the scale a run covers.
func fitOnly(regime string, samples []Sample, basis string) profiles.BandTable {
	denseRuns := filter(samples, func(s Sample) bool { return !s.MoE })
	dense := profiles.DenseBand
	if fams := distinct(denseRuns, family); len(fams) == 1 {
		dense = fams[0] // the dense runs of one family are that family's (the single-chip steps)
	}
	t := profiles.BandTable{Regime: regime, Basis: basis, Pooled: fitOf("", samples), Dense: fitOf(dense, denseRuns),
		Frameworks: distinct(samples, func(s Sample) string { return s.Framework }),
		Precisions: distinct(samples, func(s Sample) string { return profiles.PrecisionKey(s.Precision) }),
		ChipNames:  distinct(samples, func(s Sample) string { return s.Chip })}
	of := func(name string, keep func(Sample) bool) profiles.BandFit {
		f := fitOf(name, filter(denseRuns, keep))
		for _, s := range filter(samples, keep) {
			f.MaxChips = max(f.MaxChips, s.Chips)
		}
		return f
	}
	for _, f := range distinct(samples, family) {
		t.Families = append(t.Families, of(f, func(s Sample) bool { return s.Family == f }))
	}
	for _, k := range distinct(samples, kind) {
		t.Kinds = append(t.Kinds, of(k, func(s Sample) bool { return kind(s) == k }))
	}
	t.MoE = fitOf(profiles.MoEBand, filter(samples, moe))
	return t
}

// fitOf is the fit of samples under the family name.
func fitOf(family string, samples []Sample) profiles.BandFit {
	f := profiles.BandFit{Family: family, Runs: len(samples)}
	var x []float64
	var sources []string
	for _, s := range samples {
		x = append(x, s.LogError)
		f.MaxChips = max(f.MaxChips, s.Chips)
		if !slices.Contains(sources, s.Source) {
			sources = append(sources, s.Source)
		}
	}
	f.Sources = len(sources)
	f.Q = profiles.BandQuantiles(x)
	return f
}

// distinct returns the distinct keys of samples, sorted.
func distinct(samples []Sample, key func(Sample) string) []string {
	var out []string
	for _, s := range samples {
		if k := key(s); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// family and kind are a sample's chip family and kind of chip.
func family(s Sample) string { return s.Family }
func kind(s Sample) string   { return profiles.KindOf(s.Family) }

// moe reports whether a sample's model is a mixture of experts.
func moe(s Sample) bool { return s.MoE }

// filter returns the samples keep accepts.
func filter(samples []Sample, keep func(Sample) bool) []Sample {
	var out []Sample
	for _, s := range samples {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// Coverage draws, for every sample, the interval the planner would print
// for its job (profiles.Bands.StepTimeBand) from a table fitted without
// the sample's source, and counts how often the run's measured figure falls
// inside: the coverage a source the model has never seen can expect. A
// family whose only source is the one left out is then a family no run
// covers, and is widened as such.
func Coverage(regime string, samples []Sample) profiles.CoverageReport {
	return CoverageWith(regime, samples, nil)
}

// CoverageWith is Coverage, except that a sample whose source is the only
// one among the samples (none is left to fit a table on) has its interval
// drawn from shipped, when not nil: the bands plan prints, fitted on the
// public runs, which is how plan draws one for a source it has not seen.
// The report counts those samples (profiles.CoverageReport.ShippedRuns).
// Without shipped such a sample is drawn from an empty table, as Coverage
// does.
func CoverageWith(regime string, samples []Sample, shipped *profiles.Bands) profiles.CoverageReport {
	in, fromShipped := covered(regime, samples, shipped)
	rep := profiles.CoverageReport{Regime: regime, ShippedRuns: fromShipped}
	rep.All = tally("all", samples, in, func(Sample) bool { return true })
	for _, f := range distinct(samples, family) {
		rep.Families = append(rep.Families, tally(f, samples, in, func(s Sample) bool { return s.Family == f }))
	}
	for _, k := range distinct(samples, kind) {
		rep.Kinds = append(rep.Kinds, tally(k, samples, in, func(s Sample) bool { return kind(s) == k }))
	}
	rep.MoE = tally(profiles.MoEBand, samples, in, moe)
	rep.Dense = tally(profiles.DenseBand, samples, in, func(s Sample) bool { return !s.MoE })
	return rep
}

// drawn is one sample's interval drawn without its source: whether it
// holds the run at 80% and 95%, and its 80% half-width.
type drawn struct {
	in80, in95 bool
	half       float64
}

// covered draws every sample's interval from a table fitted without the
// sample's source, or from shipped (when not nil) where no other source is
// left (CoverageWith), and says how many it drew from shipped.
func covered(regime string, samples []Sample, shipped *profiles.Bands) ([]drawn, int) {
	results := make([]drawn, len(samples))
	tables := map[string]profiles.Bands{}
	alone := map[string]bool{} // sources drawn from shipped
	fromShipped := 0
	for i, s := range samples {
		bs, ok := tables[s.Source]
		if !ok {
			rest := filter(samples, func(o Sample) bool { return o.Source != s.Source })
			if len(rest) == 0 && shipped != nil {
				bs, alone[s.Source] = *shipped, true
			} else {
				bs = profiles.Bands{Tables: []profiles.BandTable{fitOnly(regime, rest, "")}}
			}
			tables[s.Source] = bs
		}
		if alone[s.Source] {
			fromShipped++
		}
		b := bs.StepTimeBand(s.query(regime == profiles.RegimeSearched))
		r := math.Exp(s.LogError)
		results[i] = drawn{in80: b.Lo80 <= r && r <= b.Hi80, in95: b.Lo95 <= r && r <= b.Hi95, half: b.HalfWidth()}
	}
	return results, fromShipped
}

// tally counts the samples keep accepts whose drawn interval (in, by
// sample) holds them, under the name.
func tally(name string, samples []Sample, in []drawn, keep func(Sample) bool) profiles.Covered {
	c := profiles.Covered{Name: name}
	var halves []float64
	for i, s := range samples {
		if !keep(s) {
			continue
		}
		c.Runs++
		if in[i].in80 {
			c.In80++
		}
		if in[i].in95 {
			c.In95++
		}
		halves = append(halves, in[i].half)
	}
	c.ChanceLow80, c.ChanceHigh80 = profiles.ChanceRange80(c.Runs)
	if c.Runs > 0 {
		c.Coverage80 = float64(c.In80) / float64(c.Runs)
		c.Coverage95 = float64(c.In95) / float64(c.Runs)
		c.MedianHalfWidth = median(halves)
	}
	return c
}

// median returns the median of x (sorted in place), 0 without values.
func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	slices.Sort(x)
	n := len(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}

// Residual80 is the 80% half-width of the errors about their source's
// mean: how far two predictions of one source can differ from each other
// beyond the bias they share, the error that separates two plans of one
// job (search.Recommend's time band). Sources with one run carry no
// residual and are left out.
func Residual80(samples []Sample) float64 {
	var res []float64
	for _, src := range distinct(samples, func(s Sample) string { return s.Source }) {
		var xs []float64
		for _, s := range filter(samples, func(s Sample) bool { return s.Source == src }) {
			xs = append(xs, s.LogError)
		}
		if len(xs) < 2 {
			continue
		}
		mean := 0.0
		for _, v := range xs {
			mean += v / float64(len(xs))
		}
		for _, v := range xs {
			res = append(res, v-mean)
		}
	}
	q := profiles.BandQuantiles(res)
	return (math.Exp(q[3]) - math.Exp(q[1])) / 2
}
