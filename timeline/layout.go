package timeline

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/space"
)

// comm is what a communication event carries: its collectives' array bytes
// and calls per event, the axes they cross and what they are.
type comm struct {
	bytes, calls float64
	link, what   string
}

// units are the durations of one chunk's passes on a rank (a micro-batch's
// over Chunks), with their exposed communication, and the step's
// once-per-step parts, all from the estimate's passes (cost.Passes).
type units struct {
	split bool // the schedule runs the weight gradients apart (W events)
	// compute: forward, recompute, input gradient (with the weight
	// gradient when not split), weight gradient, an overlapped pair.
	f, r, b, w, pair float64
	// exposed communication: tp/cp and ep of the forward, the backward
	// (recompute with it) and the weight gradients; a pair's tp/cp and
	// exposed and hidden ep.
	fTP, fEP, bTP, bEP, wTP, pairTP, pairEP, pairHidden float64
	// pipeline sends: one send's exposed part and its overlapped lead-in.
	sendX, sendO float64
	// per chunk overlapped weight traffic (FSDP prefetch).
	wtO float64
	// pairs is the overlapped chunk pairs per step.
	pairs int
	// once per step: the bubble and its forward share, exposed and hidden
	// parts of the weight traffic, gradient reduction, parameter gather
	// and host copies, the pipeline ramp, the fp8 casts and the optimizer.
	bubble, fShare                   float64
	wtX, gradX, gradO, parX, parO    float64
	offX, offO, ramp, fp8, optimizer float64
	// the collectives of each stream and pass.
	tpF, tpB, ep, wt, stepGrad, stepParam, send comm
}

// newUnits derives the units of est's passes for c chunks per micro-batch.
func newUnits(est cost.Estimate, c int) *units {
	p := est.Passes
	cf := float64(c)
	u := &units{}
	u.f = p.ForwardSeconds / cf
	u.r = p.RecomputeSeconds / cf
	u.pair = (p.ForwardSeconds + p.BackwardSeconds) / cf
	u.fTP = (p.CriticalForwardSeconds - p.A2AForwardSeconds) / cf
	u.fEP = p.A2AForwardSeconds / cf
	u.bEP = p.A2ABackwardSeconds / cf
	u.pairTP = (p.CriticalSeconds - p.A2AForwardSeconds - p.A2ABackwardSeconds) / cf
	u.pairEP = (p.A2AForwardSeconds + p.A2ABackwardSeconds - p.HiddenA2ASeconds) / cf
	u.pairHidden = p.HiddenA2ASeconds / cf
	// The overlapped micro-batches are in a rank's units; a chunk pair is
	// 1/c of one (space.Rules.OverlappedMicrobatches).
	u.pairs = int(math.Round(p.OverlappedMicrobatches * cf))
	if p.PipelineSends > 0 {
		u.sendX = p.PipelineSendExposedSeconds / p.PipelineSends
		u.sendO = p.PipelineSendSeconds - u.sendX
	}
	m := p.Microbatches
	u.wtX = p.WeightTrafficExposedSeconds
	u.wtO = max(0, p.WeightTrafficSeconds-p.WeightTrafficExposedSeconds) / (m * cf)
	u.gradX, u.gradO = p.GradReduceExposedSeconds, max(0, p.GradReduceSeconds-p.GradReduceExposedSeconds)
	u.parX, u.parO = p.ParamGatherExposedSeconds, max(0, p.ParamGatherSeconds-p.ParamGatherExposedSeconds)
	u.offX, u.offO = p.OffloadExposedSeconds, max(0, p.OffloadSeconds-p.OffloadExposedSeconds)
	u.ramp, u.fp8, u.optimizer = p.PipelineRampSeconds, p.FP8CastSeconds, p.OptimizerSeconds
	u.bubble = est.BubbleSeconds
	// The bubble's ramp-up and ramp-down split as a micro-batch's forward
	// and backward with their exposed communication [NARA §2.2].
	fw := p.ForwardSeconds + p.CriticalForwardSeconds
	bw := p.BackwardSeconds + p.CriticalSeconds - p.CriticalForwardSeconds
	u.fShare = 0.5
	if fw+bw > 0 {
		u.fShare = fw / (fw + bw)
	}
	for _, col := range est.Collectives {
		k := col.Kind
		var dst *comm
		per := m * cf // per chunk of a micro-batch
		switch {
		case k == cost.KindActivation && col.Pass == "fwd":
			dst = &u.tpF
		case k == cost.KindActivation:
			dst = &u.tpB
		case k == cost.KindMoE:
			dst = &u.ep
		case k == cost.KindWeights:
			dst = &u.wt
		case k == cost.KindStep && col.Op == "AllGather":
			dst, per = &u.stepParam, 1
		case k == cost.KindStep:
			dst, per = &u.stepGrad, 1
		case k == cost.KindPipeline:
			dst, per = &u.send, float64(max(col.Count, 1))
		default:
			continue
		}
		dst.bytes += col.Bytes * float64(col.Count) / per
		dst.calls += float64(col.Count) / per
		dst.link = joinLink(dst.link, col.Axes)
		if !strings.Contains(dst.what, col.Op) {
			dst.what = strings.TrimPrefix(dst.what+", "+col.Op, ", ")
		}
	}
	return u
}

// setSplit sets the pass units that depend on whether the schedule runs
// the weight gradients apart.
func (u *units) setSplit(split bool, p *cost.Passes, c int) {
	cf := float64(c)
	u.split = split
	if split {
		u.b = (p.BackwardSeconds - p.RecomputeSeconds - p.WeightGradSeconds) / cf
		u.w = p.WeightGradSeconds / cf
		u.bTP = (p.CriticalSeconds - p.CriticalForwardSeconds - p.CriticalWeightGradSeconds - p.A2ABackwardSeconds) / cf
		u.wTP = p.CriticalWeightGradSeconds / cf
		return
	}
	u.b = (p.BackwardSeconds - p.RecomputeSeconds) / cf
	u.w, u.wTP = 0, 0
	u.bTP = (p.CriticalSeconds - p.CriticalForwardSeconds - p.A2ABackwardSeconds) / cf
}

// joinLink adds axes to a comma-separated list, each once.
func joinLink(link string, axes []string) string {
	parts := strings.FieldsFunc(link, func(r rune) bool { return r == ',' })
	for _, a := range axes {
		if !slices.Contains(parts, a) {
			parts = append(parts, a)
		}
	}
	return strings.Join(parts, ",")
}

// splits reports whether schedule s runs the weight gradients apart from
// the input gradients ([ZB §2], [DSV3 §3.2.1]).
func splits(s space.Schedule) bool {
	return s == space.ZBH1 || s == space.ZBV || s == space.DualPipe || s == space.DualPipeV
}

// stepKind is one step of a rank's schedule.
type stepKind uint8

const (
	stepF    stepKind = iota // a forward chunk
	stepB                    // a backward chunk (recompute, input gradient, weight gradient unless split)
	stepW                    // a deferred weight-gradient chunk
	stepFB                   // steady state: a forward chunk then a backward chunk (then W when split)
	stepPair                 // an overlapped forward-backward chunk pair
)

// phase is a run of steps of one kind; fw and bw index the forward and
// backward orders of its first step; mid says the bubble's middle part
// comes before it.
type phase struct {
	kind   stepKind
	n      int
	fw, bw int
	mid    bool
}

// plan is a rank's schedule: its phases over the forward and backward
// orders of its chunks.
type plan struct {
	split  bool
	phases []phase
	labels []string // the chunks in forward order ("3" or "3.1")
	back   []string // the chunks in backward order
}

// order returns the schedule of rank r of pp for m micro-batches of c
// chunks with pairs overlapped chunk pairs.
func order(s space.Schedule, pp, r, m, c, pairs int) plan {
	n := m * c
	k := pp - 1
	pl := plan{}
	pl.labels, pl.back = chunkOrders(pp, m, c)
	warm := 0
	switch s {
	case space.GPipe:
		// All forwards, then all backwards [GPIPE].
		warm = n
	case space.Interleaved:
		// Megatron's warm-up: 2(pp-r-1) + (v-1)·pp chunk forwards [MEG-SCHED].
		warm = 2*(k-r) + (c-1)*pp
	case space.ZBV, space.DualPipeV:
		// The V's first chunk runs down the ranks and its second back:
		// 2(pp-r-1)+1 forwards before the first backward [ZB §6].
		warm = 2*(k-r) + 1
	case space.DualPipe:
		// Each direction's pipeline fills before the overlapped pairs [DSV3 §3.2.1].
		warm = k - r + 1
	default:
		// 1F1B and ZB-H1: pp-r-1 forwards of warm-up [NARA §2.2].
		warm = k - r
	}
	pl.split = splits(s)
	pairs = min(pairs, n)
	warm = max(0, min(warm, n-pairs))
	steady := n - warm
	plain := steady - pairs
	add := func(ph phase) {
		if ph.n > 0 {
			pl.phases = append(pl.phases, ph)
		}
	}
	add(phase{kind: stepF, n: warm})
	fw, bw := warm, 0
	add(phase{kind: stepPair, n: pairs, fw: fw, bw: bw, mid: true})
	fw, bw = fw+pairs, bw+pairs
	add(phase{kind: stepFB, n: plain, fw: fw, bw: bw, mid: pairs == 0})
	bw += plain
	add(phase{kind: stepB, n: n - bw, bw: bw, mid: steady == 0})
	return pl
}

// chunkOrders returns the labels of a rank's chunks in forward order and
// in backward order: by micro-batch for one chunk, else in groups of pp
// micro-batches, chunk by chunk (backward: the chunks in reverse)
// [MEG-SCHED].
func chunkOrders(pp, m, c int) (fwd, bwd []string) {
	if c == 1 {
		fwd = make([]string, m)
		for i := range fwd {
			fwd[i] = fmt.Sprint(i)
		}
		return fwd, fwd
	}
	for g := 0; g < m; g += pp {
		end := min(g+pp, m)
		for ch := range c {
			for mb := g; mb < end; mb++ {
				fwd = append(fwd, fmt.Sprintf("%d.%d", mb, ch))
			}
		}
		for ch := c - 1; ch >= 0; ch-- {
			for mb := g; mb < end; mb++ {
				bwd = append(bwd, fmt.Sprintf("%d.%d", mb, ch))
			}
		}
	}
	return fwd, bwd
}

// placed is a communication event waiting to be placed on its stream: an
// anchored one's exposed part starts at at (the compute waits for it),
// with a lead-in of lead before it that overlaps; a free one (at < 0)
// wants to start at want and hides entirely.
type placed struct {
	ev   Event
	at   float64
	lead float64
	want float64
}

// rankLayout lays out one rank's step.
type rankLayout struct {
	u      *units
	rank   int
	pp     int
	sched  space.Schedule
	t      float64 // the compute stream's cursor
	events []Event
	comms  []placed
	folded bool
	// midGap is the bubble still to come before the first backward.
	midGap float64
}

// compute adds a compute event of d seconds at the cursor.
func (l *rankLayout) compute(name, cat string, d float64, rep int, mbs string) {
	if d <= 0 {
		return
	}
	l.events = append(l.events, Event{Rank: l.rank, Stream: StreamCompute, Name: name, Cat: cat,
		StartSeconds: l.t, DurSeconds: d, Repeat: rep, Microbatches: mbs})
	l.t += d
}

// exposed adds a communication event whose x seconds stall the compute at
// the cursor, after lead seconds that overlap the compute before it.
func (l *rankLayout) exposed(s Stream, name string, x, lead float64, c comm, scale float64, rep int, mbs string) {
	if x <= 0 && lead <= 0 {
		return
	}
	x = max(x, 0)
	l.comms = append(l.comms, placed{ev: l.commEvent(s, name, x, c, scale, rep, mbs), at: l.t, lead: max(lead, 0)})
	l.t += x
}

// hidden adds a communication event of d seconds that hides under compute,
// wanting to start at want.
func (l *rankLayout) hidden(s Stream, name string, want, d float64, c comm, scale float64, rep int, mbs string) {
	if d <= 0 {
		return
	}
	ev := l.commEvent(s, name, 0, c, scale, rep, mbs)
	ev.DurSeconds = d
	l.comms = append(l.comms, placed{ev: ev, at: -1, want: want})
}

func (l *rankLayout) commEvent(s Stream, name string, x float64, c comm, scale float64, rep int, mbs string) Event {
	return Event{Rank: l.rank, Stream: s, Name: name, Cat: CatComm, ExposedSeconds: x, Repeat: rep, Microbatches: mbs,
		Bytes: c.bytes * scale, Calls: c.calls * scale, Link: c.link, What: c.what}
}

// gap adds d seconds of bubble.
func (l *rankLayout) gap(name string, d float64) {
	if d <= 0 {
		return
	}
	l.events = append(l.events, Event{Rank: l.rank, Stream: StreamCompute, Name: name, Cat: CatBubble, StartSeconds: l.t, DurSeconds: d})
	l.t += d
}

// bubbleParts returns the rank's bubble before its first forward, before
// its first backward and before the optimizer step.
func (l *rankLayout) bubbleParts() (head, mid, tail float64) {
	b := l.u.bubble
	if l.pp <= 1 || b <= 0 {
		return 0, 0, 0
	}
	k := float64(l.pp - 1)
	r := float64(l.rank)
	ramp := b * r / k
	return ramp * l.u.fShare, b * (k - r) / k, ramp * (1 - l.u.fShare)
}

// run lays out the schedule pl.
func (l *rankLayout) run(pl plan) {
	u := l.u
	head, mid, tail := l.bubbleParts()
	// The ZeRO parameter gather finishes before the first forward's
	// layers need it; the first layer's is exposed [MEG-DDP].
	l.exposed(StreamDP, "param all-gather (ZeRO)", u.parX, 0, u.stepParam, 1, 0, "")
	if u.parO > 0 {
		l.hidden(StreamDP, "param all-gather (ZeRO, overlapped)", l.t, u.parO, comm{}, 0, 0, "")
	}
	l.gap("bubble (ramp-up)", head)
	l.exposed(StreamPP, "pipeline ramp-up", u.ramp/2, 0, u.send, 0, 0, "")
	l.exposed(StreamDP, "first weight gather (FSDP)", u.wtX, 0, u.wt, 1, 0, "")
	if u.offO > 0 {
		l.hidden(StreamHost, "activation offload (overlapped)", l.t, u.offO, comm{what: "host copies"}, 0, 0, "")
	}
	for _, ph := range pl.phases {
		switch {
		case ph.mid && ph.kind == stepFB:
			// The first steady step's forward runs, then the rank waits
			// for its first backward [NARA §2.2].
			l.midGap, mid = mid, 0
		case ph.mid:
			l.gap("bubble", mid)
			mid = 0
		}
		l.phase(pl, ph)
	}
	l.gap("bubble", mid+l.midGap)
	l.midGap = 0
	l.exposed(StreamPP, "pipeline ramp-down", u.ramp/2, 0, u.send, 0, 0, "")
	// The gradient reduction overlaps the last backward; its last bucket
	// is exposed [MEG-DDP].
	if u.gradO > 0 {
		l.hidden(StreamDP, "gradient reduction (overlapped)", max(0, l.t-u.gradO), u.gradO, u.stepGrad, 1, 0, "")
	}
	l.exposed(StreamDP, "gradient reduction (last bucket)", u.gradX, 0, comm{}, 0, 0, "")
	l.exposed(StreamHost, "activation offload", u.offX, 0, comm{what: "host copies"}, 0, 0, "")
	l.gap("bubble (ramp-down)", tail)
	l.compute("fp8 weight casts", CatOptimizer, u.fp8, 0, "")
	l.compute("optimizer step", CatOptimizer, u.optimizer, 0, "")
}

// phase lays out one phase, folding its middle steps when it is long.
func (l *rankLayout) phase(pl plan, ph phase) {
	if ph.n <= foldAbove {
		for i := range ph.n {
			l.step(pl, ph, i, 1)
		}
		return
	}
	l.folded = true
	for i := range foldKeep {
		l.step(pl, ph, i, 1)
	}
	l.step(pl, ph, foldKeep, ph.n-2*foldKeep)
	for i := ph.n - foldKeep; i < ph.n; i++ {
		l.step(pl, ph, i, 1)
	}
}

// step lays out step i of phase ph, or rep steps from it folded into one
// of each event.
func (l *rankLayout) step(pl plan, ph phase, i, rep int) {
	u := l.u
	n := float64(rep)
	fi, bi := ph.fw+i, ph.bw+i
	label := func(order []string, j int) string {
		if rep == 1 {
			return order[j]
		}
		return fmt.Sprintf("x%d", rep)
	}
	mbs := func(order []string, j int) string {
		if rep == 1 {
			return ""
		}
		return order[j] + "-" + order[j+rep-1]
	}
	reps := rep
	if rep == 1 {
		reps = 0
	}
	fwd := func() {
		name, mb := label(pl.labels, fi), mbs(pl.labels, fi)
		start := l.t
		l.compute("F "+name, CatForward, n*u.f, reps, mb)
		if u.wtO > 0 {
			l.hidden(StreamDP, "weight gather "+name+" (prefetch)", start, n*u.wtO, u.wt, n, reps, mb)
		}
		l.exposed(StreamTP, "tp/cp "+name+" (fwd)", n*u.fTP, 0, u.tpF, n, reps, mb)
		l.exposed(StreamEP, "dispatch+combine "+name+" (fwd)", n*u.fEP, 0, u.ep, n/2, reps, mb)
		l.send("send "+name+" (activations)", n, reps, mb)
	}
	bwd := func() {
		name, mb := label(pl.back, bi), mbs(pl.back, bi)
		l.compute("R "+name, CatRecompute, n*u.r, reps, mb)
		l.compute("B "+name, CatBackward, n*u.b, reps, mb)
		l.exposed(StreamTP, "tp/cp "+name+" (bwd)", n*u.bTP, 0, u.tpB, n, reps, mb)
		l.exposed(StreamEP, "dispatch+combine "+name+" (bwd)", n*u.bEP, 0, u.ep, n/2, reps, mb)
		l.send("send "+name+" (gradients)", n, reps, mb)
	}
	wgt := func(j int) {
		name, mb := label(pl.back, j), mbs(pl.back, j)
		l.compute("W "+name, CatWeightGrad, n*u.w, reps, mb)
		l.exposed(StreamTP, "tp/cp "+name+" (wgrad)", n*u.wTP, 0, u.tpB, 0, reps, mb)
	}
	switch ph.kind {
	case stepF:
		fwd()
	case stepFB:
		if rep > 1 {
			l.steady(pl, fi, bi, rep)
			return
		}
		fwd()
		l.gap("bubble", l.midGap)
		l.midGap = 0
		bwd()
		if pl.split {
			wgt(bi)
		}
	case stepB:
		bwd()
		if pl.split {
			wgt(bi)
		}
	case stepPair:
		name := fmt.Sprintf("F&B x%d", rep)
		mb := mbs(pl.labels, fi)
		if rep == 1 {
			name = "F " + pl.labels[fi] + " & B " + pl.back[bi]
		}
		start := l.t
		l.compute(name, CatPair, n*u.pair, reps, mb)
		l.hidden(StreamEP, "dispatch+combine "+name+" (overlapped)", start, n*u.pairHidden, u.ep, n, reps, mb)
		l.exposed(StreamTP, "tp/cp "+name, n*u.pairTP, 0, u.tpB, n, reps, mb)
		l.exposed(StreamEP, "dispatch+combine "+name+" (exposed)", n*u.pairEP, 0, u.ep, n, reps, mb)
		l.send("send "+name, 2*n, reps, mb)
	}
}

// steady lays out rep steady-state steps from forward fi and backward bi
// folded into one event of each stream: the compute of their forwards,
// recomputes and backwards (weight gradients included), then their exposed
// communication.
func (l *rankLayout) steady(pl plan, fi, bi, rep int) {
	u := l.u
	n := float64(rep)
	mb := "F " + pl.labels[fi] + "-" + pl.labels[fi+rep-1] + ", B " + pl.back[bi] + "-" + pl.back[bi+rep-1]
	name := fmt.Sprintf("F+B x%d", rep)
	start := l.t
	l.compute(name, CatSteady, n*(u.f+u.r+u.b+u.w), rep, mb)
	if u.wtO > 0 {
		l.hidden(StreamDP, "weight gather "+name+" (prefetch)", start, n*u.wtO, u.wt, n, rep, mb)
	}
	l.exposed(StreamTP, "tp/cp "+name, n*u.fTP, 0, u.tpF, n, rep, mb)
	l.exposed(StreamTP, "tp/cp "+name+" (bwd)", n*(u.bTP+u.wTP), 0, u.tpB, n, rep, mb)
	l.exposed(StreamEP, "dispatch+combine "+name, n*(u.fEP+u.bEP), 0, u.ep, n, rep, mb)
	l.send("send "+name, 2*n, rep, mb)
}

// send adds n pipeline sends: their overlapped lead-in before the cursor
// and their exposed part at it.
func (l *rankLayout) send(name string, n float64, rep int, mbs string) {
	u := l.u
	if l.pp <= 1 || u.sendX+u.sendO <= 0 {
		return
	}
	l.exposed(StreamPP, name, n*u.sendX, n*u.sendO, u.send, n, rep, mbs)
}

// settle places the rank's communication events on their streams: the
// anchored ones' exposed parts where the compute waited for them, their
// lead-ins and the free ones where the stream is idle, cut short rather
// than overlap another event of the stream or run past the step's end.
func (l *rankLayout) settle(stepSeconds float64) {
	end := max(stepSeconds, l.t)
	for _, s := range Streams()[1:] {
		var anchored, free []placed
		for _, c := range l.comms {
			if c.ev.Stream != s {
				continue
			}
			if c.at >= 0 {
				anchored = append(anchored, c)
			} else {
				free = append(free, c)
			}
		}
		sort.SliceStable(free, func(i, j int) bool { return free[i].want < free[j].want })
		var out []Event
		last := 0.0 // end of the last event placed
		ai := 0
		placeAnchored := func(a placed) {
			start := max(a.at-a.lead, last)
			start = min(start, a.at)
			ev := a.ev
			ev.StartSeconds = start
			ev.DurSeconds = a.at + a.ev.ExposedSeconds - start
			if ev.DurSeconds > 0 {
				out = append(out, ev)
				last = ev.StartSeconds + ev.DurSeconds
			}
		}
		for _, f := range free {
			start := max(f.want, last)
			// Anchored events whose exposed part starts before this one
			// go first.
			for ai < len(anchored) && anchored[ai].at <= start {
				placeAnchored(anchored[ai])
				ai++
				start = max(start, last)
			}
			stop := min(start+f.ev.DurSeconds, end)
			if ai < len(anchored) {
				stop = min(stop, anchored[ai].at)
			}
			if stop-start > 1e-12*end {
				ev := f.ev
				ev.StartSeconds, ev.DurSeconds = start, stop-start
				out = append(out, ev)
				last = stop
			}
		}
		for ; ai < len(anchored); ai++ {
			placeAnchored(anchored[ai])
		}
		l.events = append(l.events, out...)
	}
	l.comms = nil
}
