package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// Runner runs one shard of a sweep into a directory.
type Runner struct {
	// Dir is the output directory (created if needed).
	Dir string
	// Shard is the part of the grid this run owns; the zero value means Whole.
	Shard Shard
	// Resume continues the shard's file: finished cells are skipped and a
	// torn last line is removed and its cell redone. Without Resume a shard
	// file that already holds cells is an error.
	Resume bool
	// Jobs is the number of cells searched at once; zero means GOMAXPROCS.
	Jobs int
	// Solve searches one cell. It must be safe for concurrent use. A
	// returned error leaves the cell unwritten (to be redone by a resume).
	Solve func(ctx context.Context, c Cell) (Record, error)
	// Progress, when not nil, is called from one goroutine after each cell
	// is written (and once before the first) with the shard's cells done
	// (resumed ones included) and its total.
	Progress func(done, total int)
}

// Stats is what a run did.
type Stats struct {
	// Shard is the shard that ran.
	Shard Shard
	// Total is the number of cells of the shard, Resumed those found
	// finished in its file, Ran those searched by this run.
	Total, Resumed, Ran int
	// Errors counts the shard's cells (resumed or run) whose record is an
	// error, such as nothing fitting.
	Errors int
	// Torn reports that a torn last line was removed from the shard file.
	Torn bool
	// Elapsed is the wall time of this run's searches.
	Elapsed time.Duration
	// CellsFile and SummaryFile are the paths written.
	CellsFile, SummaryFile string
}

// CellsPerSecond is Ran over Elapsed.
func (s Stats) CellsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Ran) / s.Elapsed.Seconds()
}

// Run writes the manifest (or checks that the directory's is this
// sweep's), recovers the shard file when resuming, searches the shard's
// remaining cells Jobs at a time, appending each record as it finishes,
// and finally writes the shard's summary CSV in grid order.
func (r *Runner) Run(ctx context.Context, g *Grid) (Stats, error) {
	sh := r.Shard
	if sh.Count == 0 {
		sh = Whole
	}
	st := Stats{Shard: sh}
	if err := sh.Valid(); err != nil {
		return st, inputErr(err)
	}
	if r.Solve == nil {
		return st, errors.New("sweep: Runner.Solve is nil")
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return st, inputErr(fmt.Errorf("cannot create the --out directory %s: %w", r.Dir, err))
	}
	if err := writeManifest(r.Dir, NewManifest(g)); err != nil {
		return st, err
	}
	st.CellsFile = filepath.Join(r.Dir, sh.CellsFile())
	st.SummaryFile = filepath.Join(r.Dir, sh.SummaryFile())

	idx := sh.Indexes(len(g.Cells))
	st.Total = len(idx)
	pos := make(map[string]int, len(idx)) // key -> position in idx
	for p, i := range idx {
		pos[g.Cells[i].Key()] = p
	}
	recs := make([]*Record, len(idx))

	var lines []Line
	var err error
	if r.Resume {
		lines, st.Torn, err = Recover(st.CellsFile)
	} else {
		lines, _, err = ReadFile(st.CellsFile)
		if err == nil && len(lines) > 0 {
			err = inputErr(fmt.Errorf("%s already holds %d cells: pass --resume to continue it, or use another --out directory", st.CellsFile, len(lines)))
		}
	}
	if err != nil {
		return st, err
	}
	for _, l := range lines {
		p, ok := pos[l.Record.Cell.Key()]
		if !ok {
			return st, inputErr(fmt.Errorf("%s line %d: cell %s is not one of shard %s's cells: the file belongs to another sweep or shard count", st.CellsFile, l.No, l.Record.Cell, sh))
		}
		if recs[p] != nil {
			continue // a repeat; merge checks that repeats agree
		}
		rec := l.Record
		recs[p] = &rec
		st.Resumed++
	}

	var todo []int // positions in idx
	for p := range idx {
		if recs[p] == nil {
			todo = append(todo, p)
		}
	}
	done := st.Resumed
	if r.Progress != nil {
		r.Progress(done, st.Total)
	}
	if len(todo) > 0 {
		app, err := OpenAppender(st.CellsFile)
		if err != nil {
			return st, err
		}
		start := time.Now()
		runErr := r.runCells(ctx, g, idx, todo, func(p int, rec Record) error {
			if err := app.Append(rec); err != nil {
				return err
			}
			recs[p] = &rec
			st.Ran++
			done++
			if r.Progress != nil {
				r.Progress(done, st.Total)
			}
			return nil
		})
		st.Elapsed = time.Since(start)
		if err := app.Close(); err != nil && runErr == nil {
			runErr = err
		}
		if runErr != nil {
			return st, runErr
		}
	}

	ordered := make([]Record, len(recs))
	for p, rec := range recs {
		ordered[p] = *rec
		if rec.Error != "" {
			st.Errors++
		}
	}
	if err := WriteSummaryFile(st.SummaryFile, ordered); err != nil {
		return st, err
	}
	return st, nil
}

// result is one cell's outcome from a worker.
type result struct {
	pos int
	rec Record
	err error
}

// runCells searches the todo cells on Jobs workers and hands each record
// to write, from the calling goroutine, as it finishes. A failed write
// stops the run; a failed cell is reported after the others finish.
func (r *Runner) runCells(ctx context.Context, g *Grid, idx, todo []int, write func(p int, rec Record) error) error {
	jobs := r.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	jobs = min(jobs, len(todo))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	work := make(chan int)
	out := make(chan result)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				out <- r.solveOne(ctx, p, g.Cells[idx[p]])
			}
		}()
	}
	go func() {
		defer close(work)
		for _, p := range todo {
			select {
			case work <- p:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(out)
	}()

	var writeErr error
	var failed []error
	for res := range out {
		switch {
		case writeErr != nil:
			// Drain: the run is stopping.
		case res.err != nil:
			failed = append(failed, res.err)
		default:
			if err := write(res.pos, res.rec); err != nil {
				writeErr = err
				cancel()
			}
		}
	}
	if writeErr != nil {
		return writeErr
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sweep stopped: %w", err)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d cells failed and were not written (run again with --resume to retry them); the first: %w", len(failed), failed[0])
	}
	return nil
}

// solveOne runs Solve for one cell, turning a panic into an error.
func (r *Runner) solveOne(ctx context.Context, p int, c Cell) (res result) {
	res.pos = p
	defer func() {
		if v := recover(); v != nil {
			res.err = fmt.Errorf("cell %s: internal error: %v", c, v)
		}
	}()
	rec, err := r.Solve(ctx, c)
	if err != nil {
		res.err = err
		return res
	}
	if rec.Cell != c {
		res.err = fmt.Errorf("cell %s: the solver returned the record of cell %s", c, rec.Cell)
		return res
	}
	res.rec = rec
	return res
}

// InputError marks an error caused by the user's input (the configuration,
// the flags, or the files in the sweep directories) rather than by the
// run itself; the command line exits with status 2 for it.
type InputError struct{ Err error }

// Error returns the wrapped error's message.
func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *InputError) Unwrap() error { return e.Err }

// inputErr wraps err as an *InputError; nil stays nil.
func inputErr(err error) error {
	if err == nil {
		return nil
	}
	return &InputError{Err: err}
}
