package memory

import (
	"github.com/meshplan/meshplan/profiles"
)

// Options tune the memory model. The zero value uses the chip's documented
// runtime reserves (profiles.Chip).
type Options struct {
	// ReservedFraction, when positive, replaces the chip's runtime reserves
	// (context, allocator slack) by this fraction of HBM; a negative value
	// means no reserve at all. Communicator buffers are part of a
	// strategy's memory either way.
	ReservedFraction float64
	// AllocatorSlackFraction, when positive, replaces the chip's
	// allocator slack (a framework's allocator, profiles.Chip).
	AllocatorSlackFraction float64
}

// Breakdown is the peak memory of the busiest chip, in bytes.
type Breakdown struct {
	ParamsBytes      float64 `json:"params_bytes"`
	GradsBytes       float64 `json:"grads_bytes"`
	OptimizerBytes   float64 `json:"optimizer_bytes"`
	ActivationsBytes float64 `json:"activations_bytes"`
	BuffersBytes     float64 `json:"buffers_bytes"`
	// HostActivationsBytes are the saved activations in host memory at the
	// end of the forward pass (space.Strategy.ActOffload), whichever phase
	// is HBM's peak; not in TotalBytes.
	HostActivationsBytes float64 `json:"host_activations_bytes,omitempty"`
	// HostStatesBytes are the model states a host offload keeps in host
	// memory (space.Strategy.Offload); not in TotalBytes.
	HostStatesBytes float64 `json:"host_states_bytes,omitempty"`
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

// UsableBytes is the HBM per chip a strategy may fill: the chip's HBM as the
// runtime reports it, less what the runtime keeps before any tensor (the
// CUDA context) and what the allocator loses to fragmentation
// (profiles.Chip's runtime reserves, docs/runtime-memory.md), or less
// Options.ReservedFraction of it when that is set.
func UsableBytes(c profiles.Cluster, o Options) float64 {
	hbm := c.Chip.HBMBytes
	switch f := o.ReservedFraction; {
	case f < 0:
		return hbm
	case f > 0:
		return hbm * (1 - min(f, 1))
	}
	slack := c.Chip.AllocatorSlackFraction
	if o.AllocatorSlackFraction > 0 {
		slack = min(o.AllocatorSlackFraction, 1)
	}
	return max(0, hbm-c.Chip.RuntimeReserveBytes-slack*hbm)
}

// Fits reports whether b fits in the usable HBM of one chip of c.
func Fits(b Breakdown, c profiles.Cluster, o Options) bool {
	return b.TotalBytes() <= UsableBytes(c, o)
}
