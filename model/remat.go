package model

import (
	"slices"
	"strings"
)

// Recompute policy names of the strategy string.
const (
	RecomputeNone      = "none"
	RecomputeSelective = "selective"
	RecomputeFull      = "full"
)

// Recompute policies of frameworks, by their own names (docs/frameworks.md):
// MaxText's remat policies and PyTorch's checkpointing variants.
const (
	RecomputeMinimal            = "minimal"                            // MaxText: save every projection's output
	RecomputeSaveDotExceptMLPWi = "save_dot_except_mlpwi"              // MaxText: ... except the MLP input projection's
	RecomputeSaveDotExceptMLP   = "save_dot_except_mlp"                // MaxText: ... except both MLP projections'
	RecomputeSaveQKVProj        = "save_qkv_proj"                      // MaxText: save only the q, k, v projection
	RecomputeQKVProjOffloaded   = "qkv_proj_offloaded"                 // MaxText: that, kept in host memory
	RecomputeMinimalOffloaded   = "minimal_offloaded"                  // MaxText: minimal, kept in host memory
	RecomputeOffloadInput       = "offload_layer_input"                // full recompute with the layer input in host memory
	RecomputeOffloadInputQKV    = "offload_input_qkv"                  // MaxText custom: the layer input and q, k, v in host memory
	RecomputeOffloadInputQKVO   = "offload_input_qkvo"                 // MaxText custom: those and the output projection's
	RecomputeOffloadInputOut    = "offload_input_out"                  // MaxText custom: the layer input and the output projection's in host memory
	RecomputeOffloadContextWo   = "offload_context_mlpwo"              // MaxText custom: the attention output and the MLP output projection's in host memory, the layer input in HBM
	RecomputeDeepSeek           = "deepseek"                           // DeepSeek-V3: norms, MLA up-projections and SwiGLU outputs re-run
	RecomputeNormAct            = "norm_act"                           // fused kernels: norms and MLP activation outputs re-run, no matmul
	RecomputeSelectiveOp        = "selective_op"                       // torchtitan's per-op selective AC: every other matmul's output and the attention's kept
	RecomputeMoE                = ModuleMoE                            // Megatron-Core --recompute-modules moe: the whole MoE block re-runs (modulePolicy)
	RecomputeMoENorm            = ModuleLayernorm + "+" + ModuleMoE    // Megatron-Core layernorm moe: that, and the MoE block's own norm
	RecomputeMoEAct             = ModuleMoEAct                         // Megatron-Core moe_act: the routed experts' activation output re-made
	RecomputeNormMoEAct         = ModuleLayernorm + "+" + ModuleMoEAct // Megatron-Core layernorm moe_act: that, and the MoE block's own norm
)

// Policy is an activation recomputation policy as data: which ops of a
// block the backward pass re-runs rather than reading their outputs from
// memory, and which kept tensors live in host memory. What each policy
// saves follows from the program (Program.Saved), so the cost model (which
// re-runs the ops) and the memory model (which does not store their
// outputs) agree by construction.
type Policy struct {
	// Name is the policy's name in the strategy string.
	Name string
	// Rerun says, per op group, that the policy re-runs the group's ops;
	// RerunOps names further ops it re-runs (MaxText's "except mlpwi").
	Rerun    [NumGroups]bool
	RerunOps []string
	// Layers limits the policy to transformer layers; the embedding and
	// output blocks always keep what they need.
	Layers bool
	// SkipScans leaves the state-space and linear-attention scans (Op.Scan)
	// alone although their group re-runs: their fused kernels already
	// re-make what they do not keep (mamba_ssm's chunked scan re-runs the
	// conv and the chunk states in its backward), and Megatron-Core's
	// core_attn recompute checkpoints the attention core only
	// (NVIDIA/Megatron-LM@d98e8a64 megatron/core/transformer/attention.py:446,
	// _checkpointed_attention_forward).
	SkipScans bool
	// RecomputeUsed recomputes the output of a re-run op even where an op
	// that is not re-run needs it, as JAX's remat policies decide per value
	// (a projection's input is recomputed from the saved output before
	// it); without it such an output is kept, as torch.utils.checkpoint
	// around part of a layer keeps what leaves the checkpointed region
	// (Megatron's selective recompute keeps the core attention's output).
	RecomputeUsed bool
	// Keep names ops whose outputs are kept although their group re-runs
	// (MaxText's save_qkv_proj and the named tensors of remat_policy
	// custom).
	Keep []string
	// Offload names ops whose kept outputs live in host memory between the
	// forward and the backward pass ("input" names the layer's input):
	// they leave HBM and cross the host link twice per micro-batch.
	Offload []string
	// RerunBlockOps names ops re-run in blocks of one name only
	// (Megatron-Core's --recompute-modules, modulePolicy).
	RerunBlockOps []BlockOps
	// Discard names re-run ops whose outputs are re-made even where an op
	// that is not re-run needs them, under torch-style saving (Megatron-Core's
	// CheckpointWithoutOutput: the output's storage is freed after the
	// forward pass and refilled before the backward pass needs it).
	Discard []string
	// Unsaved names ops whose saved tensors the policy's implementation
	// does not keep, because it computes their backward from tensors it
	// keeps or re-makes anyway (DeepSeek-V3's experts weigh their SwiGLU
	// output by the routing probabilities, so the combine is a plain sum).
	Unsaved []string
	// Narrow names kept tensors that the policy stores at fewer bytes per
	// element than their class when the program runs an fp8 recipe
	// (DeepSeek-V3 §3.3.2's low-precision storage); a narrowed tensor's
	// fp8 copy is not kept beside it, the one stored copy serving every
	// backward use.
	Narrow []Narrowed
	// Partial names fused projections of which the policy re-runs some
	// output columns only and keeps the rest (torchtitan's per-op
	// selective AC re-runs every second of a layer's separate matmuls, so
	// of the program's fused q, k, v projection it re-runs k's columns,
	// and of the fused gate and up projection the up half): the recompute
	// pass re-runs that share of the op (Program.RerunShare) and the op's
	// output is kept at the rest of its bytes (Program.KeptBytes).
	Partial []PartialRerun
}

// PartialRerun is a fused projection, by op name, whose Columns
// (ColumnsKey, ColumnsUp) a policy re-runs (Policy.Partial).
type PartialRerun struct {
	Op, Columns string
}

// Column sets of a fused projection a policy may re-run alone
// (PartialRerun).
const (
	ColumnsKey = "k"  // the key columns of the q, k, v projection
	ColumnsUp  = "up" // the up half of a SwiGLU's gate and up projection
)

// Narrowed is a tensor, by name, that a policy keeps at Bytes per element
// under an fp8 recipe (Policy.Narrow).
type Narrowed struct {
	Tensor string
	Bytes  float64
}

// Policies returns the known policies: none keeps every activation the
// backward pass needs; selective re-runs the attention core (the score
// square, [KORT §4.2]); full re-runs every op of a layer and keeps only the
// layer's input (docs/formulas.md §2.2); MaxText's remat policies keep
// chosen projections' outputs and re-run the rest, JAX-style
// ([MT-REMAT]: checkpoint_dots_with_no_batch_dims for minimal,
// save_dot_except_mlpwi and the others by name); the offloaded ones keep
// their saved tensors in host memory.
func Policies() []Policy {
	all := [NumGroups]bool{}
	for g := range all {
		all[g] = true
	}
	// Everything but the projections: JAX's dot-saving policies.
	dots := all
	dots[GroupProjection] = false
	return []Policy{
		{Name: RecomputeNone},
		{Name: RecomputeSelective, Rerun: [NumGroups]bool{GroupCore: true}, Layers: true, SkipScans: true},
		{Name: RecomputeFull, Rerun: all, Layers: true},
		{Name: RecomputeMinimal, Rerun: dots, Layers: true, RecomputeUsed: true},
		{Name: RecomputeSaveDotExceptMLPWi, Rerun: dots, RerunOps: []string{"ffn_in", "expert_in", "shared_in"}, Layers: true, RecomputeUsed: true},
		{Name: RecomputeSaveDotExceptMLP, Rerun: dots, RerunOps: []string{"ffn_in", "ffn_out", "expert_in", "expert_out", "shared_in", "shared_out"}, Layers: true, RecomputeUsed: true},
		{Name: RecomputeSaveQKVProj, Rerun: all, RerunOps: nil, Layers: true, RecomputeUsed: true, Keep: qkvProjections(), Offload: nil},
		{Name: RecomputeQKVProjOffloaded, Rerun: all, Layers: true, RecomputeUsed: true, Keep: qkvProjections(), Offload: qkvProjections()},
		{Name: RecomputeMinimalOffloaded, Rerun: dots, Layers: true, RecomputeUsed: true,
			Offload: []string{"qkv", "out", "ffn_in", "ffn_out", "router", "expert_in", "expert_out", "shared_in", "shared_out",
				"q_down", "q_up", "q_proj", "kv_down", "kv_up", "k_rope", "mtp_proj"}},
		{Name: RecomputeOffloadInput, Rerun: all, Layers: true, Offload: []string{"input"}},
		// MaxText's remat_policy custom as the tpu-recipes run it on v6e
		// (decoder_layer_input, query_proj, key_proj, value_proj and, for
		// the 8B and Mistral recipes, out_proj set to offload; every other
		// named tensor left to remat): the layer re-runs, the named outputs
		// are kept in host memory [MT-REMAT].
		{Name: RecomputeOffloadInputQKV, Rerun: all, Layers: true, RecomputeUsed: true, Keep: qkvProjections(),
			Offload: append([]string{"input"}, qkvProjections()...)},
		{Name: RecomputeOffloadInputQKVO, Rerun: all, Layers: true, RecomputeUsed: true, Keep: append(qkvProjections(), "out"),
			Offload: append(append([]string{"input"}, qkvProjections()...), "out")},
		// The same custom policy as the v5p recipes run it
		// (AI-Hypercomputer/maxtext@3eb77db3:benchmarks/maxtext_v5p_model_configs.py):
		// DeepSeek-V3 offloads decoder_layer_input and out_proj;
		// Llama 3.1 405B offloads context (the attention core's output,
		// the output projection's input) and mlpwo (the MLP output
		// projection's output), its decoder_layer_input left at base.yml's
		// 'device': kept in HBM, as full recompute keeps it [MT-REMAT].
		{Name: RecomputeOffloadInputOut, Rerun: all, Layers: true, RecomputeUsed: true, Keep: []string{"out"},
			Offload: []string{"input", "out"}},
		{Name: RecomputeOffloadContextWo, Rerun: all, Layers: true, RecomputeUsed: true, Keep: mlpwoContext(),
			Offload: mlpwoContext()},
		// DeepSeek-V3 §3.2.3: every RMSNorm and MLA's up-projections are
		// re-run in the backward pass, and the SwiGLU keeps its inputs and
		// re-runs its output (Megatron-Core's --recompute-modules layernorm
		// mla_up_proj moe_act); what they produce is recomputed, JAX-style,
		// so the attention core's q, k and v (with their rotary embedding and
		// the k/v split) are not kept, nor the fp8 copies of the SwiGLU
		// outputs, re-quantised from the re-run output (§3.3.2 keeps the
		// SwiGLU inputs). Nor are the norms' outputs kept in fp8 for the
		// projections after them: §3.2.3 re-runs every RMSNorm "thereby
		// eliminating the need to persistently store their output
		// activations", so their fp8 copies (xn, cqn, ckvn, xn2, and the
		// multi-token-prediction module's concatenation of its two normed
		// inputs) are re-quantised from the re-run norms; the fp8 inputs
		// kept are those of the projections no norm feeds (the attention
		// output, the dispatched tokens).
		// The routed experts weigh their SwiGLU output by the routing
		// probabilities, so the combine is a plain sum that keeps no copy
		// for its backward (DeepEP dispatches topk_weights with the tokens
		// and returns their gradient through the backward dispatch,
		// deepseek-ai/DeepEP README; Megatron-Core's weighted SwiGLU,
		// NVIDIA/Megatron-LM@d98e8a64 megatron/core/transformer/moe/experts.py:943-970).
		// Under fp8 (§3.3.2, "Low-Precision Storage"): the MoE SwiGLU inputs
		// (routed and shared) are kept in fp8, and the input of the linear
		// after the attention core once, in E5M6 (1.5 bytes), for both the
		// core's and the projection's backward.
		{Name: RecomputeDeepSeek, Rerun: [NumGroups]bool{GroupNorm: true, GroupActivation: true},
			RerunOps: []string{"q_up", "kv_up", "rope", "kv_split", "quantize_a", "quantize_ae", "quantize_as",
				"quantize_xn", "quantize_cqn", "quantize_ckvn", "quantize_xn2", "concat", "quantize_eh"}, Layers: true, RecomputeUsed: true,
			Unsaved: []string{"unpermute"},
			Narrow:  []Narrowed{{Tensor: "he", Bytes: 1}, {Tensor: "hs", Bytes: 1}, {Tensor: "o", Bytes: e5m6Bytes}}},
		// The elementwise part of DeepSeek-V3's policy, as fused kernels run
		// it: every norm re-runs from its input in the backward pass (Apex's
		// memory-efficient RMSNorm, Megatron-Core's --recompute-modules
		// layernorm) and the MLP activation re-makes its output from the
		// gate and up projections (xformers' fused SwiGLU, Megatron-Core's
		// moe_act); no matmul re-runs (docs/frameworks.md).
		{Name: RecomputeNormAct, Rerun: [NumGroups]bool{GroupNorm: true, GroupActivation: true}, Layers: true, RecomputeUsed: true},
		// torchtitan's per-op selective AC (activation_checkpoint.mode
		// selective, selective_ac_option op): inside each transformer
		// block's checkpoint, torch.utils.checkpoint's policy saves the
		// output of every op in _save_list (aten.mm except every second
		// one, the SDPA kernels, the reduce-scatter, max) and recomputes
		// every other op (pytorch/torchtitan@820504e20d1149fbf0b98c567af24c4b0433b22d
		// torchtitan/models/llama3/parallelize_llama.py:207-269; under
		// torch.compile PREFER_RECOMPUTE is recomputed like MUST_RECOMPUTE,
		// torch/_functorch/partitioners.py must_recompute). Its Llama runs
		// seven matmuls in the order wq, wk, wv, wo, w1, w3, w2, so wk, wo
		// and w3 are not saved; wo's output is reduce-scattered (saved) or,
		// without tp, only feeds the residual add, so it never re-runs; wk
		// (the key columns of the fused qkv) and w3 (the up half of ffn_in)
		// re-run. The norms, the rotary embedding, the SwiGLU and the
		// residual adds re-run, JAX-style (what the backward needs from
		// them is recomputed, torch.compile's partitioner recomputing
		// every op not saved); the attention core keeps its output and
		// log-sum-exp (its inputs q, k, v are re-made by the rotary
		// embedding).
		{Name: RecomputeSelectiveOp, Rerun: torchtitanOpRerun(), Layers: true, RecomputeUsed: true,
			Partial: []PartialRerun{{Op: "qkv", Columns: ColumnsKey}, {Op: "ffn_in", Columns: ColumnsUp}}},
	}
}

// torchtitanOpRerun is the groups torchtitan's per-op selective AC
// re-runs whole: every group but the projections and the attention core.
func torchtitanOpRerun() [NumGroups]bool {
	var r [NumGroups]bool
	for g := range r {
		r[g] = Group(g) != GroupProjection && Group(g) != GroupCore
	}
	return r
}

// RerunShare returns the share of op o's work that policy pol re-runs in
// the recompute pass beyond the ops it re-runs whole (Policy.Partial): the
// key columns' share of the q, k, v projection, kv/(q+2kv) of its width
// (the query, key and value projections' output widths, Spec.QDim and
// KVDim), or half of a SwiGLU's gate and up projection; 0 for any other op,
// and outside the layers.
func (p *Program) RerunShare(pol Policy, b int, o *Op) float64 {
	if len(pol.Partial) == 0 || o.Kind != Einsum || (pol.Layers && (b == p.Embedding || b == p.Output)) {
		return 0
	}
	i := slices.IndexFunc(pol.Partial, func(r PartialRerun) bool { return r.Op == o.Name })
	if i < 0 {
		return 0
	}
	return p.columnsShare(pol.Partial[i].Columns)
}

// columnsShare is the share of its fused projection's output that a
// PartialRerun's columns are.
func (p *Program) columnsShare(columns string) float64 {
	s := &p.Spec
	switch columns {
	case ColumnsKey:
		q, kv := float64(s.QDim()), float64(s.KVDim())
		if s.MLA != nil || q+2*kv <= 0 {
			return 0
		}
		hw := q + 2*kv
		if s.AttnGate {
			hw += q // the output gate's columns ride in the same projection
		}
		return kv / hw
	case ColumnsUp:
		if s.FFN == SwiGLU {
			return 0.5 // gate and up are equally wide
		}
	}
	return 0
}

// partialShare returns the share of tensor t that policy pol re-makes
// rather than keeps: the RerunShare of the layer op that writes it.
func (p *Program) partialShare(pol Policy, t int) float64 {
	if len(pol.Partial) == 0 {
		return 0
	}
	for b := range p.Blocks {
		if b == p.Embedding || b == p.Output {
			continue
		}
		for i := range p.Blocks[b].Fwd {
			if o := &p.Blocks[b].Fwd[i]; o.C == t {
				return p.RerunShare(pol, b, o)
			}
		}
	}
	return 0
}

// e5m6Bytes is DeepSeek-V3's E5M6 format, 12 bits, in which it keeps the
// input of the linear after the attention core (arXiv:2412.19437 §3.3.2).
const e5m6Bytes = 1.5

// qkvProjections are the ops whose outputs are the queries, keys and
// values before the core: the fused projection, or MLA's up-projections
// (q_proj without query compression).
func qkvProjections() []string { return []string{"qkv", "q_up", "q_proj", "kv_up"} }

// mlpwoContext are the ops whose outputs MaxText names context (the
// attention core's output) and mlpwo (the dense MLP's output projection,
// a shared expert's included).
func mlpwoContext() []string { return []string{"attend", "ffn_out", "shared_out"} }

// keeps reports whether pol keeps op o's output although o's group re-runs
// (Policy.Keep: save_qkv_proj and qkv_proj_offloaded keep the q, k, v
// projection).
func (pol Policy) keeps(o *Op) bool { return slices.Contains(pol.Keep, o.Name) }

// PolicyNames returns the names of the known policies.
func PolicyNames() []string {
	var out []string
	for _, p := range Policies() {
		out = append(out, p.Name)
	}
	return out
}

// LookupPolicy returns the known policy with the given name.
func LookupPolicy(name string) (Policy, bool) {
	for _, p := range Policies() {
		if p.Name == name {
			return p, true
		}
	}
	return modulePolicy(name)
}

// Reruns reports whether policy pol re-runs op o of block b.
func (p *Program) Reruns(pol Policy, b int, o *Op) bool {
	if pol.Layers && (b == p.Embedding || b == p.Output) {
		return false
	}
	if pol.keeps(o) || (pol.SkipScans && o.Scan) {
		return false
	}
	return pol.Rerun[o.Group] || slices.Contains(pol.RerunOps, o.Name) || pol.rerunsInBlock(&p.Blocks[b], o)
}

// Offloaded returns the tensors among saved (Saved's result for blocks)
// that policy pol keeps in host memory: the outputs of the ops it names,
// and the blocks' input for "input".
func (p *Program) Offloaded(blocks []int, pol Policy, saved []int) []int {
	if len(pol.Offload) == 0 {
		return nil
	}
	var out []int
	for _, b := range blocks {
		blk := &p.Blocks[b]
		if slices.Contains(pol.Offload, "input") && blk.Input >= 0 && slices.Contains(saved, blk.Input) && !slices.Contains(out, blk.Input) {
			out = append(out, blk.Input)
		}
		for i := range blk.Fwd {
			o := &blk.Fwd[i]
			if slices.Contains(pol.Offload, o.Name) && slices.Contains(saved, o.C) && !slices.Contains(out, o.C) {
				out = append(out, o.C)
			}
		}
	}
	return out
}

// Saved returns the tensors the given blocks (a layer kind's, or the
// embedding or output block) keep in memory for their backward pass under
// policy pol, in first-use order: what the backward pass of every op needs
// (Op.Saves) and the inputs of the re-run ops, less what the re-run ops
// produce for one another only. Under full recompute a layer keeps just its
// input; under selective recompute the attention block drops the score
// square and the flash kernel's statistics but keeps the core's inputs q, k,
// v and its output ([KORT §4.1-4.2]), the output only where the projection
// after it saves it (not under an fp8 recipe, whose projection keeps the
// fp8 copy).
func (p *Program) Saved(blocks []int, pol Policy) []int {
	if pol.RecomputeUsed {
		return p.savedJAX(blocks, pol)
	}
	var need []int
	add := func(t int) {
		if t >= 0 && !p.Tensors[t].Weight && p.Tensors[t].Class != ClassVirtual && !p.Tensors[t].OnChip && !slices.Contains(need, t) {
			need = append(need, t)
		}
	}
	// rerunOut: tensors some re-run op writes; usedOutside: tensors an op
	// that is not re-run saves for its backward pass. A checkpointed
	// region's output that the ops after it only read is freed once they
	// have run (torch.utils.checkpoint keeps the region's inputs, and the
	// output lives only as long as something holds it): under an fp8
	// recipe the attention core's output feeds the output projection,
	// which keeps its fp8 copy, not the bf16 output (Transformer Engine's
	// Linear saves the quantized input, NVIDIA/TransformerEngine@d0067d0d
	// transformer_engine/pytorch/module/linear.py:597-621).
	var rerunOut, usedOutside, discarded []int
	for _, b := range blocks {
		p.savedOps(b, pol, add, &rerunOut, &usedOutside)
		discarded = append(discarded, p.discardedOuts(b, pol)...)
	}
	out := need[:0]
	for _, t := range need {
		if slices.Contains(rerunOut, t) && (pol.RecomputeUsed || !slices.Contains(usedOutside, t) || slices.Contains(discarded, t)) {
			continue
		}
		out = append(out, t)
	}
	return p.dropNarrowedCopies(pol, out)
}

// KeptBytes returns the bytes per element at which policy pol keeps tensor
// t: its Narrow entry's under an fp8 recipe, else its class's (ElemBytes),
// less the share of it the policy re-makes (Policy.Partial).
func (p *Program) KeptBytes(pol Policy, t int) float64 {
	if n, ok := p.narrowed(pol, t); ok {
		return n.Bytes
	}
	// A fused projection's output of which the policy re-makes some
	// columns keeps the rest (Policy.Partial).
	return p.ElemBytes(t) * (1 - p.partialShare(pol, t))
}

// narrowed returns policy pol's Narrow entry for tensor t when the program
// runs an fp8 recipe.
func (p *Program) narrowed(pol Policy, t int) (Narrowed, bool) {
	if p.Options.FP8 == nil || len(pol.Narrow) == 0 {
		return Narrowed{}, false
	}
	i := slices.IndexFunc(pol.Narrow, func(n Narrowed) bool { return n.Tensor == p.Tensors[t].Name })
	if i < 0 {
		return Narrowed{}, false
	}
	return pol.Narrow[i], true
}

// dropNarrowedCopies removes from saved the fp8 copies of the tensors
// policy pol keeps narrowed (Policy.Narrow): the narrowed copy is the one
// kept.
func (p *Program) dropNarrowedCopies(pol Policy, saved []int) []int {
	if p.Options.FP8 == nil || len(pol.Narrow) == 0 {
		return saved
	}
	return slices.DeleteFunc(saved, func(t int) bool {
		name, ok := strings.CutSuffix(p.Tensors[t].Name, "_fp8")
		if !ok || p.Tensors[t].Class != ClassFP8 {
			return false
		}
		return slices.ContainsFunc(pol.Narrow, func(n Narrowed) bool { return n.Tensor == name })
	})
}

// savedJAX is Saved for a JAX-style policy (Policy.RecomputeUsed): the
// backward pass needs what the ops' backward passes save; a re-run op whose
// output (or side output) is needed is re-run from its inputs, which are
// then needed in turn; what a re-run op produces is recomputed, not kept.
// A re-run op whose outputs nothing needs (a residual add whose sum only
// the next layer reads) is not re-run at all, so its inputs are not kept
// for it.
func (p *Program) savedJAX(blocks []int, pol Policy) []int {
	var need []int
	add := func(t int) {
		if t >= 0 && !p.Tensors[t].Weight && p.Tensors[t].Class != ClassVirtual && !p.Tensors[t].OnChip && !slices.Contains(need, t) {
			need = append(need, t)
		}
	}
	var rerunOut []int
	for _, b := range blocks {
		for i := range p.Blocks[b].Fwd {
			o := &p.Blocks[b].Fwd[i]
			if slices.Contains(pol.Unsaved, o.Name) {
				continue // its backward reads what the policy keeps (Policy.Unsaved)
			}
			for _, t := range o.Saves {
				add(t)
			}
		}
	}
	// Walk the ops backwards so that a needed output pulls in its op's
	// inputs before earlier ops are visited.
	for bi := len(blocks) - 1; bi >= 0; bi-- {
		b := blocks[bi]
		fwd := p.Blocks[b].Fwd
		for i := len(fwd) - 1; i >= 0; i-- {
			o := &fwd[i]
			if !p.Reruns(pol, b, o) {
				continue
			}
			outs := append([]int{o.C}, o.Writes...)
			if o.C == o.A {
				outs = o.Writes
			}
			if !slices.ContainsFunc(outs, func(t int) bool { return slices.Contains(need, t) }) {
				continue
			}
			rerunOut = append(rerunOut, outs...)
			add(o.A)
			add(o.B)
		}
	}
	out := need[:0]
	for _, t := range need {
		if !slices.Contains(rerunOut, t) {
			out = append(out, t)
		}
	}
	return p.dropNarrowedCopies(pol, out)
}

// savedOps adds what block b's ops need to keep, and records what its
// re-run ops write and what its other ops save.
func (p *Program) savedOps(b int, pol Policy, add func(int), rerunOut, usedOutside *[]int) {
	blk := &p.Blocks[b]
	for i := range blk.Fwd {
		o := &blk.Fwd[i]
		re := p.Reruns(pol, b, o)
		ins := []int{o.A, o.B}
		saves := o.Saves
		if slices.Contains(pol.Unsaved, o.Name) {
			saves = nil // its backward reads what the policy keeps (Policy.Unsaved)
		}
		for _, t := range saves {
			add(t)
			if !re {
				*usedOutside = append(*usedOutside, t)
			}
		}
		if re {
			for _, t := range ins {
				add(t)
			}
			if o.C != o.A {
				*rerunOut = append(*rerunOut, o.C)
			}
			*rerunOut = append(*rerunOut, o.Writes...)
		}
	}
}

// discardedOuts returns the outputs of block b's re-run ops that pol
// discards (Policy.Discard).
func (p *Program) discardedOuts(b int, pol Policy) []int {
	if len(pol.Discard) == 0 {
		return nil
	}
	var out []int
	for i := range p.Blocks[b].Fwd {
		o := &p.Blocks[b].Fwd[i]
		if !slices.Contains(pol.Discard, o.Name) || !p.Reruns(pol, b, o) {
			continue
		}
		if o.C != o.A {
			out = append(out, o.C)
		}
		out = append(out, o.Writes...)
	}
	return out
}
