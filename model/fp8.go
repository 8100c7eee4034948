package model

import (
	"fmt"
	"slices"
	"strings"
)

// FP8Recipe is how a framework runs its matmuls in FP8 (docs/frameworks.md
// "FP8"): every projection with a weight runs at the chip's fp8 rate on
// fp8 copies of its input and weight, except the ones all the recipes keep
// in bf16 (the embedding, the output layer, the MoE router; the attention
// core is not a projection) [DSV3 §3.3.1][TE-FP8]. Each fp8 matmul's input
// is quantised by a memory-bound pass, as is its output's gradient in the
// backward pass, and its weight once per step (per micro-batch when FSDP
// gathers it afresh); the backward keeps the fp8 input (1 byte per element)
// instead of the bf16 one.
type FP8Recipe struct {
	// Name is the recipe: "delayed" (Transformer Engine's per-tensor
	// delayed scaling), "tensorwise" (dynamic per-tensor scaling in one
	// pass that writes both layouts: Transformer Engine's current
	// scaling), "torchao" (torchao's dynamic tensorwise scaling, as
	// torchtitan's float8 converter runs it), "blockwise" (DeepSeek-V3's
	// 1x128 activation and 128x128 weight tiles).
	Name string `json:"name" yaml:"name"`
	// QuantizeBytes is the HBM traffic of quantising one bf16 element of a
	// matmul operand, per element: read 2, write the fp8 value and its
	// transposed copy for the other backward matmul, 1 + 1, when the scale
	// is known or computed in the same pass (delayed, blockwise): 4; a
	// dynamic per-tensor scale reads the input once more for its amax; one
	// that writes only the forward's layout (torchao, which casts again in
	// the backward, HighPrecisionInput) reads 2 + 2 and writes 1: 5.
	QuantizeBytes float64 `json:"quantize_bytes" yaml:"quantize_bytes"`
	// GradQuantizeBytes is the HBM traffic per element of quantising a
	// matmul output's gradient in the backward pass; zero is
	// QuantizeBytes (one pass writes both layouts). torchao casts it twice,
	// along dim 0 for the input gradient and along dim 1 for the weight
	// gradient, each reading 2 and writing 1, after one amax read that
	// Inductor computes once for both (the two hp_tensor_to_float8_dynamic
	// calls on grad_output of matmul_with_hp_or_float8_args.backward,
	// pytorch/ao@36027d82d1ad9949597ea16002ff4940374b1b94
	// torchao/float8/float8_linear.py): 2 + 3 + 3 = 8.
	GradQuantizeBytes float64 `json:"grad_quantize_bytes,omitempty" yaml:"grad_quantize_bytes"`
	// HighPrecisionInput says the forward keeps each fp8 matmul's bf16
	// input for the backward, not its fp8 copy, and the backward casts it
	// again for the weight gradient, RecastBytes per element: torchao's
	// matmul_with_hp_or_float8_args saves input_hp and re-runs
	// hp_tensor_to_float8_dynamic on it along dim 1 (float8_linear.py at the
	// commit above).
	HighPrecisionInput bool `json:"high_precision_input,omitempty" yaml:"high_precision_input"`
	// RecastBytes is the HBM traffic per element of that backward cast:
	// an amax read of 2, a read of 2 and a write of 1: 5.
	RecastBytes float64 `json:"recast_bytes,omitempty" yaml:"recast_bytes"`
	// Dispatch says the MoE dispatch all-to-all carries the fp8 tokens the
	// experts read (DeepSeek-V3 §3.3.2: dispatch in fp8, combine in bf16).
	Dispatch bool `json:"dispatch" yaml:"dispatch"`
	// Params says the weights the fp8 matmuls read are stored in fp8 only
	// (fp8 primary weights): the fp8 copy and its transpose replace the
	// bf16 weight, and the optimizer's fp32 master copy is the only other
	// one (Megatron-LM --fp8-param-gather, which requires the distributed
	// optimizer: "Keep the compute param in fp8 (do not use any other
	// intermediate dtype)", megatron/training/arguments.py @d98e8a64; its
	// gradient buffer stays fp32 with grad_reduce_in_fp32,
	// megatron/core/distributed/param_and_grad_buffer.py @d98e8a64).
	Params bool `json:"params" yaml:"params"`
	// PerTensor says one scale covers the whole tensor (delayed and
	// current scaling), so the fp8 copy is the same numbers whichever
	// dimension a matmul contracts: on a chip whose fp8 matmuls take any
	// layout (profiles.Chip.FP8AnyLayout) it serves the transposed use
	// too and no transpose is kept. Block scales (blockwise, MXFP8) run
	// along one dimension, so the transposed use needs its own copy with
	// its own scales on every chip (Transformer Engine's
	// Float8TensorStorage against MXFP8TensorStorage's rowwise and
	// columnwise data, NVIDIA/TransformerEngine@d0067d0d
	// transformer_engine/pytorch/module/base.py:757-775).
	PerTensor bool `json:"per_tensor,omitempty" yaml:"per_tensor"`
	// ElementBytes is the bytes one element of a quantised copy takes
	// with its share of the scales; zero is 1 (an fp8 byte, the scales
	// rounding off). NVFP4 keeps a 4-bit E2M1 value and one E4M3 scale
	// per 16 elements: 0.5 + 1/16 = 0.5625.
	ElementBytes float64 `json:"element_bytes,omitempty" yaml:"element_bytes"`
	// FP4 says the quantised matmuls run at the chip's fp4 rate
	// (profiles.Chip.PeakFP4FLOPs) instead of its fp8 rate.
	FP4 bool `json:"fp4,omitempty" yaml:"fp4"`
}

// Bytes is the bytes of one element of a quantised copy under r
// (ElementBytes, 1 when zero).
func (r FP8Recipe) Bytes() float64 {
	if r.ElementBytes > 0 {
		return r.ElementBytes
	}
	return 1
}

// FP8 recipe names.
const (
	FP8Delayed    = "delayed"
	FP8Tensorwise = "tensorwise"
	FP8Blockwise  = "blockwise"
	FP8MX         = "mxfp8"
	FP8Torchao    = "torchao"
	FP4NV         = "nvfp4"
)

// FP8Recipes returns the known recipes: Transformer Engine's delayed
// per-tensor scaling (Megatron-Core's --fp8-recipe delayed), dynamic
// per-tensor scaling (Transformer Engine's current scaling, Megatron-Core's
// --fp8-recipe tensorwise), DeepSeek-V3's blockwise scaling with fp8
// dispatch (Megatron-Core's --fp8-recipe blockwise), MXFP8 (Megatron-Core's
// --fp8-recipe mxfp8: one e8m0 scale per 32 elements along the contracted
// dimension, computed in the cast kernel, so no amax pass; the rowwise and
// columnwise copies each carry their scales, 1/32 byte an element: read 2,
// write 1 + 1 + 2/32, NVIDIA/TransformerEngine@d0067d0d
// transformer_engine/pytorch/tensor/mxfp8_tensor.py MXFP8Quantizer) and
// torchao's dynamic tensorwise scaling (torchtitan's float8 converter),
// which keeps the bf16 inputs and casts in the backward again
// (HighPrecisionInput), and NVFP4 (Megatron-Core's --fp4-format e2m1
// --fp4-recipe nvfp4, Transformer Engine's NVFP4BlockScaling: E2M1 values
// at the chip's fp4 rate, an E4M3 scale per 16 elements and an fp32 scale
// per tensor, so an amax pass before the cast; the rowwise and columnwise
// copies are each cast from the bf16 input, the columnwise one after a
// 16x16 random Hadamard transform taken as fused into the cast: read 2 + 2,
// write 2 x 0.5625, NVIDIA/TransformerEngine@d0067d0d
// transformer_engine/common/recipe/__init__.py NVFP4BlockScaling).
func FP8Recipes() []FP8Recipe {
	return []FP8Recipe{
		{Name: FP8Delayed, QuantizeBytes: 4, PerTensor: true},
		{Name: FP8Tensorwise, QuantizeBytes: 6, PerTensor: true},
		{Name: FP8Blockwise, QuantizeBytes: 4, Dispatch: true},
		{Name: FP8MX, QuantizeBytes: 4 + 2.0/32},
		{Name: FP8Torchao, QuantizeBytes: 5, GradQuantizeBytes: 8, HighPrecisionInput: true, RecastBytes: 5},
		{Name: FP4NV, QuantizeBytes: 2 + 2 + 2*nvfp4ElementBytes, ElementBytes: nvfp4ElementBytes, FP4: true},
	}
}

// nvfp4ElementBytes is one NVFP4 element with its scale's share: a 4-bit
// E2M1 value and one E4M3 byte per 16 elements (NVFP4BlockScaling).
const nvfp4ElementBytes = 0.5 + 1.0/16

// FP8RecipeNames returns the known recipes' names, in FP8Recipes' order.
func FP8RecipeNames() []string {
	var names []string
	for _, r := range FP8Recipes() {
		names = append(names, r.Name)
	}
	return names
}

// LookupFP8Recipe returns the known recipe of that name.
func LookupFP8Recipe(name string) (FP8Recipe, bool) {
	i := slices.IndexFunc(FP8Recipes(), func(r FP8Recipe) bool { return r.Name == name })
	if i < 0 {
		return FP8Recipe{}, false
	}
	return FP8Recipes()[i], true
}

// Validate reports a recipe without a name or with absurd bytes.
func (r FP8Recipe) Validate() error {
	if strings.TrimSpace(r.Name) == "" {
		return fmt.Errorf("model: an fp8 recipe needs a name (known: %s)", strings.Join(FP8RecipeNames(), ", "))
	}
	if !(r.ElementBytes >= 0 && r.ElementBytes <= 2) {
		return fmt.Errorf("model: fp8 recipe %s: element_bytes = %v must be between 0 and 2 bytes per element", r.Name, r.ElementBytes)
	}
	for _, f := range []struct {
		key   string
		bytes float64
	}{{"quantize_bytes", r.QuantizeBytes}, {"grad_quantize_bytes", r.GradQuantizeBytes}, {"recast_bytes", r.RecastBytes}} {
		if !(f.bytes >= 0 && f.bytes <= 64) {
			return fmt.Errorf("model: fp8 recipe %s: %s = %v must be between 0 and 64 bytes per element", r.Name, f.key, f.bytes)
		}
	}
	return nil
}

// bf16Projections are the projections every recipe keeps in bf16: the
// output layer and the MoE router (the embedding is a lookup) [DSV3 §3.3.1].
func bf16Projections() []string { return []string{"logits", "router"} }

// fp8Input returns the fp8 copy of matmul input a for the current block,
// quantising it once (a pass of QuantizeBytes per element) if no earlier
// matmul of the block did; an input already in fp8 is returned as is.
func (b *builder) fp8Input(a int) int {
	if b.p.Tensors[a].Class == ClassFP8 {
		return a
	}
	if q, ok := b.quantized[a]; ok {
		return q
	}
	q := b.like(b.p.Tensors[a].Name+"_fp8", ClassFP8, a)
	b.p.Tensors[q].Scale = b.p.Tensors[a].Scale
	elem := b.p.ElemBytes(a)
	r := b.p.Options.FP8
	o := Op{Kind: Elementwise, Name: "quantize_" + b.p.Tensors[a].Name, A: a, C: q,
		Bytes: r.QuantizeBytes / elem, Group: GroupOther}
	if r.HighPrecisionInput {
		// The backward casts the kept bf16 input again (torchao).
		o.BwdBytes, o.Saves = r.RecastBytes/elem, []int{a}
	}
	b.op(o)
	b.quantized[a] = q
	return q
}

// fp8Eligible reports whether a projection named name with operand w runs
// in fp8 under the program's recipe.
func (b *builder) fp8Eligible(name string, g Group, w int) bool {
	return b.p.Options.FP8 != nil && g == GroupProjection && b.p.Tensors[w].Weight &&
		!slices.Contains(bf16Projections(), name)
}

// gradQuantizeBytes is the HBM traffic per element of quantising a
// matmul output's gradient: GradQuantizeBytes, or QuantizeBytes when zero.
func (r FP8Recipe) gradQuantizeBytes() float64 {
	if r.GradQuantizeBytes > 0 {
		return r.GradQuantizeBytes
	}
	return r.QuantizeBytes
}
