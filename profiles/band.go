package profiles

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Regimes of the step-time bands: which prediction a band is the error of.
const (
	// RegimeFixed is a fixed strategy on many chips: `plan explain`, or a
	// published run's own layout under `plan validate`.
	RegimeFixed = "fixed"
	// RegimeSearched is the best plan a search finds on many chips: every
	// row `plan` prints. The search picks the estimate that errs most in its
	// favour, so this band is wider and more biased than the fixed one.
	RegimeSearched = "searched"
	// RegimeSingle is a step on one chip, measured or searched.
	RegimeSingle = "single"
)

// MoEBand names the fit of the mixture-of-experts runs (BandTable.MoE), and
// the novelty of a MoE model where the table has too few of them.
const MoEBand = "moe"

// DenseBand names the fit of the runs of dense models on every chip family
// (BandTable.Dense).
const DenseBand = "dense"

// BandMinRuns is the fewest runs a chip family (a kind of chip, the MoE
// runs) needs for a band of its own; a family with fewer takes its kind's,
// and a kind with fewer the pool's.
const BandMinRuns = 10

// BandMinSources is the fewest sources those runs must come from. A band
// is the error a source the model has not seen can expect, and the runs of
// one or two sources carry their bias and little of the spread between
// sources (on the public runs the families of one or two sources are
// covered at 35% to 100% when their sources are left out,
// docs/uncertainty.md).
const BandMinSources = 3

// Quantile levels of the stored log errors: the bounds of the 95% and 80%
// intervals and the median.
var bandLevels = [5]float64{0.025, 0.10, 0.50, 0.90, 0.975}

// BandFit is the error distribution of one chip family (or of every run of
// a regime, Family ""): quantiles of ln(measured/predicted step time) over
// the runs' leave-one-source-out predictions.
type BandFit struct {
	// Family is the chip family, "" for the pool of every family.
	Family string
	// Runs and Sources count the runs and their sources.
	Runs, Sources int
	// MaxChips is the largest job among the runs.
	MaxChips int
	// Q are ln(measured/predicted) at 2.5%, 10%, 50%, 90% and 97.5%
	// (BandQuantiles).
	Q [5]float64
	// Coverage80 is the fraction of the runs whose measured step time falls
	// in the 80% interval drawn without their own source
	// (validate/bands.Coverage).
	Coverage80 float64
}

// BandTable is the band data of one regime.
type BandTable struct {
	// Regime is RegimeFixed, RegimeSearched or RegimeSingle.
	Regime string
	// Pooled is the fit of every run of the regime: the spread a novelty
	// widens a band by (Widen).
	Pooled BandFit
	// Dense is the fit of the runs of dense models on every chip family
	// (Family DenseBand, or the family's name where they are all of one,
	// as the single-chip steps are): a dense model's band where neither
	// its family nor its kind of chip has enough runs.
	Dense BandFit
	// Families are the fits of the dense runs of every chip family with a
	// run, by name: Runs, Sources and Q are of its dense runs, MaxChips is
	// its largest job of any model. A family with enough (BandMinRuns from
	// BandMinSources) has a band of its own; the others take their kind's
	// or Dense.
	Families []BandFit
	// Kinds are the fits of the dense runs of every family of one kind of
	// chip (KindOf: "tpu", "nvidia", ...), by name, taken as the Families.
	Kinds []BandFit
	// MoE is the fit of the runs of mixture-of-experts models on every
	// chip family (Family "moe"): a MoE model's band when it has enough
	// runs. MoE and dense runs are fitted apart: on the public runs the MoE
	// errors spread three times as wide, and a family's runs of both would
	// give a dense model the MoE runs' spread and a MoE model the dense
	// runs'.
	MoE BandFit
	// Frameworks and Precisions are those the runs cover; ChipNames the
	// chips (Chip.Name) they ran on.
	Frameworks, Precisions, ChipNames []string
	// Basis says which measurements the table comes from.
	Basis string
}

// MemoryFit is the error distribution of the memory model: the log
// errors ln(measured/predicted peak) of published or measured peaks,
// smoothed by a normal kernel (MemoryFit.Exceeds).
type MemoryFit struct {
	// Framework is the framework profile of the peaks, "" for a pool.
	Framework string
	// LogErrors are the peaks' log errors, sorted.
	LogErrors []float64
	// BandwidthLog is the kernel's standard deviation, in log units.
	BandwidthLog float64
	// Basis says which measurements they are.
	Basis string
}

// Bands is every band the planner prints: step-time intervals per regime
// and the memory model's error for out-of-memory risks.
type Bands struct {
	// Tables are the step-time tables by regime.
	Tables []BandTable
	// Between is the 80% half-width of the measured single-chip steps'
	// errors about their model's mean, a fraction of the step time: how far
	// the predictions of two strategies of one model on one chip can be off
	// from each other beyond the bias they share (search.Recommend's time
	// band).
	Between float64
	// Memory is the memory error on many chips: the pool of every
	// framework's peaks, and each framework's with at least BandMinRuns.
	Memory            MemoryFit
	MemoryByFramework []MemoryFit
	// MemorySingle is the memory error of single-chip steps.
	MemorySingle MemoryFit
}

// BandQuery is what a band depends on: the job's chip family and size,
// its framework and precision, and whether its strategy was searched.
type BandQuery struct {
	// Family is the chip family (Chip.Family); Chips the job's chip count;
	// Chip the chip's name (Chip.Name), "" when unknown.
	Family string
	Chips  int
	Chip   string
	// Framework is the framework profile's name ("" is the default profile).
	Framework string
	// Precision is the matmul precision: "bf16", "fp8" or "int8".
	Precision string
	// Searched says the strategy is a search's best rather than fixed.
	Searched bool
	// MoE says the model routes its tokens to experts (model.Spec.MoE).
	MoE bool
}

// Band is an interval for a measured step time, as multiples of the
// predicted one: 80% of the runs it was measured on fall in
// [t·Lo80, t·Hi80], 95% in [t·Lo95, t·Hi95]. Lo is above 1 where the
// model is optimistic (measured slower than predicted).
type Band struct {
	Lo80, Hi80, Lo95, Hi95 float64
	// Median is the median ratio of measured to predicted step time.
	Median float64
	// Coverage80 is the share of the basis's runs that its 80% interval,
	// drawn without their own source, contained.
	Coverage80 float64
	// Runs is the number of runs behind it.
	Runs int
	// Regime is the table it comes from; Family the family whose runs it
	// uses, "" for the pool.
	Regime, Family string
	// Novel lists what no run covers and widened the band: "family",
	// "framework", "precision", "scale", "moe".
	Novel []string
}

// HalfWidth is half the 80% interval's width, a fraction of the predicted
// step time.
func (b Band) HalfWidth() float64 { return (b.Hi80 - b.Lo80) / 2 }

// Basis says in words where the band comes from.
func (b Band) Basis() string {
	on := "of every chip family"
	switch {
	case b.Family == MoEBand:
		on = "of mixture-of-experts models on every chip family"
	case b.Family == DenseBand:
		on = "of dense models on every chip family"
	case b.Family != "" && !strings.Contains(b.Family, "-"):
		on = "of every " + b.Family + " family"
	case b.Family != "":
		on = "on " + b.Family
	}
	what := map[string]string{
		RegimeFixed:    "published runs %s, each source left out",
		RegimeSearched: "published runs %s, planned with their published degrees",
		RegimeSingle:   "measured single-chip steps %s",
	}[b.Regime]
	s := fmt.Sprintf("%d "+what+"; %.0f%% fall in it drawn without their source", b.Runs, on, 100*b.Coverage80)
	if len(b.Novel) > 0 {
		words := make([]string, len(b.Novel))
		for i, n := range b.Novel {
			words[i] = n
			if n == MoEBand {
				words[i] = "MoE model"
			}
		}
		s += "; no run covers this " + strings.Join(words, ", ")
		if widening(b.Novel) > 0 {
			s += ", so it is widened"
		}
	}
	return s
}

// StepTimeBand returns the band of a step time predicted for q from the
// planner's shipped bands (DefaultBands).
func StepTimeBand(q BandQuery) Band { return DefaultBands().StepTimeBand(q) }

// StepTimeBand returns the band of a step time predicted for q: one chip
// takes the single-chip table when its family has runs there, else (and
// many chips) the fixed or searched table. A dense model takes its
// family's quantiles when the family has enough dense runs
// (BandFit.Enough), else its kind's, else those of every dense run; a MoE
// model those of the MoE runs when there are enough, else the dense
// model's; then each of the framework, precision, scale (chips beyond the
// family's largest run) and MoE model that no run covers widens it
// (Widen). Every query has a band.
func (bs Bands) StepTimeBand(q BandQuery) Band {
	regime := RegimeFixed
	if q.Searched {
		regime = RegimeSearched
	}
	t, ok := bs.table(regime)
	if q.Chips <= 1 {
		if st, sok := bs.table(RegimeSingle); sok {
			if _, fok := st.family(q.Family); fok {
				t, ok = st, true
			}
		}
	}
	if !ok {
		return Band{Lo80: 1, Hi80: 1, Lo95: 1, Hi95: 1, Median: 1, Regime: regime}
	}
	var novel []string
	fit := t.Dense
	if fit.Runs == 0 {
		fit = t.Pooled
	}
	if k, ok := t.kind(KindOf(q.Family)); ok && k.Enough() {
		fit = k
	}
	f, known := t.family(q.Family)
	switch {
	case !known:
		novel = append(novel, "family")
	case f.Enough():
		fit = f
	}
	if !slices.Contains(t.Frameworks, frameworkKey(q.Framework)) {
		novel = append(novel, "framework")
	}
	if !slices.Contains(t.Precisions, PrecisionKey(q.Precision)) {
		novel = append(novel, "precision")
	}
	if known && q.Chips > f.MaxChips {
		novel = append(novel, "scale")
	}
	// A chip of a known family that no run ran on (B300 or GB300 beside
	// B200 and GB200 runs, a custom chip YAML) takes its family's band,
	// widened once: its clocks, power and units are not the measured
	// chips' (docs/uncertainty.md).
	if known && q.Chip != "" && len(t.ChipNames) > 0 && !slices.Contains(t.ChipNames, q.Chip) {
		novel = append(novel, "chip")
	}
	// A MoE model's error is that of the MoE runs, on whichever chips they
	// ran: its routing, dispatch and expert GEMMs are terms a dense model
	// does not have, and on the public runs they spread its errors three
	// times as wide (docs/uncertainty.md).
	if q.MoE {
		if t.MoE.Enough() {
			fit = t.MoE
		} else {
			novel = append(novel, MoEBand)
		}
	}
	return bandOf(t, fit, novel)
}

// Enough reports whether f has the runs and sources for a band of its own:
// BandMinRuns runs from BandMinSources sources.
func (f BandFit) Enough() bool { return f.Runs >= BandMinRuns && f.Sources >= BandMinSources }

// widening counts the novelties that widen a band: a family no run
// covers already takes its kind's or every dense run's band, which holds
// its families' spread, so only the framework, precision, scale, chip and
// MoE model widen it further.
func widening(novel []string) int {
	k := 0
	for _, n := range novel {
		if n != "family" {
			k++
		}
	}
	return k
}

// bandOf is the band of fit, widened by the novelties against t's pool.
func bandOf(t BandTable, fit BandFit, novel []string) Band {
	q := Widen(fit.Q, t.Pooled.Q, widening(novel))
	return Band{
		Lo95: math.Exp(q[0]), Lo80: math.Exp(q[1]), Median: math.Exp(q[2]), Hi80: math.Exp(q[3]), Hi95: math.Exp(q[4]),
		Coverage80: fit.Coverage80, Runs: fit.Runs, Regime: t.Regime, Family: fit.Family, Novel: novel,
	}
}

// table returns the table of regime.
func (bs Bands) table(regime string) (BandTable, bool) {
	return named(bs.Tables, func(t BandTable) string { return t.Regime }, regime)
}

// kind returns t's fit of the kind of chip.
func (t BandTable) kind(name string) (BandFit, bool) {
	return named(t.Kinds, func(f BandFit) string { return f.Family }, name)
}

// KindOf is the kind of a chip family: its vendor's prefix, "tpu" of
// "tpu-v5p", "nvidia" of "nvidia-hopper". Chips of one kind share a
// compiler or kernel stack and its errors (XLA, CUDA).
func KindOf(family string) string {
	kind, _, _ := strings.Cut(family, "-")
	return kind
}

// family returns t's fit of the family.
func (t BandTable) family(name string) (BandFit, bool) {
	return named(t.Families, func(f BandFit) string { return f.Family }, name)
}

// frameworkKey is the framework a band covers: the default profile is "generic".
func frameworkKey(name string) string {
	if name == "" {
		return "generic"
	}
	return name
}

// PrecisionFP4 is the precision class of precision=fp8 under an NVFP4
// recipe (model.FP8Recipe.FP4), which runs at the chip's fp4 rate.
const PrecisionFP4 = "fp4"

// PrecisionKey is the precision class a band covers: "fp8", "int8",
// PrecisionFP4, else "bf16".
func PrecisionKey(p string) string {
	switch p {
	case "fp8", "int8", PrecisionFP4:
		return p
	}
	return "bf16"
}

// Widen returns the quantiles q widened for k aspects of a job that no run
// covers: each is taken as one more independent error, as large as the
// pool's, added in quadrature to the distance of each bound from the
// median (an assumption: nothing measures an uncovered aspect, so its
// error is taken to be the typical error of a source the model has not
// seen, which is what the pool's leave-one-source-out spread is).
func Widen(q, pool [5]float64, k int) [5]float64 {
	if k <= 0 {
		return q
	}
	m := q[2]
	out := q
	for i, v := range q {
		if i == 2 {
			continue
		}
		d, dp := v-m, pool[i]-pool[2]
		// sqrt(d² + k·dp²), with d's sign: an independent error adds in quadrature.
		w := math.Sqrt(d*d + float64(k)*dp*dp)
		if i < 2 {
			w = -w
		}
		out[i] = m + w
	}
	return out
}

// BandQuantiles returns the 2.5%, 10%, 50%, 90% and 97.5% quantiles of
// the log errors x (sorted in place) at the plotting positions p·(n+1)
// (Hyndman and Fan's type 6, the order statistics a split-conformal
// interval uses), interpolated linearly and clamped to the extremes; zero
// without errors.
func BandQuantiles(x []float64) [5]float64 {
	var q [5]float64
	if len(x) == 0 {
		return q
	}
	slices.Sort(x)
	for i, p := range bandLevels {
		q[i] = quantile(x, p)
	}
	return q
}

// OOMRisk returns the probability that a strategy predicted at
// predictedBytes per chip needs more than usableBytes, under the shipped
// memory fits (DefaultBands, Bands.MemoryFitFor).
func OOMRisk(predictedBytes, usableBytes float64, chips int, framework string) float64 {
	return DefaultBands().OOMRisk(predictedBytes, usableBytes, chips, framework)
}

// OOMRisk returns the probability that the measured peak of a strategy
// predicted at predictedBytes exceeds usableBytes: the share of the memory
// model's error distribution for the job (MemoryFitFor) above
// ln(usable/predicted).
func (bs Bands) OOMRisk(predictedBytes, usableBytes float64, chips int, framework string) float64 {
	if predictedBytes <= 0 {
		return 0
	}
	if usableBytes <= 0 {
		return 1
	}
	return bs.MemoryFitFor(chips, framework).Exceeds(math.Log(usableBytes / predictedBytes))
}

// MemoryFitFor returns the memory fit of a job of chips chips under the
// framework profile: the single-chip steps' for one chip, the framework's
// own when it has at least BandMinRuns peaks, else the pool's.
func (bs Bands) MemoryFitFor(chips int, framework string) MemoryFit {
	if chips <= 1 && len(bs.MemorySingle.LogErrors) > 0 {
		return bs.MemorySingle
	}
	for _, f := range bs.MemoryByFramework {
		if f.Framework == frameworkKey(framework) && len(f.LogErrors) >= BandMinRuns {
			return f
		}
	}
	return bs.Memory
}

// Exceeds returns the probability that a new peak's log error
// ln(measured/predicted) exceeds x: the share of the fit's log errors
// above x, each smoothed by a normal kernel of the fit's bandwidth (a
// kernel estimate of the distribution: it keeps the heavy tail of the few
// peaks the model missed by far, which a normal fit would spread over
// every plan). Without errors it is 0 above 0 and 1 below.
func (f MemoryFit) Exceeds(x float64) float64 {
	if len(f.LogErrors) == 0 {
		if x < 0 {
			return 1
		}
		return 0
	}
	if !(f.BandwidthLog > 0) {
		n := 0
		for _, v := range f.LogErrors {
			if v > x {
				n++
			}
		}
		return float64(n) / float64(len(f.LogErrors))
	}
	k := distuv.Normal{Mu: 0, Sigma: f.BandwidthLog}
	p := 0.0
	for _, v := range f.LogErrors {
		// P(v + ε > x) for a kernel ε ~ N(0, h²).
		p += k.Survival(x - v)
	}
	return p / float64(len(f.LogErrors))
}

// MemoryFitOf returns the kernel fit of the log errors x (sorted in
// place), with Silverman's rule-of-thumb bandwidth 0.9·min(sd, IQR/1.34)·n^(-1/5)
// (Silverman 1986, eq. 3.31).
func MemoryFitOf(x []float64, basis string) MemoryFit {
	f := MemoryFit{LogErrors: x, Basis: basis}
	n := len(x)
	if n < 2 {
		return f
	}
	slices.Sort(x)
	mean := 0.0
	for _, v := range x {
		mean += v / float64(n)
	}
	sd := 0.0
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	sd = math.Sqrt(sd / float64(n-1))
	iqr := quantile(x, 0.75) - quantile(x, 0.25)
	scale := sd
	if iqr > 0 {
		scale = min(sd, iqr/1.34)
	}
	// Silverman (1986) eq. 3.31.
	f.BandwidthLog = 0.9 * scale * math.Pow(float64(n), -0.2)
	return f
}

// quantile is the type 6 quantile p of the sorted x.
func quantile(x []float64, p float64) float64 {
	n := len(x)
	h := p * float64(n+1)
	switch {
	case h <= 1:
		return x[0]
	case h >= float64(n):
		return x[n-1]
	}
	lo := int(math.Floor(h))
	return x[lo-1] + (h-float64(lo))*(x[lo]-x[lo-1])
}

// Covered is the leave-one-source-out coverage of a group of runs.
type Covered struct {
	// Name is the chip family or kind, "moe" or "all".
	Name string `json:"name"`
	// Runs counts the runs; In80 and In95 those inside the 80% and 95%
	// intervals drawn without their source.
	Runs int `json:"runs"`
	In80 int `json:"in_80"`
	In95 int `json:"in_95"`
	// Coverage80 and Coverage95 are In80/Runs and In95/Runs.
	Coverage80 float64 `json:"coverage_80"`
	Coverage95 float64 `json:"coverage_95"`
	// MedianHalfWidth is the median of the runs' 80% half-widths, a
	// fraction of the predicted step time.
	MedianHalfWidth float64 `json:"median_half_width"`
	// ChanceLow80 and ChanceHigh80 bound the In80 that an honest 80%
	// interval gives nine times in ten by chance alone (ChanceRange80).
	ChanceLow80  int `json:"chance_low_80"`
	ChanceHigh80 int `json:"chance_high_80"`
}

// Calibration80 says how In80 stands against the counts an honest 80%
// interval gives by chance (ChanceLow80 to ChanceHigh80): "consistent"
// inside them, "too narrow" below (the band misses more runs than chance
// explains), "too wide" above, "" without runs.
func (c Covered) Calibration80() string {
	switch {
	case c.Runs == 0:
		return ""
	case c.In80 < c.ChanceLow80:
		return "too narrow"
	case c.In80 > c.ChanceHigh80:
		return "too wide"
	}
	return "consistent"
}

// ChanceRange80 returns the counts lo and hi between which the number of
// n runs that an honest 80% interval holds falls nine times in ten by
// chance alone: the 5% and 95% points of the binomial count Bin(n, 0.8)
// (P(X < lo) < 5%, P(X > hi) <= 5%; a two-sided 90% acceptance region).
// Runs of one source share their errors, so the true spread is wider
// still: a count outside the range says the band is miscalibrated for
// those runs, a count inside it that they cannot tell. Zero for no runs.
func ChanceRange80(n int) (lo, hi int) {
	if n <= 0 {
		return 0, 0
	}
	b := distuv.Binomial{N: float64(n), P: 0.8}
	lo, hi = -1, -1
	for k := 0; k <= n && hi < 0; k++ {
		cdf := b.CDF(float64(k))
		if lo < 0 && cdf >= 0.05 {
			lo = k
		}
		if cdf >= 0.95 {
			hi = k
		}
	}
	if hi < 0 {
		hi = n
	}
	return lo, hi
}

// CoverageReport is the coverage of a regime's intervals, overall and per
// family, in the order of Fit's families.
type CoverageReport struct {
	// Regime is the regime's name (profiles.RegimeFixed, ...).
	Regime string `json:"regime"`
	// All covers every run; Families each family's, Kinds each kind of
	// chip's (KindOf).
	All      Covered   `json:"all"`
	Families []Covered `json:"families"`
	Kinds    []Covered `json:"kinds"`
	// MoE covers the runs of mixture-of-experts models, Dense the others.
	MoE   Covered `json:"moe"`
	Dense Covered `json:"dense"`
	// ShippedRuns counts the runs whose source is the only one of their
	// file, whose intervals are the shipped bands' (DefaultBands) since no
	// other source is left to fit one on.
	ShippedRuns int `json:"shipped_runs,omitempty"`
}

// Kind returns the coverage of the kind of chip.
func (r CoverageReport) Kind(name string) (Covered, bool) {
	return named(r.Kinds, func(c Covered) string { return c.Name }, name)
}

// Family returns the coverage of the family.
func (r CoverageReport) Family(name string) (Covered, bool) {
	return named(r.Families, func(c Covered) string { return c.Name }, name)
}

// named returns the element of xs whose name is want.
func named[T any](xs []T, name func(T) string, want string) (T, bool) {
	for _, x := range xs {
		if name(x) == want {
			return x, true
		}
	}
	var zero T
	return zero, false
}
