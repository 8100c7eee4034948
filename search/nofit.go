package search

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// NoFitError reports that no strategy of a search fits in memory (or none
// that fits could be costed), with the closest miss and what would fit.
type NoFitError struct {
	// Model and Cluster name the problem.
	Model, Cluster string
	// Workload is the problem's batch and sequence length.
	Workload space.Workload
	// UsableBytes is the memory per chip a strategy may fill, in bytes.
	UsableBytes float64
	// Valid is the number of valid strategies examined; zero means the
	// space has no valid strategy at all.
	Valid int64
	// Framework names the framework whose rules (space.Limits) bound the
	// space, "" for none; Fixed says part of the strategy was fixed
	// (space.Fix). They say what rejected every layout when Valid is zero.
	Framework string
	Fixed     bool

	// Smallest is the valid strategy with the least memory per chip, nil
	// when there is none.
	Smallest *Candidate
	// MinMemoryBytes is Smallest's memory per chip in bytes.
	MinMemoryBytes float64
	// Breakdown is Smallest's memory breakdown.
	Breakdown memory.Breakdown
	// Dominant names Breakdown's largest component: "params", "grads",
	// "optimizer", "activations" or "buffers".
	Dominant string

	// CostErr is the cost model's error when strategies fit but none could
	// be costed.
	CostErr error

	// FitCluster is the smallest larger cluster of the same chip (found by
	// doubling the cluster size) on which some strategy fits, or "".
	FitCluster string
	// FitChips is FitCluster's chip count, or zero.
	FitChips int
	// FitSeqLen is the longest sequence, halving the workload's, at which
	// some strategy fits on this cluster, or zero.
	FitSeqLen int
	// FitBatch is the largest global batch, halving the workload's, at
	// which some strategy fits on this cluster, or zero.
	FitBatch int
}

// Error returns one sentence: what does not fit, by how much, and what would.
func (e *NoFitError) Error() string {
	var b strings.Builder
	what := fmt.Sprintf("%s on %s with batch %d of %d-token sequences", e.Model, e.Cluster, e.Workload.Batch, e.Workload.SeqLen)
	switch {
	case e.Valid == 0:
		fmt.Fprintf(&b, "search: no valid strategy for %s: %s", what, e.rejectedBy())
		if e.FitCluster == "" {
			try := []string{"a batch that is a multiple of the chip count", "a smaller cluster"}
			if e.Framework != "" && e.Framework != "generic" {
				try = append(try, "another framework") // generic, the default, expresses every strategy the others do
			}
			if e.Fixed {
				try = append(try, "fewer fixed dimensions")
			}
			b.WriteString("; try ")
			writeAlternatives(&b, try)
			return b.String()
		}
	case e.CostErr != nil && e.Smallest != nil && e.Smallest.Fits:
		fmt.Fprintf(&b, "search: no strategy for %s could be costed: %v", what, e.CostErr)
		return b.String()
	default:
		fmt.Fprintf(&b, "search: %s does not fit: the smallest strategy needs %s per chip but %s is usable (largest part: %s, %s)",
			what, gb(e.MinMemoryBytes), gb(e.UsableBytes), e.Dominant, gb(e.dominantBytes()))
	}
	var alt []string
	if e.FitCluster != "" {
		alt = append(alt, fmt.Sprintf("on %s (%d chips)", e.FitCluster, e.FitChips))
	}
	if e.FitSeqLen > 0 {
		alt = append(alt, fmt.Sprintf("with sequences of %d tokens", e.FitSeqLen))
	}
	if e.FitBatch > 0 {
		alt = append(alt, fmt.Sprintf("with a batch of %d", e.FitBatch))
	}
	if len(alt) > 0 {
		b.WriteString("; it would fit ")
		writeAlternatives(&b, alt)
	}
	return b.String()
}

// rejectedBy says what rejected every layout of a space with no valid
// strategy: the framework's rules, the fixed dimensions or the shapes.
func (e *NoFitError) rejectedBy() string {
	switch {
	case e.Framework != "" && e.Fixed:
		return "the fixed dimensions and " + e.Framework + "'s rules reject every layout of its chips"
	case e.Framework != "":
		return e.Framework + "'s rules reject every layout of its chips"
	case e.Fixed:
		return "the fixed dimensions reject every layout of its chips"
	}
	return "no layout of its chips suits the model's and the batch's shapes"
}

// writeAlternatives writes alt as a list: "a", "a or b", "a, b or c".
func writeAlternatives(b *strings.Builder, alt []string) {
	for i, a := range alt {
		switch {
		case i == 0:
		case i == len(alt)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(a)
	}
}

// Unwrap returns the cost model's error, if any.
func (e *NoFitError) Unwrap() error { return e.CostErr }

func (e *NoFitError) dominantBytes() float64 {
	_, v := dominant(e.Breakdown)
	return v
}

// gb formats bytes in 10^9 bytes.
func gb(bytes float64) string {
	return strconv.FormatFloat(bytes/1e9, 'f', 1, 64) + " GB"
}

// dominant returns the name and size of the largest component of b.
func dominant(b memory.Breakdown) (string, float64) {
	name, v := "params", b.ParamsBytes
	for _, c := range []struct {
		name string
		v    float64
	}{
		{"grads", b.GradsBytes},
		{"optimizer", b.OptimizerBytes},
		{"activations", b.ActivationsBytes},
		{"buffers", b.BuffersBytes},
	} {
		if c.v > v {
			name, v = c.name, c.v
		}
	}
	return name, v
}

// maxSuggestionDoublings bounds how many times the cluster size is doubled
// looking for one that fits.
const maxSuggestionDoublings = 8

// maxFitScan is the largest space scanned exhaustively to decide whether
// anything fits on a variant problem.
const maxFitScan = 1 << 21

// minSuggestedSeqLen is the shortest sequence suggested.
const minSuggestedSeqLen = 128

// newNoFitError describes why r found nothing feasible.
func newNoFitError(p *Problem, r *Result) *NoFitError {
	e := &NoFitError{
		Model:       p.model.Name,
		Cluster:     p.cluster.Name,
		Workload:    p.workload,
		UsableBytes: p.usable,
		Valid:       r.Valid,
		Framework:   p.options.Limits.Framework,
		Fixed:       len(p.fix.Set) > 0,
		CostErr:     r.firstErr,
		Smallest:    r.smallest,
	}
	if r.smallest != nil {
		e.MinMemoryBytes = r.smallest.MemoryBytes
		e.Breakdown = r.smallest.Memory
		e.Dominant, _ = dominant(e.Breakdown)
	}
	return e
}

// suggest looks for what would fit: the smallest larger cluster of the same
// chip (doubling the size, profiles.Doublings), a shorter sequence, a
// smaller batch, each by planning the same problem there (Problem.With)
// with the memory model alone.
func (e *NoFitError) suggest(ctx context.Context, p *Problem, r *Result) {
	if r.smallest != nil && r.smallest.Fits {
		return // the cost model, not memory, is the problem
	}
	resolve := profiles.Parse
	if p.custom != nil {
		if p.custom.Variant == nil {
			return
		}
		if p.custom.ResolveCluster != nil {
			resolve = p.custom.ResolveCluster
		}
	}
	w := p.workload
	for _, name := range profiles.Doublings(p.cluster.Name, maxSuggestionDoublings) {
		if ctx.Err() != nil {
			return
		}
		c, err := resolve(name)
		if err != nil || c.Chip.Name != p.cluster.Chip.Name || c.Chips() <= p.cluster.Chips() {
			continue
		}
		if q, err := p.With(c, w); err == nil && fitsAny(ctx, q) {
			e.FitCluster, e.FitChips = c.Name, c.Chips()
			break
		}
	}
	if r.smallest == nil {
		return // no valid strategy: shorter sequences or batches do not help
	}
	for s := w.SeqLen / 2; s >= minSuggestedSeqLen && ctx.Err() == nil; s /= 2 {
		if q, err := p.With(p.cluster, space.Workload{Batch: w.Batch, SeqLen: s}); err == nil && fitsAny(ctx, q) {
			e.FitSeqLen = s
			break
		}
	}
	for bt := w.Batch / 2; bt >= 1 && ctx.Err() == nil; bt /= 2 {
		if q, err := p.With(p.cluster, space.Workload{Batch: bt, SeqLen: w.SeqLen}); err == nil && fitsAny(ctx, q) {
			e.FitBatch = bt
			break
		}
	}
}

// memoryOnly scores memory with another scorer and gives every strategy
// the same step time: a search over it minimises memory alone.
type memoryOnly struct{ Scorer }

// Time returns one second.
func (memoryOnly) Time(*space.Strategy, bool) (cost.Estimate, error) {
	return cost.Estimate{StepSeconds: 1}, nil
}

// fitsAny reports whether some valid strategy of q fits in memory. It
// estimates memory only: exhaustively when q has at most maxFitScan gene
// vectors, else with an evolutionary search that minimises memory per chip
// (a heuristic: it may miss a rare fitting strategy).
func fitsAny(ctx context.Context, q *Problem) bool {
	sp, cards, size, err := q.radix()
	if err != nil {
		return false
	}
	if size <= maxFitScan {
		return scanFits(ctx, q, sp, cards, size)
	}
	mo := &Problem{model: q.model, cluster: q.cluster, workload: q.workload, usable: q.usable,
		scorer: memoryOnly{q.scorer}, space: sp}
	mo.spaceOnce.Do(func() {})
	r, _ := Evolve{Seed: 1, MemoryCaps: []float64{1e-6}}.Search(ctx, mo)
	return r != nil && r.Feasible > 0
}

// scanFits reports whether some valid strategy among the first size gene
// vectors of q fits in memory, on all cores.
func scanFits(ctx context.Context, q *Problem, sp Space, cards []int, size int64) bool {
	usable := q.usable
	const chunk = DefaultChunkSize
	var (
		found     atomic.Bool
		nextChunk atomic.Int64
		wg        sync.WaitGroup
	)
	nchunks := (size + chunk - 1) / chunk
	workers := min(int64(runtime.GOMAXPROCS(0)), nchunks)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			genes := make([]int, len(cards))
			var s space.Strategy
			for !found.Load() && ctx.Err() == nil {
				k := nextChunk.Add(1) - 1
				if k >= nchunks {
					return
				}
				lo := k * chunk
				hi := min(lo+chunk, size)
				genesOf(cards, lo, genes)
				for i := lo; i < hi; i++ {
					if sp.Decode(genes, &s) {
						if m, err := q.scorer.Memory(&s); err == nil && m.TotalBytes() <= usable {
							found.Store(true)
							return
						}
					}
					next(cards, genes)
				}
			}
		}()
	}
	wg.Wait()
	return found.Load()
}
