package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeGrid returns a grid of n cells for a fake solver.
func fakeGrid(n int) *Grid {
	g := &Grid{Search: Search{Method: "auto", Seed: 1}}
	for i := range n {
		g.Cells = append(g.Cells, Cell{Model: fmt.Sprintf("m%d", i%3), Cluster: "c", Batch: 1 + i, Seq: 8, Fix: ""})
	}
	return g
}

// fakeSolve is a deterministic solver with a random elapsed time; every
// fifth cell fits nowhere.
func fakeSolve(_ context.Context, c Cell) (Record, error) {
	if c.Batch%5 == 0 {
		return Record{Cell: c, Error: fmt.Sprintf("batch %d fits nowhere", c.Batch)}, nil
	}
	plan := fmt.Sprintf(`{"cluster":{"chips":%d},"search":{"method":"fake","elapsed_s":%g,"front_size":1},"recommended":0,"pareto":[{"strategy":{"spec":"dp=%d"},"step_time_s":%d}]}`,
		c.Batch*2, rand.Float64(), c.Batch, c.Batch)
	return Record{Cell: c, Plan: []byte(plan)}, nil
}

func mergeJSONL(t *testing.T, dirs ...string) string {
	t.Helper()
	m, err := Merge(dirs)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	return canonicalLines(t, buf.Bytes())
}

// canonicalLines returns the lines of data without their elapsed fields.
func canonicalLines(t *testing.T, data []byte) string {
	t.Helper()
	var b strings.Builder
	for _, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		c, err := Canonical(l)
		if err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		b.Write(c)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestShardsMergeToTheWhole(t *testing.T) {
	g := fakeGrid(23)
	whole := t.TempDir()
	st, err := (&Runner{Dir: whole, Solve: fakeSolve, Jobs: 4}).Run(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 23 || st.Ran != 23 || st.Errors != 4 {
		t.Errorf("stats %+v", st)
	}
	want := mergeJSONL(t, whole)
	if strings.Count(want, "\n") != 23 {
		t.Fatalf("whole run merged to %d lines", strings.Count(want, "\n"))
	}
	for _, n := range []int{2, 3, 30} {
		t.Run(fmt.Sprint(n, " shards in one directory"), func(t *testing.T) {
			dir := t.TempDir()
			for i := range n {
				if _, err := (&Runner{Dir: dir, Shard: Shard{i, n}, Solve: fakeSolve, Jobs: 3}).Run(context.Background(), g); err != nil {
					t.Fatal(err)
				}
			}
			if got := mergeJSONL(t, dir); got != want {
				t.Errorf("merged shards differ from the whole run:\n%s\nwant\n%s", got, want)
			}
		})
	}
	t.Run("shards in separate directories", func(t *testing.T) {
		dirs := []string{t.TempDir(), t.TempDir()}
		for i, dir := range dirs {
			if _, err := (&Runner{Dir: dir, Shard: Shard{i, 2}, Solve: fakeSolve}).Run(context.Background(), g); err != nil {
				t.Fatal(err)
			}
		}
		if got := mergeJSONL(t, dirs...); got != want {
			t.Errorf("merged shards differ from the whole run")
		}
	})
}

func TestResume(t *testing.T) {
	g := fakeGrid(10)
	dir := t.TempDir()
	// A first run stopped after four cells.
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	stopAfter4 := func(ctx context.Context, c Cell) (Record, error) {
		if calls.Add(1) > 4 {
			cancel()
			return Record{}, ctx.Err()
		}
		return fakeSolve(ctx, c)
	}
	_, err := (&Runner{Dir: dir, Solve: stopAfter4, Jobs: 1}).Run(ctx, g)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v, want context.Canceled", err)
	}
	path := filepath.Join(dir, Whole.CellsFile())
	lines, _, err := ReadFile(path)
	if err != nil || len(lines) != 4 {
		t.Fatalf("after the stopped run: %d lines, %v", len(lines), err)
	}
	// Tear the last line, as a kill during the write would.
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)-10], 0o644); err != nil {
		t.Fatal(err)
	}

	// Without --resume the file is refused.
	if _, err := (&Runner{Dir: dir, Solve: fakeSolve}).Run(context.Background(), g); err == nil || !strings.Contains(err.Error(), "pass --resume") {
		t.Fatalf("second run without resume: %v", err)
	}
	var ran atomic.Int32
	counting := func(ctx context.Context, c Cell) (Record, error) {
		ran.Add(1)
		return fakeSolve(ctx, c)
	}
	st, err := (&Runner{Dir: dir, Solve: counting, Resume: true}).Run(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Torn || st.Resumed != 3 || st.Ran != 7 || ran.Load() != 7 {
		t.Errorf("resume: %+v, %d solved; want torn, 3 resumed, 7 run", st, ran.Load())
	}
	lines, torn, err := ReadFile(path)
	if err != nil || torn || len(lines) != 10 {
		t.Fatalf("after resume: %d lines, torn %v, %v", len(lines), torn, err)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l.Record.Cell.Key()] {
			t.Errorf("cell %s twice", l.Record.Cell)
		}
		seen[l.Record.Cell.Key()] = true
	}
	// A finished shard resumes to nothing.
	st, err = (&Runner{Dir: dir, Solve: counting, Resume: true}).Run(context.Background(), g)
	if err != nil || st.Ran != 0 || st.Resumed != 10 {
		t.Errorf("resume of a finished shard: %+v, %v", st, err)
	}
	// The summary has a header and one row per cell.
	sum, err := os.ReadFile(filepath.Join(dir, "summary.csv"))
	if err != nil || bytes.Count(sum, []byte("\n")) != 11 {
		t.Errorf("summary.csv: %v\n%s", err, sum)
	}
}

func TestRunRefusesAnotherSweep(t *testing.T) {
	dir := t.TempDir()
	if _, err := (&Runner{Dir: dir, Solve: fakeSolve}).Run(context.Background(), fakeGrid(4)); err != nil {
		t.Fatal(err)
	}
	_, err := (&Runner{Dir: dir, Solve: fakeSolve, Resume: true}).Run(context.Background(), fakeGrid(5))
	var in *InputError
	if err == nil || !errors.As(err, &in) || !strings.Contains(err.Error(), "belongs to another sweep") {
		t.Fatalf("another sweep in the same directory: %v", err)
	}
	// The settings in words, never a Go struct.
	if msg := err.Error(); strings.ContainsAny(msg, "{}") || !strings.Contains(msg, "search method ") {
		t.Errorf("the mismatch prints a Go value: %s", msg)
	}
}

func TestRunCellFailures(t *testing.T) {
	g := fakeGrid(6)
	dir := t.TempDir()
	flaky := func(ctx context.Context, c Cell) (Record, error) {
		switch c.Batch {
		case 2:
			panic("boom")
		case 3:
			return Record{}, errors.New("disk on fire")
		case 4:
			return Record{Cell: Cell{Model: "other"}}, nil
		}
		return fakeSolve(ctx, c)
	}
	_, err := (&Runner{Dir: dir, Solve: flaky, Jobs: 2}).Run(context.Background(), g)
	if err == nil || !strings.Contains(err.Error(), "3 cells failed") {
		t.Fatalf("run with failing cells: %v", err)
	}
	lines, _, _ := ReadFile(filepath.Join(dir, Whole.CellsFile()))
	if len(lines) != 3 {
		t.Fatalf("%d cells written, want the 3 that worked", len(lines))
	}
	st, err := (&Runner{Dir: dir, Solve: fakeSolve, Resume: true}).Run(context.Background(), g)
	if err != nil || st.Ran != 3 {
		t.Fatalf("resume retries the failed cells: %+v, %v", st, err)
	}
}
