package profiles

import (
	"github.com/meshplan/meshplan/internal/text"
	"strings"
)

// nearest returns the candidates at the smallest edit distance from s, if
// that distance is small enough to be a plausible typo (at most 2, or a
// third of the longer name).
func nearest(s string, candidates []string) []string {
	best := -1
	var out []string
	for _, c := range candidates {
		d := text.EditDistance(s, c)
		limit := max(2, max(len(s), len(c))/3)
		if d > limit {
			continue
		}
		switch {
		case best < 0 || d < best:
			best, out = d, []string{c}
		case d == best:
			out = append(out, c)
		}
	}
	return out
}

// orList joins words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// closest returns the shortest candidate that contains s (for abbreviated
// keys such as "hbm"), or else the candidate at the smallest edit distance.
func closest(s string, candidates []string) string {
	best, bestD := "", -1
	if len(s) >= 3 {
		for _, c := range candidates {
			if strings.Contains(c, s) && (best == "" || len(c) < len(best)) {
				best = c
			}
		}
		if best != "" {
			return best
		}
	}
	for _, c := range candidates {
		if d := text.EditDistance(s, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
