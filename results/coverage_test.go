package results

import (
	"bytes"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/profiles"
)

// TestWriteCoverage: the table has a row per family and for all, and says
// how many runs took the shipped bands when some did.
func TestWriteCoverage(t *testing.T) {
	c := &profiles.CoverageReport{Regime: profiles.RegimeFixed,
		Families: []profiles.Covered{{Name: "nvidia-hopper", Runs: 10, In80: 8, Coverage80: 0.8, In95: 10, Coverage95: 1, MedianHalfWidth: 0.12, ChanceLow80: 6, ChanceHigh80: 10}},
		All:      profiles.Covered{Name: "all", Runs: 10, In80: 5, Coverage80: 0.5, In95: 10, Coverage95: 1, MedianHalfWidth: 0.12, ChanceLow80: 6, ChanceHigh80: 10}}
	for _, tt := range []struct {
		shipped int
		want    string
	}{
		{0, ""},
		{10, "10 runs are of the file's only source: their intervals are the shipped bands', as plan prints them for a source it has not seen."},
	} {
		c.ShippedRuns = tt.shipped
		var b bytes.Buffer
		if err := WriteCoverage(&b, c); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "nvidia-hopper  10    8       80.0%") || !strings.Contains(out, "band coverage (fixed)") ||
			!strings.Contains(out, "6-10          consistent") || !strings.Contains(out, "6-10          too narrow") {
			t.Errorf("shipped %d: table\n%s\nlacks the family row", tt.shipped, out)
		}
		if got := strings.Contains(out, "the shipped bands'"); got != (tt.want != "") || tt.want != "" && !strings.Contains(out, tt.want) {
			t.Errorf("shipped %d: table\n%s\nwant the line %q", tt.shipped, out, tt.want)
		}
	}
}
