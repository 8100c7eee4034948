package results

import (
	"strconv"
	"strings"
	"unicode"
)

// Label returns a name from user input (a model, cluster or framework
// name, a run id) as a table shows it on a terminal: unchanged when every
// character is printable, else quoted with Go escapes ("a\nb",
// "\x1b[31mred"), so that a newline cannot break a table and an escape
// sequence cannot reach the terminal.
func Label(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// EscapeControls returns text for a terminal: every control character
// other than newline and tab, and every bidirectional override, written as
// its Go escape (\x1b, \r, \u202e). It is the last line of defence of
// table output and error messages against terminal escape sequences in
// user input that no Label caught.
func EscapeControls(text string) string {
	if !strings.ContainsFunc(text, unsafeRune) {
		return text
	}
	var b strings.Builder
	for _, r := range text {
		if unsafeRune(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// unsafeRune reports a character EscapeControls escapes.
func unsafeRune(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	return unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// CSVText guards a text cell of CSV output against spreadsheet formula
// injection as OWASP's CSV Injection guidance advises: a cell that begins
// with =, +, -, @, a tab or a carriage return gets a leading single quote,
// so that a spreadsheet shows it as text instead of evaluating it
// (=HYPERLINK(...) stays the text '=HYPERLINK(...)). encoding/csv quotes
// the cell when it holds a separator or a quote. Numbers, which the writers
// format themselves, are not passed through it.
func CSVText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
