package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/text"
	"os"
)

// Record is one line of a sweep's output: the cell and either its plan
// (the object `plan --format json` prints) or the error that stopped it,
// such as nothing fitting.
type Record struct {
	Cell  Cell            `json:"cell"`
	Plan  json.RawMessage `json:"plan,omitempty"`
	Error string          `json:"error,omitempty"`
}

// Line is one parsed line of a sweep file.
type Line struct {
	// Record is the parsed line.
	Record Record
	// Raw is the line without its newline, byte for byte as in the file.
	Raw []byte
	// No is the 1-based line number.
	No int
}

// MarshalLine returns r as one compact JSON line with its newline.
func (r Record) MarshalLine() ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("sweep: encoding cell %s: %w", r.Cell, err)
	}
	return append(b, '\n'), nil
}

// parseRecord parses and checks one line.
func parseRecord(raw []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return Record{}, fmt.Errorf("not JSON: %s", text.OneLine(err.Error()))
	}
	if err := r.Cell.valid(); err != nil {
		return Record{}, err
	}
	hasPlan := len(r.Plan) > 0 && !bytes.Equal(r.Plan, []byte("null"))
	switch {
	case hasPlan && r.Error != "":
		return Record{}, errors.New(`it has both "plan" and "error"`)
	case !hasPlan && r.Error == "":
		return Record{}, errors.New(`it has neither "plan" nor "error"`)
	case hasPlan && (len(r.Plan) == 0 || r.Plan[0] != '{'):
		return Record{}, errors.New(`"plan" is not an object`)
	}
	return r, nil
}

// ParseLines parses the contents of a sweep file. Every line must end with
// a newline and parse as a Record, except the last one: when it has no
// newline or does not parse it is torn (a run was killed while writing it)
// and is reported by good, the length of the valid prefix of data, being
// less than len(data). A bad line before the last is an error naming its
// number.
func ParseLines(data []byte) (lines []Line, good int, err error) {
	off, no := 0, 0
	for off < len(data) {
		no++
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			// No newline: a torn last line, whether or not it parses.
			return lines, off, nil
		}
		raw := data[off : off+end]
		next := off + end + 1
		rec, perr := parseRecord(raw)
		if perr != nil {
			if next == len(data) {
				return lines, off, nil
			}
			return nil, 0, fmt.Errorf("line %d is not a sweep record: %w", no, perr)
		}
		lines = append(lines, Line{Record: rec, Raw: raw, No: no})
		off = next
	}
	return lines, off, nil
}

// ReadFile reads a sweep file with ParseLines. A missing file has no lines.
// torn reports a torn last line (left in the file).
func ReadFile(path string) (lines []Line, torn bool, err error) {
	lines, good, size, err := readLines(path)
	return lines, good < size, err
}

// readLines reads and parses the sweep file at path: its complete lines,
// the bytes they span and the file's size. A missing file is empty.
func readLines(path string) (lines []Line, good, size int, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, 0, nil
	}
	if err != nil {
		return nil, 0, 0, fmt.Errorf("reading %s: %w", path, err)
	}
	lines, good, err = ParseLines(data)
	if err != nil {
		return nil, 0, 0, inputErr(fmt.Errorf("%s: %w", path, err))
	}
	return lines, good, len(data), nil
}

// Recover reads the sweep file at path and truncates a torn last line, so
// that appending can continue after the last complete cell. It returns the
// complete lines and whether a torn line was removed.
func Recover(path string) (lines []Line, truncated bool, err error) {
	lines, good, size, err := readLines(path)
	if err != nil {
		return nil, false, err
	}
	if good == size {
		return lines, false, nil
	}
	if err := os.Truncate(path, int64(good)); err != nil {
		return nil, false, fmt.Errorf("removing the torn last line of %s: %w", path, err)
	}
	if err := syncPath(path); err != nil {
		return nil, false, err
	}
	return lines, true, nil
}

// Appender appends records to a sweep file, one full line per write,
// each followed by an fsync, so that a killed run loses no finished cell.
// It is not safe for concurrent use.
type Appender struct {
	f    *os.File
	path string
}

// OpenAppender opens (creating it if needed) the sweep file at path for
// appending.
func OpenAppender(path string) (*Appender, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return &Appender{f: f, path: path}, nil
}

// Append writes r as one line and syncs the file.
func (a *Appender) Append(r Record) error {
	line, err := r.MarshalLine()
	if err != nil {
		return err
	}
	if _, err := a.f.Write(line); err != nil {
		return fmt.Errorf("appending to %s: %w", a.path, err)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", a.path, err)
	}
	return nil
}

// Close closes the file.
func (a *Appender) Close() error {
	if err := a.f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", a.path, err)
	}
	return nil
}

// syncPath fsyncs the file at path.
func syncPath(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	return nil
}

// elapsedFields are the fields of a line that may differ between two runs
// of the same cell, as paths of object keys.
var elapsedFields = [][]string{{"plan", "search", "elapsed_s"}}

// Canonical returns raw (one line) without its elapsed fields and with
// object keys sorted, so that two runs of the same cell compare equal.
func Canonical(raw []byte) ([]byte, error) {
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	for _, path := range elapsedFields {
		m := v
		for i, k := range path {
			if i == len(path)-1 {
				delete(m, k)
				break
			}
			next, ok := m[k].(map[string]any)
			if !ok {
				break
			}
			m = next
		}
	}
	return json.Marshal(v)
}
