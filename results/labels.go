package results

// Label placement for the HTML scatter plots. A label is shown only where
// it collides with nothing: not with another label, not with any point
// (its own included), not with the usable-memory marker's text, and not
// outside the plot. The recommended point's label is placed first, so it
// is the one most likely shown, but it never hides a neighbouring point;
// every other point is labelled in rank order where there is room and is
// otherwise named by its hover title only.

// Label geometry, in pixels, for the fonts of report.html.tmpl: the point
// labels are 10px, the recommended label 12px bold. The widths are upper
// bounds of a character of system-ui at those sizes, so that a box drawn
// from them contains the rendered text.
const (
	plabelCharWidth = 6.2
	plabelHeight    = 10.0
	recCharWidth    = 7.6
	recHeight       = 12.0
	pointRadius     = 6.0
	recPointRadius  = 9.0
	labelGap        = 3.0
)

// box is an axis-aligned rectangle in pixels.
type box struct{ x0, y0, x1, y1 float64 }

// overlaps reports whether a and b share any area.
func (a box) overlaps(b box) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// within reports whether a lies inside b.
func (a box) within(b box) bool {
	return a.x0 >= b.x0 && a.x1 <= b.x1 && a.y0 >= b.y0 && a.y1 <= b.y1
}

// textBox is the box of a text of n characters whose baseline starts at
// (x, y), for a font of charWidth and height.
func textBox(x, y float64, n int, charWidth, height float64) box {
	return box{x, y - height, x + float64(n)*charWidth, y + 0.3*height}
}

// pointBox is the box of a circle of radius r at (x, y), with a gap.
func pointBox(x, y, r float64) box {
	return box{x - r - labelGap, y - r - labelGap, x + r + labelGap, y + r + labelGap}
}

// labelSpots are where a label of width w and height h may start its
// baseline, in order of preference, around a point at (x, y) of radius r:
// right and above, right and below, left and above, left and below, right
// and left level with the point, centred above, centred below.
func labelSpots(x, y, r, w, h float64) [][2]float64 {
	d := r + labelGap
	return [][2]float64{
		{x + d, y - d + h*0.3}, {x + d, y + d + h},
		{x - d - w, y - d + h*0.3}, {x - d - w, y + d + h},
		{x + d, y + h*0.35}, {x - d - w, y + h*0.35},
		{x - w/2, y - d - 1}, {x - w/2, y + d + h},
	}
}

// placeLabels decides which points of s show their label and where, and
// places the recommended point's label (its rank or name followed by
// recommended) first. A label is placed at the first of its spots whose
// box stays inside the plot and overlaps no point and no label placed
// before it; a label with no such spot is not shown.
func (s *scatter) placeLabels(recommended string) {
	plot := box{s.Left, s.Top, s.Right, s.Bot}
	var obstacles []box
	for _, p := range s.Points {
		r := pointRadius
		if p.Recommended {
			r = recPointRadius
		}
		obstacles = append(obstacles, pointBox(p.X, p.Y, r))
	}
	if s.VLine != nil {
		// The usable-memory label, right-aligned at the line, 11px.
		w := float64(len(s.VLine.Label)) * 6.8
		obstacles = append(obstacles, box{s.VLine.Pos - 4 - w, s.Top, s.VLine.Pos - 4, s.Top + 14})
	}
	place := func(x, y, r float64, n int, charWidth, height float64) (float64, float64, bool) {
		w := float64(n) * charWidth
		for _, spot := range labelSpots(x, y, r, w, height) {
			b := textBox(spot[0], spot[1], n, charWidth, height)
			if !b.within(plot) {
				continue
			}
			free := true
			for _, o := range obstacles {
				if b.overlaps(o) {
					free = false
					break
				}
			}
			if free {
				obstacles = append(obstacles, b)
				return round1(spot[0]), round1(spot[1]), true
			}
		}
		return 0, 0, false
	}
	for _, p := range s.Points {
		if !p.Recommended {
			continue
		}
		text := p.Label + " " + recommended
		if x, y, ok := place(p.X, p.Y, recPointRadius, len([]rune(text)), recCharWidth, recHeight); ok {
			s.HasRec, s.RecLabel, s.RecLabelX, s.RecLabelY = true, text, x, y
		}
	}
	for i, p := range s.Points {
		if p.Recommended {
			continue
		}
		if x, y, ok := place(p.X, p.Y, pointRadius, len([]rune(p.Label)), plabelCharWidth, plabelHeight); ok {
			s.Points[i].ShowLabel, s.Points[i].LabelX, s.Points[i].LabelY = true, x, y
		}
	}
}
