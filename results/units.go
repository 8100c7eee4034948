package results

import (
	"fmt"
	"math"
	"strconv"
)

// sig3 formats v with three significant digits and no exponent
// (70.6, 459, 8.03, 1.50); values of 1000 and more keep all integer digits.
func sig3(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	// Round to three significant digits first, so that 999.7 becomes 1000
	// and gets no decimals.
	e := math.Floor(math.Log10(math.Abs(v)))
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'e', 2, 64), 64)
	if math.Floor(math.Log10(math.Abs(r))) > e {
		e++
	}
	return strconv.FormatFloat(r, 'f', max(0, 2-int(e)), 64)
}

// scaled picks the largest prefix whose factor is at most |v| (after
// rounding to three significant digits) and formats v in it.
func scaled(v float64, prefixes []string, base float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'e', 2, 64), 64)
	i := 0
	for i < len(prefixes)-1 && math.Abs(r) >= math.Pow(base, float64(i+1)) {
		i++
	}
	return sig3(v/math.Pow(base, float64(i))) + prefixes[i]
}

// Count formats a parameter or token count with a decimal suffix: 70.6B,
// 8.03B, 512M, 4.19M, 1.20K, 37.0.
func Count(n float64) string {
	return scaled(n, []string{"", "K", "M", "B", "T"}, 1000)
}

// Bytes formats a byte count in decimal units (10^9 bytes = 1 GB): 95.7 GB.
func Bytes(b float64) string {
	return scaled(b, []string{" B", " KB", " MB", " GB", " TB", " PB"}, 1000)
}

// FLOPRate formats FLOP/s in decimal units: 459 TFLOP/s.
func FLOPRate(f float64) string {
	return scaled(f, []string{" FLOP/s", " kFLOP/s", " MFLOP/s", " GFLOP/s", " TFLOP/s", " PFLOP/s", " EFLOP/s"}, 1000)
}

// FLOPs formats a FLOP count in decimal units: 1.2 TFLOP.
func FLOPs(f float64) string {
	return scaled(f, []string{" FLOP", " kFLOP", " MFLOP", " GFLOP", " TFLOP", " PFLOP", " EFLOP"}, 1000)
}

// ByteRate formats a bandwidth in decimal units: 45 GB/s.
func ByteRate(b float64) string { return Bytes(b) + "/s" }

// Seconds formats a duration with three significant digits in s, ms or µs:
// 12.3 s, 450 ms, 7.50 µs.
func Seconds(s float64) string {
	switch a := math.Abs(s); {
	case a == 0:
		return "0 s"
	case a < 1e-3:
		return sig3(s*1e6) + " µs"
	case a < 1:
		return sig3(s*1e3) + " ms"
	default:
		return sig3(s) + " s"
	}
}

// Percent formats a fraction as a percentage with one decimal: 0.4512 -> 45.1%.
func Percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }
