package model

import "slices"

// Recompute policy names of the strategy string.
const (
	RecomputeNone      = "none"
	RecomputeSelective = "selective"
	RecomputeFull      = "full"
)

// Policy is an activation recomputation policy as data: which ops of a
// block the backward pass re-runs rather than reading their outputs from
// memory. What each policy saves follows from the program (Program.Saved),
// so the cost model (which re-runs the ops) and the memory model (which
// does not store their outputs) agree by construction.
type Policy struct {
	// Name is the policy's name in the strategy string.
	Name string
	// Rerun says, per op group, that the policy re-runs the group's ops.
	Rerun [NumGroups]bool
	// Layers limits the policy to transformer layers; the embedding and
	// output blocks always keep what they need.
	Layers bool
}

// Policies returns the built-in policies: none keeps every activation the
// backward pass needs; selective re-runs the attention core (the score
// square, [KORT §4.2]); full re-runs every op of a layer and keeps only the
// layer's input (docs/formulas.md §2.2).
func Policies() []Policy {
	all := [NumGroups]bool{}
	for g := range all {
		all[g] = true
	}
	return []Policy{
		{Name: RecomputeNone},
		{Name: RecomputeSelective, Rerun: [NumGroups]bool{GroupCore: true}, Layers: true},
		{Name: RecomputeFull, Rerun: all, Layers: true},
	}
}

// PolicyNames returns the names of the built-in policies.
func PolicyNames() []string {
	var out []string
	for _, p := range Policies() {
		out = append(out, p.Name)
	}
	return out
}

// LookupPolicy returns the built-in policy with the given name.
func LookupPolicy(name string) (Policy, bool) {
	for _, p := range Policies() {
		if p.Name == name {
			return p, true
		}
	}
	return Policy{}, false
}

// Reruns reports whether policy pol re-runs op o of block b.
func (p *Program) Reruns(pol Policy, b int, o *Op) bool {
	if pol.Layers && (b == p.Embedding || b == p.Output) {
		return false
	}
	return pol.Rerun[o.Group]
}

// Saved returns the tensors the given blocks (a layer kind's, or the
// embedding or output block) keep in memory for their backward pass under
// policy pol, in first-use order: what the backward pass of every op needs
// (Op.Saves) and the inputs of the re-run ops, less what the re-run ops
// produce for one another only. Under full recompute a layer keeps just its
// input; under selective recompute the attention block drops the score
// square and the flash kernel's statistics but keeps the core's inputs q, k,
// v and its output ([KORT §4.1-4.2]).
func (p *Program) Saved(blocks []int, pol Policy) []int {
	var need []int
	add := func(t int) {
		if t >= 0 && !p.Tensors[t].Weight && p.Tensors[t].Class != ClassVirtual && !p.Tensors[t].OnChip && !slices.Contains(need, t) {
			need = append(need, t)
		}
	}
	// rerunOut: tensors some re-run op writes; usedOutside: tensors an op
	// that is not re-run reads or saves.
	var rerunOut, usedOutside []int
	for _, b := range blocks {
		p.savedOps(b, pol, add, &rerunOut, &usedOutside)
	}
	out := need[:0]
	for _, t := range need {
		if slices.Contains(rerunOut, t) && !slices.Contains(usedOutside, t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// savedOps adds what block b's ops need to keep, and records what its
// re-run ops write and what its other ops use.
func (p *Program) savedOps(b int, pol Policy, add func(int), rerunOut, usedOutside *[]int) {
	blk := &p.Blocks[b]
	for i := range blk.Fwd {
		o := &blk.Fwd[i]
		re := p.Reruns(pol, b, o)
		ins := []int{o.A, o.B}
		for _, t := range o.Saves {
			add(t)
			if !re {
				*usedOutside = append(*usedOutside, t)
			}
		}
		if re {
			for _, t := range ins {
				add(t)
			}
			if o.C != o.A {
				*rerunOut = append(*rerunOut, o.C)
			}
			*rerunOut = append(*rerunOut, o.Writes...)
		} else {
			*usedOutside = append(*usedOutside, ins...)
		}
	}
}
