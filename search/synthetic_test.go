package search

import (
	"errors"
	"hash/fnv"
	"slices"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// gridSpace is a synthetic strategy space: gene k picks one of cards[k]
// values, written into the strategy's integer knobs. A gene vector is
// invalid when invalid reports so.
type gridSpace struct {
	cards   []int
	invalid func(genes []int) bool
}

func (g *gridSpace) Cardinalities() []int { return g.cards }

func (g *gridSpace) Decode(genes []int, dst *space.Strategy) bool {
	*dst = space.Defaults()
	d := &dst.Degree
	knobs := []*int{&d[space.DP], &d[space.TP], &d[space.PP], &dst.MB, &d[space.CP], &d[space.FSDP], &d[space.EP], &dst.V}
	for k, v := range genes {
		if k < len(knobs) {
			*knobs[k] = v + 1
		} else {
			dst.Zero = dst.Zero*7 + v // fold extra genes into one field
		}
	}
	return g.invalid == nil || !g.invalid(genes)
}

// knobs returns the integer knobs gridSpace.Decode wrote.
func knobs(s *space.Strategy) [8]float64 {
	d := &s.Degree
	return [8]float64{float64(d[space.DP]), float64(d[space.TP]), float64(d[space.PP]), float64(s.MB),
		float64(d[space.CP]), float64(d[space.FSDP]), float64(d[space.EP]), float64(s.V)}
}

// funcScorer is a Scorer of two functions.
type funcScorer struct {
	memory func(s *space.Strategy) memory.Breakdown
	time   func(s *space.Strategy) (cost.Estimate, error)
}

func (f funcScorer) Memory(s *space.Strategy) (memory.Breakdown, error) { return f.memory(s), nil }

func (f funcScorer) Time(s *space.Strategy, _ bool) (cost.Estimate, error) { return f.time(s) }

// mustProblem builds the custom problem c.
func mustProblem(c Custom) *Problem {
	p, err := NewCustomProblem(c)
	if err != nil {
		panic(err)
	}
	return p
}

// testCluster is a small cluster literal: 16 chips of 1e15 FLOP/s.
func testCluster() profiles.Cluster {
	return profiles.Cluster{
		Name: "test-16",
		Chip: profiles.Chip{Name: "test", PeakBF16FLOPs: 1e15, HBMBytes: 100e9},
		Axes: []profiles.Axis{{Name: "x", Size: 16, Tier: profiles.ICI}},
	}
}

// bowlProblem is a synthetic problem whose step time is a smooth bowl with
// its minimum at target and whose memory falls with TP and PP: the fast
// strategies and the small ones pull apart, so the front has several rows.
func bowlProblem(cards []int, target []int, usableBytes float64) *Problem {
	return mustProblem(bowl(cards, target, usableBytes))
}

// bowl describes bowlProblem, for tests that change a part of it.
func bowl(cards []int, target []int, usableBytes float64) Custom {
	return Custom{
		Name:     "bowl",
		Cluster:  testCluster(),
		Workload: space.Workload{Batch: 64, SeqLen: 1024},
		Space: &gridSpace{cards: cards, invalid: func(g []int) bool {
			s := 0
			for _, v := range g {
				s += v
			}
			return s%5 == 4
		}},
		UsableBytes: usableBytes,
		Scorer:      bowlScorer(target),
	}
}

// bowlScorer is bowlProblem's scorer.
func bowlScorer(target []int) funcScorer {
	return funcScorer{
		memory: func(s *space.Strategy) memory.Breakdown {
			k := knobs(s)
			return memory.Breakdown{
				ParamsBytes:      40e9 / (k[1] * k[2]),
				OptimizerBytes:   60e9 / (k[1] * k[5]),
				ActivationsBytes: 10e9 * k[3] / k[4],
			}
		},
		time: func(s *space.Strategy) (cost.Estimate, error) {
			k := knobs(s)
			t := 1.0
			for i, v := range target {
				if i < len(k) {
					d := k[i] - float64(v+1)
					t += 0.01 * d * d * float64(i+1)
				}
			}
			return cost.Estimate{StepSeconds: t, ComputeSeconds: t, ModelFLOPs: 1e16, HardwareFLOPs: 1.2e16}, nil
		},
	}
}

// hashProblem is a synthetic problem with pseudo-random objectives taken
// from a hash of the strategy, with many ties (few distinct values) and
// some cost failures.
func hashProblem(cards []int, levels int) *Problem {
	h := func(s *space.Strategy, salt string) uint64 {
		f := fnv.New64a()
		f.Write([]byte(salt + s.String()))
		return f.Sum64()
	}
	return mustProblem(Custom{
		Name:        "hash",
		Cluster:     testCluster(),
		Workload:    space.Workload{Batch: 64, SeqLen: 1024},
		Space:       &gridSpace{cards: cards, invalid: func(g []int) bool { return g[0] == 1 && g[1] == 2 }},
		UsableBytes: float64(levels) * 0.8,
		Scorer: funcScorer{
			memory: func(s *space.Strategy) memory.Breakdown {
				return memory.Breakdown{ActivationsBytes: float64(h(s, "m") % uint64(levels))}
			},
			time: func(s *space.Strategy) (cost.Estimate, error) {
				v := h(s, "t")
				if v%17 == 0 {
					return cost.Estimate{}, errors.New("cost: synthetic failure")
				}
				return cost.Estimate{StepSeconds: 1 + float64(v%uint64(levels))}, nil
			},
		},
	})
}

// bruteForce evaluates every gene vector of p the simple way and returns
// the front by the definition (quadratic), the feasible count and the
// valid count.
func bruteForce(p *Problem) (front []Candidate, feasible, valid int64, all []Candidate) {
	sp, err := p.Space()
	if err != nil {
		panic(err)
	}
	cards := sp.Cardinalities()
	size := int64(1)
	for _, c := range cards {
		size *= int64(c)
	}
	genes := make([]int, len(cards))
	for i := int64(0); i < size; i++ {
		genesOf(cards, i, genes)
		var s space.Strategy
		if !sp.Decode(genes, &s) {
			continue
		}
		valid++
		c := p.Evaluate(s, false)
		c.Index = i
		all = append(all, c)
		if c.Feasible() {
			feasible++
		}
	}
	for i := range all {
		if !all[i].Feasible() {
			continue
		}
		dominated := false
		for j := range all {
			if Dominates(&all[j], &all[i]) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, all[i])
		}
	}
	// One row per point: of strategies with equal step time and memory, the
	// first in the front's order stands for them all.
	slices.SortFunc(front, func(a, b Candidate) int { return compareCandidates(&a, &b) })
	front = slices.CompactFunc(front, func(a, b Candidate) bool {
		return a.StepSeconds == b.StepSeconds && a.MemoryBytes == b.MemoryBytes
	})
	return front, feasible, valid, all
}

// sameRows reports whether two candidate lists hold the same strategies
// with the same objectives, in the same order.
func sameRows(a, b []Candidate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Strategy.String() != b[i].Strategy.String() ||
			a[i].StepSeconds != b[i].StepSeconds || a[i].MemoryBytes != b[i].MemoryBytes {
			return false
		}
	}
	return true
}
