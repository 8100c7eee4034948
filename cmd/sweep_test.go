package cmd

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/results/sweep"
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
