// Package boundedtest feeds the planner's readers floods of input through
// a pipe, for the tests that hold each reader to the bounds of package
// bounded: an error within a deadline, a bounded number of message lines,
// no panic.
package boundedtest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FloodBytes is the size of a flood: 100 MB.
const FloodBytes = 100 << 20

// Floods returns the kinds of flood a reader must refuse, by name: random
// bytes, one key repeated, distinct unknown keys, each as a YAML line and
// as a JSON member (for config.json), and repeated CSV rows.
func Floods() map[string]func(i int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	return map[string]func(i int) string{
		"random bytes":      func(int) string { return string(random) },
		"repeated key":      func(int) string { return "x: 1\n" },
		"unknown keys":      func(i int) string { return fmt.Sprintf("key%d: 1\n", i) },
		"repeated json key": func(i int) string { return jsonSep(i) + `"x": 1` },
		"unknown json keys": func(i int) string { return fmt.Sprintf(`%s"key%d": 1`, jsonSep(i), i) },
		"csv rows":          func(int) string { return "a,b,c,d,e,f\n" },
	}
}

// jsonSep opens the JSON object before its first member and separates
// the others.
func jsonSep(i int) string {
	if i == 0 {
		return "{"
	}
	return ", "
}

// Pipe returns the path of the read end of a pipe (/dev/fd/N) into which a
// goroutine writes chunk(0), chunk(1), ... (64 KiB of them, then those
// from chunk(1) on again and again) up to FloodBytes. The writer
// stops when the test ends, which closes the read end, so that a reader
// that stops early leaves nothing running.
func Pipe(t testing.TB, chunk func(i int) string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// Two blocks of 64 KiB are built once, the first from chunk(0) on and
	// the next from chunk(1) on (no opening brace), and the second is
	// written again and again: a flood costs the writer next to nothing,
	// so that the test times the reader.
	block := func(from int) string {
		var b strings.Builder
		for i := from; b.Len() < 64<<10; i++ {
			b.WriteString(chunk(i))
		}
		return b.String()
	}
	first, next := block(0), block(1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer w.Close()
		data := first
		for written := 0; written < FloodBytes; data = next {
			n, err := w.WriteString(data)
			written += n
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		r.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the flood's writer did not stop after the reader closed the pipe")
		}
	})
	return fmt.Sprintf("/dev/fd/%d", r.Fd())
}

// Check fails t unless err is an error that arrived within 2 s of start
// and whose message has at most maxLines lines.
func Check(t testing.TB, start time.Time, err error, maxLines int) {
	t.Helper()
	if err == nil {
		t.Fatal("a 100 MB flood was read without an error")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing the flood took %v, more than 2s", d)
	}
	if n := strings.Count(err.Error(), "\n") + 1; n > maxLines {
		t.Errorf("the error has %d lines, more than %d: %.300s", n, maxLines, err)
	}
}

// Link returns the path of a symbolic link named name, in a temporary
// directory of the test, to target: for a reader that knows its files by
// their extension (.yaml, .csv).
func Link(t testing.TB, target, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	return path
}
