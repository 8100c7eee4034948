package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	lineA = `{"cell":{"model":"m","cluster":"c","batch":1,"seq":2,"fix":""},"plan":{"search":{"elapsed_s":0.5}}}`
	lineB = `{"cell":{"model":"m","cluster":"c","batch":2,"seq":2,"fix":""},"error":"does not fit"}`
)

func TestParseLines(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    string
		lines   int
		good    int
		wantErr string
	}{
		{"empty", "", 0, 0, ""},
		{"two lines", lineA + "\n" + lineB + "\n", 2, len(lineA) + len(lineB) + 2, ""},
		{"torn: no newline", lineA + "\n" + lineB[:20], 1, len(lineA) + 1, ""},
		{"torn: whole record without newline", lineA + "\n" + lineB, 1, len(lineA) + 1, ""},
		{"torn: last line does not parse", lineA + "\n" + "{\"cell\x00\x00\n", 1, len(lineA) + 1, ""},
		{"torn: blank last line", lineA + "\n\n", 1, len(lineA) + 1, ""},
		{"bad middle line", lineA + "\n{oops}\n" + lineB + "\n", 0, 0, "line 2 is not a sweep record"},
		{"middle line with plan and error", strings.Replace(lineA, `}}}`, `}},"error":"x"}`, 1) + "\n" + lineB + "\n", 0, 0, `both "plan" and "error"`},
		{"middle line with neither", `{"cell":{"model":"m","cluster":"c","batch":1,"seq":2}}` + "\n" + lineB + "\n", 0, 0, "neither"},
		{"middle line with a bad cell", `{"cell":{"model":"m","cluster":"c","batch":0,"seq":2},"error":"x"}` + "\n" + lineB + "\n", 0, 0, "cell.batch 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, good, err := ParseLines([]byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != tc.lines || good != tc.good {
				t.Errorf("%d lines, good %d; want %d, %d", len(lines), good, tc.lines, tc.good)
			}
		})
	}
}

func TestRecoverTruncatesTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cells-0-of-1.jsonl")
	if err := os.WriteFile(path, []byte(lineA+"\n"+lineB[:30]), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, truncated, err := Recover(path)
	if err != nil || !truncated || len(lines) != 1 {
		t.Fatalf("Recover: %d lines, truncated %v, %v", len(lines), truncated, err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != lineA+"\n" {
		t.Fatalf("file after Recover: %q", data)
	}
	// Appending continues on a line of its own.
	app, err := OpenAppender(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Append(Record{Cell: Cell{"m", "c", 2, 2, ""}, Error: "does not fit"}); err != nil {
		t.Fatal(err)
	}
	app.Close()
	lines, torn, err := ReadFile(path)
	if err != nil || torn || len(lines) != 2 {
		t.Fatalf("after append: %d lines, torn %v, %v", len(lines), torn, err)
	}
}

func TestCanonical(t *testing.T) {
	a := []byte(`{"plan":{"search":{"elapsed_s":0.1,"evaluated":3},"x":1.5},"cell":{"model":"m"}}`)
	b := []byte(`{"cell":{"model":"m"},"plan":{"x":1.5,"search":{"evaluated":3,"elapsed_s":9}}}`)
	c := []byte(`{"cell":{"model":"m"},"plan":{"x":1.50000001,"search":{"evaluated":3,"elapsed_s":9}}}`)
	ca, err1 := Canonical(a)
	cb, err2 := Canonical(b)
	cc, err3 := Canonical(c)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	if !bytes.Equal(ca, cb) {
		t.Errorf("lines that differ only in elapsed_s and key order differ:\n%s\n%s", ca, cb)
	}
	if bytes.Equal(ca, cc) {
		t.Error("lines with different numbers compare equal")
	}
}

func FuzzParseLines(f *testing.F) {
	f.Add([]byte(lineA + "\n" + lineB + "\n"))
	f.Add([]byte(lineA + "\n" + lineB[:17]))
	f.Add([]byte("\n\n{}\n"))
	f.Add([]byte(`{"cell":{"model":"m","cluster":"c","batch":1,"seq":2},"plan":null}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, good, err := ParseLines(data)
		if err != nil {
			return
		}
		if good < 0 || good > len(data) {
			t.Fatalf("good %d outside [0, %d]", good, len(data))
		}
		if good > 0 && data[good-1] != '\n' {
			t.Fatalf("the valid prefix does not end with a newline")
		}
		if bytes.Count(data[:good], []byte{'\n'}) != len(lines) {
			t.Fatalf("%d lines in a prefix of %d newlines", len(lines), bytes.Count(data[:good], []byte{'\n'}))
		}
		// The valid prefix parses to the same lines with nothing torn.
		again, good2, err := ParseLines(data[:good])
		if err != nil || good2 != good || len(again) != len(lines) {
			t.Fatalf("prefix reparsed: %d lines, good %d, %v", len(again), good2, err)
		}
		for _, l := range lines {
			if err := l.Record.Cell.valid(); err != nil {
				t.Fatalf("line %d accepted with %v", l.No, err)
			}
			if _, err := Canonical(l.Raw); err != nil {
				t.Fatalf("line %d accepted but not canonicalisable: %v", l.No, err)
			}
		}
	})
}
