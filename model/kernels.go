package model

import "fmt"

// Pass is a memory-bound elementwise pass of the layer program whose HBM
// traffic depends on how a framework's kernels fuse it.
type Pass uint8

// The passes a framework's Kernels price.
const (
	PassNorm       Pass = iota // a normalisation layer, per element of its input [B,S,D]
	PassRope                   // the rotary embedding, per element of q and k
	PassAct                    // the MLP activation, per element of its input (GELU: [B,S,F]; SwiGLU: the fused gate and up projection [B,S,2F])
	PassResidual               // a residual add, per element of the residual stream
	PassLoss                   // the softmax cross-entropy, per logit
	PassLookup                 // the embedding lookup, per element of its output
	PassSoftcap                // the logits' soft cap c·tanh(x/c) (Spec.LogitSoftcap), per logit
	PassExpertBias             // the routed experts' output bias (MoE.Bias), per element of their output [E,C,D]
	PassRopeYaRN               // the rotary embedding with YaRN's attention factor (Spec.YaRN), per element of q and k
	PassActClamp               // the clamp of the routed experts' activation input (MoE.SwiGLULimit), per element of that input [E,C,2Fe]
	NumPasses
)

// passNames are the YAML keys of the passes.
func passNames() [NumPasses]string {
	return [NumPasses]string{"norm", "rope", "act", "residual", "loss", "lookup", "softcap", "expert_bias", "rope_yarn", "act_clamp"}
}

// String returns the pass's key in a framework profile.
func (p Pass) String() string {
	if p >= NumPasses {
		return "?"
	}
	return passNames()[p]
}

// PassNames returns the passes' keys in a framework profile, in order.
func PassNames() []string {
	n := passNames()
	return n[:]
}

// PassCost is one pass's HBM traffic and what it keeps for the backward
// pass beyond the program's own tensors, in bytes per element (of the
// tensor the Pass constant names).
type PassCost struct {
	// FwdBytes and BwdBytes are the bytes read and written per element in
	// the forward and the backward pass.
	FwdBytes float64 `json:"fwd_bytes" yaml:"fwd_bytes"`
	BwdBytes float64 `json:"bwd_bytes" yaml:"bwd_bytes"`
	// SavedBytes are kept for the backward pass, or live while it runs,
	// besides the tensors the program saves (eager PyTorch keeps fp32
	// intermediates of a norm and a second fp32 gradient of the loss), per
	// element.
	SavedBytes float64 `json:"saved_bytes" yaml:"saved_bytes"`
	// TransientBytes are live only while the pass's backward runs, per
	// element: the loss's gradients of the logits.
	TransientBytes float64 `json:"transient_bytes" yaml:"transient_bytes"`
}

// AttentionKernel is the kernel of the attention core.
type AttentionKernel uint8

// Attention kernels.
const (
	// AttentionFlash is a fused kernel that keeps the score square on chip
	// and saves an fp32 log-sum-exp per query and head [FA2].
	AttentionFlash AttentionKernel = iota
	// AttentionMaterialized writes the score square, the softmax and the
	// dropout to HBM: Megatron before FlashAttention (2021-2022 runs).
	AttentionMaterialized
)

// Kernels says how a framework runs the layer program's memory-bound
// passes and its attention core. The zero value is FusedKernels.
type Kernels struct {
	// Passes are the elementwise passes' bytes; a zero PassCost takes
	// FusedKernels' entry.
	Passes [NumPasses]PassCost
	// Attention is the attention core's kernel.
	Attention AttentionKernel
	// AttentionRate is the attention kernel's speed relative to the chip's
	// flash kernel (profiles.Efficiency); zero means 1.
	AttentionRate float64
	// ALiBiFused says the attention kernel takes ALiBi's bias (Spec.ALiBi)
	// at its full rate: Transformer Engine passes it to cuDNN's fused
	// attention (NVIDIA/TransformerEngine#608). False: an ALiBi model's
	// attention runs FlashAttention-2, since FlashAttention-3 has no ALiBi
	// (Dao-AILab/flash-attention#1666) and PyTorch's flash and cuDNN SDPA
	// backends take no bias, at the chip's
	// profiles.Efficiency.FlashAttention2Fraction.
	ALiBiFused bool
	// SplitProjections says that the query, key and value projections and
	// the gate and up projections are separate matmuls that each keep their
	// own copy of the normalised input (Hugging Face modules under eager
	// autocast); false: one fused matmul per group keeps one copy.
	SplitProjections bool
	// SeparateProjections says that the q, k and v projections and the gate
	// and up projections are separate matmuls on one bf16 input, as in
	// torchtitan's Llama (nn.Linear wq, wk, wv and w1, w3,
	// pytorch/torchtitan@820504e20d1149fbf0b98c567af24c4b0433b22d
	// torchtitan/models/llama3/model.py:205-210,297-299): each
	// input-gradient matmul writes its own output, and the backward sums
	// them (Op.Calls). SplitProjections counts that sum with its casts.
	SeparateProjections bool
	// WeightedExperts says that the routed experts' activation weighs its
	// output by the routing probabilities, so the combine is a plain sum
	// whose backward needs no copy of the experts' outputs (Megatron-Core's
	// weighted SwiGLU, NVIDIA/Megatron-LM@d98e8a64
	// megatron/core/transformer/moe/experts.py:943-970, and its unpermute
	// without probabilities, moe/token_dispatcher.py:891-899); false: the
	// combine weighs the copies and keeps them for the weights' gradient.
	WeightedExperts bool
}

// FusedKernels returns the passes of a framework that fuses elementwise
// work into one kernel per pass (torch.compile, Megatron-Core with
// Transformer Engine, XLA), with bf16 activations, in bytes per element
// (docs/formulas.md §1.4 [derived]: each pass reads its inputs once and
// writes its outputs once):
//
//   - norm: forward reads x and writes the normalised x (2+2); backward
//     reads the incoming gradient and x and writes x's gradient (2+2+2);
//   - rope: reads and writes q and k (2+2), the same backward;
//   - act: per element of its input, SwiGLU reads gate and up (2F·2) and
//     writes F·2, 3 bytes; backward reads the output's gradient, gate and
//     up and writes their gradients, 5 bytes (GELU: 4 and 6);
//   - residual: reads the branch and the stream, writes the sum (2+2+2);
//     backward adds the branch's gradient to the stream's (2+2+2);
//   - loss: a fused cross-entropy reads the bf16 logits twice (max and
//     sum-exp, 2+2) and writes the logits' gradient in the backward pass
//     after reading them again (2+2); it keeps fp32 softmax statistics of
//     every logit (4, Megatron's exp-logits) and its backward an fp32
//     gradient (4) [MEG-MEM];
//   - lookup: gathers rows of the embedding (reads and writes 2+2); the
//     backward scatter-adds into the embedding's gradient (2+4);
//   - softcap: applied inside the fused cross-entropy as it reads the
//     logits (Liger's and Inductor's fused losses): no traffic of its own;
//   - expert_bias: the experts' down-projection adds its bias in the GEMM's
//     epilogue, no traffic forward; backward the bias gradient sums the
//     output's gradient over the tokens, one read (2);
//   - rope_yarn: as rope, the attention factor folded into the cos and sin
//     the kernel reads;
//   - act_clamp: a fused activation clamps its input as it reads it and
//     masks the gradient as it writes it: no traffic of its own, nothing
//     kept.
func FusedKernels() Kernels {
	var k Kernels
	k.Passes[PassNorm] = PassCost{FwdBytes: 4, BwdBytes: 6}
	k.Passes[PassRope] = PassCost{FwdBytes: 4, BwdBytes: 4}
	k.Passes[PassAct] = PassCost{FwdBytes: 3, BwdBytes: 5}
	k.Passes[PassResidual] = PassCost{FwdBytes: 6, BwdBytes: 6}
	k.Passes[PassLoss] = PassCost{FwdBytes: 4, BwdBytes: 4, SavedBytes: 4, TransientBytes: 4}
	k.Passes[PassLookup] = PassCost{FwdBytes: 4, BwdBytes: 6}
	k.Passes[PassExpertBias] = PassCost{FwdBytes: 0, BwdBytes: 2}
	k.Passes[PassRopeYaRN] = k.Passes[PassRope]
	k.AttentionRate = 1
	return k
}

// withDefaults fills zero entries from FusedKernels.
func (k Kernels) withDefaults(s Spec) Kernels {
	d := FusedKernels()
	if s.FFN != SwiGLU {
		d.Passes[PassAct] = PassCost{FwdBytes: 4, BwdBytes: 6}
	}
	for i := range k.Passes {
		if k.Passes[i] == (PassCost{}) {
			k.Passes[i] = d.Passes[i]
		}
	}
	if k.AttentionRate == 0 {
		k.AttentionRate = 1
	}
	return k
}

// Validate reports a negative or absurd entry.
func (k Kernels) Validate() error {
	for i, p := range k.Passes {
		for _, f := range []struct {
			name string
			v    float64
		}{{"fwd_bytes", p.FwdBytes}, {"bwd_bytes", p.BwdBytes}, {"saved_bytes", p.SavedBytes}, {"transient_bytes", p.TransientBytes}} {
			if !(f.v >= 0 && f.v <= 1024) {
				return fmt.Errorf("model: kernels %s.%s = %v must be between 0 and 1024 bytes per element", Pass(i), f.name, f.v)
			}
		}
	}
	if !(k.AttentionRate > 0 && k.AttentionRate <= 10) {
		return fmt.Errorf("model: kernels attention_rate = %v must be above 0 and at most 10", k.AttentionRate)
	}
	if k.Attention > AttentionMaterialized {
		return fmt.Errorf("model: kernels attention kernel %d is unknown", k.Attention)
	}
	return nil
}
