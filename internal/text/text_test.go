package text

import (
	"fmt"
	"strings"
	"testing"
)

func TestOneLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"a", "a"},
		{"a\nb", "a; b"},
		{"  a \t b\n\n c ", "a b; ; c"},
		{"first line:\n  rule one\n  rule two", "first line:; rule one; rule two"},
	} {
		if got := OneLine(tt.in); got != tt.want {
			t.Errorf("OneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSquash(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"a\nb", "a b"},
		{" a \t\n b ", "a b"},
	} {
		if got := Squash(tt.in); got != tt.want {
			t.Errorf("Squash(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	long := strings.Repeat("x", 1000)
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"tp", "tp", 0},
		{"fdsp", "fsdp", 2},
		{"v5p-256", "v5e-256", 1},
		{"kitten", "sitting", 3},
		{long, long + "y", 0},  // both cut to 64 bytes
		{long, "", MaxEditLen}, // the long one cut to 64
		{"é", "e", 1},          // in runes, not bytes
	} {
		if got := EditDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("EditDistance(%.10q, %.10q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func ExampleOneLine() {
	fmt.Println(OneLine("cannot place tp=8:\n  axis x has 4 chips"))
	// Output: cannot place tp=8:; axis x has 4 chips
}
