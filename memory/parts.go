package memory

import (
	"slices"
	"strings"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Part is one named piece of one memory component on the busiest chip.
type Part struct {
	// Component is Params, Grads, Optimizer, Activations or Buffers.
	Component string `json:"component"`
	// Name is the part: a block of the layers ("attention", "dense MLP",
	// "routed experts", "shared experts", ...) or a buffer.
	Name string `json:"name"`
	// Bytes is its size on the busiest chip, in bytes.
	Bytes float64 `json:"bytes"`
}

// Parts breaks the memory of strategy s on its busiest chip (the one
// Estimate reports, in the same phase) down by part: the model states and
// the activations by block of the layers (attention or MLA, dense MLP,
// routed experts, shared experts, router and norm, embedding, output layer,
// multi-token prediction), the buffers term by term (communicators, FSDP
// units, the gradient bucket, pipeline buffers, the loss gradient or a
// layer's backward with its MoE dispatch and combine buffers). Each
// component's parts add up to Estimate's figure; parts of zero bytes are
// left out. It is for reports, not the search: it allocates.
func (mm *Model) Parts(c profiles.Cluster, w space.Workload, s space.Strategy) ([]Part, error) {
	var pk peak
	if err := mm.estimate(c, w, s, &pk); err != nil {
		return nil, err
	}
	p, g := mm.p, &pk.g
	terms := make([]kindTerms, len(p.Kinds))
	for k := range terms {
		terms[k] = mm.kindTerms(g, k)
	}
	ends := mm.ends(g)
	st := mm.rankStage(pk.rank, pk.pp, mm.loopOf(&s, pk.pp), s.Split, pk.pl, make([]int, len(p.Kinds)), make([]int, len(p.Kinds)))
	st.inFlight, st.lastInFlight = pk.inFlight, pk.lastInFlight
	fwd, step, bufs := mm.stagePhases(g, terms, &ends, &st)
	isStep := step.TotalBytes() > fwd.TotalBytes()

	var out []Part
	add := func(component, name string, bytes float64) {
		if bytes <= 0 {
			return
		}
		i := slices.IndexFunc(out, func(q Part) bool { return q.Component == component && q.Name == name })
		if i < 0 {
			out = append(out, Part{Component: component, Name: name, Bytes: bytes})
			return
		}
		out[i].Bytes += bytes
	}

	// Model states by weight category: states is linear in its parameters.
	fsdp := g.gather
	states := func(name string, ws []int, n float64) {
		var dense, expert, fp8 float64
		for _, w := range ws {
			d, e := mm.params(g, []tensorInfo{mm.info[w]}, 0)
			dense, expert = dense+n*d, expert+n*e
			if p.Tensors[w].FP8Copy {
				d8, e8 := mm.params(g, []tensorInfo{mm.info[w]}, fsdp)
				fp8 += n * (d8 + e8)
			}
		}
		pb, gb, ob := mm.states(g, dense, expert, fp8, isStep)
		if g.hostOpt > 0 {
			ps, gs, os := g.offloadScales()
			pb, gb, ob = ps*pb, gs*gb, os*ob
		}
		add(Params, name, pb)
		add(Grads, name, gb)
		add(Optimizer, name, ob)
	}
	for k, kind := range p.Kinds {
		n := st.scale * float64(st.counts[k])
		if n == 0 {
			continue
		}
		for _, b := range kind.Blocks {
			byCat := map[string][]int{}
			var order []string
			for _, w := range p.Blocks[b].Weights {
				c := mm.weightCategory(b, w)
				if _, ok := byCat[c]; !ok {
					order = append(order, c)
				}
				byCat[c] = append(byCat[c], w)
			}
			for _, c := range order {
				var own, shared []int
				for _, w := range byCat[c] {
					if p.Tensors[w].Shared {
						shared = append(shared, w)
					} else {
						own = append(own, w)
					}
				}
				states(c, own, n)
				// A shared block's weights once per stage.
				states(c, shared, st.scale)
			}
		}
	}
	if st.first {
		states("embedding", p.Blocks[p.Embedding].Weights, 1)
	}
	if st.last {
		ws := p.Blocks[p.Output].Weights
		if !st.first {
			ws = append(slices.Clone(ws), mm.tiedCopyTensors()...)
		}
		states("output layer", ws, 1)
	}

	if g.hostParams && !g.fsdp() {
		// offloadStates: the units a chip without sharding gathers from the host.
		ph := fwd
		if isStep {
			ph = step
		}
		add(Params, "units gathered from the host", ph.ParamsBytes)
		add(Grads, "units gathered from the host", ph.GradsBytes)
	}

	// Activations by the block that computes them, per micro-batch in flight.
	if !isStep {
		pol := mm.policies[g.policy]
		var mirror []int
		if st.mirror >= 0 && st.pp > 1 {
			mirror = make([]int, len(p.Kinds))
			mm.countStage(st.mirror, st.pp, 1, st.split, mirror)
		}
		for k, kind := range p.Kinds {
			n := st.scale * float64(st.counts[k])
			if n == 0 {
				continue
			}
			flight := st.inFlight * n
			if mirror != nil {
				// A DualPipe rank's two stages keep p-r and r+1 chunks (flightTerms).
				pp, r, m := float64(st.pp), float64(st.r), st.scale*float64(mirror[k])
				flight = 2 * st.inFlight / (pp + 1) * ((pp-r)*(n-m) + (r+1)*m)
			}
			if g.actHost > 0 && kind.Name != model.KindMTP {
				flight *= 1 - g.actHost // the first layers' in host memory (kindActs)
			}
			saved := p.Saved(kind.Blocks, pol)
			off := p.Offloaded(kind.Blocks, pol, saved)
			for _, t := range saved {
				if slices.Contains(off, t) {
					continue
				}
				in := mm.keptInfo(pol, t)
				add(Activations, mm.activationCategory(kind.Blocks, t), flight*mm.bytes(g, &in, 0))
			}
		}
	}

	// Buffers term by term: the persistent ones, and in the forward phase
	// the larger transient phase.
	names := bufNames()
	for i := bufComm; i < bufLoss; i++ {
		if isStep && p.Options.Precision.TensorUnits && xlaStepDead(i) {
			continue // dead by the optimizer step under XLA (bufTerms.stepXLA)
		}
		add(Buffers, names[i], bufs[i])
	}
	if !isStep {
		switch bufs.phase() {
		case phaseLoss:
			add(Buffers, names[bufLoss], bufs[bufLoss])
			add(Buffers, names[bufHeadUnit], bufs[bufHeadUnit])
		case phaseEmbed:
			add(Buffers, names[bufEmbedUnit], bufs[bufEmbedUnit])
		default:
			for i := bufWork; i <= bufMoE; i++ {
				add(Buffers, names[i], bufs[i])
			}
		}
	}
	return out, nil
}

// tiedCopyTensors returns the weights of the output layer's (or the
// multi-token-prediction modules') copy of the embedding.
func (mm *Model) tiedCopyTensors() []int {
	if len(mm.tiedCopy) == 0 {
		return nil
	}
	p := mm.p
	for _, o := range p.Blocks[p.Output].Fwd {
		if o.Kind == model.Einsum && o.B >= 0 && p.Tensors[o.B].Weight && !slices.Contains(p.Blocks[p.Output].Weights, o.B) {
			return []int{o.B}
		}
	}
	if r := p.MTP; r.Count > 0 {
		mtp := p.Kinds[r.Kind].Blocks[0]
		for _, o := range p.Blocks[mtp].Fwd {
			if o.Kind == model.Einsum && o.B >= 0 && p.Tensors[o.B].Weight && !slices.Contains(p.Blocks[mtp].Weights, o.B) {
				return []int{o.B}
			}
		}
	}
	return nil
}

// blockCategory names block b's part: "attention" (or "attention (MLA)"),
// "dense MLP", "MoE", "multi-token prediction", or the block's name.
func (mm *Model) blockCategory(b int) string {
	switch name := mm.p.Blocks[b].Name; name {
	case "attention":
		if mm.p.Spec.MLA != nil {
			return "attention (MLA)"
		}
		return "attention"
	case "mlp":
		return "dense MLP"
	case "mtp":
		return "multi-token prediction"
	default:
		return name
	}
}

// weightCategory names the part weight w of block b belongs to: a MoE
// block's routed experts, shared experts and router (with its norm) apart.
func (mm *Model) weightCategory(b, w int) string {
	if mm.p.Blocks[b].Name != "moe" {
		return mm.blockCategory(b)
	}
	t := &mm.p.Tensors[w]
	switch {
	case t.Expert:
		return "routed experts"
	case strings.HasPrefix(t.Name, "Ws_") || strings.HasPrefix(t.Name, "bs_"):
		return "shared experts"
	}
	return "router and norm"
}

// activationCategory names the part a saved tensor t of a layer of blocks
// belongs to: the block whose forward pass writes it (the first block for
// the layer's input), a MoE block's dispatched copies and shared experts
// apart.
func (mm *Model) activationCategory(blocks []int, t int) string {
	p := mm.p
	owner := blocks[0]
	var by *model.Op
	for _, b := range blocks {
		for i := range p.Blocks[b].Fwd {
			o := &p.Blocks[b].Fwd[i]
			if o.C == t || slices.Contains(o.Writes, t) {
				owner, by = b, o
				break
			}
		}
		if by != nil {
			break
		}
	}
	if p.Blocks[owner].Name != "moe" {
		return mm.blockCategory(owner)
	}
	tt := &p.Tensors[t]
	for i := 0; i < tt.Rank; i++ {
		if d := tt.Count[i]; d == model.DimC || d == model.DimR {
			return "routed experts (dispatched copies)"
		}
	}
	if by != nil && strings.HasPrefix(by.Name, "shared_") {
		return "shared experts"
	}
	return "router and norm"
}
