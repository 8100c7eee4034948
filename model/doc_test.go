package model

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocListsHFModelTypes wants the package documentation (go doc ./model)
// to name every model_type ParseHF reads, and to count them right.
func TestDocListsHFModelTypes(t *testing.T) {
	data, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(strings.ReplaceAll(string(data), "//", "")), " ")
	types := HFModelTypes()
	for _, typ := range types {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(typ) + `\b`).MatchString(doc) {
			t.Errorf("doc.go does not name model_type %s", typ)
		}
	}
	if want := fmt.Sprintf("the %d model_type values HFModelTypes lists", len(types)); !strings.Contains(doc, want) {
		t.Errorf("doc.go does not say %q", want)
	}
}
