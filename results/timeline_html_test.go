package results

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/space"
	"github.com/meshplan/meshplan/timeline"
)

// TestHTMLTimeline lays out ZB-H1 on 4 ranks, 4 micro-batches of a 1 s
// forward and a 2 s backward (0.5 s of it weight gradients), a 0.2 s
// exposed tp collective per forward and the bubble 3·(1.2 + 1.5 − 0.5) =
// 6.6 s: one rect per event with its hover title, every rect within the
// 1,100 px plot, a lane per stream used, legend entries only for what is
// drawn, and the template renders it in a sideways-scrolling container.
func TestHTMLTimeline(t *testing.T) {
	p := &cost.Passes{Microbatches: 4, Chunks: 1, ForwardSeconds: 1, BackwardSeconds: 2, WeightGradSeconds: 0.5,
		CriticalSeconds: 0.2, CriticalForwardSeconds: 0.2}
	est := cost.Estimate{ComputeSeconds: 12, ExposedCommSeconds: 0.8, BubbleSeconds: 6.6, StepSeconds: 19.4, Passes: p}
	s := space.Defaults()
	s.Degree[space.PP], s.Schedule = 4, space.ZBH1
	tl, err := timeline.Build(est, s, space.Workload{Batch: 4, SeqLen: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := newHTMLTimeline(tl)
	if len(h.Rects) != len(tl.Events) {
		t.Errorf("%d rects for %d events", len(h.Rects), len(tl.Events))
	}
	for _, r := range h.Rects {
		if r.X < h.Left-0.05 || r.X+r.W > h.Left+h.PlotW+0.6 || r.W <= 0 || r.Title == "" {
			t.Errorf("rect %+v outside the plot [%g, %g] or untitled", r, h.Left, h.Left+h.PlotW)
		}
	}
	// 4 ranks: compute and tp/cp comm each (no dp, ep or pp traffic).
	lanes := 0
	for _, l := range h.Lanes {
		if !l.Rank {
			lanes++
		}
	}
	if lanes != 8 {
		t.Errorf("%d lanes, want 8", lanes)
	}
	var names []string
	for _, l := range h.Legend {
		names = append(names, l.Name)
	}
	if got, want := strings.Join(names, ","), "forward,backward,weight grad,bubble,comm exposed"; got != want {
		t.Errorf("legend %s, want %s", got, want)
	}
	tmpl, err := reportTmpl()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, "timeline", h); err != nil {
		t.Fatal(err)
	}
	rects := regexp.MustCompile(`<rect class="ev [^"]*"[^>]*data-rank="\d"[^>]*><title>[^<]+</title></rect>`).FindAllString(buf.String(), -1)
	if len(rects) != len(tl.Events) {
		t.Errorf("%d titled rects in the SVG, want %d", len(rects), len(tl.Events))
	}
	if !strings.Contains(buf.String(), `width="1100"`) {
		t.Error("the SVG is not 1,100 px wide")
	}
}
