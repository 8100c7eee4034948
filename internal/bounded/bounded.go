// Package bounded reads the planner's input files within a stated size and
// reports their problems within a stated number of lines, so that no input,
// however large or hostile, makes the planner exhaust memory or flood its
// output. Every reader of a user's file (model, cluster, framework, --config,
// sweep configuration, runs and steps CSV) goes through Read or ReadFile:
// the size is checked on the bytes read, never on a stat, so pipes, FIFOs
// and /dev/stdin are bounded as regular files are.
package bounded

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// ConfigBytes is the size a configuration file may have: a model YAML or
// config.json, a cluster or framework YAML, a --config file or a sweep
// configuration. The largest Hugging Face config.json is tens of
// kilobytes.
const ConfigBytes = 1 << 20

// TableBytes is the size a CSV table of measurements may have (runs and
// steps for plan validate and plan calibrate).
const TableBytes = 16 << 20

// MaxProblems is the most lines a list of problems prints: the first
// MaxProblems-1 problems, then "and N more".
const MaxProblems = 20

// MaxProblemBytes is the length at which one problem's message is cut.
const MaxProblemBytes = 400

// TooLargeError is the error of a source holding more than MaxBytes.
type TooLargeError struct {
	// MaxBytes is the size the source may have.
	MaxBytes int64
}

// Error says the source is too large and what it may hold.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("it holds more than %s, the most it may have", Size(e.MaxBytes))
}

// Size writes a byte count for a message: "1 MiB", "16 MiB", "512 KiB" or
// "N bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// Read reads r to its end, but at most maxBytes+1 bytes: a source holding
// more than maxBytes is a *TooLargeError, whatever it is (a file, a pipe,
// a socket), and nothing past maxBytes+1 is read.
func Read(r io.Reader, maxBytes int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > maxBytes {
		return nil, &TooLargeError{MaxBytes: maxBytes}
	}
	return data, nil
}

// ReadFile opens path (a regular file, a FIFO, /dev/stdin, a process
// substitution) and reads it with Read. An error opening or reading the
// file is the cause alone (e.g. "no such file or directory"), without the
// path, which the caller names in its own message.
func ReadFile(path string, maxBytes int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return nil, errors.New("it is a directory, not a file")
	}
	data, err := Read(f, maxBytes)
	if err != nil {
		return nil, unwrapPath(err)
	}
	return data, nil
}

// unwrapPath returns the cause of an *os.PathError.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Problems returns at most MaxProblems lines for problems: each cut to
// MaxProblemBytes and identical ones kept once; when more than MaxProblems
// remain, the first MaxProblems-1 and a last line "and N more problems".
func Problems(problems []string) []string {
	seen := map[string]bool{}
	var unique []string
	for _, p := range problems {
		p = Cut(p, MaxProblemBytes)
		if !seen[p] {
			seen[p] = true
			unique = append(unique, p)
		}
	}
	if len(unique) <= MaxProblems {
		return unique
	}
	more := len(unique) - (MaxProblems - 1)
	return append(unique[:MaxProblems-1:MaxProblems-1], fmt.Sprintf("and %d more problems", more))
}

// ProblemsError is an error of several problems, at most MaxProblems, one
// a line.
type ProblemsError struct {
	// Problems are the lines of the error.
	Problems []string
}

// Error joins the problems, one a line.
func (e *ProblemsError) Error() string { return strings.Join(e.Problems, "\n") }

// Join is Problems as one *ProblemsError, each line after prefix; nil for
// none.
func Join(prefix string, problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	lines := Problems(problems)
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return &ProblemsError{Problems: lines}
}

// Cut returns s cut to at most maxBytes bytes on a rune boundary, with
// "..." when it was cut.
func Cut(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	i := maxBytes - 3
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
