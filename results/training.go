package results

import (
	"fmt"
	"math"

	"github.com/meshplan/meshplan/internal/settings"
)

// Training is what it takes to train on a whole corpus: the number of
// tokens (--tokens) and, optionally, the price of one chip for one hour
// (--price). The zero Training asks for nothing, and results then carry
// no days, chip-hours or cost.
type Training struct {
	// Tokens is the number of training tokens; zero means not given.
	Tokens float64 `json:"tokens"`
	// PricePerChipHour is the price of one chip for one hour, in any
	// currency; zero means not given.
	PricePerChipHour float64 `json:"price_per_chip_hour,omitempty"`
	// Budget asks for the goodput and energy of every row (--goodput,
	// --deadline); nil leaves them out.
	Budget *Budget `json:"budget,omitempty"`
}

// Given reports whether a number of tokens was given.
func (t Training) Given() bool { return t.Tokens > 0 }

// Days is the wall time to train on t.Tokens at tokensPerS tokens per
// second: tokens / tokensPerS / 86400. It is +Inf for a zero rate.
func (t Training) Days(tokensPerS float64) float64 {
	if tokensPerS <= 0 {
		return math.Inf(1)
	}
	return t.Tokens / tokensPerS / 86400
}

// ChipHours is days x 24 x chips.
func (t Training) ChipHours(tokensPerS float64, chips int) float64 {
	return t.Days(tokensPerS) * 24 * float64(chips)
}

// Cost is ChipHours x PricePerChipHour.
func (t Training) Cost(tokensPerS float64, chips int) float64 {
	return t.ChipHours(tokensPerS, chips) * t.PricePerChipHour
}

// apply sets r's days, chip-hours and (with a price) cost for a cluster of
// chips; it leaves r alone when no tokens were given.
func (t Training) apply(r *Result, chips int) {
	if !t.Given() || r.TokensPerS <= 0 {
		return
	}
	days, ch := t.Days(r.TokensPerS), t.ChipHours(r.TokensPerS, chips)
	r.Days, r.ChipHours = &days, &ch
	if t.PricePerChipHour > 0 {
		c := ch * t.PricePerChipHour
		r.Cost = &c
	}
}

// ParseCount reads a count such as a number of tokens as
// settings.ParseWhole reads every whole number of the command line, a file
// or the environment: a plain integer (300000000000), a number with a
// decimal suffix K, M, B (or G) or T (15T, 300B, 2.5M; case-insensitive) or
// a binary one Ki, Mi, Gi or Ti (4Mi), or exponent form (2e12). The count
// must be a whole number of at least one: 1.5 is an error, not 2.
func ParseCount(s string) (float64, error) {
	n, err := settings.ParseWhole(s)
	if err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("%q is not a count of at least one", s)
	}
	return float64(n), nil
}

// Days formats a number of days: 3 significant digits, "d" for days
// ("47.3 d", "1.25 d").
func Days(d float64) string {
	if math.IsInf(d, 0) {
		return "never"
	}
	return sig3(d) + " d"
}

// Money formats an amount of money with a thousands suffix and no
// currency sign: 1.23M, 512K, 87.5.
func Money(v float64) string { return Count(v) }
