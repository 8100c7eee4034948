package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
)

// readmeBlocks returns the fenced code blocks of the repository's README
// whose info string is lang, in order.
func readmeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	for _, line := range strings.SplitAfter(string(data), "\n") {
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
