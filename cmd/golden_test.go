package cmd

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Golden files pin the CLI's output. Outputs that do not depend on the cost
// and memory models (models, clusters, input errors) are compared byte for
// byte. Outputs that do (plans, explains, reports) are compared by shape,
// so that a change of the physics does not rewrite every golden file while
// the targeted tests of cost, memory and search pin the numbers: the text
// must be the same once numbers and strategy strings are masked and runs of
// blanks (table alignment) and of repeated rows (a front of another length)
// are collapsed; and where a line of the output has as many numbers as the
// golden's, each must be within numberTolerance of the golden's, which
// catches a unit or order-of-magnitude error.

// numberTolerance is the largest ratio between a number of the output and
// the golden's (both ways) that shapeDiff accepts.
const numberTolerance = 3.0

var (
	// numberRE matches a decimal number, with sign, fraction and exponent.
	numberRE = regexp.MustCompile(`[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?`)
	// specRE matches a strategy string (or a mesh value) such as
	// "dp=2,tp=8,mesh=tp:gpu*8;dp:node*2".
	specRE = regexp.MustCompile(`\b(?:dp|zero|fsdp|tp|sp|cp|pp|ep|mb|schedule|v|recompute|mesh)=[^\s"|<>]*`)
	// blanksRE matches runs of spaces and tabs.
	blanksRE = regexp.MustCompile(`[ \t]+`)
)

// specItemSep joins the items of a strategy string in the HTML report
// (results.specHTML); shapeOf removes it, so that a strategy of another
// number of items masks to the same SPEC.
const specItemSep = `</span><wbr><span class="tok">`

// shapeOf returns the masked lines of text: strategy strings become SPEC,
// numbers N, blank runs one space; consecutive equal masked lines are kept
// once. The second result holds each kept line's numbers.
func shapeOf(text string) (lines []string, numbers [][]float64) {
	for _, l := range strings.Split(text, "\n") {
		l = strings.ReplaceAll(l, specItemSep, "")
		l = specRE.ReplaceAllString(l, "SPEC")
		var nums []float64
		masked := numberRE.ReplaceAllStringFunc(l, func(s string) string {
			if v, err := strconv.ParseFloat(s, 64); err == nil {
				nums = append(nums, v)
			}
			return "N"
		})
		masked = strings.TrimSpace(blanksRE.ReplaceAllString(masked, " "))
		if len(lines) > 0 && lines[len(lines)-1] == masked {
			continue
		}
		lines = append(lines, masked)
		numbers = append(numbers, nums)
	}
	return lines, numbers
}

// shapeDiff reports how got differs from want in shape, or "" when it does
// not (see the comment at the top of this file).
func shapeDiff(got, want string) string {
	gl, gn := shapeOf(got)
	wl, wn := shapeOf(want)
	if len(gl) != len(wl) {
		return fmt.Sprintf("%d lines of shape, want %d", len(gl), len(wl))
	}
	for i := range gl {
		if gl[i] != wl[i] {
			return fmt.Sprintf("line %d is\n  %s\nwant\n  %s", i+1, gl[i], wl[i])
		}
		if len(gn[i]) != len(wn[i]) {
			continue
		}
		for j := range gn[i] {
			if !closeNumbers(gn[i][j], wn[i][j]) {
				return fmt.Sprintf("line %d (%s): number %d is %g, want about %g (within a factor of %g)", i+1, gl[i], j+1, gn[i][j], wn[i][j], numberTolerance)
			}
		}
	}
	return ""
}

// closeNumbers reports whether a and b are within numberTolerance of each
// other with the same sign; numbers below 1e-9 are all equal.
func closeNumbers(a, b float64) bool {
	if a == b {
		return true
	}
	if math.Abs(a) < 1e-9 && math.Abs(b) < 1e-9 {
		return true
	}
	if (a < 0) != (b < 0) || a == 0 || b == 0 {
		return false
	}
	r := a / b
	return r <= numberTolerance && r >= 1/numberTolerance
}

// jsonShapeDiff compares two decoded JSON values by shape: the same keys,
// the same types, strings equal except strategy strings, numbers within
// numberTolerance, arrays both empty or both not, compared element-wise up
// to the shorter. It returns "" when they agree, else the path of the first
// difference.
func jsonShapeDiff(got, want any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path + ": not an object"
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				return path + "." + k + ": unexpected key"
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				return path + "." + k + ": missing"
			}
			if d := jsonShapeDiff(gv, w[k], path+"."+k); d != "" {
				return d
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			return path + ": not an array"
		}
		if (len(g) == 0) != (len(w) == 0) {
			return fmt.Sprintf("%s: %d elements, want %d", path, len(g), len(w))
		}
		for i := 0; i < min(len(g), len(w)); i++ {
			if d := jsonShapeDiff(g[i], w[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case string:
		g, ok := got.(string)
		if !ok {
			return path + ": not a string"
		}
		gm, wm := specRE.ReplaceAllString(g, "SPEC"), specRE.ReplaceAllString(w, "SPEC")
		if numberRE.ReplaceAllString(gm, "N") != numberRE.ReplaceAllString(wm, "N") {
			return fmt.Sprintf("%s: %q, want %q", path, g, w)
		}
	case float64:
		g, ok := got.(float64)
		if !ok {
			return path + ": not a number"
		}
		if !closeNumbers(g, w) {
			return fmt.Sprintf("%s: %g, want about %g", path, g, w)
		}
	default:
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Sprintf("%s: %v, want %v", path, got, want)
		}
	}
	return ""
}

// TestShapeDiff checks the shape comparison itself: what it accepts (a
// physics change: other numbers within the tolerance, another front
// length, other strategies) and what it rejects (other words, units,
// structure, an order-of-magnitude change).
func TestShapeDiff(t *testing.T) {
	want := "search   exhaustive: 10 of 20 strategies\n\n   RANK  STEP    MEMORY/CHIP  STRATEGY\n*  1     1.23 s  70.1 GB      dp=8,mesh=dp:x*8\n   2     1.50 s  60.0 GB      dp=4,tp=2\n"
	tests := []struct {
		name string
		got  string
		ok   bool
	}{
		{"same", want, true},
		{"other numbers and strategies", "search   exhaustive: 12 of 20 strategies\n\n   RANK  STEP    MEMORY/CHIP  STRATEGY\n*  1     1.5 s  65.1 GB      tp=8,pp=2\n   2     1.70 s  55.0 GB      fsdp=8\n", true},
		{"longer front", want + "   3     1.90 s  50.0 GB      fsdp=8\n", true},
		{"other unit", strings.Replace(want, "1.23 s", "1.23 ms", 1), false},
		{"other word", strings.Replace(want, "exhaustive", "evolve", 1), false},
		{"order of magnitude", strings.Replace(want, "70.1 GB", "701 GB", 1), false},
		{"missing column", strings.Replace(want, "  70.1 GB", "", 1), false},
	}
	for _, tt := range tests {
		if d := shapeDiff(tt.got, want); (d == "") != tt.ok {
			t.Errorf("%s: shapeDiff = %q, want ok=%v", tt.name, d, tt.ok)
		}
	}
	var a, b any
	a = map[string]any{"step_time_s": 1.2, "spec": "dp=8", "pareto": []any{1.0}, "fits": true}
	b = map[string]any{"step_time_s": 1.5, "spec": "tp=8,pp=2", "pareto": []any{2.0, 3.0}, "fits": true}
	if d := jsonShapeDiff(b, a, "$"); d != "" {
		t.Errorf("jsonShapeDiff of a physics change = %q", d)
	}
	b.(map[string]any)["fits"] = false
	if d := jsonShapeDiff(b, a, "$"); d == "" {
		t.Errorf("jsonShapeDiff accepts another verdict")
	}
	b.(map[string]any)["fits"] = true
	b.(map[string]any)["step_time_s"] = 12.0
	if d := jsonShapeDiff(b, a, "$"); d == "" {
		t.Errorf("jsonShapeDiff accepts a tenfold step time")
	}
}

// TestUpdateIsStable runs the golden cases whose output carries the
// search's wall time twice and wants -update to write the same bytes both
// times: go test ./cmd -update must not rewrite a golden file whose
// output did not change.
func TestUpdateIsStable(t *testing.T) {
	clearEnv(t)
	for _, args := range [][]string{
		{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64", "--top", "3", "--quiet", "--format", "json"},
		{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64", "--top", "3", "--quiet", "--tokens", "15T", "--price", "2.5", "--format", "json"},
	} {
		var texts [2]string
		for i := range texts {
			stdout, stderr, code := run(t, args...)
			texts[i] = pinned(render(args, code, stdout, stderr))
		}
		if texts[0] != texts[1] {
			t.Errorf("plan %s: two runs give different golden text:\n%s\n---\n%s", strings.Join(args, " "), texts[0], texts[1])
		}
		if !strings.Contains(texts[0], `"elapsed_s": 0,`) && !strings.Contains(texts[0], `"elapsed_s": 0`+"\n") {
			t.Errorf("plan %s: elapsed_s is not pinned:\n%s", strings.Join(args, " "), texts[0])
		}
	}
}
