package memory

import "github.com/meshplan/meshplan/model"

// layerParams is one layer's parameters on one chip before data-parallel
// sharding, split into the part whose gradients are reduced over the
// data-parallel group (dense) and the routed experts, reduced over the
// expert-data-parallel group (formulas.md §2.1 [MEG-MEM]).
func layerParams(m model.Spec, g geometry, moe bool) (dense, experts float64) {
	h, kv := float64(m.Hidden), float64(m.KVDim())
	// K and V projections, 2·h·kv (+2kv biases), shard over min(t, kv heads) (formulas.md §1.1).
	attnKV := 2 * h * kv
	if m.Bias {
		attnKV += 2 * kv
	}
	attnQ := float64(m.AttentionParams()) - attnKV
	// Attention and MLP matrices shard over t; norms (and the router) are replicated [MEG-MEM].
	dense = attnQ/g.t + attnKV/g.tKV + float64(m.NormParams())
	if !moe {
		return dense + float64(m.MLPParams(m.FFNHidden))/g.t, 0
	}
	// Router h·E replicated, shared experts over t, routed experts over ep [MEG-MEM][MEG-MOE].
	dense += float64(m.RouterParams()) + float64(m.SharedExpertParams())/g.t
	experts = float64(m.MoE.Experts) * float64(m.ExpertParams()) / g.expertShard
	return dense, experts
}

// embeddingParams is the vocabulary-parallel embedding (or output) matrix
// on one chip, V·h/t (formulas.md §2.1 [MEG-MEM]).
func embeddingParams(m model.Spec, g geometry) float64 {
	return float64(m.EmbeddingParams()) / g.t
}

// states is a stage's model states on one chip, in bytes, plus the
// parameter counts the buffers need.
type states struct {
	weights, grads, optimizer float64
	// denseParams and expertParams are the stage's parameters on one chip
	// before data-parallel sharding.
	denseParams, expertParams float64
	// unitParams is the largest FSDP unit (one layer, or the embedding/output
	// matrix) on one chip before data-parallel sharding.
	unitParams float64
}

// stageStates is the model states of a stage with the given dense and MoE
// layers (and the embedding on the first stage, the output layer and final
// norm on the last), divided by the data-parallel sharding:
//
//	weights   = w·(P_dense/fsdp + P_exp/fsdp_e)
//	grads     = g·(P_dense/(fsdp·dp₂) + P_exp/(fsdp_e·dp_e₂))   dp₂ = dp under ZeRO-2, else 1
//	optimizer = k·(P_dense/(fsdp·dp₁) + P_exp/(fsdp_e·dp_e₁))   dp₁ = dp under ZeRO-1/2, else 1
//
// (formulas.md §2.1 [ZERO §5]; experts over the expert-data-parallel group [MEG-DDP]).
func stageStates(m model.Spec, g geometry, o Options, lt layerTerms, dense, moe int, first, last bool) states {
	var st states
	st.denseParams = float64(dense) * lt.paramsDense
	st.unitParams = lt.paramsDense * float64(min(dense, 1))
	if moe > 0 {
		st.denseParams += float64(moe) * lt.paramsMoE
		st.expertParams = float64(moe) * lt.paramsRouted
		st.unitParams = max(st.unitParams, lt.paramsMoE+lt.paramsRouted)
	}
	emb := embeddingParams(m, g)
	if first {
		// Input embedding V·h/t on the first stage [MEG-MEM].
		st.denseParams += emb
		st.unitParams = max(st.unitParams, emb)
	}
	if last {
		// Final norm; output layer V·h/t when untied, and a copy of the tied
		// embedding when the last stage is not also the first (Megatron keeps
		// one there to compute the logits and all-reduces its gradient).
		st.denseParams += float64(m.FinalNormParams())
		if !m.TiedEmbeddings || !first {
			st.denseParams += emb
			st.unitParams = max(st.unitParams, emb)
		}
	}
	gradDP, optDP := 1.0, 1.0
	gradEDP, optEDP := 1.0, 1.0
	if g.zero >= 1 {
		optDP, optEDP = g.dp, g.expertDP
	}
	if g.zero >= 2 {
		gradDP, gradEDP = g.dp, g.expertDP
	}
	dense0 := st.denseParams / g.fsdp
	exp0 := st.expertParams / g.expertFSDP
	st.weights = o.weightBytes() * (dense0 + exp0)
	st.grads = o.gradBytes() * (dense0/gradDP + exp0/gradEDP)
	st.optimizer = o.optimizerBytes() * (dense0/optDP + exp0/optEDP)
	return st
}
