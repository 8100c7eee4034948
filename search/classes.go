package search

import (
	"github.com/meshplan/meshplan/score"
	"github.com/meshplan/meshplan/space"
)

// layoutClasses groups the choices of a space's first gene (the layout
// gene of a space.Space) into classes whose strategies have the same
// validity and the same memory per chip whatever the other genes: for the
// planner's models, the layouts with the same parallel degrees, sequence
// parallelism and role degrees, that is the placements of one degree tuple
// that differ only in which mesh axes carry a dimension (MemoryKeyer). A
// search estimates the memory of one member of a class and, when nothing
// of it fits, skips the whole class. Other scorers get a class per choice.
type layoutClasses struct {
	of      []int   // class of each choice of the first gene
	members [][]int // choices of each class, ascending; the first is the class's representative
}

// classes returns the layout classes of p's space sp (of gene
// cardinalities cards). The classes are in the order of their first member.
func (p *Problem) classes(sp Space, cards []int) layoutClasses {
	n := 0
	if len(cards) > 0 {
		n = cards[0]
	}
	lc := layoutClasses{of: make([]int, n)}
	keyer, ok := p.scorer.(MemoryKeyer)
	if !ok || len(cards) == 0 {
		lc.members = make([][]int, n)
		for v := range n {
			lc.of[v] = v
			lc.members[v] = []int{v}
		}
		return lc
	}
	genes := make([]int, len(cards))
	byKey := make(map[score.MemoryKey]int)
	var s space.Strategy
	for v := range n {
		genes[0] = v
		sp.Decode(genes, &s) // fills s for invalid vectors too; only the layout matters
		k, ok := keyer.MemoryKey(&s)
		c, seen := byKey[k]
		if !ok || !seen {
			c = len(lc.members)
			lc.members = append(lc.members, nil)
			if ok {
				byKey[k] = c
			}
		}
		lc.of[v] = c
		lc.members[c] = append(lc.members[c], v)
	}
	return lc
}
