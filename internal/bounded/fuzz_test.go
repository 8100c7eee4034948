package bounded

import (
	"strings"
	"testing"
)

// FuzzYAML: no input panics YAML, and its error has at most MaxProblems
// lines of at most MaxProblemBytes each.
func FuzzYAML(f *testing.F) {
	for _, s := range []string{"", "a: 1\n", "x: 1\nx: 2\n", "a: 1\n---\nb: 2\n", "a: &x {b: 1}\nc: *x\n", "[\n", "{a: {a: 1, a: 2}}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := YAML(data)
		if err == nil {
			return
		}
		if pe, ok := err.(*ProblemsError); ok {
			if len(pe.Problems) > MaxProblems {
				t.Errorf("%d problems", len(pe.Problems))
			}
			for _, p := range pe.Problems {
				if len(p) > MaxProblemBytes || strings.Contains(p, "\n") {
					t.Errorf("problem %q", p)
				}
			}
		}
	})
}
