package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMergeErrors(t *testing.T) {
	g := fakeGrid(12)
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		for i := range 2 {
			if _, err := (&Runner{Dir: dir, Shard: Shard{i, 2}, Solve: fakeSolve}).Run(context.Background(), g); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tc := range []struct {
		name    string
		edit    func(t *testing.T, dir string)
		wantErr string
		dropped int
	}{
		{"complete", func(*testing.T, string) {}, "", 0},
		{"identical repeat apart from elapsed_s", func(t *testing.T, dir string) {
			// The same shard run again into another file (e.g. as 0/1).
			other := t.TempDir()
			if _, err := (&Runner{Dir: other, Solve: fakeSolve}).Run(context.Background(), g); err != nil {
				t.Fatal(err)
			}
			copyFile(t, filepath.Join(other, "cells-0-of-1.jsonl"), filepath.Join(dir, "cells-0-of-1.jsonl"))
		}, "", 12},
		{"conflicting repeat", func(t *testing.T, dir string) {
			data, _ := os.ReadFile(filepath.Join(dir, "cells-0-of-2.jsonl"))
			line := strings.SplitAfter(string(data), "\n")[0]
			line = strings.Replace(line, `"front_size":1`, `"front_size":2`, 1)
			appendFile(t, filepath.Join(dir, "cells-1-of-2.jsonl"), line)
		}, "has conflicting results in", 0},
		{"hole", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "cells-1-of-2.jsonl"))
		}, "6 of the sweep's 12 cells are missing (m1 on c, batch 2 x 8;", 0},
		{"torn last line is a hole", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "cells-1-of-2.jsonl")
			data, _ := os.ReadFile(path)
			os.WriteFile(path, data[:len(data)-5], 0o644)
		}, "1 of the sweep's 12 cells are missing", 0},
		{"cell of another sweep", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, "cells-1-of-2.jsonl"), `{"cell":{"model":"zz","cluster":"c","batch":1,"seq":8,"fix":""},"error":"x"}`+"\n")
		}, "cell zz on c, batch 1 x 8 is not in the sweep", 0},
		{"no manifest", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, ManifestFile))
		}, "sweep.json is missing", 0},
		{"edited manifest", func(t *testing.T, dir string) {
			path := filepath.Join(dir, ManifestFile)
			data, _ := os.ReadFile(path)
			os.WriteFile(path, []byte(strings.Replace(string(data), `"m0"`, `"m9"`, 1)), 0o644)
		}, "was edited", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := setup(t)
			tc.edit(t, dir)
			m, err := Merge([]string{dir})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Lines) != 12 || m.Dropped != tc.dropped {
				t.Errorf("%d lines, %d dropped; want 12, %d", len(m.Lines), m.Dropped, tc.dropped)
			}
			for i, l := range m.Lines {
				if l.Record.Cell != g.Cells[i] {
					t.Errorf("line %d is cell %s, want %s (grid order)", i, l.Record.Cell, g.Cells[i])
				}
			}
		})
	}
	t.Run("different sweeps", func(t *testing.T) {
		a, b := setup(t), t.TempDir()
		if _, err := (&Runner{Dir: b, Solve: fakeSolve}).Run(context.Background(), fakeGrid(3)); err != nil {
			t.Fatal(err)
		}
		if _, err := Merge([]string{a, b}); err == nil || !strings.Contains(err.Error(), "are different sweeps") {
			t.Fatalf("error %v", err)
		}
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
