package bounded

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplan/meshplan/internal/bounded/boundedtest"
)

func TestRead(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		maxBytes int64
		want     string
		tooLarge bool
	}{
		{"empty", "", 4, "", false},
		{"under", "abc", 4, "abc", false},
		{"at the limit", "abcd", 4, "abcd", false},
		{"one over", "abcde", 4, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tt.in), tt.maxBytes)
			var tl *TooLargeError
			if errors.As(err, &tl) != tt.tooLarge {
				t.Fatalf("Read: err %v, want too large %v", err, tt.tooLarge)
			}
			if string(got) != tt.want {
				t.Errorf("Read = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadFileFlood(t *testing.T) {
	for name, chunk := range boundedtest.Floods() {
		t.Run(name, func(t *testing.T) {
			path := boundedtest.Pipe(t, chunk)
			start := time.Now()
			_, err := ReadFile(path, ConfigBytes)
			boundedtest.Check(t, start, err, 1)
			if want := "it holds more than 1 MiB, the most it may have"; err.Error() != want {
				t.Errorf("ReadFile: %v, want %q", err, want)
			}
		})
	}
}

func TestProblems(t *testing.T) {
	many := make([]string, 100)
	for i := range many {
		many[i] = fmt.Sprintf("p%d", i)
	}
	twenty := many[:20]
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"none", nil, nil},
		{"identical kept once", []string{"a", "b", "a"}, []string{"a", "b"}},
		{"twenty shown", twenty, twenty},
		{"hundred cut", many, append(append([]string{}, many[:19]...), "and 81 more problems")},
		{"long cut", []string{strings.Repeat("é", 300)}, []string{strings.Repeat("é", 198) + "..."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Problems(tt.in)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("Problems = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestYAML(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"empty", "", ""},
		{"one document", "a: 1\nb: {c: 2}\n", ""},
		{"repeated key once", "x: 1\nx: 2\nx: 3\nx: 4\nx: 5\n", `line 1: key "x" is given 5 times (lines 1, 2, 3, ...); give it once`},
		{"nested repeated key", "a:\n  b: 1\n  b: 2\n", `line 2: key "b" is given 2 times (lines 2, 3); give it once`},
		{"second document", "a: 1\n---\nb: 2\n", "the file holds more than one YAML document (the second begins at line 2); keep one document, without ---"},
		{"merge keys are not repeats", "base: &b {x: 1}\nc:\n  <<: *b\n  <<: *b\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := YAML([]byte(tt.in))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("YAML error %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// TestYAMLManyRepeats holds the report of a file of one key repeated
// 100,000 times, and of 20,000 mappings each with a repeated key, to one line and to
// MaxProblems lines.
func TestYAMLManyRepeats(t *testing.T) {
	one := strings.Repeat("x: 1\n", 100_000)
	_, err := YAML([]byte(one))
	if want := "line 1: the mapping has 100000 keys, more than the 1000 a mapping may have\n" +
		`line 1: key "x" is given 100000 times (lines 1, 2, 3, ...); give it once`; err == nil || err.Error() != want {
		t.Errorf("YAML(one key) = %v, want %q", err, want)
	}
	var b strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&b, "m%d: {k: 1, k: 2}\n", i)
	}
	_, err = YAML([]byte(b.String()))
	if err == nil || strings.Count(err.Error(), "\n")+1 != MaxProblems || !strings.HasSuffix(err.Error(), "and 19982 more problems") {
		t.Errorf("YAML(many keys) = %.200q..., want %d lines ending in 'and 19981 more problems'", err, MaxProblems)
	}
}
