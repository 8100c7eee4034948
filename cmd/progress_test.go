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
	p = &progress{w: &buf, label: "sweep", resumed: true, start: start, now: func() time.Time { return start.Add(2 * time.Second) }}
	p.update(2, 10) // 2 cells resumed: the bar covers 8
	p.update(6, 10)
	p.finish()
	if got := buf.String(); !strings.Contains(got, "sweep") || !strings.Contains(got, "50%") || !strings.Contains(got, "4/8") {
		t.Errorf("bar wrote %q, want a 50%% bar of 4/8", got)
	}
}

// TestProgressStages draws the bars of a two-stage search on a fake
// terminal (the struct forced on): the first stage, done, ends at 100% on
// its own line; the second, stopped early (Ctrl-C), ends where it stopped,
// on a newline.
func TestProgressStages(t *testing.T) {
	var buf bytes.Buffer
	start := time.Now()
	p := &progress{w: &buf, label: "searching v5p-1024", start: start, now: func() time.Time { return start.Add(2 * time.Second) }}
	p.stage("evolving")
	p.update(300, 1200)
	p.update(1200, 1200)
	p.stage("polishing")
	p.update(3, 16)
	p.finish()
	got := buf.String()
	for _, want := range []string{"searching v5p-1024: evolving 100%", "(1200/1200)", "searching v5p-1024: polishing", "(3/16)"} {
		if !strings.Contains(got, want) {
			t.Errorf("bars %q lack %q", got, want)
		}
	}
	if strings.Contains(got, "(16/16)") || !strings.HasSuffix(got, "\n") || strings.Count(got, "\n") != 2 {
		t.Errorf("bars %q: want the evolving bar done on its line, the polishing bar stopped at 3/16, and a final newline", got)
	}
}
