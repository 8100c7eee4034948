package search

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/score"
	"github.com/meshplan/meshplan/space"
)

// Space is what a search needs of a strategy space: a mixed-radix product of
// independent choices (genes) and a decoder. [*space.Space] implements it;
// tests use small synthetic spaces.
//
// Decode must be safe for concurrent use with distinct dst values and must
// not keep genes. The strategy it writes may share its Mesh slices with the
// next Decode into the same dst; the search copies what it keeps.
type Space interface {
	// Cardinalities returns the number of choices of each gene.
	Cardinalities() []int
	// Decode writes the strategy of genes into dst and reports whether it is valid.
	Decode(genes []int, dst *space.Strategy) bool
}

var _ Space = (*space.Space)(nil)

// Options select how a Problem scores strategies: the layer program's
// kernels and precision, and the memory and cost models' options. The zero
// value is the default model.
type Options struct {
	// Program selects the attention kernel, dropout and precision of the
	// layer program that both models derive from.
	Program model.ProgramOptions
	// ShardedProgram, when not nil, replaces Program for the strategies that
	// shard the weights over fsdp or split the sequence over cp: a
	// framework whose mixed precision changes with them (torchtitan hands
	// it to FSDP2's fully_shard there, to torch.autocast elsewhere).
	ShardedProgram *model.ProgramOptions
	// FP8 is the recipe of the strategies with precision=fp8 (the
	// framework's); nil means Transformer Engine's delayed scaling
	// (model.FP8Delayed). Their layer program is built on first use.
	FP8 *model.FP8Recipe
	// Memory tunes the memory model (the HBM reserve).
	Memory memory.Options
	// Cost tunes the cost model. Trace and SkipCollectives are set per
	// call by the search and Evaluate.
	Cost cost.Options
	// Limits are what the framework can express; the space holds only
	// those strategies.
	Limits space.Limits
}

// Problem is one search: a model, a cluster and a workload, their strategy
// space and the scorer. Build it with NewProblem (the planner's models) or
// NewCustomProblem (a space and scorer of your own). A Problem is immutable
// and safe for concurrent use; With gives the same problem on another
// cluster or workload.
type Problem struct {
	model    model.Spec
	cluster  profiles.Cluster
	workload space.Workload
	fix      space.Fix
	options  Options
	usable   float64
	scorer   Scorer
	// models are the planner's models (nil for a custom problem).
	models *score.Models
	// space is built on first use (evaluating a given strategy needs none).
	spaceOnce sync.Once
	space     Space
	spaceErr  error
	// layoutStride is the number of gene vectors of the planner's space
	// per value of its first gene, the layout (space.GeneLayout): a
	// strategy's index over it names the strategy's mesh (placement); 0
	// for a custom problem's space, whose first gene need not name one.
	layoutStride int64
	// custom is the custom problem's description (nil for the planner's).
	custom *Custom
}

// Custom describes a problem with a strategy space and scorer of its own
// (tests, toy problems, a user's own models).
type Custom struct {
	// Name names the model in messages.
	Name string
	// Cluster is the set of chips; its chip count and peak bf16 FLOP/s give MFU.
	Cluster profiles.Cluster
	// Workload is the global batch and sequence length of one step.
	Workload space.Workload
	// Space is the strategy space searched.
	Space Space
	// UsableBytes is the memory per chip a strategy may fill.
	UsableBytes float64
	// Scorer scores strategies.
	Scorer Scorer
	// Variant, when not nil, builds the same problem on another cluster or
	// workload, for the no-fit suggestions; ResolveCluster turns a cluster
	// name into a cluster for them (nil: profiles.Parse).
	Variant        func(c profiles.Cluster, w space.Workload) (*Problem, error)
	ResolveCluster func(name string) (profiles.Cluster, error)
}

// NewCustomProblem returns the problem c describes.
func NewCustomProblem(c Custom) (*Problem, error) {
	if c.Space == nil || c.Scorer == nil {
		return nil, errors.New("search: a custom problem needs a space and a scorer")
	}
	p := &Problem{model: model.Spec{Name: c.Name}, cluster: c.Cluster, workload: c.Workload,
		usable: c.UsableBytes, scorer: c.Scorer, space: c.Space, custom: &c}
	p.spaceOnce.Do(func() {})
	return p, nil
}

// NewProblem builds the problem of training model m on cluster c with
// workload w (a zero sequence length means the model's), over the
// strategies that agree with fix, scored with the planner's memory and cost
// models under o: the layer program is built once and both models derive
// from it. Its error is about the input (a model the program cannot
// describe, a malformed fix); the strategy space is built on first use
// (Space, Run).
func NewProblem(m model.Spec, c profiles.Cluster, w space.Workload, fix space.Fix, o Options) (*Problem, error) {
	if err := fix.Validate(); err != nil {
		return nil, &InputError{Err: err}
	}
	if w.SeqLen <= 0 {
		w.SeqLen = m.SeqLen
	}
	ms, err := score.New(m, o.Program, o.ShardedProgram, o.FP8)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	prog := ms.Program()
	p := &Problem{model: prog.Spec, cluster: c, workload: w, fix: fix, options: o, models: ms}
	p.usable = memory.UsableBytes(c, o.Memory)
	p.scorer = planScorer{ms.Scorer(c, w, o.Cost)}
	return p, nil
}

// With returns the same problem on cluster c and workload w, sharing the
// layer program and models (cheap: for calibration and the no-fit
// suggestions).
func (p *Problem) With(c profiles.Cluster, w space.Workload) (*Problem, error) {
	if p.custom != nil {
		if p.custom.Variant == nil {
			return nil, errors.New("search: this custom problem has no variants")
		}
		return p.custom.Variant(c, w)
	}
	if w.SeqLen <= 0 {
		w.SeqLen = p.model.SeqLen
	}
	q := &Problem{model: p.model, cluster: c, workload: w, fix: p.fix, options: p.options, models: p.models}
	q.usable = memory.UsableBytes(c, p.options.Memory)
	q.scorer = planScorer{p.models.Scorer(c, w, p.options.Cost)}
	return q, nil
}

// Model returns the (normalised) model.
func (p *Problem) Model() model.Spec { return p.model }

// Cluster returns the cluster.
func (p *Problem) Cluster() profiles.Cluster { return p.cluster }

// Workload returns the workload, its sequence length filled in.
func (p *Problem) Workload() space.Workload { return p.workload }

// Fix returns the partial strategy every strategy agrees with.
func (p *Problem) Fix() space.Fix { return p.fix }

// Options returns the options the problem scores with.
func (p *Problem) Options() Options { return p.options }

// UsableBytes returns the memory per chip a strategy may fill, in bytes.
func (p *Problem) UsableBytes() float64 { return p.usable }

// Program returns the layer program (nil for a custom problem).
func (p *Problem) Program() *model.Program {
	if p.models == nil {
		return nil
	}
	return p.models.Program()
}

// Space returns the strategy space, building it on first use; its error is
// about the input (see space.New), wrapped in an *InputError.
func (p *Problem) Space() (Space, error) {
	p.spaceOnce.Do(func() {
		lim := p.options.Limits
		// A step run as one CUDA graph has no host hand-offs between the
		// EP overlap's phases, so the overlap hides within one NVLink
		// domain too (cost.Comm.GraphedStep), and the space turns it on there.
		lim.A2AOverlapScaleUp = lim.A2AOverlapScaleUp || p.options.Cost.Comm.GraphedStep
		sp, err := space.NewLimited(p.model, p.cluster, p.workload, p.fix, lim)
		if err != nil {
			p.spaceErr = &InputError{Err: err}
			return
		}
		p.space = sp
		p.layoutStride = 1
		for _, c := range sp.Cardinalities()[space.GeneLayout+1:] {
			if c < 1 || p.layoutStride > math.MaxInt64/int64(c) {
				p.layoutStride = 0 // no placement names (radix refuses the space)
				break
			}
			p.layoutStride *= int64(c)
		}
	})
	return p.space, p.spaceErr
}

// placement returns the name of the mesh of the strategy of gene-vector
// index index in the planner's space (its layout gene), for
// cost.Evaluator.EvaluatePlacedTo: -1 for no index, a custom problem or
// a space not built yet.
func (p *Problem) placement(index int64) int64 {
	if index < 0 || p.layoutStride <= 0 {
		return -1
	}
	return index / p.layoutStride
}

// InputError reports a problem whose input admits no strategy space: a fix
// that does not divide the cluster, a batch no layout splits, ...
type InputError struct{ Err error }

// Error returns the underlying sentence.
func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }

// worker returns a scorer of p for one goroutine.
func (p *Problem) worker() Scorer {
	if ws, ok := p.scorer.(WorkerScorer); ok {
		return ws.Worker()
	}
	return p.scorer
}

// MemoryParts breaks the memory of s on its busiest chip down by part
// (memory.Model.Parts); nil for a scorer that is no [MemoryParter] (a
// custom problem's).
func (p *Problem) MemoryParts(s space.Strategy) ([]memory.Part, error) {
	mp, ok := p.scorer.(MemoryParter)
	if !ok {
		return nil, nil
	}
	return mp.Parts(&s)
}

// Evaluate scores strategy s (validated; placed or not): its memory per
// chip and its step time, whether or not it fits, with the step's
// collectives; trace adds the op-by-op program (plan explain). It is
// deterministic and safe for concurrent use. The returned Candidate has
// Index -1.
func (p *Problem) Evaluate(s space.Strategy, trace bool) Candidate {
	c := p.evaluate(p.scorer, &s, -1, false, trace)
	if !trace {
		p.addCollectives([]Candidate{c})
	}
	return c
}

// StepTime estimates the step time of s alone, without memory or
// collectives: the fast path for calibration, which prices one strategy
// under many cluster coefficients (With).
func (p *Problem) StepTime(s space.Strategy) (cost.Estimate, error) {
	return p.scorer.Time(&s, false)
}

// addCollectives fills in the collectives of candidates that a search
// evaluated without them (the hot path does not allocate); the times do
// not change.
func (p *Problem) addCollectives(cands []Candidate) {
	cl, ok := p.scorer.(CollectiveLister)
	if !ok {
		return
	}
	for i := range cands {
		if !cands[i].Costed || cands[i].Err != nil {
			continue
		}
		if cs, err := cl.Collectives(&cands[i].Strategy); err == nil {
			cands[i].Time.Collectives = cs
		}
	}
}

// radix returns the problem's space, its gene cardinalities and the number
// of gene vectors, saturated at math.MaxInt64.
func (p *Problem) radix() (Space, []int, int64, error) {
	if p == nil {
		return nil, nil, 0, errors.New("search: no problem")
	}
	sp, err := p.Space()
	if err != nil {
		return nil, nil, 0, err
	}
	cards := sp.Cardinalities()
	size := int64(1)
	for i, c := range cards {
		if c < 1 {
			return nil, nil, 0, fmt.Errorf("search: gene %d has %d choices", i, c)
		}
		if size > math.MaxInt64/int64(c) {
			size = math.MaxInt64
			continue
		}
		size *= int64(c)
	}
	return sp, cards, size, nil
}

// indexOf returns the mixed-radix index of genes (first gene slowest).
func indexOf(cards, genes []int) int64 {
	var i int64
	for k, g := range genes {
		i = i*int64(cards[k]) + int64(g)
	}
	return i
}

// genesOf writes the genes of mixed-radix index i (first gene slowest).
func genesOf(cards []int, i int64, genes []int) {
	for k := len(cards) - 1; k >= 0; k-- {
		c := int64(cards[k])
		genes[k] = int(i % c)
		i /= c
	}
}

// next advances genes to the following mixed-radix index (last gene fastest).
func next(cards, genes []int) {
	for k := len(genes) - 1; k >= 0; k-- {
		genes[k]++
		if genes[k] < cards[k] {
			return
		}
		genes[k] = 0
	}
}
