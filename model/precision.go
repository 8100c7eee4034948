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
	// Residual is an element of the residual stream (bf16: 2; fp32, 4,
	// when fp32 parameters feed the embedding and the norms under autocast).
	Residual float64 `json:"residual_bytes" yaml:"residual_bytes"`
	// WeightCopies says that the matmuls read Weight-sized copies of the
	// parameters, which are the Master copy: cast every micro-batch and
	// freed after the backward pass (PyTorch autocast, FSDP2 mixed
	// precision). Without it the weights are Weight-sized and persistent and
	// the Master copy is part of the optimizer state (Megatron's
	// distributed optimizer), sharded with it by ZeRO.
	WeightCopies bool `json:"weight_copies" yaml:"weight_copies"`
	// TransientGrads says that the gradients are freed after every
	// optimizer step (zero_grad(set_to_none=True)), so the first
	// micro-batch's forward pass runs without them; without it they live in
	// a persistent buffer (Megatron's main_grad).
	TransientGrads bool `json:"transient_grads" yaml:"transient_grads"`
	// GradCast says that each backward pass writes Activation-sized weight
	// gradients that a separate pass casts and accumulates into the
	// Grad-sized gradients (PyTorch autocast); without it the
	// weight-gradient matmul accumulates into them directly (Megatron's
	// gradient-accumulation fusion).
	GradCast bool `json:"grad_cast" yaml:"grad_cast"`
	// TensorUnits says that FSDP gathers each weight tensor by itself and
	// reduce-scatters its gradient as soon as it is made (XLA's SPMD
	// partitioner: one all-gather per parameter at its use, the
	// latency-hiding scheduler prefetching the next): the gathered unit is
	// a layer's largest weight tensor, not the whole layer (PyTorch FSDP
	// and DeepSpeed ZeRO-3 gather a wrapped layer at once).
	TensorUnits bool `json:"tensor_units,omitempty" yaml:"tensor_units"`
	// BucketCopy says that plain data parallelism keeps its all-reduce
	// buckets apart from the gradients, a second Grad-sized copy of every
	// gradient of the stage: PyTorch DDP's default
	// gradient_as_bucket_view=False ("gradients will be views pointing to
	// different offsets of allreduce communication buckets. This can reduce
	// peak memory usage, where the saved memory size will be equal to the
	// total gradients size", torch.nn.parallel.DistributedDataParallel
	// docs). Without it the reduction holds one bucket at a time
	// (Megatron's gradient buffer is the bucket).
	BucketCopy bool `json:"bucket_copy,omitempty" yaml:"bucket_copy"`
	// MainGradCopy says that the optimizer step casts the gradients of the
	// parameters it updates (its ZeRO shard) to a Master-sized copy that
	// Adam reads, when Grad is narrower than Master: Megatron-Core's
	// optimizers with a bf16 gradient buffer
	// (shard_main_param.grad = shard_model_grad.float(),
	// NVIDIA/Megatron-LM@d98e8a64 megatron/core/optimizer/distrib_optimizer.py:2792;
	// main_param.grad = model_param.main_grad.float() without ZeRO,
	// megatron/core/optimizer/optimizer.py:1097),
	// freed by the next step's zero_grad, so it is live in the optimizer
	// step only. Megatron-Core's precision-aware optimizer
	// (use_precision_aware_optimizer) reads the gradients as they are
	// (decoupled_grad, same file :2790) and makes none.
	MainGradCopy bool `json:"main_grad_copy,omitempty" yaml:"main_grad_copy"`
	// GradInWeight says that each gradient overwrites its Weight-sized
	// parameter's storage once the backward pass has used the parameter,
	// so the gradients take no memory of their own: ColossalAI Gemini's
	// chunks (ZeroDDP.grad_handle copies the gradient into the fp16
	// parameter's chunk slice, hpcaitech/ColossalAI@363fc286
	// colossalai/nn/parallel/data_parallel.py:285-291 and
	// colossalai/gemini/chunk/chunk.py:386-399); the fp32 master copy in the
	// optimizer state is what the step updates.
	GradInWeight bool `json:"grad_in_weight,omitempty" yaml:"grad_in_weight"`
	// ShardOverCP says that ZeRO shards the optimizer state (and ZeRO-2
	// the gradients) over the context-parallel ranks as well as the
	// data-parallel ones: Megatron-Core's gradient buffers and distributed
	// optimizer work over the dp x cp group, whose ranks hold the same
	// weights (NVIDIA/Megatron-LM@d98e8a64
	// megatron/core/distributed/distributed_data_parallel.py:148-149, 289,
	// intra_dp_cp_group). Without it ZeRO shards over dp alone.
	ShardOverCP bool `json:"shard_over_cp,omitempty" yaml:"shard_over_cp"`
	// PipelineUnsharded says that under pipeline parallelism FSDP keeps a
	// stage's weights gathered from its first forward pass to its last
	// backward pass and accumulates their unsharded gradients in Grad's
	// dtype until the last micro-batch's reduce-scatter: one gather and one
	// reduction per step instead of per micro-batch, and the stage's
	// gathered weights and gradients held through it. torchtitan does not
	// reshard after the forward pass under pipeline parallelism
	// (pytorch/torchtitan@9dec370 torchtitan/parallelisms/parallelize_llama.py:325-333,
	// @73a0e6979dd10b6b1904098eb3c8f62c18ab87ce
	// torchtitan/models/llama3/infra/parallelize.py:324-327), and PyTorch's
	// PipelineStage turns off resharding after the backward pass and the
	// gradient sync for every micro-batch but the last
	// (torch/distributed/pipelining/stage.py, backward_maybe_with_nosync),
	// where FSDP2 upcasts each unsharded gradient to its reduce dtype and
	// adds the next ones to it (torch/distributed/fsdp/_fully_shard/_fsdp_param.py,
	// to_accumulated_grad_if_needed).
	PipelineUnsharded bool `json:"pipeline_unsharded,omitempty" yaml:"pipeline_unsharded"`
	// ReduceCopy says that FSDP reduce-scatters a copy of each unit's
	// gradients made in Grad's dtype from the Weight-sized ones autograd
	// wrote, and that the copy stays live until the next unit's reduction
	// waits on it: a unit's backward pass holds its gathered weights, the
	// next unit's prefetched gather, its own Weight-sized gradients and the
	// previous unit's Grad-sized copy. PyTorch FSDP2 does so: foreach_reduce
	// chunk_cats the gradients into a reduce_dtype buffer on the compute
	// stream (pytorch/pytorch@8fc2039d
	// torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py), and
	// post_backward keeps that buffer in reduce_scatter_state until the
	// next unit's post_backward waits on its event
	// (@002a76fb _fsdp_param_group.py). Without it a unit's gradients are
	// counted once, in Grad's dtype.
	ReduceCopy bool `json:"reduce_copy,omitempty" yaml:"reduce_copy"`
}

// MixedPrecision is the mixed-precision recipe of Megatron-LM
// ([MEG-MEM], docs/formulas.md §2.1): bf16 weights and activations, fp32
// gradients accumulated and reduced in fp32 (Megatron forces
// accumulate_allreduce_grads_in_fp32 with bf16), fp32 master weights and
// two fp32 Adam moments: 2 + 4 + 4 + 8 = 18 bytes per parameter
// (Korthikanti et al. 2022, Fig. 1), all persistent, and a bf16 residual
// stream.
func MixedPrecision() Precision {
	return Precision{Weight: 2, Grad: 4, Master: 4, Moments: 8, Activation: 2, Residual: 2}
}

// AutocastPrecision is PyTorch's automatic mixed precision with fp32
// parameters (docs/formulas.md §2.1 [derived]; the measured H100 steps of
// docs/measured-h100.md): fp32 parameters that the optimizer updates in
// place (Master 4), bf16 copies autocast makes for the matmuls of every
// forward pass and keeps until their backward pass (Weight 2,
// WeightCopies), fp32 gradients freed by zero_grad(set_to_none=True)
// (TransientGrads) after a cast pass from the bf16 weight gradients
// (GradCast), two fp32 Adam moments, and an fp32 residual stream (the
// embedding and the norms run in fp32).
func AutocastPrecision() Precision {
	return Precision{Weight: 2, Grad: 4, Master: 4, Moments: 8, Activation: 2, Residual: 4,
		WeightCopies: true, TransientGrads: true, GradCast: true}
}

// BF16Weights returns p with the parameters, their gradients and the two
// Adam moments in bf16 and no fp32 copy (MaxText's weight_dtype: bfloat16
// with mu_dtype following it; optax's Adam keeps its second moment like
// the parameters): 2 + 2 + 4 bytes per parameter. The parameters are the
// one copy the optimizer updates (WeightCopies, Master) and the matmuls
// read them as they are, with no cast copy (Casts).
func (p Precision) BF16Weights() Precision {
	const bf16Bytes = 2
	p.Weight, p.Master, p.Grad, p.Moments = bf16Bytes, bf16Bytes, bf16Bytes, 2*bf16Bytes
	p.WeightCopies = true
	return p
}

// BF16Moments returns p with Adam's two moments in bf16 beside the fp32
// master weights and gradients, 2 + 2 bytes per parameter (DeepSeek-V3
// arXiv:2412.19437 §3.3.2, "Low-Precision Optimizer States": "We adopt the
// BF16 data format instead of FP32 to track the first and second moments
// in the AdamW optimizer"; Megatron-Core's --use-precision-aware-optimizer
// --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16, NVIDIA/Megatron-LM@d98e8a64
// megatron/training/arguments.py). The precision-aware optimizer reads the
// gradients as they are, with no Master-sized copy (MainGradCopy; same
// commit, megatron/core/optimizer/distrib_optimizer.py:2790).
func (p Precision) BF16Moments() Precision {
	const bf16Bytes = 2
	p.Moments = 2 * bf16Bytes
	p.MainGradCopy = false
	return p
}

// Casts reports whether the matmuls read cast copies of the parameters:
// WeightCopies with a Master wider than the Weight (a cast to the same
// dtype is the array itself).
func (p Precision) Casts() bool { return p.WeightCopies && p.Master != p.Weight }

// StepBytes is the HBM traffic of the optimizer step per parameter a chip
// updates: fused AdamW reads the master weight, the gradient and the two
// moments and writes the master weight and the moments back (4+4+8 read,
// 4+8 written: the 28 bytes of docs/measured-h100.md's fused AdamW row),
// then writes the Weight-sized copy the matmuls read when it is a separate
// persistent tensor (Megatron's bf16 parameters); clipping adds
// o.ClipPasses passes over the gradients.
func (p Precision) StepBytes(o Optimizer) float64 {
	b := p.Grad + 2*(p.Master+p.Moments) + o.ClipPasses*p.Grad
	if !p.WeightCopies {
		b += p.Weight
	}
	return b
}

// Optimizer is the optimizer step's passes besides AdamW's own.
type Optimizer struct {
	// ClipPasses is the number of passes over the gradients that
	// gradient-norm clipping makes: 0 without clipping; 1 when the scaling
	// is fused into the optimizer and only the norm reads the gradients
	// (Megatron); 3 for torch.nn.utils.clip_grad_norm_ (a read for the norm,
	// a read and a write to scale).
	ClipPasses float64 `json:"clip_passes" yaml:"clip_passes"`
}

// Validate reports a negative or absurd entry.
func (o Optimizer) Validate() error {
	if !(o.ClipPasses >= 0 && o.ClipPasses <= 8) {
		return fmt.Errorf("model: optimizer clip_passes = %v must be between 0 and 8", o.ClipPasses)
	}
	return nil
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
	if p.Residual == 0 {
		p.Residual = p.Activation
	}
	return p
}

// Validate reports a negative or absurd element size.
func (p Precision) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"weight_bytes", p.Weight}, {"grad_bytes", p.Grad}, {"master_bytes", p.Master},
		{"moments_bytes", p.Moments}, {"activation_bytes", p.Activation}, {"residual_bytes", p.Residual}} {
		if !(f.v >= 0 && f.v <= 64) {
			return fmt.Errorf("model: precision %s = %v must be between 0 and 64 bytes", f.name, f.v)
		}
	}
	return nil
}
