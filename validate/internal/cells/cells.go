// Package cells reads the cells of the CSV files the search packages take
// (published runs, measured steps): numbers, blank rows, CSV errors and the
// nearest known column name for a message.
package cells

import (
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
)

// CSVError keeps encoding/csv's line number without its "record on line N:"
// wording.
func CSVError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	return err
}

// Blank reports whether every cell of rec is empty (a trailing spreadsheet
// row).
func Blank(rec []string) bool {
	for _, v := range rec {
		if strings.TrimSpace(v) != "" {
			return false
		}
	}
	return true
}

// Whole reads a non-negative whole number of at most limit; "2048.0" and
// "4e6" are accepted when they are whole.
func Whole(v string, limit int) (int, error) {
	if n, err := strconv.Atoi(v); err == nil {
		switch {
		case n < 0:
			return 0, fmt.Errorf("%q is negative", v)
		case n > limit:
			return 0, fmt.Errorf("%q is too large", v)
		}
		return n, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x != math.Trunc(x):
		return 0, fmt.Errorf("%q is not a whole number", v)
	case x < 0:
		return 0, fmt.Errorf("%q is negative", v)
	case x > float64(limit):
		return 0, fmt.Errorf("%q is too large", v)
	}
	return int(x), nil
}

// Number reads a finite non-negative number.
func Number(v string) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil || math.IsNaN(x) || math.IsInf(x, 0):
		return 0, fmt.Errorf("%q is not a number", v)
	case x < 0:
		return 0, fmt.Errorf("%q is negative", v)
	}
	return x, nil
}

// Nearest returns the name of known closest to name in edit distance, or
// "" when none is within maxDist (a negative maxDist: no limit).
func Nearest(name string, known []string, maxDist int) string {
	best, bestD := "", math.MaxInt
	for _, k := range known {
		if d := levenshtein.ComputeDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	if maxDist >= 0 && bestD > maxDist {
		return ""
	}
	return best
}

// HeaderNames normalises a CSV header in place: names lower-cased and
// trimmed, a spreadsheet's byte-order mark dropped from the first. It
// returns the 1-based index of the first empty name, or 0.
func HeaderNames(header []string) (empty int) {
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(h))
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff")
		}
		header[i] = name
		if name == "" && empty == 0 {
			empty = i + 1
		}
	}
	return empty
}
