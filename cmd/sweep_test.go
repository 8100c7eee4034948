package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/sweep"
)

// canonicalJSONL returns the lines of a JSON-lines file without their
// elapsed fields and with sorted keys, one per line.
func canonicalJSONL(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		c, err := sweep.Canonical(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, string(c))
	}
	return out
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	_, stderr, code := run(t, args...)
	if code != ExitOK {
		t.Fatalf("plan %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return stderr
}

// A sweep run as two shards and merged gives the same cells and fronts, in
// the same order, as the same sweep run in one process.
func TestSweepShardsMergeLikeOneProcess(t *testing.T) {
	clearEnv(t)
	cfg := filepath.Join("testdata", "sweep-small.yaml")
	tmp := t.TempDir()
	whole, sharded := filepath.Join(tmp, "whole"), filepath.Join(tmp, "sharded")

	stderr := mustRun(t, "sweep", "--config", cfg, "--out", whole, "--quiet")
	if !strings.Contains(stderr, "shard 0/1: 24 cells (0 resumed, 24 run, ") {
		t.Errorf("stderr of the whole sweep: %s", stderr)
	}
	mustRun(t, "merge", whole, "--out", filepath.Join(tmp, "whole.jsonl"), "--summary", filepath.Join(tmp, "whole.csv"))
	mustRun(t, "sweep", "--config", cfg, "--out", sharded, "--shard", "0/2", "--jobs", "1", "--quiet")
	mustRun(t, "sweep", "--config", cfg, "--out", sharded, "--shard", "1/2", "--quiet")
	stderr = mustRun(t, "merge", sharded, "--out", filepath.Join(tmp, "sharded.jsonl"), "--summary", filepath.Join(tmp, "sharded.csv"))
	if !strings.Contains(stderr, "24 cells from 2 files") {
		t.Errorf("stderr of merge: %s", stderr)
	}

	want := canonicalJSONL(t, filepath.Join(tmp, "whole.jsonl"))
	got := canonicalJSONL(t, filepath.Join(tmp, "sharded.jsonl"))
	if len(want) != 24 {
		t.Fatalf("the whole sweep merged to %d lines, want 24", len(want))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sharded and merged sweep differs from the one-process sweep")
	}
	for _, name := range []string{"summary.csv"} {
		a, _ := os.ReadFile(filepath.Join(whole, name))
		b, _ := os.ReadFile(filepath.Join(tmp, "whole.csv"))
		c, _ := os.ReadFile(filepath.Join(tmp, "sharded.csv"))
		if len(a) == 0 || !bytes.Equal(a, b) || !bytes.Equal(a, c) {
			t.Errorf("summaries differ:\n%s\n%s\n%s", a, b, c)
		}
	}

	// A cell's plan is what plan --format json prints for the cell's flags.
	stdout, _, code := run(t, "--model", "llama2-7b", "--cluster", "h100-8", "--batch", "32", "--seq", "4096", "--fix", "tp=1", "--top", "3", "--format", "json", "--quiet")
	if code != 0 {
		t.Fatal(code)
	}
	planLine, err := sweep.Canonical([]byte(`{"cell":{"model":"llama2-7b","cluster":"h100-8","batch":32,"seq":4096,"fix":"tp=1"},"plan":` + stdout + `}`))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range want {
		found = found || l == string(planLine)
	}
	if !found {
		t.Errorf("no sweep line equals plan's own JSON for the same cell:\n%s", planLine)
	}
}

func TestSweepShardFromEnvironment(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	t.Setenv("JOB_COMPLETION_INDEX", "1")
	t.Setenv("JOB_COMPLETIONS", "3")
	stderr := mustRun(t, "sweep", "--config", filepath.Join("testdata", "sweep-small.yaml"), "--out", dir, "--quiet", "--search", "exhaustive")
	if !strings.Contains(stderr, "shard 1/3: 8 cells") {
		t.Errorf("stderr: %s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "cells-1-of-3.jsonl")); err != nil {
		t.Error(err)
	}
	// --shard wins over the environment.
	stderr = mustRun(t, "sweep", "--config", filepath.Join("testdata", "sweep-small.yaml"), "--out", dir, "--shard", "0/3", "--quiet", "--search", "exhaustive")
	if !strings.Contains(stderr, "shard 0/3: 8 cells") {
		t.Errorf("stderr: %s", stderr)
	}
}

func TestSweepGolden(t *testing.T) {
	for _, tc := range []goldenCase{
		{name: "sweep-error-no-out", args: []string{"sweep", "--config", "testdata/sweep-small.yaml"}, code: ExitBadInput},
		{name: "sweep-error-no-config", args: []string{"sweep", "--out", "testdata/nowhere"}, code: ExitBadInput},
		{name: "sweep-error-missing-config", args: []string{"sweep", "--config", "testdata/no-such.yaml", "--out", "testdata/nowhere"}, code: ExitBadInput},
		{name: "sweep-error-unknown-key", args: []string{"sweep", "--config", "testdata/sweep-unknown-key.yaml", "--out", "testdata/nowhere"}, code: ExitBadInput},
		{name: "sweep-error-bad-names", args: []string{"sweep", "--config", "testdata/sweep-bad-names.yaml", "--out", "testdata/nowhere"}, code: ExitBadInput},
		{name: "sweep-error-bad-shard", args: []string{"sweep", "--config", "testdata/sweep-small.yaml", "--out", "testdata/nowhere", "--shard", "2/2"}, code: ExitBadInput},
		{name: "sweep-error-bad-search", args: []string{"sweep", "--config", "testdata/sweep-small.yaml", "--out", "testdata/nowhere", "--search", "greedy"}, code: ExitBadInput},
		{name: "merge-error-not-a-sweep", args: []string{"merge", "testdata"}, code: ExitBadInput},
		{name: "merge-error-no-dir", args: []string{"merge"}, code: ExitBadInput},
	} {
		t.Run(tc.name, func(t *testing.T) { checkGolden(t, tc) })
	}
	if _, err := os.Stat(filepath.Join("testdata", "nowhere")); err == nil {
		t.Error("a failed sweep created its --out directory")
	}
}

// writeSweepConfig writes a one-cell sweep configuration (llama3-8b on
// h100-8, batch 16 x 4096, top 2) with the extra lines to a temporary
// directory and returns its path.
func writeSweepConfig(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sweep.yaml")
	data := "models: [llama3-8b]\nclusters: [h100-8]\nbatches: [16]\nseqs: [4096]\nsearch: {top: 2}\n" + extra
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sweepPlans returns the plans of a whole sweep's cells file, decoded.
func sweepPlans(t *testing.T, dir string) []map[string]any {
	t.Helper()
	lines, torn, err := sweep.ReadFile(filepath.Join(dir, sweep.Whole.CellsFile()))
	if err != nil || torn {
		t.Fatalf("cells file: torn %v, %v", torn, err)
	}
	var plans []map[string]any
	for _, l := range lines {
		if l.Record.Error != "" {
			t.Fatalf("cell %s: %s", l.Record.Cell, l.Record.Error)
		}
		var p map[string]any
		if err := json.Unmarshal(l.Record.Plan, &p); err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	return plans
}

// The framework key plans every cell under one profile: each plan names it
// and is the plan `plan --framework` prints, and the manifest records it.
func TestSweepFramework(t *testing.T) {
	clearEnv(t)
	dir := filepath.Join(t.TempDir(), "out")
	mustRun(t, "sweep", "--config", writeSweepConfig(t, "framework: megatron\n"), "--out", dir, "--quiet")

	plans := sweepPlans(t, dir)
	if len(plans) != 1 || plans[0]["framework"] != "megatron" {
		t.Fatalf("plans %v, want one naming megatron", plans)
	}
	man, err := sweep.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if man.Framework != "megatron" || man.FrameworkDigest != "" {
		t.Errorf("manifest framework %q, digest %q", man.Framework, man.FrameworkDigest)
	}

	// The cell's plan is plan's own for the same flags.
	stdout, stderr, code := run(t, "--model", "llama3-8b", "--cluster", "h100-8", "--batch", "16", "--seq", "4096", "--top", "2",
		"--framework", "megatron", "--format", "json", "--quiet")
	if code != ExitOK {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	want, err := sweep.Canonical([]byte(`{"cell":{"model":"llama3-8b","cluster":"h100-8","batch":16,"seq":4096,"fix":""},"plan":` + stdout + `}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := canonicalJSONL(t, filepath.Join(dir, sweep.Whole.CellsFile())); len(got) != 1 || got[0] != string(want) {
		t.Errorf("the sweep's line differs from plan --framework megatron's JSON:\n%v\n%s", got, want)
	}

	// Another framework, by flag or by environment, is another sweep.
	_, stderr, code = run(t, "sweep", "--config", writeSweepConfig(t, "framework: megatron\n"), "--out", dir, "--resume", "--quiet", "--framework", "torchtitan")
	if code != ExitBadInput || !strings.Contains(stderr, "belongs to another sweep (framework megatron, 1 cells") ||
		!strings.Contains(stderr, "this one has framework torchtitan") {
		t.Errorf("--framework torchtitan into a megatron sweep: exit %d: %s", code, stderr)
	}
	t.Setenv("PLAN_FRAMEWORK", "deepspeed")
	_, stderr, code = run(t, "sweep", "--config", writeSweepConfig(t, ""), "--out", dir, "--resume", "--quiet")
	if code != ExitBadInput || !strings.Contains(stderr, "this one has framework deepspeed") {
		t.Errorf("PLAN_FRAMEWORK=deepspeed into a megatron sweep: exit %d: %s", code, stderr)
	}
	// The same framework from the environment resumes the sweep.
	t.Setenv("PLAN_FRAMEWORK", "megatron")
	stderr = mustRun(t, "sweep", "--config", writeSweepConfig(t, ""), "--out", dir, "--resume", "--quiet")
	if !strings.Contains(stderr, "1 cells (1 resumed, 0 run") {
		t.Errorf("PLAN_FRAMEWORK=megatron resuming a megatron sweep: %s", stderr)
	}
}

// Without the key every plan names the generic profile, and a YAML
// profile's plans name the profile.
func TestSweepFrameworkDefaultAndFile(t *testing.T) {
	clearEnv(t)
	dir := filepath.Join(t.TempDir(), "generic")
	mustRun(t, "sweep", "--config", writeSweepConfig(t, ""), "--out", dir, "--quiet")
	if plans := sweepPlans(t, dir); len(plans) != 1 || plans[0]["framework"] != "generic" {
		t.Errorf("plans %v, want one naming generic", plans)
	}

	stack := filepath.Join(t.TempDir(), "my-stack.yaml")
	if err := os.WriteFile(stack, []byte("base: torchtitan\nattention_rate: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(t.TempDir(), "file")
	mustRun(t, "sweep", "--config", writeSweepConfig(t, ""), "--framework", stack, "--out", dir, "--quiet")
	if plans := sweepPlans(t, dir); len(plans) != 1 || plans[0]["framework"] != "my-stack" {
		t.Errorf("plans %v, want one naming my-stack", plans)
	}
	if man, err := sweep.ReadManifest(dir); err != nil || man.Framework != "my-stack" || man.FrameworkDigest == "" {
		t.Errorf("manifest %+v, %v", man, err)
	}
}

// An unknown framework is bad input, reported in one sentence naming the
// key, before anything runs.
func TestSweepFrameworkErrors(t *testing.T) {
	clearEnv(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("overlap: {weights: 1.5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, extra string
		args        []string
		want        string
	}{
		{"unknown name", "framework: megatorn\n", nil,
			`plan: framework "megatorn": unknown framework "megatorn" (nearest: megatron; known: generic, megatron, torchtitan, pytorch, maxtext, deepspeed, or a YAML file)`},
		{"unknown name by flag", "", []string{"--framework", "jax"}, `plan: framework "jax": unknown framework "jax" (nearest: maxtext;`},
		{"missing file", "framework: no-such-stack.yaml\n", nil,
			`plan: framework "no-such-stack.yaml": cannot read framework file no-such-stack.yaml: no such file or directory`},
		{"bad file", "framework: " + bad + "\n", nil, `framework "` + bad + `": file ` + bad + `: overlap.weights = 1.5 must be between 0 and 1`},
		{"not a name", "framework: [megatron]\n", nil, "plan: framework: a list is not a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"sweep", "--config", writeSweepConfig(t, tc.extra), "--out", out, "--quiet"}, tc.args...)
			stdout, stderr, code := run(t, args...)
			if code != ExitBadInput {
				t.Errorf("exit %d, want %d", code, ExitBadInput)
			}
			if stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSuffix(stderr, "\n"), "\n") != 0 {
				t.Errorf("stderr %q, want one line containing %q", stderr, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("the failed sweep created its --out directory")
			}
		})
	}
}
