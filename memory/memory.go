package memory

import (
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Options tune the memory model. The zero value uses the documented defaults.
type Options struct {
	// ReservedFraction of HBM is held back for allocator fragmentation, runtime
	// context and collective buffers; zero means DefaultReservedFraction.
	ReservedFraction float64
}

// Breakdown is the peak memory of the busiest chip, in bytes.
type Breakdown struct {
	ParamsBytes      float64 `json:"params_bytes"`
	GradsBytes       float64 `json:"grads_bytes"`
	OptimizerBytes   float64 `json:"optimizer_bytes"`
	ActivationsBytes float64 `json:"activations_bytes"`
	BuffersBytes     float64 `json:"buffers_bytes"`
}

// TotalBytes is the sum of the components.
func (b Breakdown) TotalBytes() float64 {
	return b.ParamsBytes + b.GradsBytes + b.OptimizerBytes + b.ActivationsBytes + b.BuffersBytes
}

// Estimate returns the per-chip memory of strategy s (validated and placed).
func Estimate(m model.Spec, c profiles.Cluster, w space.Workload, s space.Strategy, o Options) Breakdown {
	return Breakdown{}
}

// UsableBytes is the HBM per chip a strategy may fill: HBM minus the reserve.
func UsableBytes(c profiles.Cluster, o Options) float64 {
	return 0
}
