package profiles

import "testing"

// TestHostDRAMBytesFor: a chip's share of its host's memory, by hand: a
// PCIe Gen4 host is a DGX A100 (1 TB over 8 GPUs), a Gen5 one a DGX H100
// (2 TB over 8), a Grace 480 GB over 2; a job of fewer chips than the
// host carries shares the whole host among them.
func TestHostDRAMBytesFor(t *testing.T) {
	for _, tt := range []struct {
		link  float64
		chips int
		want  float64
	}{
		{25.6e9, 1, 1e12}, {25.6e9, 4, 250e9}, {25.6e9, 8, 125e9}, {25.6e9, 64, 125e9},
		{51.2e9, 2, 1e12}, {51.2e9, 1024, 250e9},
		{360e9, 1, 480e9}, {360e9, 2, 240e9}, {360e9, 72, 240e9},
	} {
		c := Chip{HostBandwidthBytesPerS: tt.link}
		if got := c.HostDRAMBytesFor(tt.chips); got != tt.want {
			t.Errorf("link %g, %d chips: %g bytes a chip, want %g", tt.link, tt.chips, got, tt.want)
		}
	}
}
