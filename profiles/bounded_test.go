package profiles

import (
	"testing"
	"time"

	"github.com/meshplan/meshplan/internal/bounded/boundedtest"
)

// TestLoadFlood feeds Load 100 MB through a pipe: it must refuse within
// 2 s in one line, whatever the bytes.
func TestLoadFlood(t *testing.T) {
	for name, chunk := range boundedtest.Floods() {
		t.Run(name, func(t *testing.T) {
			// A cluster file is known by its extension: /dev/fd/N/. is
			// not a path, so the flood is named through a symlink.
			path := boundedtest.Link(t, boundedtest.Pipe(t, chunk), "cluster.yaml")
			start := time.Now()
			_, err := Load(path)
			boundedtest.Check(t, start, err, 1)
		})
	}
}
