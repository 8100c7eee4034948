package model

import "testing"

// FuzzJSONDuplicates: no input panics jsonDuplicates or ParseHFWarnings.
func FuzzJSONDuplicates(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":2}`, `{"a":[{"b":1,"b":2}],"c":{"d":1}}`, `[1,{"a":1,"a":1}]`, `{"a":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = jsonDuplicates(data)
		_, _, _ = ParseHFWarnings(data)
	})
}
