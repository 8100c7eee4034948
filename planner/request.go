package planner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// Request is one planning problem as a user states it: what `plan` and
// every cell of a sweep ask for.
type Request struct {
	// Model, Cluster and Workload are the problem (a zero sequence length
	// means the model's).
	Model    model.Spec
	Cluster  profiles.Cluster
	Workload space.Workload
	// Fix is the --fix string every strategy agrees with ("" for none).
	Fix string
	// Options select the models' options.
	Options search.Options
	// Top is the number of front rows the plan keeps (0: all).
	Top int
	// Framework names the framework profile Options come from ("" for the
	// default).
	Framework string
	// Objective chooses the recommended row: search.ObjectiveBalanced
	// (or empty), ObjectiveTime, ObjectiveMemory or ObjectiveCost.
	Objective string
	// MaxOOMRisk is the out-of-memory risk above which a row is not
	// recommended (results.PlanOptions.MaxOOMRisk: 0 is the default).
	MaxOOMRisk float64
	// OffloadWhenNothingFits lets Solve, when nothing fits in HBM, search
	// again with the framework's host offload (offloadFallback); the
	// caller says so (OffloadNote). plan sets it; sweeps do not.
	OffloadWhenNothingFits bool
}

// Problem builds the search problem of r; an input it cannot plan (a
// malformed fix, a model the layer program cannot describe) is a
// *search.InputError. A fix of precision=fp8 on a chip with int8 matmuls but
// no FP8 ones plans int8 (EightBitNote says so).
func (r Request) Problem() (*search.Problem, error) {
	fix, err := space.ParseFix(r.Fix)
	if err != nil {
		return nil, &search.InputError{Err: fmt.Errorf("--fix %q: %w", r.Fix, err)}
	}
	if err := fixFits(r.Model, fix); err != nil {
		return nil, &search.InputError{Err: err}
	}
	fix, _ = r.Options.Limits.EightBitFix(fix, r.Cluster.Chip)
	return search.NewProblem(r.Model, r.Cluster, r.Workload, fix, r.Options)
}

// EightBitNote is the one-line note for stderr when r's precision=fp8 is
// planned as int8 on its chip (space.Limits.EightBitFix), and "" otherwise
// or for a fix that does not parse.
func (r Request) EightBitNote() string {
	fix, err := space.ParseFix(r.Fix)
	if err != nil {
		return ""
	}
	_, note := r.Options.Limits.EightBitFix(fix, r.Cluster.Chip)
	return note
}

// ALiBiNote is the one-line note for stderr when r's model has ALiBi and
// its attention is planned on FlashAttention-2 (model.Kernels.ALiBiFused,
// profiles.Efficiency.FlashAttention2Fraction), and "" otherwise.
func (r Request) ALiBiNote() string {
	f := r.Cluster.Efficiency.ALiBiRate(r.Model.ALiBi, r.Options.Program.Kernels.ALiBiFused)
	if f == 1 {
		return ""
	}
	return fmt.Sprintf("%s has ALiBi, which FlashAttention-3 and PyTorch's SDPA do not take: its attention is planned on FlashAttention-2, "+
		"at %.2f of the flash kernel on %s (--framework megatron passes it to cuDNN at the full rate)", r.Model.Name, f, r.Cluster.Chip.Name)
}

// FSDPOverDCNFix returns r with the search allowed to put fsdp on the
// data-centre network between TPU slices (space.Limits.FSDPOverDCN) and the
// one-line note that says so, when r's cluster has such an axis and r's fix
// pins neither fsdp nor a mesh; ok is false otherwise. Solve plans it only
// when nothing fits with fsdp inside the slices.
func (r Request) FSDPOverDCNFix() (w Request, note string, ok bool) {
	fix, err := space.ParseFix(r.Fix)
	if err != nil || fix.Has("fsdp") || fix.Has("mesh") || r.Options.Limits.FSDPOverDCN {
		return r, "", false
	}
	slices := 1
	for _, a := range r.Cluster.Axes {
		if a.Tier == profiles.DCN {
			slices *= a.Size
		}
	}
	if slices <= 1 {
		return r, "", false
	}
	w = r
	w.Options.Limits.FSDPOverDCN = true
	return w, fmt.Sprintf("nothing fits with fsdp inside each slice: planned with fsdp allowed across the %d slices over the DCN (MaxText's dcn_fsdp_parallelism)", slices), true
}

// BF16WeightsFix returns r with weights=bf16 pinned and the one-line note
// that says so, when r's framework keeps bf16 weights
// (space.Limits.BF16Weights) and r's fix leaves the weights free; ok is
// false otherwise. Solve plans it only when nothing fits with fp32 weights:
// the search never changes a run's numerics while the default runs.
func (r Request) BF16WeightsFix() (w Request, note string, ok bool) {
	fix, err := space.ParseFix(r.Fix)
	if err != nil || fix.Has("weights") || !r.Options.Limits.BF16Weights {
		return r, "", false
	}
	w = r
	if w.Fix == "" {
		w.Fix = "weights=bf16"
	} else {
		w.Fix += ",weights=bf16"
	}
	fw := r.Options.Limits.Framework
	if fw == "" {
		fw = "the framework"
	}
	return w, fmt.Sprintf("nothing fits with fp32 weights: planned with weights=bf16 (bf16 parameters, gradients and Adam moments, %s's weight_dtype: bfloat16); --fix weights=fp32 keeps them fp32", fw), true
}

// fixFits reports a --fix that pins what the model cannot use, which the
// search would otherwise ignore or read its own way: expert parallelism
// (ep, etp) on a model without experts, and virtual stages (v) without the
// schedule that runs them, which plan explain --strategy refuses too.
func fixFits(m model.Spec, fix space.Fix) error {
	if m.MoE == nil {
		for _, k := range []string{"ep", "etp"} {
			if v, ok := fix.Set[k]; ok && v != "1" {
				return fmt.Errorf("--fix %s=%s splits experts, but model %s has no experts: drop %s", k, v, m.Name, k)
			}
		}
	}
	if v, ok := fix.Set["v"]; ok && v != "1" && !fix.Has("schedule") {
		return fmt.Errorf("--fix v=%s pins virtual stages without a schedule: add schedule=interleaved (or another schedule with virtual stages), as plan explain --strategy needs", v)
	}
	return nil
}

// Solve is the one planning path of `plan`, `plan sweep` and their
// variants: it builds r's problem, searches it as s says (search.Run) and
// returns the plan `plan --format json` prints. With detail it adds the
// recommended strategy's traced evaluation (the md and html reports,
// --emit). Its errors are *search.InputError for bad input,
// *search.NoFitError when nothing fits, and the context's.
func Solve(ctx context.Context, r Request, s search.Settings, detail bool) (results.Plan, error) {
	p, err := r.Problem()
	if err != nil {
		return results.Plan{}, err
	}
	res, err := search.Run(ctx, p, s)
	var notes []string
	if nf := (*search.NoFitError)(nil); errors.As(err, &nf) {
		// Nothing fits as the search prunes and prices by default: try
		// what the framework can still run, one relaxation at a time
		// (fsdp across the DCN, then bf16 weights), then both, and say
		// which one the plan needed (FSDPOverDCNFix, BF16WeightsFix).
		dcn, dcnNote, dcnOK := r.FSDPOverDCNFix()
		bf, bfNote, bfOK := r.BF16WeightsFix()
		both, _, bothOK := dcn.BF16WeightsFix()
		tries := []struct {
			ok    bool
			r     Request
			notes []string
		}{{dcnOK, dcn, []string{dcnNote}}, {bfOK, bf, []string{bfNote}}, {dcnOK && bothOK, both, []string{dcnNote, bfNote}}}
		for _, t := range tries {
			if !t.ok {
				continue
			}
			pw, perr := t.r.Problem()
			if perr != nil {
				continue
			}
			if rw, rerr := search.Run(ctx, pw, s); rerr == nil {
				r, p, res, err, notes = t.r, pw, rw, nil, t.notes
				break
			}
		}
	}
	if nf := (*search.NoFitError)(nil); errors.As(err, &nf) && s.Suggest && r.OffloadWhenNothingFits {
		// Still nothing fits in HBM: plan with host offload when the
		// framework has it (offloadFallback), else report what does not fit.
		if q, r2, res2, ok := r.offloadFallback(ctx, s); ok {
			p, r, res, err = q, r2, res2, nil
		}
	}
	if err != nil {
		return results.Plan{}, err
	}
	plan, err := results.PlanOf(p, res, results.PlanOptions{Top: r.Top, Seed: s.Seed, Fix: r.Fix, Objective: r.Objective,
		Framework: r.Framework, MaxOOMRisk: r.MaxOOMRisk})
	if err != nil {
		return results.Plan{}, err
	}
	plan.Notes = append(plan.Notes, notes...)
	if r.Framework != "" {
		plan.Framework = r.Framework
	}
	if plan.Recommended >= 0 && detail {
		rec := res.Front[plan.Recommended]
		d := Evaluate(p, rec.Strategy)
		d.Framework = r.Framework
		if d.Err != nil {
			return results.Plan{}, fmt.Errorf("evaluating the recommended strategy %s: %w", rec.Strategy, d.Err)
		}
		plan.Detail = &d
	}
	return plan, nil
}

// Explain evaluates one strategy of r in full, as `plan explain` prints it:
// it checks s against the problem (every violated rule is a
// *search.InputError), places it on the mesh and traces its step.
func Explain(r Request, s space.Strategy) (results.Evaluation, error) {
	p, err := r.Problem()
	if err != nil {
		return results.Evaluation{}, err
	}
	m, c, w := p.Model(), p.Cluster(), p.Workload()
	if err := s.Validate(m, c, w); err != nil {
		return results.Evaluation{}, &search.InputError{Err: fmt.Errorf("strategy %s does not work for %s on %s with a batch of %d x %d tokens:\n%w",
			s, m.Name, c.Name, w.Batch, w.SeqLen, err)}
	}
	if err := r.Options.Limits.Check(s, m.Layers); err != nil {
		return results.Evaluation{}, &search.InputError{Err: fmt.Errorf("strategy %s: %w", s, err)}
	}
	// Placed as the framework lays out its ranks (its rank order), so that
	// a strategy without a mesh runs the mesh the framework gives it.
	placed, err := r.Options.Limits.Place(s, c)
	if err != nil {
		return results.Evaluation{}, &search.InputError{Err: fmt.Errorf("strategy %s cannot be placed on the mesh of %s: %w", s, c.Name, err)}
	}
	if err := r.Options.Limits.CheckPlacement(placed, c); err != nil {
		return results.Evaluation{}, &search.InputError{Err: fmt.Errorf("strategy %s: %w", placed, err)}
	}
	e := Evaluate(p, placed)
	e.Framework = r.Framework
	if e.Err != nil {
		return e, fmt.Errorf("evaluating strategy %s: %w", placed, e.Err)
	}
	return e, nil
}

// Evaluate scores the placed strategy s of problem p with its step traced
// op by op.
func Evaluate(p *search.Problem, s space.Strategy) results.Evaluation {
	c := p.Evaluate(s, true)
	e := results.Evaluation{
		Model: p.Model(), Cluster: p.Cluster(), Workload: p.Workload(),
		Strategy: c.Strategy, Time: c.Time, Memory: c.Memory, UsableBytes: c.UsableBytes, Err: c.Err,
	}
	if e.Err == nil {
		e.MemoryParts, e.Err = p.MemoryParts(c.Strategy)
	}
	if s.FP8() { // int8 has no recipe to name: AQT's
		e.FP8Recipe = model.FP8Delayed
		if r := p.Options().FP8; r != nil {
			e.FP8Recipe = r.Name
		}
	}
	return e
}

// offloadFallback searches r again with each host offload its framework
// runs (space.Limits.Offloads: the optimizer state first, then the
// parameters too), for a plan where nothing fits without one; the search
// never offloads on its own otherwise. It returns the first search in
// which something fits, with its problem and request (whose Fix pins the
// offload), and false when r pins an offload already or none fits.
func (r Request) offloadFallback(ctx context.Context, s search.Settings) (*search.Problem, Request, *search.Result, bool) {
	fix, err := space.ParseFix(r.Fix)
	if err != nil || fix.Has("offload") || fix.Has("offload_fraction") {
		return nil, r, nil, false
	}
	kinds := r.Options.Limits.Offloads
	if kinds == nil {
		kinds = []string{space.OffloadOptimizer, space.OffloadParamsOptimizer}
	}
	for _, k := range []string{space.OffloadOptimizer, space.OffloadParamsOptimizer} {
		if !slices.Contains(kinds, k) || r.hostBytes(k) > float64(r.Cluster.Chips())*r.Cluster.Chip.HostDRAMBytesFor(r.Cluster.Chips()) {
			continue
		}
		r2 := r
		f := space.Fix{Set: maps.Clone(fix.Set)}
		if f.Set == nil {
			f.Set = map[string]string{}
		}
		f.Set["offload"] = k
		r2.Fix = f.String()
		p, err := r2.Problem()
		if err != nil {
			continue
		}
		res, err := search.Run(ctx, p, s)
		if err == nil {
			return p, r2, res, true
		}
	}
	return nil, r, nil, false
}

// OffloadNote is the one-line note for stderr when plan's strategies keep
// model states in host memory that r's fix did not ask for: nothing fit
// without it (Solve), and "" otherwise.
func (r Request) OffloadNote(plan results.Plan) string {
	fix, err := space.ParseFix(r.Fix)
	if err != nil || fix.Has("offload") || plan.Recommended < 0 || plan.Recommended >= len(plan.Pareto) {
		return ""
	}
	s, err := space.Parse(plan.Pareto[plan.Recommended].Strategy.Spec)
	if err != nil || s.Offload == "" {
		return ""
	}
	return fmt.Sprintf("nothing fits in HBM without host offload: planned with offload=%s (%s)", s.Offload, r.Options.Limits.Framework)
}

// hostBytes is what offload kind k keeps in the hosts' memory for r's
// model, once over the job: the optimizer state (master weights and
// moments), and with the parameters their weights and gradients too. The
// hosts must hold at least that (profiles.Chip.HostDRAMBytesFor per chip).
func (r Request) hostBytes(k string) float64 {
	pr, d := r.Options.Program.Precision, model.MixedPrecision()
	for _, f := range []struct {
		v   *float64
		def float64
	}{{&pr.Weight, d.Weight}, {&pr.Grad, d.Grad}, {&pr.Master, d.Master}, {&pr.Moments, d.Moments}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	n := float64(r.Model.Counts().Total)
	b := pr.OptimizerBytes() * n
	if k == space.OffloadParamsOptimizer {
		b += (pr.Weight + pr.Grad) * n
	}
	return b
}
