package cmd

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileModel is a small model whose name is a spreadsheet formula.
const hostileModel = "name: '=HYPERLINK(\"http://example.com/x\",\"click\")'\nlayers: 2\nhidden: 256\nheads: 4\nvocab: 1000\nseq_len: 128\n"

// escapeModel is a small model whose name carries a newline and a
// terminal escape sequence.
const escapeModel = "name: \"evil\\x1b[31m\\nname\\x07\"\nlayers: 2\nhidden: 256\nheads: 4\nvocab: 1000\nseq_len: 128\n"

// TestCSVFormulaInjection plans a model named like a formula and wants
// every CSV (plan, explain, the sweep summary) to carry it as text: the
// cell starts with a single quote.
func TestCSVFormulaInjection(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("hostile.yaml", []byte(hostileModel), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = `'=HYPERLINK("http://example.com/x","click")`
	cellsOf := func(t *testing.T, text string, column string) []string {
		t.Helper()
		rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("not CSV with rows: %v\n%s", err, text)
		}
		col := -1
		for i, h := range rows[0] {
			if h == column {
				col = i
			}
		}
		if col < 0 {
			t.Fatalf("no column %s in %v", column, rows[0])
		}
		var cells []string
		for _, r := range rows[1:] {
			cells = append(cells, r[col])
		}
		return cells
	}
	for _, args := range [][]string{
		{"--model", "hostile.yaml", "--cluster", "h100-8", "--batch", "8", "--top", "2", "--quiet", "--format", "csv"},
		{"explain", "--model", "hostile.yaml", "--cluster", "h100-8", "--batch", "8", "--strategy", "dp=8", "--format", "csv"},
	} {
		stdout, stderr, code := run(t, args...)
		if code != ExitOK {
			t.Fatalf("plan %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		for _, c := range cellsOf(t, stdout, "model") {
			if c != want {
				t.Errorf("plan %s: model cell %q, want %q", strings.Join(args, " "), c, want)
			}
		}
	}
	// The summary names a cell's model by its --model argument: a file
	// named like a formula.
	if err := os.WriteFile("=SUM(1,2).yaml", []byte(hostileModel), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := "models: ['=SUM(1,2).yaml']\nclusters: [h100-8]\nbatches: [8]\n"
	if err := os.WriteFile("sweep.yaml", []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, "sweep", "--config", "sweep.yaml", "--out", "out", "--quiet"); code != ExitOK {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	for _, name := range []string{"summary.csv"} {
		summary, err := os.ReadFile(filepath.Join("out", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cellsOf(t, string(summary), "model") {
			if c != "'=SUM(1,2).yaml" {
				t.Errorf("%s: model cell %q, want '=SUM(1,2).yaml", name, c)
			}
		}
	}
	if _, stderr, code := run(t, "merge", "out", "--out", "all.jsonl", "--summary", "merged.csv"); code != ExitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	merged, err := os.ReadFile("merged.csv")
	if err != nil {
		t.Fatal(err)
	}
	if c := cellsOf(t, string(merged), "model"); len(c) != 1 || c[0] != "'=SUM(1,2).yaml" {
		t.Errorf("merge --summary: model cells %q", c)
	}
}

// TestTerminalEscapes plans a model whose name carries a newline and
// escape sequences and wants the table, explain and models output (and
// any error) to show them escaped: no control byte reaches the terminal
// but newlines and tabs of the layout.
func TestTerminalEscapes(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	if err := os.WriteFile("escape.yaml", []byte(escapeModel), 0o644); err != nil {
		t.Fatal(err)
	}
	const shown = `"evil\x1b[31m\nname\a"`
	for _, args := range [][]string{
		{"--model", "escape.yaml", "--cluster", "h100-8", "--batch", "8", "--top", "1", "--quiet"},
		{"explain", "--model", "escape.yaml", "--cluster", "h100-8", "--batch", "8", "--strategy", "dp=8"},
		{"models", "escape.yaml"},
		{"--model", "escape.yaml", "--cluster", "h100-8", "--batch", "8", "--fix", "tp=3"},
	} {
		stdout, stderr, _ := run(t, args...)
		for _, out := range []string{stdout, stderr} {
			if bytes.ContainsFunc([]byte(out), func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' }) {
				t.Errorf("plan %s: a control character reaches the terminal: %q", strings.Join(args, " "), out)
			}
		}
		if args[0] != "--model" || args[len(args)-1] != "tp=3" {
			if !strings.Contains(stdout, shown) {
				t.Errorf("plan %s: the name is not shown as %s:\n%s", strings.Join(args, " "), shown, stdout)
			}
		}
	}
}
