package cmd

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	// A buffer is not a terminal: the bar stays off.
	b := newProgressBar(&buf, "searching", false)
	b.start = time.Now().Add(-2 * time.Second)
	b.update(5, 10)
	b.finish()
	if buf.Len() != 0 {
		t.Errorf("bar on a non-terminal wrote %q, want nothing", buf.String())
	}

	// Forced on: hidden during the first second and when done by then.
	b = &progressBar{w: &buf, label: "searching", start: time.Now()}
	b.update(5, 10)
	b.update(10, 10)
	b.finish()
	if buf.Len() != 0 {
		t.Errorf("bar of a sub-second search wrote %q, want nothing", buf.String())
	}

	// Forced on after a second: draws, then erases its line.
	b = &progressBar{w: &buf, label: "searching", start: time.Now().Add(-2 * time.Second)}
	b.update(5, 10)
	b.finish()
	if got := buf.String(); !strings.Contains(got, "searching [") || !strings.Contains(got, " 50%") || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("bar wrote %q, want a 50%% bar then an erased line", got)
	}
}
