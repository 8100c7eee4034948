package model

import "fmt"

// fp32Bytes is the size of an fp32 value.
const fp32Bytes = 4

// Precision is the one table of element sizes the cost and memory models
// share, in bytes per element or per parameter.
type Precision struct {
	// Weight is a weight as the matmuls read it and as weights are
	// gathered (bf16: 2).
	Weight float64 `json:"weight_bytes" yaml:"weight_bytes"`
	// Grad is a weight's gradient as it is accumulated over micro-batches
	// and reduced across replicas (fp32: 4).
	Grad float64 `json:"grad_bytes" yaml:"grad_bytes"`
	// Master is the optimizer's master copy of a weight (fp32: 4).
	Master float64 `json:"master_bytes" yaml:"master_bytes"`
	// Moments is the optimizer's moments of one parameter (Adam: two fp32
	// moments, 8).
	Moments float64 `json:"moments_bytes" yaml:"moments_bytes"`
	// Activation is an activation or an activation's gradient (bf16: 2).
	Activation float64 `json:"activation_bytes" yaml:"activation_bytes"`
}

// MixedPrecision is the mixed-precision recipe of Megatron-LM
// ([MEG-MEM], docs/formulas.md §2.1): bf16 weights and activations, fp32
// gradients accumulated and reduced in fp32 (Megatron forces
// accumulate_allreduce_grads_in_fp32 with bf16), fp32 master weights and
// two fp32 Adam moments: 2 + 4 + 4 + 8 = 18 bytes per parameter
// (Korthikanti et al. 2022, Fig. 1). PyTorch AMP's fp32 weights and
// gradients, two moments and the bf16 copies autocast makes come to the
// same 18 bytes.
func MixedPrecision() Precision {
	return Precision{Weight: 2, Grad: 4, Master: 4, Moments: 8, Activation: 2}
}

// OptimizerBytes is the optimizer state of one parameter: master weights
// and moments.
func (p Precision) OptimizerBytes() float64 { return p.Master + p.Moments }

// withDefaults fills zero fields from MixedPrecision.
func (p Precision) withDefaults() Precision {
	d := MixedPrecision()
	if p.Weight == 0 {
		p.Weight = d.Weight
	}
	if p.Grad == 0 {
		p.Grad = d.Grad
	}
	if p.Master == 0 {
		p.Master = d.Master
	}
	if p.Moments == 0 {
		p.Moments = d.Moments
	}
	if p.Activation == 0 {
		p.Activation = d.Activation
	}
	return p
}

// validate reports a negative or absurd element size.
func (p Precision) validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"weight_bytes", p.Weight}, {"grad_bytes", p.Grad}, {"master_bytes", p.Master},
		{"moments_bytes", p.Moments}, {"activation_bytes", p.Activation}} {
		if !(f.v >= 0 && f.v <= 64) {
			return fmt.Errorf("model: precision %s = %v must be between 0 and 64 bytes", f.name, f.v)
		}
	}
	return nil
}
