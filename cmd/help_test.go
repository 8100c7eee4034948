package cmd

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// helpText returns plan's --help with every run of white space one space.
func helpText(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := run(t, append(args, "--help")...)
	if code != ExitOK {
		t.Fatalf("%v --help: exit %d: %s", args, code, stderr)
	}
	return strings.Join(strings.Fields(stdout), " ")
}

// helpRule finds a rule --help states, by a pattern with groups.
func helpRule(t *testing.T, help, pattern string) []string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(help)
	if m == nil {
		t.Fatalf("--help no longer states the rule %s", pattern)
	}
	return m
}

// TestHelpStatesBehaviour holds the rules plan --help states to what plan
// does: --top K prints the K fastest rows, or down to the recommended row
// when it is slower; the default batch is the stated tokens per chip within
// the stated bounds, in whole sequences; and the exit codes.
func TestHelpStatesBehaviour(t *testing.T) {
	clearEnv(t)
	help := helpText(t)

	t.Run("top", func(t *testing.T) {
		helpRule(t, help, "--top K print the K fastest rows of the Pareto front, or down to the recommended row when it is slower")
		for _, c := range []struct {
			args []string
			top  int
		}{
			// The balanced rule recommends row 2 here: --top 1 prints 2 rows.
			{[]string{"--model", "llama70b", "--cluster", "v5p-256"}, 1},
			{[]string{"--model", "llama70b", "--cluster", "v5p-256"}, 3},
			// Row 5 here: --top 2 prints rows 1 to 5.
			{[]string{"--model", "llama3-405b", "--cluster", "h100-16384"}, 2},
			{[]string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64"}, 2},
		} {
			all := planRows(t, c.args...)
			rec := -1
			for i, r := range all {
				if r.Recommended {
					rec = i
				}
			}
			want := min(max(c.top, rec+1), len(all))
			got := planRows(t, append(c.args, "--top", strconv.Itoa(c.top))...)
			if len(got) != want {
				t.Errorf("%v --top %d: %d rows, want %d (the front has %d, the recommended is row %d)", c.args, c.top, len(got), want, len(all), rec+1)
			}
			for i, r := range got {
				if r.Rank != i+1 {
					t.Errorf("%v --top %d: row %d has rank %d, want the fastest rows in order", c.args, c.top, i+1, r.Rank)
				}
			}
			if rec >= 0 && (rec >= len(got) || !got[rec].Recommended) {
				t.Errorf("%v --top %d: the recommended row %d is not printed as recommended", c.args, c.top, rec+1)
			}
		}
	})

	t.Run("default batch", func(t *testing.T) {
		m := helpRule(t, help, `With neither, it is (\d+) tokens per chip, at least (\d+)Mi and at most (\d+)Mi tokens .*?, in whole sequences`)
		perChip, _ := strconv.Atoi(m[1])
		lo, _ := strconv.Atoi(m[2])
		hi, _ := strconv.Atoi(m[3])
		for _, c := range []struct {
			cluster, fix string
			chips        int
		}{
			{"h100-64", "tp=8,fsdp=8", 64},
			{"h100-4096", "tp=8,fsdp=512", 4096},
			{"h100-16384", "tp=8,fsdp=2048", 16384},
		} {
			const seq = 8192 // llama3-8b's seq_len
			tokens := min(max(perChip*c.chips, lo<<20), hi<<20)
			want := (tokens + seq/2) / seq
			stdout, stderr, code := run(t, "--model", "llama3-8b", "--cluster", c.cluster, "--fix", c.fix, "--format", "json")
			if code != ExitOK {
				t.Fatalf("%s: exit %d: %s", c.cluster, code, stderr)
			}
			var p struct {
				Batch struct {
					Sequences int    `json:"sequences"`
					Default   string `json:"default"`
				} `json:"batch"`
			}
			if err := json.Unmarshal([]byte(stdout), &p); err != nil {
				t.Fatal(err)
			}
			if p.Batch.Sequences != want || p.Batch.Default == "" {
				t.Errorf("%s: default batch %d sequences (%q), --help's rule gives %d", c.cluster, p.Batch.Sequences, p.Batch.Default, want)
			}
		}
	})

	t.Run("exit codes", func(t *testing.T) {
		m := helpRule(t, help, `Exit codes: (\d) success; (\d) nothing fits .*? or an internal error; (\d) bad input`)
		for _, c := range []struct {
			args []string
			code string
		}{
			{[]string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64"}, m[1]},
			{[]string{"--model", "llama3-405b", "--cluster", "h100-8"}, m[2]},
			{[]string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "-1"}, m[3]},
			{[]string{"--model", "no-such-model", "--cluster", "v5p-16"}, m[3]},
		} {
			if _, stderr, code := run(t, c.args...); strconv.Itoa(code) != c.code {
				t.Errorf("%v: exit %d, --help says %s: %s", c.args, code, c.code, stderr)
			}
		}
	})
}

// planRow is what TestHelpStatesBehaviour reads of a front row.
type planRow struct {
	Rank        int
	Recommended bool
}

// planRows runs plan with args and returns its front: each row's rank and
// whether it is the recommended one.
func planRows(t *testing.T, args ...string) []planRow {
	t.Helper()
	stdout, stderr, code := run(t, append(args, "--format", "csv")...)
	if code != ExitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	head := strings.Split(lines[0], ",")
	if len(head) < 2 || head[0] != "rank" || head[1] != "recommended" {
		t.Fatalf("CSV header %q does not start rank,recommended", lines[0])
	}
	var out []planRow
	for _, l := range lines[1:] {
		cells := strings.SplitN(l, ",", 3)
		rank, err := strconv.Atoi(cells[0])
		if err != nil {
			t.Fatalf("CSV row %q: %v", l, err)
		}
		out = append(out, planRow{Rank: rank, Recommended: cells[1] == "true"})
	}
	return out
}
