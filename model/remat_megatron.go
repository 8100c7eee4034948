package model

import (
	"fmt"
	"slices"
	"strings"
)

// Megatron-Core's --recompute-modules, the submodules selective recompute
// can re-run (Megatron-LM@d98e8a64:megatron/core/transformer/transformer_config.py:560-563).
const (
	ModuleCoreAttn      = "core_attn"      // the attention core
	ModuleMLP           = "mlp"            // the dense MLP of a layer without experts
	ModuleLayernorm     = "layernorm"      // the norms that are modules of their own
	ModuleMoEAct        = "moe_act"        // the experts' activation
	ModuleMoE           = "moe"            // the whole MoE layer
	ModuleMLAUpProj     = "mla_up_proj"    // MLA's up-projections and rotary embedding
	ModuleSharedExperts = "shared_experts" // the shared experts
)

// megatronModules lists the modules in the order a policy name gives them.
func megatronModules() []string {
	return []string{ModuleCoreAttn, ModuleMLP, ModuleLayernorm, ModuleMoEAct, ModuleMoE, ModuleMLAUpProj, ModuleSharedExperts}
}

// BlockOps names ops a policy re-runs in the blocks of one name only.
type BlockOps struct {
	// Block is the block name (Block.Name: "attention", "mlp", "moe").
	Block string
	// Ops are the op names re-run there.
	Ops []string
	// UnlessOp skips blocks that hold an op of this name: Transformer
	// Engine fuses the norm into that op's linear layer
	// (TELayerNormColumnParallelLinear), so there is no norm module to
	// re-run.
	UnlessOp string
}

// IsModuleList reports whether name is a recompute policy given as
// Megatron-Core's --recompute-modules: module names joined by "+"
// ("core_attn+mlp").
func IsModuleList(name string) bool {
	_, ok := modulePolicy(name)
	return ok
}

// modulePolicy returns the policy of a "+"-joined --recompute-modules
// list, and false when name is not one. Each module re-runs what
// Megatron-Core's Transformer Engine layer spec checkpoints for it
// (Megatron-LM@d98e8a64); the ops a module re-runs include the fp8
// quantisations of the gradients of the tensors inside it (quantize_d*),
// which would otherwise hold those tensors:
//
//   - core_attn: the attention core, its inputs q, k, v and its output
//     kept (transformer/attention.py _checkpointed_attention_forward), as
//     selective;
//   - mlp: the dense MLP from the residual stream, the norm fused into
//     linear_fc1, only on layers without experts
//     (transformer/transformer_layer.py:537-539, 992-1010;
//     models/gpt/gpt_layer_specs.py: pre_mlp_layernorm is IdentityOp
//     without experts);
//   - layernorm: the norms that are modules of their own, re-made from
//     their input with the output discarded (CheckpointWithoutOutput,
//     transformer_layer.py:475-530): MLA's input norm and the norm before
//     the experts; dense attention's and the dense MLP's norms are fused
//     into their linear layers (gpt_layer_specs.py:313-336), so nothing
//     re-runs there; under fp8 the linear layer keeps the bf16 input for
//     the re-made value (set_for_recompute_input_layernorm), so the fp8
//     copy is re-made too;
//   - moe_act: the experts' activation, output discarded
//     (transformer/moe/experts.py, grouped GEMM only), its input's clamp
//     (MoE.SwiGLULimit) included: bias_act_func, which the checkpoint
//     wraps, calls weighted_bias_quick_geglu_impl, which clamps;
//   - moe: the MoE layer from the norm's output
//     (transformer/moe/moe_layer.py tensor_parallel.checkpoint);
//   - mla_up_proj: MLA's up-projections and rotary embedding, output
//     discarded (transformer/multi_latent_attention.py);
//   - shared_experts: the shared experts' MLP (moe/shared_experts.py).
//
// transformer_config.py:2024-2025 adds "moe" under "moe_act" no more than
// the list names; the policy follows the list.
func modulePolicy(name string) (Policy, bool) {
	parts := strings.Split(name, "+")
	known := megatronModules()
	for _, m := range parts {
		if !slices.Contains(known, m) {
			return Policy{}, false
		}
	}
	pol := Policy{Name: canonicalModules(parts), Layers: true}
	for _, m := range known {
		if !slices.Contains(parts, m) {
			continue
		}
		switch m {
		case ModuleCoreAttn:
			pol.Rerun[GroupCore] = true
		case ModuleMLP:
			pol.RerunBlockOps = append(pol.RerunBlockOps, BlockOps{Block: "mlp",
				Ops: []string{"norm2", "quantize_xn2", "ffn_in", "quantize_dh", "act", "quantize_a", "ffn_out"}})
		case ModuleLayernorm:
			pol.RerunBlockOps = append(pol.RerunBlockOps,
				BlockOps{Block: "attention", Ops: []string{"norm1", "quantize_xn"}, UnlessOp: "qkv"},
				BlockOps{Block: "moe", Ops: []string{"norm2", "quantize_xn2"}})
			pol.Discard = append(pol.Discard, "norm1", "quantize_xn", "norm2", "quantize_xn2")
		case ModuleMoEAct:
			pol.RerunBlockOps = append(pol.RerunBlockOps, BlockOps{Block: "moe", Ops: []string{"expert_clamp", "expert_act", "quantize_ae"}})
			pol.Discard = append(pol.Discard, "expert_clamp", "expert_act", "quantize_ae")
		case ModuleMoE:
			pol.RerunBlockOps = append(pol.RerunBlockOps, BlockOps{Block: "moe",
				Ops: []string{"router", "topk", "permute", "dispatch", "quantize_xe", "expert_in", "quantize_dhe", "expert_clamp", "expert_act", "quantize_ae",
					"expert_out", "quantize_dye", "combine", "unpermute", "quantize_xn2", "shared_in", "quantize_dhs", "shared_act", "quantize_as", "shared_out"}})
		case ModuleMLAUpProj:
			pol.RerunBlockOps = append(pol.RerunBlockOps, BlockOps{Block: "attention",
				Ops: []string{"q_up", "quantize_dq", "kv_up", "quantize_dkv", "q_proj", "rope", "kv_split"}})
			pol.Discard = append(pol.Discard, "q_up", "kv_up", "q_proj", "rope", "kv_split")
		case ModuleSharedExperts:
			pol.RerunBlockOps = append(pol.RerunBlockOps, BlockOps{Block: "moe",
				Ops: []string{"shared_in", "quantize_dhs", "shared_act", "quantize_as", "shared_out"}})
		}
	}
	return pol, true
}

// canonicalModules joins the modules in megatronModules' order, once each.
func canonicalModules(parts []string) string {
	var out []string
	for _, m := range megatronModules() {
		if slices.Contains(parts, m) {
			out = append(out, m)
		}
	}
	return strings.Join(out, "+")
}

// rerunsInBlock reports whether pol re-runs op o of block blk by a
// per-block rule (Policy.RerunBlockOps).
func (pol Policy) rerunsInBlock(blk *Block, o *Op) bool {
	for _, r := range pol.RerunBlockOps {
		if r.Block != blk.Name || !slices.Contains(r.Ops, o.Name) {
			continue
		}
		if r.UnlessOp != "" && slices.ContainsFunc(blk.Fwd, func(x Op) bool { return x.Name == r.UnlessOp }) {
			continue
		}
		return true
	}
	return false
}

// applicableModules returns the modules of megatronModules that re-run
// some op of p's blocks, in that order: a dense model without MLA has no
// layernorm, moe_act, moe, mla_up_proj or shared_experts module to re-run.
func applicableModules(p *Program) []string {
	var out []string
	for _, m := range megatronModules() {
		if CheckModules(m, &p.Spec) != nil {
			// A module the model does not have (mla_up_proj's rope and
			// q_proj ops are in every rotary attention block).
			continue
		}
		pol, _ := modulePolicy(m)
		if p.rerunsAny(pol) {
			out = append(out, m)
		}
	}
	return out
}

// rerunsAny reports whether pol re-runs any op of p's layer blocks.
func (p *Program) rerunsAny(pol Policy) bool {
	for b := range p.Blocks {
		for i := range p.Blocks[b].Fwd {
			if p.Reruns(pol, b, &p.Blocks[b].Fwd[i]) {
				return true
			}
		}
	}
	return false
}

// ModulePolicies returns the policies of every --recompute-modules list of
// the modules that re-run something in p (applicableModules), for models
// that precompute per policy; EffectivePolicyName maps any list to one of
// them.
func ModulePolicies(p *Program) []Policy {
	mods := applicableModules(p)
	var out []Policy
	for set := 1; set < 1<<len(mods); set++ {
		var parts []string
		for i, m := range mods {
			if set&(1<<i) != 0 {
				parts = append(parts, m)
			}
		}
		pol, _ := modulePolicy(strings.Join(parts, "+"))
		out = append(out, pol)
	}
	return out
}

// EffectivePolicyName returns the name of the policy in Policies or
// ModulePolicies(p) that re-runs what the --recompute-modules list name
// re-runs in p: the list less the modules that re-run nothing in p
// ("core_attn+layernorm" is "core_attn" on a model whose norms are all
// fused), none when nothing is left; name itself when it is no list.
func EffectivePolicyName(p *Program, name string) string {
	if !IsModuleList(name) {
		return name
	}
	mods := applicableModules(p)
	var keep []string
	for _, m := range strings.Split(name, "+") {
		if slices.Contains(mods, m) {
			keep = append(keep, m)
		}
	}
	if len(keep) == 0 {
		return RecomputeNone
	}
	return canonicalModules(keep)
}

// CheckModules reports a --recompute-modules policy that names a module
// model m does not have, which Megatron-Core's TransformerConfig refuses
// (Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553:
// megatron/core/transformer/transformer_config.py:1964-1999): moe and
// moe_act without experts, shared_experts without shared experts,
// mla_up_proj without multi-latent attention. Any other policy, and a
// list whose modules m has, is nil.
func CheckModules(name string, m *Spec) error {
	if !IsModuleList(name) {
		return nil
	}
	for _, mod := range strings.Split(name, "+") {
		switch {
		case (mod == ModuleMoE || mod == ModuleMoEAct) && m.MoE == nil:
			return fmt.Errorf("recompute=%s: %s re-runs expert layers, which %s does not have", name, mod, m.Name)
		case mod == ModuleSharedExperts && (m.MoE == nil || m.MoE.SharedExperts == 0):
			return fmt.Errorf("recompute=%s: shared_experts re-runs shared experts, which %s does not have", name, m.Name)
		case mod == ModuleMLAUpProj && m.MLA == nil:
			return fmt.Errorf("recompute=%s: mla_up_proj re-runs multi-latent attention's up-projections, which %s does not have", name, m.Name)
		}
	}
	return nil
}
