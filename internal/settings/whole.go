// Package settings reads the numbers and values a user gives to plan on the
// command line, in a YAML file (--config, a sweep configuration) or in a
// PLAN_ environment variable, the same way everywhere: whole numbers take
// the same suffixes (4M, 4Mi, 2.5K, 2e12) in every place, a fraction where
// a whole number is wanted is refused rather than truncated, and every
// error names the field, what was given and what is allowed, without the
// parser's own wording (strconv, mapstructure, viper).
package settings

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strings"
)

// suffixes are the multipliers a whole number may end with: decimal K, M,
// B (or G) and T, as --tokens always took them, and binary Ki, Mi, Gi and
// Ti, for batches of 4Mi = 4,194,304 tokens.
var suffixes = []struct {
	suffix string
	mult   int64
}{
	{"ki", 1 << 10}, {"mi", 1 << 20}, {"gi", 1 << 30}, {"ti", 1 << 40},
	{"k", 1e3}, {"m", 1e6}, {"b", 1e9}, {"g", 1e9}, {"t", 1e12},
}

// numberRE is a decimal number: sign, digits with an optional fraction,
// optional exponent. Underscores are removed before it is applied.
var numberRE = regexp.MustCompile(`^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$`)

// maxExponent bounds the decimal exponent ParseWhole accepts, far beyond
// any int64, so that no input makes it compute a huge power of ten.
const maxExponent = 40

// Hint is what a whole number may look like, for error messages.
const Hint = "write digits with an optional suffix K, M, B, T (10^3 to 10^12) or Ki, Mi, Gi, Ti (2^10 to 2^40), e.g. 512, 4M, 4Mi or 2e12"

// ParseWhole parses a whole number as a user writes one: digits, with _
// as a separator if wanted, in decimal or exponent form (2.5K, 1e6,
// 1_000), and an optional case-insensitive suffix from K, M, B (or G) and T
// (powers of 1000) or Ki, Mi, Gi and Ti (powers of 1024). The value must
// be a whole number within int64: "16.5" and "1.0001K" are errors, not 16
// and 1000. Errors start with the quoted input, e.g. `"4Q" is not a whole
// number; write ...`, so that a caller can prefix the field's name.
func ParseWhole(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, sf := range suffixes {
		if rest, ok := strings.CutSuffix(t, sf.suffix); ok && rest != "" {
			t, mult = rest, sf.mult
			break
		}
	}
	t = strings.ReplaceAll(t, "_", "")
	m := numberRE.FindStringSubmatch(t)
	if m == nil || m[2]+m[3] == "" {
		return 0, fmt.Errorf("%q is not a whole number; %s", s, Hint)
	}
	exp := 0
	if m[4] != "" {
		if _, err := fmt.Sscan(m[4], &exp); err != nil || exp > maxExponent || exp < -maxExponent {
			return 0, fmt.Errorf("%q is out of range", s)
		}
	}
	// value = digits × 10^(exp − len(fraction)) × mult, computed exactly.
	digits := strings.TrimLeft(m[2]+m[3], "0")
	if digits == "" {
		digits = "0"
	}
	v, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return 0, fmt.Errorf("%q is not a whole number; %s", s, Hint)
	}
	v.Mul(v, big.NewInt(mult))
	ten := big.NewInt(10)
	if e := exp - len(m[3]); e >= 0 {
		v.Mul(v, new(big.Int).Exp(ten, big.NewInt(int64(e)), nil))
	} else {
		q, r := new(big.Int).QuoRem(v, new(big.Int).Exp(ten, big.NewInt(int64(-e)), nil), new(big.Int))
		if r.Sign() != 0 {
			return 0, fmt.Errorf("%q is not a whole number", s)
		}
		v = q
	}
	if m[1] == "-" {
		v.Neg(v)
	}
	if !v.IsInt64() {
		return 0, fmt.Errorf("%q is out of range (at most %d)", s, int64(math.MaxInt64))
	}
	return v.Int64(), nil
}
