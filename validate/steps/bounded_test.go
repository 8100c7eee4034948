package steps

import (
	"testing"
	"time"

	"github.com/meshplan/meshplan/internal/bounded/boundedtest"
)

// TestValidateFileFlood feeds ValidateFile 100 MB through a pipe: it must
// refuse within 2 s in one line, whatever the bytes.
func TestValidateFileFlood(t *testing.T) {
	for name, chunk := range boundedtest.Floods() {
		t.Run(name, func(t *testing.T) {
			path := boundedtest.Pipe(t, chunk)
			start := time.Now()
			_, err := ValidateFile(path, Options{})
			boundedtest.Check(t, start, err, 1)
		})
	}
}
