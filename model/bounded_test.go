package model

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplan/meshplan/internal/bounded"
	"github.com/meshplan/meshplan/internal/bounded/boundedtest"
)

// TestLoadFlood feeds Load 100 MB through a pipe, as --model <(curl ...)
// does: it must refuse within 2 s in one line, whatever the bytes.
func TestLoadFlood(t *testing.T) {
	for name, chunk := range boundedtest.Floods() {
		t.Run(name, func(t *testing.T) {
			path := boundedtest.Pipe(t, chunk)
			start := time.Now()
			_, err := Load(path)
			boundedtest.Check(t, start, err, 1)
			if !strings.Contains(err.Error(), "more than 1 MiB") {
				t.Errorf("Load: %v, want the size named", err)
			}
		})
	}
}

// TestParseBoundedProblems holds the report of a file just under the size
// limit full of problems to bounded.MaxProblems lines.
func TestParseBoundedProblems(t *testing.T) {
	var unknown, dupJSON strings.Builder
	dupJSON.WriteString("{")
	for i := range 20_000 {
		fmt.Fprintf(&unknown, "key%d: 1\n", i)
		fmt.Fprintf(&dupJSON, `"k%d": 1, "k%d": 2, `, i%1000, i%1000)
	}
	dupJSON.WriteString(`"x": 1}`)
	tests := []struct {
		name string
		in   string
		json bool
	}{
		{"unknown keys", unknown.String(), false},
		{"repeated keys", strings.Repeat("x: 1\n", 100_000), false},
		{"repeated json keys", dupJSON.String(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.json {
				_, _, err = ParseHFWarnings([]byte(tt.in))
			} else {
				_, err = ParseYAML([]byte(tt.in))
			}
			if err == nil {
				t.Fatal("no error")
			}
			if n := strings.Count(err.Error(), "\n") + 1; n > bounded.MaxProblems {
				t.Errorf("%d lines, more than %d", n, bounded.MaxProblems)
			}
			if len(err.Error()) > bounded.MaxProblems*(bounded.MaxProblemBytes+20) {
				t.Errorf("%d bytes of error", len(err.Error()))
			}
		})
	}
}
