package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshplan/meshplan/internal/bounded/boundedtest"
)

// TestFloodEveryReader feeds each file the CLI reads 100 MB through a
// pipe, as --model <(curl ...) does: exit 2 within 2 s, at most 20 lines
// of stderr, nothing on stdout.
func TestFloodEveryReader(t *testing.T) {
	clearEnv(t)
	readers := []struct {
		name string
		args func(path string) []string
		ext  string
	}{
		{"--config", func(p string) []string { return []string{"--config", p} }, ""},
		{"--model", func(p string) []string { return []string{"--model", p, "--cluster", "h100-8"} }, ""},
		{"--cluster", func(p string) []string { return []string{"--model", "llama3-8b", "--cluster", p} }, "cluster.yaml"},
		{"--framework", func(p string) []string {
			return []string{"--model", "llama3-8b", "--cluster", "h100-8", "--framework", p}
		}, "framework.yaml"},
		{"plan validate --runs", func(p string) []string { return []string{"validate", "--runs", p} }, ""},
		{"plan validate --steps", func(p string) []string { return []string{"validate", "--steps", p} }, ""},
		{"plan sweep --config", func(p string) []string { return []string{"sweep", "--config", p, "--out", t.TempDir()} }, ""},
	}
	floods := boundedtest.Floods()
	for _, r := range readers {
		for _, kind := range []string{"random bytes", "repeated key", "unknown keys"} {
			t.Run(r.name+"/"+kind, func(t *testing.T) {
				path := boundedtest.Pipe(t, floods[kind])
				if r.ext != "" {
					path = boundedtest.Link(t, path, r.ext)
				}
				start := time.Now()
				stdout, stderr, code := run(t, r.args(path)...)
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("took %v", d)
				}
				if code != ExitBadInput || stdout != "" {
					t.Errorf("exit %d, stdout %.200q, want exit 2 and no output; stderr %.300q", code, stdout, stderr)
				}
				if n := strings.Count(strings.TrimSuffix(stderr, "\n"), "\n") + 1; n > 20 {
					t.Errorf("%d lines of stderr: %.300q", n, stderr)
				}
				if !strings.Contains(stderr, "more than") {
					t.Errorf("stderr %.300q does not say the input is too large", stderr)
				}
			})
		}
	}
}

// TestRefusedLayerKindsExit2: a config.json of layers the planner does not
// model exits 2 naming the layer kind, with no plan.
func TestRefusedLayerKindsExit2(t *testing.T) {
	clearEnv(t)
	// Bamba's layers are not modelled yet (Nemotron-H, Jamba, Falcon-H1,
	// Qwen3-Next and Zamba2 are read since issue 44).
	bamba := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(bamba, []byte(`{"model_type": "bamba", "hidden_size": 4096, "num_hidden_layers": 32}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for file, kind := range map[string]string{
		bamba: `model_type "bamba" has state-space (Mamba) layers mixed with attention layers`,
		"../model/testdata/bert-base-uncased.config.json": `model_type "bert" has bidirectional encoder layers`,
	} {
		stdout, stderr, code := run(t, "--model", file, "--cluster", "h100-8")
		if code != ExitBadInput || stdout != "" || !strings.Contains(stderr, kind) {
			t.Errorf("%s: exit %d, stdout %.100q, stderr %q; want exit 2 naming %q", file, code, stdout, stderr, kind)
		}
	}
}

// TestSweepTooManyCells: a 10-million-cell grid exits 2 within 1 s,
// naming the count, and writes nothing.
func TestSweepTooManyCells(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	batches := make([]string, 1000)
	for i := range batches {
		batches[i] = fmt.Sprint(i + 1)
	}
	seqs := make([]string, 100)
	for i := range seqs {
		seqs[i] = fmt.Sprint(1024 * (i + 1))
	}
	cfg := filepath.Join(dir, "big.yaml")
	data := fmt.Sprintf("models: [llama3-8b, llama2-7b, llama3-70b, m3, m4, m5, m6, m7, m8, m9]\nclusters: [h100-8, c1, c2, c3, c4, c5, c6, c7, c8, c9]\nbatches: [%s]\nseqs: [%s]\n",
		strings.Join(batches, ", "), strings.Join(seqs, ", "))
	if err := os.WriteFile(cfg, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	start := time.Now()
	stdout, stderr, code := run(t, "sweep", "--config", cfg, "--out", out, "--quiet")
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
	if code != ExitBadInput || stdout != "" || !strings.Contains(stderr, "the sweep has 10000000 cells") || !strings.Contains(stderr, "--shard") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 naming 10000000 cells and --shard", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the sweep wrote %s: %v", out, err)
	}
}

// TestSweepUnwritableOut: a sweep that cannot write its --out directory
// (here a directory where its cells file goes, as a full or read-only disk
// would fail) exits 2 naming --out, as plan --out does, not 1.
func TestSweepUnwritableOut(t *testing.T) {
	clearEnv(t)
	out := t.TempDir()
	if err := os.Mkdir(filepath.Join(out, "cells-0-of-1.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, "sweep", "--config", "testdata/sweep-small.yaml", "--out", out, "--quiet")
	if code != ExitBadInput || !strings.Contains(stderr, "plan: --out "+out+": cannot write the sweep: ") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming --out", code, stderr)
	}
}
