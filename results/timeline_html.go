package results

import (
	"fmt"
	"math"
	"strings"

	"github.com/meshplan/meshplan/timeline"
)

// htmlTimeline is the step's timeline laid out as an SVG: one block of
// lanes per pipeline rank drawn, one lane per stream the rank uses, one
// rect per event with a <title>; it is wider than a phone and scrolls
// sideways inside its container.
type htmlTimeline struct {
	Width, Height  int
	Left, PlotW    float64
	AxisY, Bottom  float64
	Ticks          []tick
	Lanes          []tlLane
	Rects          []tlRect
	Legend         []legendItem
	Folding, Note  string
	StepText       string
	Ranks, AllRank int
}

// tlLane is one lane's label, or a rank's heading (Rank true).
type tlLane struct {
	Y     float64
	Label string
	Rank  bool
}

// tlRect is one event drawn.
type tlRect struct {
	X, Y, W, H float64
	Class      string
	Title      string
	Rank       int
	Stream     string
	Folded     bool
	LabelX     float64
	Label      string
	ShowLabel  bool
	LabelY     float64
	Exposed    bool
}

// Timeline geometry, in pixels.
const (
	tlWidth   = 1100
	tlLeft    = 118
	tlRight   = 16
	tlLaneH   = 14
	tlLaneGap = 3
	tlRankGap = 10
	tlTop     = 44
)

// newHTMLTimeline lays out t for the report.
func newHTMLTimeline(t *timeline.Timeline) *htmlTimeline {
	h := &htmlTimeline{Width: tlWidth, Left: tlLeft, PlotW: tlWidth - tlLeft - tlRight, Folding: t.Folding, Note: t.Note,
		StepText: Seconds(t.StepSeconds), Ranks: len(t.Ranks), AllRank: t.Stages}
	step := t.StepSeconds
	if !(step > 0) {
		return nil
	}
	x := func(s float64) float64 { return round1(h.Left + s/step*h.PlotW) }
	// The legend: each class drawn, once, in this order.
	legend := []legendItem{{Class: "t-fwd", Name: "forward"}, {Class: "t-bwd", Name: "backward"}, {Class: "t-wgt", Name: "weight grad"},
		{Class: "t-rec", Name: "recompute"}, {Class: "t-pair", Name: "F&B pair"}, {Class: "t-steady", Name: "F+B folded"}, {Class: "t-opt", Name: "optimizer"},
		{Class: "t-bubble", Name: "bubble"}, {Class: "t-exp", Name: "comm exposed"}, {Class: "t-ovl", Name: "comm overlapped"}}
	seen := map[string]bool{}
	for _, e := range t.Events {
		seen[eventClass(e)] = true
	}
	lx := h.Left
	for _, l := range legend {
		if !seen[l.Class] {
			continue
		}
		l.X = lx
		h.Legend = append(h.Legend, l)
		lx += 14 + 7*float64(len(l.Name)) + 16
	}
	h.AxisY = tlTop
	y := float64(tlTop) + 8
	for _, r := range t.Ranks {
		used := map[timeline.Stream]bool{}
		for _, e := range t.Events {
			if e.Rank == r {
				used[e.Stream] = true
			}
		}
		h.Lanes = append(h.Lanes, tlLane{Y: y + 11, Label: fmt.Sprintf("rank %d", r), Rank: true})
		y += 16
		for _, s := range timeline.Streams() {
			if !used[s] {
				continue
			}
			h.Lanes = append(h.Lanes, tlLane{Y: y + 11, Label: s.String()})
			for _, e := range t.Events {
				if e.Rank != r || e.Stream != s {
					continue
				}
				x0, x1 := x(e.StartSeconds), x(e.StartSeconds+e.DurSeconds)
				rc := tlRect{X: x0, Y: y, W: math.Max(round1(x1-x0), 0.5), H: tlLaneH, Class: eventClass(e), Rank: r, Stream: s.String(),
					Folded: e.Repeat > 1, Title: eventTitle(e), Exposed: e.ExposedSeconds > 0}
				// A name inside its rect when it fits (about 6 px a character).
				if name := e.Name; e.Stream == timeline.StreamCompute && e.Cat != timeline.CatBubble && rc.W > 6.2*float64(len(name))+6 {
					rc.ShowLabel, rc.Label, rc.LabelX, rc.LabelY = true, name, x0+3, y+11
				}
				h.Rects = append(h.Rects, rc)
			}
			y += tlLaneH + tlLaneGap
		}
		y += tlRankGap
	}
	h.Bottom = y
	for _, v := range niceTicks(step) {
		if v > step*(1+1e-9) {
			break
		}
		h.Ticks = append(h.Ticks, tick{Pos: x(v), Label: Seconds(v)})
	}
	h.Height = int(math.Ceil(y)) + 4
	return h
}

// eventClass is the CSS class of an event's rect.
func eventClass(e timeline.Event) string {
	switch e.Cat {
	case timeline.CatForward:
		return "t-fwd"
	case timeline.CatBackward:
		return "t-bwd"
	case timeline.CatWeightGrad:
		return "t-wgt"
	case timeline.CatRecompute:
		return "t-rec"
	case timeline.CatPair:
		return "t-pair"
	case timeline.CatSteady:
		return "t-steady"
	case timeline.CatOptimizer:
		return "t-opt"
	case timeline.CatBubble:
		return "t-bubble"
	}
	if e.ExposedSeconds > 0 {
		return "t-exp"
	}
	return "t-ovl"
}

// eventTitle is an event's hover text: rank, stream, name, time, and for
// a communication event its exposed part, bytes and link.
func eventTitle(e timeline.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rank %d, %s: %s, %s from %s", e.Rank, e.Stream, e.Name, Seconds(e.DurSeconds), Seconds(e.StartSeconds))
	if e.Repeat > 1 {
		fmt.Fprintf(&b, " (%d steps folded: %s)", e.Repeat, e.Microbatches)
	}
	if e.Stream != timeline.StreamCompute {
		if e.ExposedSeconds > 0 {
			fmt.Fprintf(&b, "; %s exposed", Seconds(e.ExposedSeconds))
		} else {
			b.WriteString("; overlapped")
		}
		if e.What != "" {
			fmt.Fprintf(&b, "; %s", e.What)
		}
		if e.Bytes > 0 {
			fmt.Fprintf(&b, ", %s", Bytes(e.Bytes))
		}
		if e.Link != "" {
			fmt.Fprintf(&b, " over %s", e.Link)
		}
	}
	return b.String()
}
