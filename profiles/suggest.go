package profiles

import "strings"

// nearest returns the candidates at the smallest edit distance from s, if
// that distance is small enough to be a plausible typo (at most 2, or a
// third of the longer name).
func nearest(s string, candidates []string) []string {
	best := -1
	var out []string
	for _, c := range candidates {
		d := editDistance(s, c)
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

// editDistance is the Levenshtein distance between a and b in bytes. Inputs
// longer than 64 bytes are cut, which keeps the cost bounded for any input.
func editDistance(a, b string) int {
	const maxLen = 64
	if len(a) > maxLen {
		a = a[:maxLen]
	}
	if len(b) > maxLen {
		b = b[:maxLen]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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
		if d := editDistance(s, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
