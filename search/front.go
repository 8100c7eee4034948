package search

import (
	"cmp"
	"slices"
	"strings"

	"github.com/meshplan/meshplan/space"
)

// Dominates reports whether a dominates b on (step time, memory per chip):
// a is no slower and uses no more memory, and is strictly better on one.
// Only feasible candidates dominate or are dominated.
func Dominates(a, b *Candidate) bool {
	if !a.Feasible() || !b.Feasible() {
		return false
	}
	return a.StepSeconds <= b.StepSeconds && a.MemoryBytes <= b.MemoryBytes &&
		(a.StepSeconds < b.StepSeconds || a.MemoryBytes < b.MemoryBytes)
}

// Front returns the Pareto front of the feasible candidates in cands over
// (step time, memory per chip): every feasible candidate that no other
// dominates, sorted by step time, then memory, then strategy string. Each
// point of the front appears once: of several strategies with exactly the
// same step time and memory (typically one layout placed on interchangeable
// axes, e.g. dp on y or on z), the first in strategy-string order stands for
// them all. The result is a new slice and depends only on the set of
// candidates, not their order.
func Front(cands []Candidate) []Candidate {
	rows := make([]*keyed, 0, len(cands))
	for i := range cands {
		if cands[i].Feasible() {
			rows = append(rows, &keyed{c: &cands[i]})
		}
	}
	slices.SortFunc(rows, compareKeyed)
	out := make([]Candidate, 0, 8)
	var bestMem float64 // least memory among strictly faster candidates
	for i := 0; i < len(rows); {
		// rows[i:j] share one step time; rows[i] has the least memory.
		j := i + 1
		for j < len(rows) && rows[j].c.StepSeconds == rows[i].c.StepSeconds {
			j++
		}
		m0 := rows[i].c.MemoryBytes
		if i == 0 || m0 < bestMem {
			out = append(out, *rows[i].c)
			bestMem = m0
		}
		i = j
	}
	return out
}

// Top returns the first k rows of a front (all of them when k <= 0 or k
// exceeds its length).
func Top(front []Candidate, k int) []Candidate {
	if k <= 0 || k >= len(front) {
		return front
	}
	return front[:k]
}

// insertFront adds c to front, a set of mutually non-dominated feasible
// candidates in no particular order, and returns the updated set. Candidates
// equal on both objectives are all kept; Front later drops repeats.
func insertFront(front []Candidate, c *Candidate) []Candidate {
	for i := range front {
		if Dominates(&front[i], c) {
			return front
		}
	}
	kept := front[:0]
	for i := range front {
		if !Dominates(c, &front[i]) {
			kept = append(kept, front[i])
		}
	}
	clear(front[len(kept):])
	return append(kept, *c)
}

// keyed is a candidate with its strategy string computed on demand.
type keyed struct {
	c    *Candidate
	k    string
	have bool
}

func (r *keyed) key() string {
	if !r.have {
		r.k = strategyKey(&r.c.Strategy)
		r.have = true
	}
	return r.k
}

// compareKeyed orders by step time, memory, strategy string and index.
func compareKeyed(a, b *keyed) int {
	if c := cmp.Compare(a.c.StepSeconds, b.c.StepSeconds); c != 0 {
		return c
	}
	if c := cmp.Compare(a.c.MemoryBytes, b.c.MemoryBytes); c != 0 {
		return c
	}
	if c := strings.Compare(a.key(), b.key()); c != 0 {
		return c
	}
	return cmp.Compare(a.c.Index, b.c.Index)
}

// compareCandidates is the front order on candidates.
func compareCandidates(a, b *Candidate) int {
	return compareKeyed(&keyed{c: a}, &keyed{c: b})
}

// strategyKey is the canonical string of a strategy (its --strategy
// string), used to deduplicate and to break ties.
func strategyKey(s *space.Strategy) string { return s.String() }
