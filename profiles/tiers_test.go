package profiles

import (
	"slices"
	"testing"
)

// TestTierTableComplete checks that every row of the tier table is whole:
// a name of its own that parses back (Valid), a rank and a fabric in
// range, and link defaults a YAML axis may take; and that the rows run
// fastest first, the scale-up tiers at rank 0 on their own fabrics.
func TestTierTableComplete(t *testing.T) {
	tab := tierTable()
	if len(tab) == 0 {
		t.Fatal("no tiers")
	}
	prev := -1
	for i, s := range tab {
		t.Run(string(s.tier), func(t *testing.T) {
			if s.tier == "" {
				t.Fatalf("row %d has no name", i)
			}
			if slices.IndexFunc(tab, func(o tierSpec) bool { return o.tier == s.tier }) != i {
				t.Errorf("%s is listed twice", s.tier)
			}
			if !s.tier.Valid() || Tiers()[i] != s.tier {
				t.Errorf("%s: Valid %v, Tiers()[%d] = %q", s.tier, s.tier.Valid(), i, Tiers()[i])
			}
			if s.rank < prev {
				t.Errorf("%s: rank %d after rank %d: the rows must run fastest first", s.tier, s.rank, prev)
			}
			prev = s.rank
			if s.tier.Rank() != s.rank || s.tier.Fabric() != s.fabric {
				t.Errorf("%s: Rank %d, Fabric %d; the row says %d, %d", s.tier, s.tier.Rank(), s.tier.Fabric(), s.rank, s.fabric)
			}
			if s.fabric > FabricNetwork {
				t.Errorf("%s: fabric %d is unknown", s.tier, s.fabric)
			}
			if (s.rank == 0) != (s.fabric != FabricNetwork) {
				t.Errorf("%s: rank %d with fabric %d: the scale-up tiers (rank 0) are the ring and switch fabrics", s.tier, s.rank, s.fabric)
			}
			if !positive(s.latencySeconds) || !fraction(s.efficiency) {
				t.Errorf("%s: default latency %g s, efficiency %g", s.tier, s.latencySeconds, s.efficiency)
			}
			l, ok := tierDefault(s.tier)
			if !ok || l.tier != s.tier || l.latencySeconds != s.latencySeconds || l.efficiency != s.efficiency || l.bandwidthBytesPerS != 0 {
				t.Errorf("%s: tierDefault = %+v, %v", s.tier, l, ok)
			}
		})
	}
	if Tier("warp").Valid() || Tier("warp").Rank() != tab[len(tab)-1].rank || Tier("warp").Fabric() != FabricNetwork {
		t.Errorf("an unknown tier must be invalid, rank with the slowest and be a network")
	}
}

// TestTierTableKeepsCatalogue pins the catalogue's links to their tiers'
// rows: every chip's scale-up and scale-out link takes its tier's latency,
// and its efficiency unless an NVLink domain's own.
func TestTierTableKeepsCatalogue(t *testing.T) {
	for _, c := range catalogue() {
		for _, l := range []link{c.scaleUp, c.scaleOut} {
			def, ok := tierDefault(l.tier)
			if !ok {
				t.Errorf("%s: a link of unknown tier %q", c.chip.Name, l.tier)
				continue
			}
			if l.latencySeconds != def.latencySeconds || l.tier != NVLink && l.efficiency != def.efficiency {
				t.Errorf("%s: %s link %+v, tier default %+v", c.chip.Name, l.tier, l, def)
			}
		}
	}
}
