package search

import (
	"fmt"
	"math"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/score"
	"github.com/meshplan/meshplan/space"
)

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

// evaluate scores s with scorer sc (p's scorer or one of its workers).
// With prune set, a strategy that does not fit in the usable memory is not
// costed. The candidate shares s's Mesh slices; callers that reuse s must
// copy it (see cloneStrategy).
func (p *Problem) evaluate(sc Scorer, s *space.Strategy, index int64, prune, trace bool) Candidate {
	mem, err := sc.Memory(s)
	return p.candidate(sc, s, index, mem, err, prune, trace)
}

// candidate completes the evaluation of s whose memory estimate is mem
// (memErr its error): whether it fits and, unless prune is set and it does
// not fit, its step time from sc.
func (p *Problem) candidate(sc Scorer, s *space.Strategy, index int64, mem memory.Breakdown, memErr error, prune, trace bool) Candidate {
	var c Candidate
	p.fillCandidate(&c, sc, s, index, &mem, memErr, prune, trace)
	return c
}

// fillCandidate is candidate writing into c: the search's hot path, which
// keeps one Candidate per worker and copies only those it keeps.
func (p *Problem) fillCandidate(c *Candidate, sc Scorer, s *space.Strategy, index int64, mem *memory.Breakdown, memErr error, prune, trace bool) {
	p.fillMemoryCandidate(c, s, index, mem, memErr)
	if memErr != nil || prune && !c.Fits {
		return
	}
	var err error
	if w, ok := sc.(*score.Worker); ok && !trace {
		// The planner's worker through its concrete type, in place, so
		// that c need not escape (the search's hot path).
		err = w.TimeTo(s, p.placement(index), &c.Time) // c.Time is zero (fillMemoryCandidate) and stays so on an error
	} else if w, ok := sc.(PlacedTimer); ok && !trace {
		// The worker's estimate, copied, so that c need not escape.
		var est *cost.Estimate
		if est, err = w.PlacedTime(s, p.placement(index)); err == nil {
			c.Time = *est // c.Time is zero (fillMemoryCandidate) and stays so on an error
		}
	} else {
		var est cost.Estimate
		if est, err = sc.Time(s, trace); err == nil {
			c.Time = est
		}
	}
	c.Costed = true
	if err != nil {
		c.Err = err
		return
	}
	est := &c.Time
	c.StepSeconds = est.StepSeconds
	if !(est.StepSeconds > 0) || math.IsInf(est.StepSeconds, 0) {
		c.Err = fmt.Errorf("search: step time %g s is not a positive number", est.StepSeconds)
		return
	}
	chips := float64(p.cluster.Chips())
	tokens := float64(p.workload.Tokens())
	c.TokensPerSecond = tokens / est.StepSeconds
	if chips > 0 {
		c.TokensPerSecondPerChip = c.TokensPerSecond / chips
	}
	if den := est.StepSeconds * chips * p.cluster.Chip.PeakBF16FLOPs; den > 0 {
		c.MFU = est.ModelFLOPs / den
		c.HFU = est.HardwareFLOPs / den
	}
}

// memoryCandidate is the candidate of s before costing: its memory
// estimate mem, or the error memErr of the models, which makes it a
// failed strategy.
func (p *Problem) memoryCandidate(s *space.Strategy, index int64, mem memory.Breakdown, memErr error) Candidate {
	var c Candidate
	p.fillMemoryCandidate(&c, s, index, &mem, memErr)
	return c
}

// fillMemoryCandidate is memoryCandidate writing into c.
func (p *Problem) fillMemoryCandidate(c *Candidate, s *space.Strategy, index int64, mem *memory.Breakdown, memErr error) {
	total := mem.TotalBytes()
	*c = Candidate{
		Strategy:    *s,
		Index:       index,
		Memory:      *mem,
		MemoryBytes: total,
		UsableBytes: p.usable,
		Fits:        memErr == nil && p.fits(total),
	}
	if memErr != nil {
		c.Costed, c.Err = true, memErr // a strategy the models cannot describe counts as failed
	}
}

// fits reports whether a strategy of total bytes per chip fits in the
// usable memory.
func (p *Problem) fits(total float64) bool { return total <= p.usable && !math.IsNaN(total) }

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
