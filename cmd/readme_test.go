package cmd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/sweep"
)

// readmeBlocks returns the fenced code blocks of the repository's README
// whose info string is lang, in order.
func readmeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return fencedBlocks(string(data), lang)
}

// readmeSection returns the README's section under the heading line
// heading, up to the next heading of any level.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("the README has no heading %q", heading)
	}
	if i := regexp.MustCompile(`(?m)^#{1,6} `).FindStringIndex(rest); i != nil {
		rest = rest[:i[0]]
	}
	return rest
}

// fencedBlocks returns the fenced code blocks of the Markdown text whose
// info string is lang, in order.
func fencedBlocks(text, lang string) []string {
	var blocks []string
	var cur *strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && trimmed == "```"+lang:
			cur = &strings.Builder{}
		case cur != nil && trimmed == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	return blocks
}

// planBinary returns a directory holding the plan binary as "plan", to put
// first on PATH: the binary MESHPLAN_BIN names (CI's build, .ci/run) or
// one built for the test.
func planBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("MESHPLAN_BIN")
	if bin == "" {
		if testing.Short() {
			t.Skip("builds the binary and runs a sweep")
		}
		bin = buildPlan(t)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(abs, filepath.Join(dir, "plan")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runShell runs script with bash -euo pipefail in dir, with binDir first on
// PATH and no PLAN_ or batch scheduler variables, and returns its combined
// output and exit code.
func runShell(t *testing.T, bash, binDir, dir, script string) (string, int) {
	t.Helper()
	cmd := exec.Command(bash, "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = childEnv("PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	default:
		t.Fatalf("bash: %v", err)
		return "", -1
	}
}

// TestREADMESweepSequence runs the README's documented command sequence as
// a user would, with the plan binary on PATH: the first plan command of the
// quick start, then the sweep section's sweep.yaml and its shell block (the
// sweep with every shard, then the merge), and checks that the merge holds
// every cell of the grid once and the summary a row per cell. It also
// checks what the section says of a merge with a shard missing: exit 2,
// counting the missing cells. .ci/run runs it with its built binary.
func TestREADMESweepSequence(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	binDir := planBinary(t)

	var quick string
	for _, line := range strings.Split(readmeBlocks(t, "sh")[0], "\n") {
		// The quick start runs the command through go run; the binary
		// on PATH stands in for it.
		if rest, ok := strings.CutPrefix(line, "go run ./cmd/plan "); ok {
			line = "plan " + rest
		}
		if strings.HasPrefix(line, "plan ") {
			quick = line
			break
		}
	}
	if quick == "" {
		t.Fatal("the README's first sh block has no plan command")
	}
	if out, code := runShell(t, bash, binDir, t.TempDir(), quick+" --quiet"); code != 0 || !strings.Contains(out, "*") {
		t.Fatalf("%s: exit %d, want 0 and a recommended row:\n%s", quick, code, out)
	}

	section := readmeSection(t, "### `plan sweep` and `plan merge`")
	yamls, shells := fencedBlocks(section, "yaml"), fencedBlocks(section, "sh")
	if len(yamls) != 1 || len(shells) != 1 {
		t.Fatalf("the sweep section has %d yaml and %d sh blocks, want one of each", len(yamls), len(shells))
	}
	script := shells[0]
	if !strings.Contains(script, "plan sweep ") || !strings.Contains(script, "plan merge ") {
		t.Fatalf("the sweep section's commands lack plan sweep or plan merge:\n%s", script)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sweep.yaml"), []byte(yamls[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runShell(t, bash, binDir, dir, script); code != 0 {
		t.Fatalf("the README's sweep commands exit %d:\n%s\n%s", code, script, out)
	}
	man, err := sweep.ReadManifest(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	checkMerged(t, []string{"merge", filepath.Join(dir, "out"), "--out", filepath.Join(dir, "all.jsonl")})
	summary, err := os.ReadFile(filepath.Join(dir, "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(string(summary), "\n"); rows != len(man.Cells)+1 {
		t.Errorf("summary.csv has %d lines, want a header and %d cells", rows, len(man.Cells))
	}
	if n := len(man.Cells); n < 2 || n > 32 {
		t.Errorf("the README's sweep has %d cells: keep it a small grid of a few seconds", n)
	}

	// The loop runs every shard, 0 to N-1 of N; its first shard alone does
	// not merge: exit 2, counting the missing cells, as the section says.
	loop := regexp.MustCompile(`for (\w+) in ([\d ]+); do (.*--shard \$(\w+)/(\d+).*); done`).FindStringSubmatch(script)
	if loop == nil || loop[1] != loop[4] {
		t.Fatalf("the sweep section has no loop over --shard $i/N:\n%s", script)
	}
	ids := strings.Fields(loop[2])
	for i, id := range ids {
		if id != strconv.Itoa(i) {
			t.Fatalf("the loop runs shards %v, want 0 to N-1", ids)
		}
	}
	if loop[5] != strconv.Itoa(len(ids)) {
		t.Fatalf("the loop runs %d shards of %s", len(ids), loop[5])
	}
	first := loop[1] + "=0; " + loop[3]
	partial := t.TempDir()
	if err := os.WriteFile(filepath.Join(partial, "sweep.yaml"), []byte(yamls[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	one := first + "\nplan merge out/ --out all.jsonl --summary summary.csv"
	out, code := runShell(t, bash, binDir, partial, one)
	if code != ExitBadInput || !regexp.MustCompile(`\d+ of the sweep's \d+ cells are missing`).MatchString(out) {
		t.Errorf("one shard then merge: exit %d, want %d and the missing cells counted:\n%s\n%s", code, ExitBadInput, one, out)
	}
}

// TestREADMEGoVersion wants the README to state the Go version go.mod needs.
func TestREADMEGoVersion(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "Go " + string(m[1]) + " or later"
	if !strings.Contains(string(readme), want) {
		t.Errorf("the README does not say %q (go.mod: go %s)", want, m[1])
	}
	if !strings.Contains(string(readme), "go install ./cmd/plan") {
		t.Error("the README does not offer go install ./cmd/plan")
	}
}

// TestREADMEYAMLExamples checks the README's model and cluster examples
// against the files the golden tests read (models-readme-yaml,
// clusters-readme-yaml), and that the model example is not named like a
// preset: a reader would take its figures for the preset's.
func TestREADMEYAMLExamples(t *testing.T) {
	blocks := readmeBlocks(t, "yaml")
	find := func(prefix string) string {
		for _, b := range blocks {
			if strings.HasPrefix(b, prefix) {
				return b
			}
		}
		t.Fatalf("the README has no yaml block starting %q", prefix)
		return ""
	}
	for _, c := range []struct{ prefix, file string }{
		{"name: my-moe\n", "testdata/my-moe.yaml"},
		{"name: my-h100s ", "testdata/my-h100s.yaml"},
	} {
		want, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if got := find(c.prefix); got != string(want) {
			t.Errorf("the README's example differs from %s:\n%s\nwant:\n%s", c.file, got, want)
		}
	}
	s, err := model.ParseYAML([]byte(find("name: my-moe\n")))
	if err != nil {
		t.Fatalf("the README's model example does not parse: %v", err)
	}
	if _, err := model.Preset(s.Name); err == nil {
		t.Errorf("the README's model example is named %q, like a preset", s.Name)
	}
}

// citationRE matches a file a comment cites: a Markdown document or a Go
// source file, with or without a directory.
var citationRE = regexp.MustCompile(`[A-Za-z0-9_./-]+\.(?:md|go)\b`)

// TestDocCitations wants every Markdown or Go file that a comment of the
// module's non-test sources cites to exist, relative to the repository root
// or to the citing package, so that go doc never sends a reader to a file
// the repository lacks; and no comment to cite the shared reference/
// folder, which lies outside it.
func TestDocCitations(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			_, comment, ok := strings.Cut(line, "//")
			if !ok {
				continue
			}
			if strings.Contains(comment, "reference/") {
				t.Errorf("%s:%d cites the shared reference/ folder, which is not in the repository: %s", path, i+1, strings.TrimSpace(comment))
			}
			for _, cite := range citationRE.FindAllString(comment, -1) {
				cite = strings.TrimRight(cite, ".")
				if !strings.HasSuffix(cite, ".md") && !strings.HasSuffix(cite, ".go") {
					continue
				}
				_, errRoot := os.Stat(filepath.Join(root, cite))
				_, errPkg := os.Stat(filepath.Join(filepath.Dir(path), cite))
				if errRoot != nil && errPkg != nil {
					t.Errorf("%s:%d cites %s, which is in neither the repository root nor the package", path, i+1, cite)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
