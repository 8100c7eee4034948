package cmd

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	// A buffer is not a terminal: the bar stays off.
	p := newProgress(&buf, "searching", false)
	p.start = time.Now().Add(-2 * time.Second)
	p.update(5, 10)
	p.finish()
	if buf.Len() != 0 {
		t.Errorf("bar on a non-terminal wrote %q, want nothing", buf.String())
	}

	// Forced on: hidden during the first second and when done by then.
	start := time.Now()
	p = &progress{w: &buf, label: "searching", start: start, now: func() time.Time { return start }}
	p.update(0, 10)
	p.update(5, 10)
	p.update(10, 10)
	p.finish()
	if buf.Len() != 0 {
		t.Errorf("bar of a sub-second search wrote %q, want nothing", buf.String())
	}

	// Forced on after a second: draws the count of the part not resumed.
	p = &progress{w: &buf, label: "sweep", start: start, now: func() time.Time { return start.Add(2 * time.Second) }}
	p.update(2, 10) // 2 cells resumed: the bar covers 8
	p.update(6, 10)
	p.finish()
	if got := buf.String(); !strings.Contains(got, "sweep") || !strings.Contains(got, "50%") || !strings.Contains(got, "4/8") {
		t.Errorf("bar wrote %q, want a 50%% bar of 4/8", got)
	}
}
