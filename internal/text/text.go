// Package text holds the small text helpers the packages share: folding a
// message onto one line and the bounded edit distance behind "did you
// mean" suggestions.
package text

import (
	"strings"

	"github.com/agnivade/levenshtein"
)

// OneLine joins the lines of s with "; " and collapses every run of white
// space to one space, for a message that must stay on one line (a CSV
// cell, a sweep record, a one-line error).
func OneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// Squash collapses every run of white space in s, newlines included, to
// one space.
func Squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// MaxEditLen is the length in bytes up to which EditDistance compares
// strings; a longer one is cut there, which keeps the cost of a
// suggestion bounded whatever the input.
const MaxEditLen = 64

// EditDistance is the Levenshtein distance between a and b in runes, each
// cut to MaxEditLen bytes first.
func EditDistance(a, b string) int {
	if len(a) > MaxEditLen {
		a = a[:MaxEditLen]
	}
	if len(b) > MaxEditLen {
		b = b[:MaxEditLen]
	}
	return levenshtein.ComputeDistance(a, b)
}
