package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress shows a long operation's progress on a terminal with a
// schollz/progressbar bar: percentage, count and the estimated time left.
// It stays hidden when quiet, when the writer is not a terminal, and during
// the operation's first second, so a short search prints nothing. An
// operation of several stages (an evolutionary search: evolving, then
// polishing) draws one bar per stage. A bar whose stage is done ends at
// 100% on its own line; one stopped before (an error, Ctrl-C) ends where
// it stopped, on a newline, so that what follows starts on a fresh line.
type progress struct {
	w     io.Writer
	label string
	// stageName is the current stage's, added to the label.
	stageName string
	off       bool
	start     time.Time
	now       func() time.Time
	// resumed makes the count done at a bar's first update (resumed sweep
	// cells) its base: the bar and its time estimate cover only the rest.
	resumed bool
	base    int64
	based   bool
	// done and total are the last update's.
	done, total int64
	// throttle is the least time between redraws.
	throttle time.Duration
	bar      *progressbar.ProgressBar
}

// newProgress returns a progress display on w; it is off when quiet or
// when w is not a terminal.
func newProgress(w io.Writer, label string, quiet bool) *progress {
	return &progress{w: w, label: label, off: quiet || !isTerminal(w), start: time.Now(), now: time.Now, throttle: 100 * time.Millisecond}
}

// stage starts a new stage named name: it ends the current bar, and the
// next update draws a new one, labelled with name, at once if the
// operation has already run a second.
func (p *progress) stage(name string) {
	p.end()
	p.stageName = name
	p.based = false
	p.done, p.total = 0, 0
}

// update shows done of total; it matches the search's progress callback.
func (p *progress) update(done, total int64) {
	if !p.based {
		p.base, p.based = 0, true
		if p.resumed {
			p.base = done
		}
	}
	p.done, p.total = done, total
	if p.off || total <= p.base {
		return
	}
	if p.bar == nil {
		if p.now().Sub(p.start) < time.Second || done >= total {
			return
		}
		label := p.label
		if p.stageName != "" {
			label += ": " + p.stageName
		}
		w := p.w
		p.bar = progressbar.NewOptions64(total-p.base,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(p.throttle),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		)
	}
	_ = p.bar.Set64(min(done, total) - p.base)
}

// updateInt is update for int counts (the sweep runner's callback).
func (p *progress) updateInt(done, total int) { p.update(int64(done), int64(total)) }

// end ends the current bar, if one is drawn: at 100% when its stage is
// done, else where it stopped; either way on a newline.
func (p *progress) end() {
	if p.bar == nil {
		return
	}
	if p.done >= p.total {
		_ = p.bar.Finish()
	} else {
		_ = p.bar.Exit()
	}
	p.bar = nil
}

// finish ends the operation's last bar (see end).
func (p *progress) finish() { p.end() }
