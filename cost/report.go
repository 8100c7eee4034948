package cost

import (
	"math"
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
	add := func(em *emission, count float64, overlapped bool) {
		if count <= 0 {
			return
		}
		for i := range out {
			c := &out[i]
			if c.Why == em.why && c.Bytes == em.bytes && c.Op == names[em.op] {
				c.Count += int(math.Round(count))
				c.Seconds += count * em.seconds
				return
			}
		}
		out = append(out, Collective{Op: names[em.op], Axes: axesOf(em.roles), Bytes: em.bytes,
			Count: int(math.Round(count)), Seconds: count * em.seconds, Overlapped: overlapped, Why: em.why})
	}
	for b := range p.Blocks {
		sc := &st.blocks[b]
		if n := mult[b]; n != 0 {
			for r := range sc.runs {
				run := &sc.runs[r]
				for i := range run.emit {
					em := &run.emit[i]
					add(em, n*M, em.class != classCritical || em.exposed < em.seconds || hideA2A && em.dispatch)
				}
			}
		}
		for i := range sc.stepEmit {
			add(&sc.stepEmit[i], held[b], true)
		}
	}
	if pp > 1 && len(e.mr.Pipeline) > 0 {
		var ax []string
		for _, g := range e.mr.Pipeline {
			ax = append(ax, g.Axis.Name)
		}
		out = append(out, Collective{Op: SendRecv, Axes: ax, Bytes: e.sendBytes(),
			Count: int(2 * M * v), Seconds: 2 * M * v * st.pSend, Overlapped: true,
			Why: "pipeline: activations forward and gradients backward across each stage boundary, per micro-batch (×v interleaved), bounded by the slowest hop"})
	}
	return out
}
