package results

import (
	"fmt"
	"io"
	"strings"

	"github.com/meshplan/meshplan/profiles"
)

// Cluster is the JSON form of one cluster in `plan clusters --format json`:
// the contract's fields plus the chip's other figures and the cost-model
// efficiency terms.
type Cluster struct {
	Name                  string              `json:"name"`
	Chip                  string              `json:"chip"`
	Chips                 int                 `json:"chips"`
	PeakBF16FLOPs         float64             `json:"peak_bf16_flops"`
	HBMBytes              float64             `json:"hbm_bytes"`
	Axes                  []Axis              `json:"axes"`
	ChipFamily            string              `json:"chip_family,omitempty"`
	PeakFP8FLOPs          float64             `json:"peak_fp8_flops,omitempty"`
	PeakFP4FLOPs          float64             `json:"peak_fp4_flops,omitempty"`
	HBMBandwidthBytesPerS float64             `json:"hbm_bandwidth_bytes_per_s,omitempty"`
	Efficiency            profiles.Efficiency `json:"efficiency"`
}

// Axis is the JSON form of one mesh axis of a cluster.
type Axis struct {
	Name               string  `json:"name"`
	Size               int     `json:"size"`
	Tier               string  `json:"tier"`
	Wraparound         bool    `json:"wraparound"`
	BandwidthBytesPerS float64 `json:"bandwidth_bytes_per_s"`
	LatencySeconds     float64 `json:"latency_s"`
	Efficiency         float64 `json:"efficiency"`
}

// NewCluster converts a cluster profile to its JSON form.
func NewCluster(c profiles.Cluster) Cluster {
	axes := make([]Axis, len(c.Axes))
	for i, a := range c.Axes {
		axes[i] = Axis{
			Name:               a.Name,
			Size:               a.Size,
			Tier:               string(a.Tier),
			Wraparound:         a.Wraparound,
			BandwidthBytesPerS: a.BandwidthBytesPerS,
			LatencySeconds:     a.LatencySeconds,
			Efficiency:         a.Efficiency,
		}
	}
	return Cluster{
		Name:                  c.Name,
		Chip:                  c.Chip.Name,
		Chips:                 c.Chips(),
		PeakBF16FLOPs:         c.Chip.PeakBF16FLOPs,
		HBMBytes:              c.Chip.HBMBytes,
		Axes:                  axes,
		ChipFamily:            c.Chip.Family,
		PeakFP8FLOPs:          c.Chip.PeakFP8FLOPs,
		PeakFP4FLOPs:          c.Chip.PeakFP4FLOPs,
		HBMBandwidthBytesPerS: c.Chip.HBMBandwidthBytesPerS,
		Efficiency:            c.Efficiency,
	}
}

// WriteClustersJSON writes the clusters as one indented JSON array.
func WriteClustersJSON(w io.Writer, cs []profiles.Cluster) error {
	out := make([]Cluster, len(cs))
	for i, c := range cs {
		out[i] = NewCluster(c)
	}
	return writeJSON(w, out)
}

// WriteClustersTable writes one aligned row per cluster: chip, chip count,
// per-chip peak and memory in human units, and the mesh axes as
// name=size(tier bandwidth, torus) innermost first.
func WriteClustersTable(w io.Writer, cs []profiles.Cluster) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tCHIP\tCHIPS\tPEAK BF16/CHIP\tHBM/CHIP\tMESH (one-way bandwidth per chip)")
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n",
			Label(c.Name), Label(c.Chip.Name), c.Chips(), FLOPRate(c.Chip.PeakBF16FLOPs), Bytes(c.Chip.HBMBytes), Mesh(c.Axes))
	}
	return tw.Flush()
}

// Mesh formats mesh axes as "x=4(ici 45.0 GB/s, torus) y=4(...)".
func Mesh(axes []profiles.Axis) string {
	parts := make([]string, len(axes))
	for i, a := range axes {
		torus := ""
		if a.Wraparound {
			torus = ", torus"
		}
		parts[i] = fmt.Sprintf("%s=%d(%s %s%s)", Label(a.Name), a.Size, a.Tier, ByteRate(a.BandwidthBytesPerS), torus)
	}
	return strings.Join(parts, " ")
}
