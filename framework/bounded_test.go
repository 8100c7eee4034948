package framework_test

import (
	"testing"
	"time"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/internal/bounded/boundedtest"
)

// TestLoadFlood feeds Load 100 MB through a pipe: it must refuse within
// 2 s in one line, whatever the bytes.
func TestLoadFlood(t *testing.T) {
	for name, chunk := range boundedtest.Floods() {
		t.Run(name, func(t *testing.T) {
			path := boundedtest.Link(t, boundedtest.Pipe(t, chunk), "framework.yaml")
			start := time.Now()
			_, err := framework.Load(path)
			boundedtest.Check(t, start, err, 1)
		})
	}
}
