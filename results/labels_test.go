package results

import (
	"fmt"
	"strconv"
	"testing"
)

// shownBoxes returns the boxes of the labels placeLabels showed, and of
// every point, by the geometry the template draws.
func shownBoxes(s *scatter) (labels []box, names []string, points []box) {
	for _, p := range s.Points {
		r := pointRadius
		if p.Recommended {
			r = recPointRadius
		}
		points = append(points, box{p.X - r, p.Y - r, p.X + r, p.Y + r})
		if p.ShowLabel {
			labels = append(labels, textBox(p.LabelX, p.LabelY, len(p.Label), plabelCharWidth, plabelHeight))
			names = append(names, p.Label)
		}
	}
	if s.HasRec {
		labels = append(labels, textBox(s.RecLabelX, s.RecLabelY, len(s.RecLabel), recCharWidth, recHeight))
		names = append(names, s.RecLabel)
	}
	return labels, names, points
}

// checkLabels wants no shown label to overlap another label or any point,
// or to leave the plot.
func checkLabels(t *testing.T, s *scatter) {
	t.Helper()
	labels, names, points := shownBoxes(s)
	plot := box{s.Left, s.Top, s.Right, s.Bot}
	for i, a := range labels {
		if !a.within(plot) {
			t.Errorf("label %q leaves the plot: %+v", names[i], a)
		}
		for j := i + 1; j < len(labels); j++ {
			if a.overlaps(labels[j]) {
				t.Errorf("label %q overlaps label %q", names[i], names[j])
			}
		}
		for k, p := range points {
			if a.overlaps(p) {
				t.Errorf("label %q covers point %s", names[i], s.Points[k].Label)
			}
		}
	}
}

// TestLabelsDense lays out a front of 32 points whose slow tail crowds
// into one corner, as ranks 18-32 of a large plan do: the labels that
// would collide are left to the hover titles, the rest do not overlap.
func TestLabelsDense(t *testing.T) {
	s := newScatter("memory per chip (GB)", "step time (s)", 80, 70)
	for i := range 32 {
		mem, step := 64-2*float64(i), 5+0.2*float64(i)
		if i >= 17 {
			mem, step = 8+0.05*float64(i), 40+1.5*float64(i-17) // the crowded tail
		}
		s.Points = append(s.Points, point{X: s.x(mem, 80), Y: s.y(step, 70), Rank: i + 1, Label: strconv.Itoa(i + 1), Recommended: i == 0, Optimal: true})
	}
	s.placeLabels("recommended")
	checkLabels(t, s)
	labels, _, _ := shownBoxes(s)
	if !s.HasRec {
		t.Error("the recommended point has no label, with room beside it")
	}
	if len(labels) == len(s.Points) || len(labels) < len(s.Points)/2 {
		t.Errorf("%d of %d labels shown; want the crowded tail's hidden and most of the rest shown", len(labels), len(s.Points))
	}
}

// TestRecommendedLabelSpares its neighbour: a point sits where the
// recommended label used to go (right of and above the orange point), so
// the label goes elsewhere, or nowhere, but never over the point.
func TestRecommendedLabelSparesNeighbour(t *testing.T) {
	for _, tt := range []struct {
		name       string
		neighbours [][2]float64 // offsets from the recommended point, pixels
		wantShown  bool
	}{
		{"neighbour right above", [][2]float64{{30, -14}}, true},
		{"neighbours on the right", [][2]float64{{30, -14}, {30, 14}}, true},
		{"surrounded", [][2]float64{{30, -14}, {30, 14}, {-30, -14}, {-30, 14}, {0, -24}, {0, 24}, {60, -14}, {60, 14}, {-60, -14}, {-60, 14}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newScatter("x", "y", 100, 100)
			x0, y0 := s.x(50, 100), s.y(50, 100)
			s.Points = append(s.Points, point{X: x0, Y: y0, Rank: 1, Label: "1", Recommended: true, Optimal: true})
			for i, d := range tt.neighbours {
				s.Points = append(s.Points, point{X: x0 + d[0], Y: y0 + d[1], Rank: i + 2, Label: fmt.Sprint(i + 2), Optimal: true})
			}
			s.placeLabels("recommended")
			checkLabels(t, s)
			if s.HasRec != tt.wantShown {
				t.Errorf("recommended label shown %v, want %v", s.HasRec, tt.wantShown)
			}
		})
	}
}

// TestSpecHTML: a strategy string becomes no-wrap items with break
// opportunities only after commas and semicolons, escaped.
func TestSpecHTML(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"dp=8", `<span class="tok">dp=8</span>`},
		{"dp=2,tp=4", `<span class="tok">dp=2,</span><wbr><span class="tok">tp=4</span>`},
		{"tp=8,mesh=tp:gpu*8;dp:node*2", `<span class="tok">tp=8,</span><wbr><span class="tok">mesh=tp:gpu*8;</span><wbr><span class="tok">dp:node*2</span>`},
		{"recompute=<x>&y", `<span class="tok">recompute=&lt;x&gt;&amp;y</span>`},
		{"", ""},
	} {
		if got := string(specHTML(tt.in)); got != tt.want {
			t.Errorf("specHTML(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
