package cells

import (
	"encoding/csv"
	"slices"
	"strings"
	"testing"
)

func TestWholeAndNumber(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		err  string
	}{
		{"2048", 2048, ""}, {"2048.0", 2048, ""}, {"4e3", 4000, ""}, {"0", 0, ""},
		{"-1", 0, "negative"}, {"1.5", 0, "not a whole number"}, {"x", 0, "not a whole number"},
		{"NaN", 0, "not a whole number"}, {"1e30", 0, "too large"}, {"1001", 0, "too large"},
	} {
		got, err := Whole(tc.in, 1000000)
		if tc.in == "1001" {
			got, err = Whole(tc.in, 1000)
		}
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) || got != tc.want {
			t.Errorf("Whole(%q) = %d, %v; want %d, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{{"1.5", 1.5, true}, {"0", 0, true}, {"-0.5", 0, false}, {"Inf", 0, false}, {"", 0, false}} {
		got, err := Number(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Number(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestNearestBlankCSV(t *testing.T) {
	known := []string{"seq", "micro_batch", "recompute"}
	if got := Nearest("micro_bach", known, 2); got != "micro_batch" {
		t.Errorf("Nearest(micro_bach) = %q", got)
	}
	if got := Nearest("zzzzzzzz", known, 2); got != "" {
		t.Errorf("Nearest(zzzzzzzz, 2) = %q, want none", got)
	}
	if got := Nearest("zzzzzzzz", known, -1); got == "" {
		t.Error("Nearest without a limit returned none")
	}
	if !Blank([]string{" ", ""}) || Blank([]string{"", "x"}) {
		t.Error("Blank is wrong")
	}
	_, err := csv.NewReader(strings.NewReader("a,b\n\"x,y\n")).ReadAll()
	if got := CSVError(err).Error(); !strings.HasPrefix(got, "line 2: ") || strings.Contains(got, "record on line") {
		t.Errorf("CSVError = %q", got)
	}
}

func TestHeaderNames(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
		empty    int
	}{
		{[]string{"\ufeffID", " Model ", "SEQ"}, []string{"id", "model", "seq"}, 0},
		{[]string{"id", "  ", "x", ""}, []string{"id", "", "x", ""}, 2},
		{[]string{"a\ufeff"}, []string{"a\ufeff"}, 0}, // only a leading mark is dropped
	} {
		got := append([]string(nil), tc.in...)
		if empty := HeaderNames(got); empty != tc.empty || !slices.Equal(got, tc.want) {
			t.Errorf("HeaderNames(%q) = %q, %d; want %q, %d", tc.in, got, empty, tc.want, tc.empty)
		}
	}
}
