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

// Problem is one search: a model, a cluster and a workload, their strategy
// space and the models that score a strategy. Build it with [NewProblem]; a
// literal with Space, Memory and Time set describes a synthetic problem.
//
// A Problem is read-only once a search starts; its methods are safe for
// concurrent use. NewProblem binds the cost evaluators to Cluster, Workload
// and CostOptions: for another cluster or workload use Variant (or a new
// Problem) rather than changing those fields.
type Problem struct {
	// Model is the transformer being trained.
	Model model.Spec
	// Cluster is the set of chips; its chip count and peak bf16 FLOP/s give MFU.
	Cluster profiles.Cluster
	// Workload is the global batch and sequence length of one step.
	Workload space.Workload
	// Fix is the partial strategy every strategy agrees with (used again
	// when a NoFitError looks for a cluster or workload that fits).
	Fix space.Fix

	// Space is the strategy space searched.
	Space Space

	// MemoryOptions tune memory.Estimate and memory.UsableBytes.
	MemoryOptions memory.Options
	// CostOptions tune cost.Evaluate. NewProblem builds the model's cost
	// program and its evaluators with the options given to it.
	CostOptions cost.Options

	// UsableBytes is the memory per chip a strategy may fill, in bytes.
	// Zero means memory.UsableBytes(Cluster, MemoryOptions).
	UsableBytes float64

	// Memory, when not nil, replaces memory.Estimate. It must be
	// deterministic and safe for concurrent use.
	Memory func(s *space.Strategy) memory.Breakdown
	// Time, when not nil, replaces cost.Evaluate. It must be deterministic
	// and safe for concurrent use.
	Time func(s *space.Strategy) (cost.Estimate, error)

	// Variant, when not nil, builds the same problem on another cluster or
	// workload; NoFitError suggestions use it. NewProblem sets it.
	Variant func(c profiles.Cluster, w space.Workload) (*Problem, error)
	// costModel is the model's cost program, built once by NewProblem;
	// nil means cost.Evaluate (which builds it per call).
	costModel *cost.Model
	// evaluators recycles cost.Evaluators of costModel on Cluster and
	// Workload: each keeps the segment costs of its last strategy, which the
	// next one in the space's order (the schedule varies fastest) reuses.
	// A Problem copied with another Cluster or Workload must drop it.
	evaluators *sync.Pool

	// ResolveCluster, when not nil, turns a cluster name such as "v5p-512"
	// into a cluster; NoFitError suggestions use it to try larger clusters
	// of the same chip. Nil disables that suggestion; NewProblem sets
	// profiles.Parse.
	ResolveCluster func(name string) (profiles.Cluster, error)
}

// NewProblem builds the problem of training model m on cluster c with
// workload w, over the strategies that agree with fix, scored with the
// memory and cost models under mo and co. Its error is space.New's, about
// the input.
func NewProblem(m model.Spec, c profiles.Cluster, w space.Workload, fix space.Fix, mo memory.Options, co cost.Options) (*Problem, error) {
	sp, err := space.New(m, c, w, fix)
	if err != nil {
		return nil, err // already a one-sentence "space: ..." error about the input
	}
	p := &Problem{
		Model:          m,
		Cluster:        c,
		Workload:       w,
		Fix:            fix,
		Space:          sp,
		MemoryOptions:  mo,
		CostOptions:    co,
		ResolveCluster: profiles.Parse,
		costModel:      cost.NewModel(m, co),
		evaluators:     new(sync.Pool),
	}
	p.Variant = func(c2 profiles.Cluster, w2 space.Workload) (*Problem, error) {
		q, err := NewProblem(m, c2, w2, fix, mo, co)
		if err != nil {
			return nil, err
		}
		q.ResolveCluster = p.ResolveCluster
		return q, nil
	}
	return p, nil
}

// usable returns the usable memory per chip in bytes.
func (p *Problem) usable() float64 {
	if p.UsableBytes > 0 {
		return p.UsableBytes
	}
	return memory.UsableBytes(p.Cluster, p.MemoryOptions)
}

// memoryOf estimates the per-chip memory of s.
func (p *Problem) memoryOf(s *space.Strategy) memory.Breakdown {
	if p.Memory != nil {
		return p.Memory(s)
	}
	return memory.Estimate(p.Model, p.Cluster, p.Workload, *s, p.MemoryOptions)
}

// timeOf estimates the step time of s.
func (p *Problem) timeOf(s *space.Strategy) (cost.Estimate, error) {
	if p.Time != nil {
		return p.Time(s)
	}
	if p.costModel != nil && p.evaluators != nil {
		ev, _ := p.evaluators.Get().(*cost.Evaluator)
		if ev == nil {
			// The search ranks by times; the collectives of the few front
			// rows are added at the end (addCollectives).
			o := p.CostOptions
			o.SkipCollectives = true
			ev = p.costModel.NewEvaluator(p.Cluster, p.Workload, o)
		}
		defer p.evaluators.Put(ev)
		return ev.Evaluate(*s)
	}
	if p.costModel != nil {
		return p.costModel.Evaluate(p.Cluster, p.Workload, *s, p.CostOptions)
	}
	return cost.Evaluate(p.Model, p.Cluster, p.Workload, *s, p.CostOptions)
}

// Candidate is one evaluated strategy: its memory per chip and, unless it
// was pruned by memory, its step-time estimate and the rates derived from it.
type Candidate struct {
	// Strategy is the placed strategy.
	Strategy space.Strategy
	// Index is the strategy's mixed-radix gene index in the problem's
	// space (first gene slowest), or -1 when it did not come from the space.
	Index int64

	// Memory is the per-chip memory breakdown.
	Memory memory.Breakdown
	// MemoryBytes is Memory.TotalBytes(), the peak memory per chip in bytes.
	MemoryBytes float64
	// UsableBytes is the memory per chip the strategy may fill, in bytes.
	UsableBytes float64
	// Fits reports MemoryBytes <= UsableBytes.
	Fits bool

	// Costed reports that Time holds an estimate. A search does not cost
	// strategies that do not fit.
	Costed bool
	// Err is the cost model's error for this strategy, if any.
	Err error
	// Time is the step-time breakdown.
	Time cost.Estimate
	// StepSeconds is Time.StepSeconds, the time of one training step in seconds.
	StepSeconds float64
	// TokensPerSecond is the workload's tokens per step over StepSeconds.
	TokensPerSecond float64
	// TokensPerSecondPerChip is TokensPerSecond over the chip count.
	TokensPerSecondPerChip float64
	// MFU is Time.ModelFLOPs / (StepSeconds · chips · peak bf16 FLOP/s per chip).
	MFU float64
	// HFU is Time.HardwareFLOPs (recomputation included) over the same denominator.
	HFU float64
}

// Feasible reports whether c fits in memory and has a usable step time.
func (c *Candidate) Feasible() bool {
	return c.Fits && c.Costed && c.Err == nil && c.StepSeconds > 0 && !math.IsInf(c.StepSeconds, 0)
}

// Fitness penalties for the evolutionary search: finite, and larger than any
// plausible step time, so that eaopt's sorting and selection stay sound.
const (
	// overMemoryPenaltySeconds scales the memory overflow ratio of a
	// strategy over the memory cap, so that smaller overflows rank better.
	overMemoryPenaltySeconds = 1e6
	// maxOverflowRatio bounds the memory-to-cap ratio in a penalty.
	maxOverflowRatio = 1e9
	// failedPenaltySeconds is the fitness of a strategy the cost model
	// rejects: worse than any strategy over the memory cap.
	failedPenaltySeconds = 1e17
	// invalidPenaltySeconds is the fitness of a gene vector that decodes to
	// no valid strategy: the worst.
	invalidPenaltySeconds = 1e18
)

// Evaluate scores strategy s (validated and placed): its memory per chip and
// its step time, whether or not it fits. It is deterministic and safe for
// concurrent use. The returned Candidate has Index -1.
func (p *Problem) Evaluate(s space.Strategy) Candidate {
	c := p.evaluate(&s, -1, p.usable(), false)
	p.addCollectives([]Candidate{c})
	return c
}

// addCollectives fills in the collectives of candidates that a search
// evaluated without them (cost.Options.SkipCollectives keeps the hot path
// free of allocation); the times do not change.
func (p *Problem) addCollectives(cands []Candidate) {
	if p.costModel == nil || p.evaluators == nil || p.Time != nil || p.CostOptions.SkipCollectives {
		return
	}
	for i := range cands {
		if !cands[i].Costed || cands[i].Err != nil {
			continue
		}
		if est, err := p.costModel.Evaluate(p.Cluster, p.Workload, cands[i].Strategy, p.CostOptions); err == nil {
			cands[i].Time.Collectives = est.Collectives
		}
	}
}

// evaluate scores s. With prune set, a strategy that does not fit in usable
// bytes is not costed. The candidate shares s's Mesh slices; callers that
// reuse s must copy it (see cloneStrategy).
func (p *Problem) evaluate(s *space.Strategy, index int64, usable float64, prune bool) Candidate {
	mem := p.memoryOf(s)
	total := mem.TotalBytes()
	c := Candidate{
		Strategy:    *s,
		Index:       index,
		Memory:      mem,
		MemoryBytes: total,
		UsableBytes: usable,
		Fits:        total <= usable && !math.IsNaN(total),
	}
	if prune && !c.Fits {
		return c
	}
	est, err := p.timeOf(s)
	c.Costed = true
	if err != nil {
		c.Err = err
		return c
	}
	c.Time = est
	c.StepSeconds = est.StepSeconds
	if !(est.StepSeconds > 0) || math.IsInf(est.StepSeconds, 0) {
		c.Err = fmt.Errorf("search: step time %g s is not a positive number", est.StepSeconds)
		return c
	}
	chips := float64(p.Cluster.Chips())
	tokens := float64(p.Workload.Tokens())
	c.TokensPerSecond = tokens / est.StepSeconds
	if chips > 0 {
		c.TokensPerSecondPerChip = c.TokensPerSecond / chips
	}
	if den := est.StepSeconds * chips * p.Cluster.Chip.PeakBF16FLOPs; den > 0 {
		c.MFU = est.ModelFLOPs / den
		c.HFU = est.HardwareFLOPs / den
	}
	return c
}

// cloneStrategy returns s with its Mesh slices copied, so that it survives
// the next Decode into the same value.
func cloneStrategy(s space.Strategy) space.Strategy {
	for d := range s.Mesh {
		if s.Mesh[d] != nil {
			s.Mesh[d] = append([]space.Share(nil), s.Mesh[d]...)
		}
	}
	return s
}

// radix checks the problem and returns its gene cardinalities and the
// number of gene vectors, saturated at math.MaxInt64.
func (p *Problem) radix() ([]int, int64, error) {
	if p == nil || p.Space == nil {
		return nil, 0, errors.New("search: problem has no strategy space")
	}
	cards := p.Space.Cardinalities()
	size := int64(1)
	for i, c := range cards {
		if c < 1 {
			return nil, 0, fmt.Errorf("search: gene %d has %d choices", i, c)
		}
		if size > math.MaxInt64/int64(c) {
			size = math.MaxInt64
			continue
		}
		size *= int64(c)
	}
	return cards, size, nil
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
