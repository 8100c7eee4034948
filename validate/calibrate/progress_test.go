package calibrate

import (
	"sync"
	"testing"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/validate/runs"
)

// TestCalibrateProgress wants Calibrate's progress to count up, one call at
// a time, to its total, reached at the end.
func TestCalibrateProgress(t *testing.T) {
	rs, err := runs.Default()
	if err != nil {
		t.Fatal(err)
	}
	base, err := profiles.Parse("a100-64")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu          sync.Mutex
		inCall      bool
		last, total int64
		calls       int
	)
	// A short fit: few evaluations, no restarts, two folds.
	o := Options{MaxEvaluations: 40, Restarts: -1, Folds: 2, Progress: func(done, tot int64) {
		mu.Lock()
		if inCall {
			t.Error("progress called concurrently")
		}
		inCall = true
		mu.Unlock()
		if done < last || done > tot || total != 0 && tot != total {
			t.Errorf("progress %d/%d after %d/%d", done, tot, last, total)
		}
		last, total = done, tot
		calls++
		mu.Lock()
		inCall = false
		mu.Unlock()
	}}
	if _, err := Calibrate(rs, base, o); err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != total {
		t.Errorf("progress ended at %d of %d after %d calls", last, total, calls)
	}
}
