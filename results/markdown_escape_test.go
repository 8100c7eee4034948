package results

import "testing"

// TestMarkdownEscapes: names in a Markdown report show as written, with
// markup escaped and control bytes (terminal escape sequences) as U+XXXX.
func TestMarkdownEscapes(t *testing.T) {
	tests := []struct {
		in, text, code string
	}{
		{"llama3-8b", "llama3-8b", "llama3-8b"},
		{"a*b|c", `a\*b\|c`, "a*b/c"},
		{"x\x1b[31mred\x1b[0m", `x` + "U+001B" + `\[31mred` + "U+001B" + `\[0m`, "xU+001B[31mredU+001B[0m"},
		{"tab\there\nnl", "tab here nl", "tab here nl"},
		{"del\x7f c1\u0085", "delU+007F c1U+0085", "delU+007F c1U+0085"},
		{"bad\xffutf8", "bad\uFFFDutf8", "bad\uFFFDutf8"},
	}
	for _, tt := range tests {
		if got := mdText(tt.in); got != tt.text {
			t.Errorf("mdText(%q) = %q, want %q", tt.in, got, tt.text)
		}
		if got := mdCode(tt.in); got != tt.code {
			t.Errorf("mdCode(%q) = %q, want %q", tt.in, got, tt.code)
		}
	}
}
