package memory

import (
	"github.com/meshplan/meshplan/profiles"
)

// DefaultReservedFraction of HBM is held back for allocator fragmentation,
// the CUDA/XLA runtime context and NCCL/collective scratch buffers: about 5%
// fragmentation (Megatron's estimator pads activations by 1.05,
// docs/formulas.md §2.4 [MEG-MEM]) plus 2–3% for the runtime and collective
// buffers. A planning convention, not a measured constant; a zero
// Options.ReservedFraction selects it.
const DefaultReservedFraction = 0.08

// Options tune the memory model. The zero value uses the documented defaults.
type Options struct {
	// ReservedFraction of HBM is held back for allocator fragmentation, runtime
	// context and collective buffers; zero means DefaultReservedFraction and a
	// negative value means no reserve.
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

// Component names returned by [Dominant]; they match the contract's memory
// keys without the "_gb" suffix.
const (
	Params      = "params"
	Grads       = "grads"
	Optimizer   = "optimizer"
	Activations = "activations"
	Buffers     = "buffers"
)

// Dominant names the largest component of b: Params, Grads, Optimizer,
// Activations or Buffers (the first of them on a tie).
func Dominant(b Breakdown) string {
	name, top := Params, b.ParamsBytes
	if b.GradsBytes > top {
		name, top = Grads, b.GradsBytes
	}
	if b.OptimizerBytes > top {
		name, top = Optimizer, b.OptimizerBytes
	}
	if b.ActivationsBytes > top {
		name, top = Activations, b.ActivationsBytes
	}
	if b.BuffersBytes > top {
		name = Buffers
	}
	return name
}

// UsableBytes is the HBM per chip a strategy may fill: HBM minus the reserve
// (Options.ReservedFraction, default DefaultReservedFraction).
func UsableBytes(c profiles.Cluster, o Options) float64 {
	f := o.ReservedFraction
	switch {
	case f == 0:
		f = DefaultReservedFraction
	case f < 0:
		f = 0
	case f > 1:
		f = 1
	}
	return c.Chip.HBMBytes * (1 - f)
}

// Fits reports whether b fits in the usable HBM of one chip of c.
func Fits(b Breakdown, c profiles.Cluster, o Options) bool {
	return b.TotalBytes() <= UsableBytes(c, o)
}
