package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// clearEnv unsets every PLAN_ variable the configuration reads, so that the
// developer's environment cannot change a test's output.
func clearEnv(t *testing.T) {
	t.Helper()
	keys, err := configKeys()
	if err != nil {
		t.Fatal(err)
	}
	for k := range keys {
		t.Setenv("PLAN_"+strings.ToUpper(k), "")
	}
}

// run executes the command line and returns its outputs and exit code.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Execute(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// goldenCase is one command line whose outputs are pinned in
// testdata/NAME.golden.
type goldenCase struct {
	name string
	args []string
	code int
	// json compares stdout as JSON values rather than bytes.
	json bool
	// shape compares outputs that depend on the cost and memory models by
	// shape (golden_test.go); numbers is false where even their magnitude
	// is not meaningful (the coordinates of an HTML chart).
	shape, noNumbers bool
}

// modelDependent reports whether the output of a golden case depends on
// the cost and memory models: plans, explains and the no-fit message.
func (tc goldenCase) modelDependent() bool {
	return strings.HasPrefix(tc.name, "plan-") || strings.HasPrefix(tc.name, "explain-") || tc.name == "error-no-fit"
}

// elapsedRE matches the search's wall time in JSON output.
var elapsedRE = regexp.MustCompile(`"elapsed_s": [0-9.eE+-]+`)

// pinned is the text -update writes: the wall time, which differs between
// runs, pinned at 0, so that rewriting unchanged goldens changes no byte.
func pinned(text string) string {
	return elapsedRE.ReplaceAllString(text, `"elapsed_s": 0`)
}

// render is the golden file's text: the command, its exit code, stdout and stderr.
func render(args []string, code int, stdout, stderr string) string {
	return fmt.Sprintf("$ plan %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", strings.Join(args, " "), code, stdout, stderr)
}

// parseGolden splits a golden file into its exit line, stdout and stderr.
func parseGolden(t *testing.T, text string) (head, stdout, stderr string) {
	t.Helper()
	i := strings.Index(text, "-- stdout --\n")
	j := strings.Index(text, "-- stderr --\n")
	if i < 0 || j < i {
		t.Fatalf("malformed golden file:\n%s", text)
	}
	return text[:i], text[i+len("-- stdout --\n") : j], text[j+len("-- stderr --\n"):]
}

func checkGolden(t *testing.T, tc goldenCase) {
	t.Helper()
	clearEnv(t)
	stdout, stderr, code := run(t, tc.args...)
	if code != tc.code {
		t.Errorf("plan %s: exit %d, want %d; stderr: %s", strings.Join(tc.args, " "), code, tc.code, stderr)
	}
	path := filepath.Join("testdata", tc.name+".golden")
	got := render(tc.args, code, stdout, stderr)
	if *update {
		if err := os.WriteFile(path, []byte(pinned(got)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -update to create it)", err)
	}
	want := string(data)
	shape := tc.shape || tc.modelDependent()
	if !tc.json {
		switch {
		case shape && tc.noNumbers:
			gl, _ := shapeOf(got)
			wl, _ := shapeOf(want)
			if strings.Join(gl, "\n") != strings.Join(wl, "\n") {
				t.Errorf("plan %s: output differs in structure from %s (run go test ./cmd -update to accept)\n--- got:\n%s\n--- want:\n%s",
					strings.Join(tc.args, " "), path, got, want)
			}
		case shape:
			if d := shapeDiff(got, want); d != "" {
				t.Errorf("plan %s: output differs in shape from %s: %s (run go test ./cmd -update to accept)\n--- got:\n%s\n--- want:\n%s",
					strings.Join(tc.args, " "), path, d, got, want)
			}
		case got != want:
			t.Errorf("plan %s: output differs from %s (run go test ./cmd -update to accept)\n--- got:\n%s\n--- want:\n%s",
				strings.Join(tc.args, " "), path, got, want)
		}
		return
	}
	gh, gout, gerr := parseGolden(t, got)
	wh, wout, werr := parseGolden(t, want)
	if gh != wh || gerr != werr {
		t.Errorf("plan %s: header or stderr differs from %s:\n%s%s\nwant:\n%s%s", strings.Join(tc.args, " "), path, gh, gerr, wh, werr)
	}
	var gv, wv any
	if err := json.Unmarshal([]byte(gout), &gv); err != nil {
		t.Fatalf("plan %s: stdout is not JSON: %v\n%s", strings.Join(tc.args, " "), err, gout)
	}
	if err := json.Unmarshal([]byte(wout), &wv); err != nil {
		t.Fatalf("%s: stdout is not JSON: %v", path, err)
	}
	dropElapsed(gv)
	dropElapsed(wv)
	if shape {
		if d := jsonShapeDiff(gv, wv, "$"); d != "" {
			t.Errorf("plan %s: JSON differs in shape from %s: %s (run go test ./cmd -update to accept)\n--- got:\n%s",
				strings.Join(tc.args, " "), path, d, gout)
		}
		return
	}
	if !reflect.DeepEqual(gv, wv) {
		t.Errorf("plan %s: JSON differs from %s (run go test ./cmd -update to accept)\n--- got:\n%s\n--- want:\n%s",
			strings.Join(tc.args, " "), path, gout, wout)
	}
}

// dropElapsed removes search.elapsed_s, the one field of a plan that
// differs between two runs, from a decoded plan object.
func dropElapsed(v any) {
	if m, ok := v.(map[string]any); ok {
		if s, ok := m["search"].(map[string]any); ok {
			delete(s, "elapsed_s")
		}
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range []goldenCase{
		{name: "models-table", args: []string{"models", "--format", "table"}},
		{name: "models-json-llama3-8b", args: []string{"models", "--format", "json", "llama3-8b"}, json: true},
		{name: "clusters-v5p-256-h100-1024", args: []string{"clusters", "v5p-256", "h100-1024"}},
		{name: "explain-llama3-8b-v5p-16", args: []string{"explain", "--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "32", "--strategy", "fsdp=8"}},
		{name: "explain-llama3-8b-v5p-16-json", args: []string{"explain", "--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "32", "--strategy", "fsdp=8", "--format", "json"}, json: true},
		{name: "error-unknown-preset", args: []string{"--model", "llama3-70", "--cluster", "v5p-256"}, code: ExitBadInput},
		{name: "error-unknown-strategy-key", args: []string{"explain", "--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "32", "--strategy", "fsdp=8,tpp=2"}, code: ExitBadInput},
		{name: "error-strategy-does-not-divide", args: []string{"explain", "--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "32", "--strategy", "dp=3,tp=3"}, code: ExitBadInput},
		{name: "error-unknown-yaml-key", args: []string{"models", "testdata/unknown-key.yaml"}, code: ExitBadInput},
		{name: "error-unknown-flag", args: []string{"models", "--colour"}, code: ExitBadInput},
		{name: "error-unknown-command", args: []string{"modles"}, code: ExitBadInput},
		{name: "error-bad-format", args: []string{"models", "--format", "xml"}, code: ExitBadInput},
		{name: "models-readme-yaml", args: []string{"models", "testdata/my-moe.yaml"}},
		{name: "clusters-readme-yaml", args: []string{"clusters", "testdata/my-h100s.yaml"}},
		{name: "plan-top-3", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64", "--top", "3", "--quiet"}},
		{name: "error-no-fit", args: []string{"--model", "llama3-405b", "--cluster", "h100-8", "--batch", "16", "--quiet"}, code: ExitNoFit},
		{name: "error-fix-does-not-divide", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--fix", "tp=3", "--quiet"}, code: ExitBadInput},
		{name: "error-negative-batch", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "-4"}, code: ExitBadInput},
		{name: "error-zero-batch", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "0", "--seq", "0"}, code: ExitBadInput},
		{name: "error-absurd-seq", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--seq", "99999999999"}, code: ExitBadInput},

		// Every output format of plan and explain (issue 5).
		{name: "plan-top-3-json", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64", "--top", "3", "--quiet", "--format", "json"}, json: true},
		{name: "plan-top-3-csv", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64", "--top", "3", "--quiet", "--format", "csv"}},
		{name: "plan-top-3-md", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64", "--top", "3", "--quiet", "--format", "md"}},
		{name: "plan-top-3-html", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64", "--top", "3", "--quiet", "--format", "html"}, noNumbers: true},
		{name: "plan-tokens-price", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64", "--top", "3", "--quiet", "--tokens", "15T", "--price", "2.5"}},
		{name: "plan-tokens-price-json", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64", "--top", "3", "--quiet", "--tokens", "15T", "--price", "2.5", "--format", "json"}, json: true},
		{name: "plan-tokens-price-csv", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64", "--top", "3", "--quiet", "--tokens", "300B", "--price", "1.2", "--format", "csv"}},
		{name: "plan-tokens-price-md", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64", "--top", "3", "--quiet", "--tokens", "2e12", "--price", "1.2", "--format", "md"}},
		{name: "explain-llama3-8b-v5p-16-csv", args: []string{"explain", "--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "32", "--strategy", "fsdp=8", "--format", "csv"}},
		{name: "explain-llama3-8b-v5p-16-md", args: []string{"explain", "--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "32", "--strategy", "fsdp=8", "--format", "md", "--tokens", "1T"}},
		{name: "explain-llama3-8b-v5p-16-html", args: []string{"explain", "--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "32", "--strategy", "fsdp=8", "--format", "html"}, noNumbers: true},
		{name: "explain-tokens-price", args: []string{"explain", "--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "32", "--strategy", "fsdp=8", "--tokens", "15T", "--price", "2.5"}},
		{name: "plan-clusters-range", args: []string{"--model", "llama3-8b", "--cluster", "h100-8..h100-32", "--batch", "64", "--quiet", "--tokens", "1T", "--price", "2"}},
		{name: "plan-clusters-list-csv", args: []string{"--model", "llama3-8b", "--cluster", "h100-8,h100-16,v5p-16", "--batch", "64", "--quiet", "--tokens", "1T", "--format", "csv"}},
		{name: "plan-clusters-list-md", args: []string{"--model", "llama3-8b", "--cluster", "h100-8,h100-16", "--batch", "64", "--quiet", "--top", "2", "--format", "md"}},
		{name: "plan-min-chips", args: []string{"--model", "llama3-70b", "--cluster", "h100-1024", "--min-chips", "--batch", "32", "--top", "3", "--quiet"}},
		{name: "emit-megatron", args: []string{"explain", "--model", "llama3-70b", "--cluster", "h100-512", "--batch", "512", "--strategy", "dp=8,zero=1,tp=8,cp=2,pp=4,schedule=interleaved,v=2,recompute=selective", "--emit", "megatron"}},
		{name: "emit-maxtext", args: []string{"explain", "--model", "llama3-8b", "--cluster", "2xv5p-64", "--batch", "64", "--strategy", "dp=2,fsdp=32,recompute=full", "--emit", "maxtext"}},
		{name: "emit-torchtitan", args: []string{"explain", "--model", "llama3-8b", "--cluster", "h100-64", "--batch", "64", "--strategy", "dp=2,fsdp=4,tp=8,recompute=full", "--emit", "torchtitan"}},
		{name: "emit-deepspeed", args: []string{"explain", "--model", "llama3-8b", "--cluster", "h100-8", "--batch", "32", "--strategy", "fsdp=8,mb=2", "--emit", "deepspeed"}},
		{name: "emit-megatron-fsdp", args: []string{"explain", "--model", "llama3-8b", "--cluster", "h100-64", "--batch", "64", "--strategy", "fsdp=8,tp=8", "--emit", "megatron"}},
		{name: "error-emit-megatron-dp-fsdp", args: []string{"explain", "--model", "llama3-8b", "--cluster", "h100-64", "--batch", "64", "--strategy", "dp=2,fsdp=4,tp=8", "--emit", "megatron"}, code: ExitBadInput},
		{name: "error-emit-deepspeed-tp-pp", args: []string{"explain", "--model", "llama3-8b", "--cluster", "h100-64", "--batch", "64", "--strategy", "tp=8,pp=8", "--emit", "deepspeed"}, code: ExitBadInput},
		{name: "error-bad-tokens", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--tokens", "15Q"}, code: ExitBadInput},
		{name: "error-price-without-tokens", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--price", "2"}, code: ExitBadInput},
		{name: "error-bad-emit", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--emit", "jax"}, code: ExitBadInput},
		{name: "error-cluster-range-chips", args: []string{"--model", "llama3-8b", "--cluster", "h100-8..v5p-64"}, code: ExitBadInput},
		{name: "error-cluster-range-power", args: []string{"--model", "llama3-8b", "--cluster", "h100-8..h100-24"}, code: ExitBadInput},
		{name: "error-models-csv", args: []string{"models", "--format", "csv"}, code: ExitBadInput},
		// The default batch, chosen from the cluster and stated in every output (issue 15).
		{name: "plan-default-batch", args: []string{"--model", "llama3-8b", "--cluster", "h100-4096", "--top", "2", "--quiet"}},
		{name: "plan-default-batch-json", args: []string{"--model", "llama3-8b", "--cluster", "h100-4096", "--top", "2", "--quiet", "--format", "json"}, json: true},
		{name: "plan-default-batch-csv", args: []string{"--model", "llama3-8b", "--cluster", "h100-4096", "--top", "2", "--quiet", "--format", "csv"}},
		{name: "plan-default-batch-md", args: []string{"--model", "llama3-8b", "--cluster", "h100-4096", "--top", "2", "--quiet", "--format", "md"}},
		{name: "plan-default-batch-list", args: []string{"--model", "llama3-8b", "--cluster", "h100-8,h100-8192", "--quiet"}},
		{name: "explain-default-batch", args: []string{"explain", "--model", "llama3-8b", "--cluster", "v5p-16", "--strategy", "fsdp=8"}},
		{name: "emit-default-batch", args: []string{"--model", "llama3-8b", "--cluster", "h100-8", "--quiet", "--emit", "megatron"}},
		// The measured single-H100 steps; compared by structure only, since a
		// small change of the models flips the sign of an error near zero.
		{name: "validate-steps-measured-h100", args: []string{"validate", "--steps", "../validate/steps/testdata/measured-h100/train-steps.csv"}, shape: true, noNumbers: true},
		// The published runs and memory as written (issue 38): numbers within
		// the shape tolerance; a row that becomes posable changes the shape.
		{name: "validate-published-runs-2", args: []string{"validate", "--runs", "../validate/runs/testdata/published-runs-2.csv"}, shape: true},
		{name: "validate-published-memory", args: []string{"validate", "--runs", "../validate/runs/testdata/published-memory.csv"}, shape: true},
	} {
		t.Run(tc.name, func(t *testing.T) { checkGolden(t, tc) })
	}
}
