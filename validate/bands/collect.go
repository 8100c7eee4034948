package bands

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/meshplan/meshplan/planner"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
	"github.com/meshplan/meshplan/validate/calibrate"
	"github.com/meshplan/meshplan/validate/runs"
	"github.com/meshplan/meshplan/validate/steps"
)

// Fixed returns the samples of a leave-one-source-out report: each run's
// error when its chip's coefficients are fitted without its source
// (calibrate.HeldOut.OutOfSourceError), on its published layout.
func Fixed(rep calibrate.SourceReport) ([]Sample, error) {
	var out []Sample
	for _, h := range rep.Rows {
		fam, err := familyOfChip(h.Chip)
		if err != nil {
			return nil, fmt.Errorf("bands: run %s: %w", h.ID, err)
		}
		// error = predicted/measured tokens/s - 1 = measured/predicted step time - 1.
		out = append(out, Sample{ID: h.ID, Source: h.Source, Family: fam, Chip: h.Chip, Framework: h.Framework,
			Precision: precisionOf(h.Strategy, h.FP4), Chips: h.Chips, LogError: math.Log1p(h.OutOfSourceError)})
	}
	return out, nil
}

// Single returns the step-time samples of measured single-chip steps that
// ran. Their source is the model: the steps come from one campaign, so the
// model is what a new user's job changes.
func Single(rep steps.Report) ([]Sample, error) {
	// StepError = predicted/measured step time - 1.
	return stepSamples(rep, func(r steps.Result) *float64 { return r.StepError })
}

// SingleMemory returns the peak-memory samples of measured single-chip
// steps that ran.
func SingleMemory(rep steps.Report) ([]Sample, error) {
	// MemoryError = predicted/measured peak - 1.
	return stepSamples(rep, func(r steps.Result) *float64 { return r.MemoryError })
}

// stepSamples returns the samples of the steps with an error
// predicted/measured - 1 (errOf), as ln(measured/predicted).
func stepSamples(rep steps.Report, errOf func(steps.Result) *float64) ([]Sample, error) {
	var out []Sample
	for _, r := range rep.Rows {
		e := errOf(r)
		if e == nil {
			continue
		}
		s, err := stepSample(r)
		if err != nil {
			return nil, err
		}
		s.LogError = -math.Log1p(*e)
		out = append(out, s)
	}
	return out, nil
}

// stepSample is the sample of a measured step, without its error.
func stepSample(r steps.Result) (Sample, error) {
	c, err := profiles.Parse(r.Cluster)
	if err != nil {
		return Sample{}, fmt.Errorf("bands: step %s: %w", r.ID, err)
	}
	return Sample{ID: r.ID, Source: "measured steps of " + r.Model, Family: c.Chip.Family, Chip: c.Chip.Name, Framework: r.Framework,
		Precision: precisionOf(r.Strategy, false), Chips: c.Chips()}, nil
}

// Memory returns the peak-memory samples of a published report: the rows
// with a measured peak of a run that ran.
func Memory(rep runs.PublishedReport) ([]Sample, error) {
	var out []Sample
	for _, r := range rep.Rows {
		if r.MemoryError == nil {
			continue
		}
		fam, err := familyOfChip(r.Chip)
		if err != nil {
			return nil, fmt.Errorf("bands: run %s: %w", r.ID, err)
		}
		// MemoryError = predicted/measured peak - 1.
		out = append(out, Sample{ID: r.ID, Source: r.Source, Family: fam, Chip: r.Chip, Framework: r.Framework,
			Precision: precisionOf(r.Strategy, false), Chips: r.Chips, LogError: -math.Log1p(*r.MemoryError)})
	}
	return out, nil
}

// Searched returns the samples of the planner's best plan for every run of
// held (LeaveOneSourceOut's rows of rs) when the run is posed as its users
// would pose it: the run's model, cluster, batch, framework and precision,
// with its published degrees fixed (FixOf) and everything else searched.
// The error is the best plan's tokens/s per chip over the measured ones:
// the error of what the planner promises, which the search's choice of
// the most favourable estimate biases. Runs the search cannot plan are
// left out. The searches run in parallel; the order is held's.
//
// progress, when not nil, is called with the runs planned so far and their
// number after each one (the search's progress callback's form).
func Searched(ctx context.Context, rs []runs.Run, held []calibrate.HeldOut, o runs.Options, progress func(done, total int64)) ([]Sample, error) {
	byID := map[string]runs.Run{}
	for _, r := range rs {
		byID[r.ID] = r
	}
	type result struct {
		s  Sample
		ok bool
	}
	out := make([]result, len(held))
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	var done int64
	tick := func() {
		if progress == nil {
			return
		}
		mu.Lock()
		done++
		progress(done, int64(len(held)))
		mu.Unlock()
	}
	for range max(runtime.GOMAXPROCS(0), 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				h := held[i]
				tps, err := bestTokensPerSPerChip(ctx, byID[h.ID], o)
				tick()
				if err != nil {
					if ctx.Err() != nil {
						mu.Lock()
						first = cmpErr(first, ctx.Err())
						mu.Unlock()
					}
					continue
				}
				fam, err := familyOfChip(h.Chip)
				if err != nil {
					mu.Lock()
					first = cmpErr(first, fmt.Errorf("bands: run %s: %w", h.ID, err))
					mu.Unlock()
					continue
				}
				out[i] = result{Sample{ID: h.ID, Source: h.Source, Family: fam, Chip: h.Chip, Framework: h.Framework,
					Precision: precisionOf(h.Strategy, h.FP4), Chips: h.Chips, LogError: math.Log(tps / h.Measured)}, true}
			}
		}()
	}
	for i := range held {
		work <- i
	}
	close(work)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	var samples []Sample
	for _, r := range out {
		if r.ok {
			samples = append(samples, r.s)
		}
	}
	return samples, nil
}

// moeRuns returns the IDs of the samples' runs (found by ID in rs) whose
// model is a mixture of experts (model.Spec.MoE).
func moeRuns(samples []Sample, rs []runs.Run) (map[string]bool, error) {
	byID := map[string]runs.Run{}
	for _, r := range rs {
		byID[r.ID] = r
	}
	moe := map[string]bool{}
	for _, s := range samples {
		r, ok := byID[s.ID]
		if !ok {
			continue
		}
		spec, err := r.ModelSpec()
		if err != nil {
			return nil, fmt.Errorf("bands: run %s: %w", r.ID, err)
		}
		moe[s.ID] = spec.MoE != nil
	}
	return moe, nil
}

// markMoE sets MoE on the samples whose ID moe holds true.
func markMoE(samples []Sample, moe map[string]bool) {
	for i := range samples {
		samples[i].MoE = moe[samples[i].ID]
	}
}

// MarkMoE sets MoE on the samples whose run (found by ID in rs) has a
// mixture-of-experts model, so that their intervals are the MoE runs' and
// the dense runs' are fitted without them (profiles.BandTable).
func MarkMoE(samples []Sample, rs []runs.Run) error {
	moe, err := moeRuns(samples, rs)
	if err != nil {
		return err
	}
	markMoE(samples, moe)
	return nil
}

// cmpErr keeps the first error.
func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// bestTokensPerSPerChip plans run r as its users would (FixOf) and returns
// the fastest plan's tokens/s per chip.
func bestTokensPerSPerChip(ctx context.Context, r runs.Run, o runs.Options) (float64, error) {
	m, c, w, s, err := r.Plan(nil)
	if err != nil {
		return 0, err
	}
	so, fw, err := r.SearchOptions(o)
	if err != nil {
		return 0, err
	}
	req := planner.Request{Model: m, Cluster: c, Workload: w, Fix: FixOf(s, fw), Options: so, Framework: fw}
	plan, err := planner.Solve(ctx, req, search.Settings{Seed: 1}, false)
	if err != nil {
		return 0, err
	}
	best := 0.0
	for _, p := range plan.Pareto {
		best = max(best, p.TokensPerSPerChip)
	}
	if best <= 0 {
		return 0, fmt.Errorf("bands: run %s: no plan", r.ID)
	}
	return best, nil
}

// FixOf returns the --fix a user of a published run would give: the
// degrees the run publishes (tensor, pipeline, context and expert
// parallelism, the expert tensor parallelism, the interleaved stages), its
// micro-batch where the framework's configuration names one (not
// torchtitan's or MaxText's, whose per-device batch is the data-parallel
// share), its 8-bit precision and full recomputation, which change what
// the run computes. The search chooses the rest: data parallelism and its
// sharding, the mesh, other recomputation, offload.
func FixOf(s space.Strategy, framework string) string {
	var fix []string
	add := func(k string, v int) { fix = append(fix, fmt.Sprintf("%s=%d", k, v)) }
	add("tp", s.Degree[space.TP])
	add("pp", s.Degree[space.PP])
	if d := s.Degree[space.CP]; d > 1 {
		add("cp", d)
	}
	if d := s.Degree[space.EP]; d > 1 {
		add("ep", d)
	}
	if d := s.ExpertTP(); d > 1 {
		add("etp", d)
	}
	if s.V > 1 {
		fix = append(fix, "schedule="+string(s.Schedule))
		add("v", s.V)
	}
	if s.MB > 0 && framework != "torchtitan" && framework != "maxtext" {
		add("mb", s.MB)
	}
	if s.EightBit() {
		fix = append(fix, "precision="+s.Precision)
	}
	if s.Recompute == space.RecomputeFull {
		fix = append(fix, "recompute=full")
	}
	return strings.Join(fix, ",")
}

// familyOfChip returns the family of a profiles chip name.
func familyOfChip(name string) (string, error) {
	c, err := profiles.LookupChip(name)
	if err != nil {
		return "", err
	}
	return c.Family, nil
}

// precisionOf returns the precision class of a strategy string, "bf16"
// for one that does not parse; fp8 under the nvfp4 recipe (fp4) is
// profiles.PrecisionFP4.
func precisionOf(strategy string, fp4 bool) string {
	s, err := space.Parse(strategy)
	if err != nil || !s.EightBit() {
		return "bf16"
	}
	if fp4 && s.FP8() {
		return profiles.PrecisionFP4
	}
	return s.Precision
}
