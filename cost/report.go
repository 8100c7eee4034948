package cost

import (
	"fmt"
	"math"
	"strings"
)

// collectives aggregates the busiest rank's emissions into per-step calls:
// mult and held are, per block, its runs per micro-batch and the copies of
// its parameters it holds (rankView); hideA2A says the schedule overlaps
// the MoE dispatch and combine.
func (e *evaluator) collectives(st *evalState, mult, held []float64, M, v float64, pp int, hideA2A bool) []Collective {
	p := e.p
	n := 1
	for b := range st.blocks {
		for r := range st.blocks[b].runs {
			n += len(st.blocks[b].runs[r].emit)
		}
		n += len(st.blocks[b].stepEmit)
	}
	out := make([]Collective, 0, n)
	axes := map[roleSet][]string{}
	axesOf := func(set roleSet) []string {
		if a, ok := axes[set]; ok {
			return a
		}
		a := e.mr.axesOf(set)
		axes[set] = a
		return a
	}
	names := collNames()
	add := func(em *emission, count float64, overlapped bool, kind, pass string) {
		if count <= 0 {
			return
		}
		why := e.m.whys[em.why]
		if em.op == opA2AMoE {
			why += e.moeTiers(em)
		}
		for i := range out {
			c := &out[i]
			if c.Why == why && c.Bytes == em.bytes && c.Op == names[em.op] {
				c.Count += int(math.Round(count))
				c.Seconds += count * em.seconds
				return
			}
		}
		out = append(out, Collective{Op: names[em.op], Axes: axesOf(em.roles), Bytes: em.bytes,
			Count: int(math.Round(count)), Seconds: count * em.seconds, Overlapped: overlapped, Why: why, Kind: kind, Pass: pass})
	}
	for b := range p.Blocks {
		sc := st.blocks[b]
		if n := mult[b]; n != 0 {
			for r := range sc.runs {
				run := &sc.runs[r]
				for i := range run.emit {
					em := &run.emit[i]
					kind := KindActivation
					switch {
					case em.class != classCritical:
						kind = KindWeights
					case em.dispatch:
						kind = KindMoE
					}
					add(em, n*M, em.class != classCritical || em.exposed < em.seconds || hideA2A && em.dispatch, kind, [3]string{"fwd", "recompute", "bwd"}[r])
				}
			}
		}
		for i := range sc.stepEmit {
			add(&sc.stepEmit[i], held[b], true, KindStep, "")
		}
	}
	if pp > 1 && len(e.mr.Pipeline) > 0 {
		var ax []string
		for _, g := range e.mr.Pipeline {
			ax = append(ax, g.Axis.Name)
		}
		out = append(out, Collective{Op: SendRecv, Axes: ax, Bytes: e.sendBytes(),
			Count: int(2 * M * v), Seconds: 2 * M * v * st.pSend, Overlapped: true, Kind: KindPipeline,
			Why: "pipeline: activations forward and gradients backward across each stage boundary, per micro-batch (×v interleaved), bounded by the slowest hop"})
	}
	return out
}

// moeTiers describes a MoE dispatch or combine level by level, as the
// hierarchical AllToAll runs it (allToAllSeconds): each switched or network
// level's bandwidth time for one call and, on the network, the share of the
// routed copies that cross it (routing.netScale); empty within one level.
func (e *evaluator) moeTiers(em *emission) string {
	gs := e.mr.union(em.roles)
	var parts []string
	chips := groupChips(gs)
	scale := e.mr.routing.netScale(networkChips(gs))
	for _, g := range gs {
		if g.Size <= 1 || kindOf(g.Axis.Tier) == kindRing {
			continue
		}
		n := float64(g.Size)
		sec := em.bytes * (n - 1) / (n * chips * effBandwidth(g.Axis))
		note := ""
		if kindOf(g.Axis.Tier) == kindNetwork && scale < 1 {
			sec *= scale
			note = fmt.Sprintf(", %.2f of the routed copies (group-limited routing)", scale)
		}
		parts = append(parts, fmt.Sprintf("%s over %s %.3g ms%s", g.Axis.Tier, g.Axis.Name, 1e3*sec, note))
	}
	if len(parts) < 2 {
		return ""
	}
	return "; hierarchical, per call: " + strings.Join(parts, ", then ")
}
