package cmd

import (
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress shows a long operation's progress on a terminal with a
// schollz/progressbar bar: percentage, count and the estimated time left.
// It stays hidden when quiet, when the writer is not a terminal, and during
// the operation's first second, so a short search prints nothing.
type progress struct {
	w     io.Writer
	label string
	off   bool
	start time.Time
	now   func() time.Time
	// base is the count already done at the first update (resumed sweep
	// cells): the bar and its time estimate cover only the rest.
	base  int64
	based bool
	// throttle is the least time between redraws.
	throttle time.Duration
	bar      *progressbar.ProgressBar
}

// newProgress returns a progress display on w; it is off when quiet or
// when w is not a terminal.
func newProgress(w io.Writer, label string, quiet bool) *progress {
	return &progress{w: w, label: label, off: quiet || !isTerminal(w), start: time.Now(), now: time.Now, throttle: 100 * time.Millisecond}
}

// update shows done of total; it matches the search's progress callback.
func (p *progress) update(done, total int64) {
	if !p.based {
		p.base, p.based = done, true
	}
	if p.off || total <= p.base {
		return
	}
	if p.bar == nil {
		if p.now().Sub(p.start) < time.Second || done >= total {
			return
		}
		p.bar = progressbar.NewOptions64(total-p.base,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.label),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(p.throttle),
			progressbar.OptionClearOnFinish(),
		)
	}
	_ = p.bar.Set64(min(done, total) - p.base)
}

// updateInt is update for int counts (the sweep runner's callback).
func (p *progress) updateInt(done, total int) { p.update(int64(done), int64(total)) }

// finish erases the bar if it was drawn.
func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
}
