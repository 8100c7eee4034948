package cmd

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readmeCommandLines returns the plan command lines of the README's sh
// blocks in order: continuation lines joined, comments dropped, the quick
// start's go run ./cmd/plan read as plan. The sweep section's loop and
// merge are left to TestREADMESweepSequence.
func readmeCommandLines(t *testing.T) []string {
	t.Helper()
	var lines []string
	for _, block := range readmeBlocks(t, "sh") {
		block = strings.ReplaceAll(block, "\\\n", " ")
		for _, line := range strings.Split(block, "\n") {
			if i := strings.Index(line, " #"); i >= 0 && !strings.Contains(line[:i], "'") {
				line = line[:i]
			}
			line = strings.Join(strings.Fields(line), " ")
			if rest, ok := strings.CutPrefix(line, "go run ./cmd/plan "); ok {
				line = "plan " + rest
			}
			if line == "plan" || strings.HasPrefix(line, "plan ") && !strings.HasPrefix(line, "plan sweep ") && !strings.HasPrefix(line, "plan merge ") {
				lines = append(lines, line)
			}
		}
	}
	return lines
}

// splitCommand splits a README command line into its arguments, reading
// single quotes as the shell does, and returns the file a trailing "> FILE"
// redirects stdout to.
func splitCommand(line string) (args []string, redirect string, err error) {
	var cur strings.Builder
	inArg, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inArg = !quoted, true
		case r == ' ' && !quoted:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quoted {
		return nil, "", fmt.Errorf("unbalanced quote in %q", line)
	}
	if inArg {
		args = append(args, cur.String())
	}
	if n := len(args); n >= 2 && args[n-2] == ">" {
		return args[:n-2], args[n-1], nil
	}
	return args, "", nil
}

// readmeFixtures writes, into dir, the files the README's commands name as
// the reader's own (my-model.yaml, my-runs.csv, my-steps.csv with its
// models/, nvfp4.yaml) from the repository's examples, and links the repository's
// validate folder for the commands that name its test data.
func readmeFixtures(t *testing.T, dir string) {
	t.Helper()
	for dst, src := range map[string]string{
		"my-model.yaml": "testdata/my-moe.yaml",
		"my-runs.csv":   "../validate/runs/testdata/published-runs.csv",
		"my-steps.csv":  "../validate/steps/testdata/measured-h100/train-steps.csv",
		"nvfp4.yaml":    "../framework/testdata/megatron-nvfp4.yaml",
	} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The steps name their models' config.json files in models/, beside
	// the CSV.
	for link, target := range map[string]string{
		"validate": filepath.Join("..", "validate"),
		"models":   filepath.Join("..", "validate", "steps", "testdata", "measured-h100", "models"),
	} {
		abs, err := filepath.Abs(target)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestREADMECommands runs every plan command of the README's sh blocks, in
// order and in one directory (the calibrate example writes the cluster
// file the next ones read), and wants each to exit 0.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every README command, calibrate included")
	}
	clearEnv(t)
	lines := readmeCommandLines(t)
	dir := t.TempDir()
	readmeFixtures(t, dir)
	t.Chdir(dir)
	if len(lines) < 20 {
		t.Fatalf("found %d README commands, want the README's 20 or more: %q", len(lines), lines)
	}
	for _, line := range lines {
		args, redirect, err := splitCommand(line)
		if err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := run(t, args[1:]...)
		if code != ExitOK {
			t.Errorf("%s: exit %d, want 0:\n%s", line, code, stderr)
			continue
		}
		if redirect != "" {
			if err := os.WriteFile(redirect, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// readmeText returns the README with every run of white space one space,
// so that a quoted sentence matches across its line breaks.
func readmeText(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(data)), " ")
}

// quoted is a figure the README quotes: its text (e.g. "38.1" or "1,508")
// read as a number.
func quoted(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		t.Fatalf("README figure %q: %v", s, err)
	}
	return v
}

// checkFigure wants the README's figure text to be got, rounded as the
// README prints it: within 1.5% (three significant digits round by at most
// 0.5%; a change of the model moves them by more), or within half a unit of
// its last digit for small figures.
func checkFigure(t *testing.T, what, text string, got float64) {
	t.Helper()
	want := quoted(t, text)
	unit := 1.0
	if i := strings.Index(text, "."); i >= 0 {
		unit = math.Pow(10, -float64(len(text)-i-1))
	}
	if d := math.Abs(got - want); d > 0.015*math.Abs(want) && d > unit/2+1e-9 {
		t.Errorf("the README says %s is %s; the output gives %.4g", what, text, got)
	}
}

// readmeJSON runs a README command line with --format json and decodes it.
func readmeJSON(t *testing.T, line string) map[string]any {
	t.Helper()
	args, _, err := splitCommand(line)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, append(args[1:], "--format", "json")...)
	if code != ExitOK {
		t.Fatalf("%s: exit %d:\n%s", line, code, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return v
}

// num reads a number at the dotted path of a decoded JSON object.
func num(t *testing.T, v map[string]any, path string) float64 {
	t.Helper()
	var cur any = v
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("JSON has no %s", path)
		}
		cur = m[k]
	}
	f, ok := cur.(float64)
	if !ok {
		t.Fatalf("JSON %s is %v, not a number", path, cur)
	}
	return f
}

// rows returns a plan's Pareto rows and the index of its recommended one.
func rows(t *testing.T, v map[string]any) ([]map[string]any, int) {
	t.Helper()
	list, _ := v["pareto"].([]any)
	out := make([]map[string]any, len(list))
	for i, r := range list {
		out[i], _ = r.(map[string]any)
	}
	return out, int(num(t, v, "recommended.rank")) - 1
}

// specOf is a row's strategy string without its mesh, as the README quotes it.
func specOf(r map[string]any) string {
	s, _ := r["strategy"].(map[string]any)
	spec, _ := s["spec"].(string)
	if i := strings.Index(spec, ",mesh="); i >= 0 {
		spec = spec[:i]
	}
	return spec
}

// TestREADMEFigures checks the figures the README quotes next to its
// example commands against what those commands print now: the recommended
// and the runner-up strategy of the balanced rule, the 405B time and cost to
// train, and DeepSeek-V3's published layout. Each claim is found in the
// README by a pattern, so that a reworded claim fails here rather than
// going unchecked.
func TestREADMEFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's example searches")
	}
	clearEnv(t)
	readme := readmeText(t)
	find := func(name, pattern string) []string {
		t.Helper()
		m := regexp.MustCompile(pattern).FindStringSubmatch(readme)
		if m == nil {
			t.Fatalf("the README no longer has the %s claim (pattern %s)", name, pattern)
		}
		return m
	}

	t.Run("balanced rule", func(t *testing.T) {
		m := find("balanced rule", "on `(plan [^`]+)` it recommends `([^`]+)` \\(([\\d.]+) s, ([\\d.]+) GB\\) over `([^`]+)` \\(([\\d.]+) s, ([\\d.]+) GB\\)")
		v := readmeJSON(t, m[1])
		rs, rec := rows(t, v)
		if got := specOf(rs[rec]); got != m[2] {
			t.Fatalf("%s recommends %s, the README says %s", m[1], got, m[2])
		}
		checkFigure(t, m[2]+"'s step time", m[3], num(t, rs[rec], "step_time_s"))
		checkFigure(t, m[2]+"'s memory", m[4], num(t, rs[rec], "memory_gb_per_chip"))
		for _, r := range rs {
			if specOf(r) == m[5] {
				checkFigure(t, m[5]+"'s step time", m[6], num(t, r, "step_time_s"))
				checkFigure(t, m[5]+"'s memory", m[7], num(t, r, "memory_gb_per_chip"))
				return
			}
		}
		t.Errorf("%s has no row %s, which the README compares with", m[1], m[5])
	})

	t.Run("time and cost to train", func(t *testing.T) {
		m := find("405B cost", "```sh (plan --model llama3-405b [^`]*?) ``` plans the default batch of (\\d+) sequences of (\\d+) tokens .*? the recommended row \\(([\\d.]+) s per step, ([\\d.]+)M tokens/s\\), ([\\d.]+) days, ([\\d.]+)M chip-hours and a cost of ([\\d.]+)M \\(80% band x([\\d.]+) to x([\\d.]+)\\); it is row (\\d+), within the band of the fastest, and holds ([\\d.]+) GB per GPU at an out-of-memory risk of ([\\d.]+)%")
		v := readmeJSON(t, m[1])
		checkFigure(t, "the batch", m[2], num(t, v, "batch.sequences"))
		checkFigure(t, "the sequence", m[3], num(t, v, "batch.seq_len"))
		rs, rec := rows(t, v)
		if fmt.Sprint(rec+1) != m[11] {
			t.Errorf("%s recommends row %d, the README says row %s", m[1], rec+1, m[11])
		}
		if num(t, rs[rec], "step_time_s") > num(t, v, "recommendation.band_step_time_s") {
			t.Errorf("%s recommends row %d, outside the band of the fastest", m[1], rec+1)
		}
		r := rs[rec]
		checkFigure(t, "the recommended step time", m[4], num(t, r, "step_time_s"))
		checkFigure(t, "the recommended tokens/s (M)", m[5], num(t, r, "tokens_per_s")/1e6)
		checkFigure(t, "the recommended days", m[6], num(t, r, "days"))
		checkFigure(t, "the recommended chip-hours (M)", m[7], num(t, r, "chip_hours")/1e6)
		checkFigure(t, "the recommended cost (M)", m[8], num(t, r, "cost")/1e6)
		band := r["step_time_s_range"].([]any)
		checkFigure(t, "the band's low end", m[9], band[0].(float64)/num(t, r, "step_time_s"))
		checkFigure(t, "the band's high end", m[10], band[1].(float64)/num(t, r, "step_time_s"))
		checkFigure(t, "the recommended memory", m[12], num(t, r, "memory_gb_per_chip"))
		checkFigure(t, "the out-of-memory risk (%)", m[13], 100*num(t, r, "oom_risk"))
	})

	t.Run("DeepSeek-V3", func(t *testing.T) {
		m := find("DeepSeek-V3", "about ([\\d,]+) tokens/s per GPU\\): ```sh (plan explain --model deepseek-v3 [^`]*?) ``` predicts ([\\d,]+) tokens/s per GPU \\(([-+\\d.]+)%\\): ([\\d.]+) s of compute \\(matmuls ([\\d.]+), attention ([\\d.]+), memory-bound ([\\d.]+), optimizer ([\\d.]+)\\), ([\\d.]+) s of exposed communication \\(([\\d.]+) s of it the MoE all-to-all DualPipe leaves exposed\\) and a ([\\d.]+) s bubble. Its memory comes out at ([\\d.]+) GB")
		line := strings.ReplaceAll(m[2], " \\ ", " ")
		v := readmeJSON(t, line)
		tps := num(t, v, "tokens_per_s_per_chip")
		checkFigure(t, "the tokens/s per GPU", m[3], tps)
		checkFigure(t, "the error against the published figure (%)", m[4], 100*(tps/quoted(t, m[1])-1))
		for i, path := range []string{"time.compute_s", "time.matmul_s", "time.attention_s", "time.memory_bound_s", "time.optimizer_s", "time.exposed_comm_s", "time.exposed_a2a_s", "time.bubble_s"} {
			checkFigure(t, path, m[5+i], num(t, v, path))
		}
		checkFigure(t, "the memory per GPU", m[13], num(t, v, "memory_gb_per_chip"))
	})
}
