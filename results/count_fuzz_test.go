package results

import (
	"math"
	"testing"
)

// FuzzParseCount: a count either fails or is a positive, finite, whole number.
func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"15T", "300B", "2.5M", "2e12", "1_000", "0", "-5T", "1e400", "NaN", "0x10", " 7k "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseCount(s)
		if err != nil {
			return
		}
		if !(v > 0) || math.IsInf(v, 0) || v != math.Round(v) {
			t.Fatalf("ParseCount(%q) = %v", s, v)
		}
	})
}
