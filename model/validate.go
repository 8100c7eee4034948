package model

import (
	"fmt"
	"github.com/meshplan/meshplan/internal/bounded"
	"github.com/meshplan/meshplan/internal/text"
	"math"
	"strings"
)

// Limits that Validate enforces. They are far above any model trained so far
// and exist to catch typos and unit mistakes (tokens for thousands, etc.).
const (
	// MaxLayers is the largest accepted Spec.Layers.
	MaxLayers = 10000
	// MaxHidden is the largest accepted Spec.Hidden.
	MaxHidden = 1000000
	// MaxHeads is the largest accepted Spec.Heads.
	MaxHeads = 100000
	// MaxHeadDim is the largest accepted Spec.HeadDim.
	MaxHeadDim = 65536
	// MaxFFNHidden is the largest accepted MLP intermediate width (dense or expert).
	MaxFFNHidden = 10000000
	// MaxVocab is the largest accepted Spec.Vocab.
	MaxVocab = 10000000
	// MaxSeqLen is the largest accepted Spec.SeqLen, in tokens.
	MaxSeqLen = 10000000
	// MaxExperts is the largest accepted MoE.Experts.
	MaxExperts = 100000
	// MaxSharedExperts is the largest accepted MoE.SharedExperts.
	MaxSharedExperts = 1000
	// MaxCapacityFactor is the largest accepted MoE.CapacityFactor.
	MaxCapacityFactor = 100
	// MaxParams is the largest accepted total parameter count (10^15).
	MaxParams = 1e15
	// MaxMTPLayers is the largest accepted Spec.MTPLayers.
	MaxMTPLayers = 100
)

// Validate reports every rule the Spec breaks, joined with errors.Join, one
// sentence per rule naming the field, its value and what would be accepted.
// Zero optional fields are checked as their Normalize defaults; s itself is
// not modified. A nil error means every count and FLOP figure of s is finite
// and fits in an int64.
func (s Spec) Validate() error {
	return joinProblems("model: ", s.problems())
}

// joinProblems turns problem sentences into one error, each line prefixed.
func joinProblems(prefix string, problems []string) error {
	return bounded.Join(prefix, problems)
}

// normalized returns a normalised deep copy of s.
func (s Spec) normalized() Spec {
	c := s
	if s.MoE != nil {
		m := *s.MoE
		c.MoE = &m
	}
	if s.MLA != nil {
		m := *s.MLA
		c.MLA = &m
	}
	c.Normalize()
	return c
}

// problems lists the rules s breaks, as sentences without the "model:" prefix.
func (s Spec) problems() []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	inRange := func(field string, v, lo, hi int) bool {
		if v < lo || v > hi {
			add("%s is %d; it must be between %d and %d", field, v, lo, hi)
			return false
		}
		return true
	}

	// Rules that must be checked before Normalize fills the defaults.
	if s.HeadDim == 0 && s.MLA == nil && s.Heads > 0 && s.Hidden > 0 && s.Hidden%s.Heads != 0 {
		add("hidden %d is not a multiple of heads %d; set head_dim or use a heads count that divides hidden", s.Hidden, s.Heads)
	}
	c := s.normalized()

	okLayers := inRange("layers", c.Layers, 1, MaxLayers)
	okHidden := inRange("hidden", c.Hidden, 1, MaxHidden)
	okHeads := inRange("heads", c.Heads, 1, MaxHeads)
	if okHeads && c.MLA != nil {
		if c.KVHeads != c.Heads {
			add("kv_heads is %d; with mla every head has its own keys and values, so leave kv_heads out or set it to heads (%d)", c.KVHeads, c.Heads)
		}
	} else if okHeads {
		if c.KVHeads < 1 || c.KVHeads > c.Heads {
			add("kv_heads is %d; it must be between 1 and heads (%d)", c.KVHeads, c.Heads)
		} else if c.Heads%c.KVHeads != 0 {
			add("heads %d is not a multiple of kv_heads %d; use a kv_heads that divides heads, such as %d", c.Heads, c.KVHeads, largestDivisorAtMost(c.Heads, c.KVHeads))
		}
	}
	if s.HeadDim != 0 || (c.MLA == nil && okHidden && okHeads && c.Hidden%c.Heads == 0) {
		inRange("head_dim", c.HeadDim, 1, MaxHeadDim)
	}
	inRange("ffn_hidden", c.FFNHidden, 1, MaxFFNHidden)
	if c.FFN != GELU && c.FFN != SwiGLU {
		add("ffn is %q; it must be %q (two matrices) or %q (three matrices)", c.FFN, GELU, SwiGLU)
	}
	if c.Norm != RMSNorm && c.Norm != LayerNorm {
		add("norm is %q; it must be %q or %q", c.Norm, RMSNorm, LayerNorm)
	}
	inRange("vocab", c.Vocab, 1, MaxVocab)
	inRange("seq_len", c.SeqLen, 1, MaxSeqLen)

	if m := c.MLA; m != nil {
		inRange("mla.q_lora_rank", m.QLoRARank, 0, MaxHidden)
		inRange("mla.kv_lora_rank", m.KVLoRARank, 1, MaxHidden)
		okNope := inRange("mla.qk_nope_head_dim", m.QKNopeHeadDim, 0, MaxHeadDim)
		okRope := inRange("mla.qk_rope_head_dim", m.QKRopeHeadDim, 0, MaxHeadDim)
		inRange("mla.v_head_dim", m.VHeadDim, 1, MaxHeadDim)
		switch {
		case okNope && okRope && m.QKHeadDim() < 1:
			add("mla.qk_nope_head_dim and mla.qk_rope_head_dim are both 0; the query-key head width, their sum, must be at least 1")
		case okNope && okRope && c.HeadDim != m.QKHeadDim():
			add("head_dim is %d; with mla it is qk_nope_head_dim + qk_rope_head_dim (%d), so leave head_dim out or set it to that", c.HeadDim, m.QKHeadDim())
		}
		if c.Bias {
			add("bias is true; multi-head latent attention is modelled without biases, as DeepSeek trains it, so set bias to false")
		}
		for _, f := range []struct {
			key string
			on  bool
		}{{"qkv_bias", c.QKVBias}, {"out_bias", c.OutBias}, {"qk_norm", c.QKNorm}} {
			if f.on {
				add("%s is true; multi-head latent attention is modelled without it (its latents have norms of their own), so leave it out", f.key)
			}
		}
	}
	if c.ALiBi && (c.YaRN || c.MLA != nil) {
		// ALiBi replaces the rotary embedding that YaRN scales and MLA's
		// decoupled rotary key carries (Press et al. 2022).
		add("alibi is true with %s; ALiBi replaces the rotary embedding, so set alibi to false or drop %s", rotaryField(c), rotaryField(c))
	}
	if !(c.LogitSoftcap >= 0 && c.LogitSoftcap <= 1e6) {
		add("logit_softcap is %v; it must be 0 (no cap) or a positive cap on the logits, such as Gemma 2's 30", c.LogitSoftcap)
	}
	inRange("mtp_layers", c.MTPLayers, 0, MaxMTPLayers)
	if okLayers {
		c.patternProblems(add)
	}

	if m := c.MoE; m != nil {
		if inRange("moe.experts", m.Experts, 1, MaxExperts) {
			inRange("moe.top_k", m.TopK, 1, m.Experts)
		} else if m.TopK < 1 {
			add("moe.top_k is %d; it must be at least 1", m.TopK)
		}
		inRange("moe.expert_ffn_hidden", m.ExpertFFNHidden, 1, MaxFFNHidden)
		if inRange("moe.shared_experts", m.SharedExperts, 0, MaxSharedExperts) && m.SharedExperts > 0 {
			inRange("moe.shared_ffn_hidden", m.SharedFFNHidden, 1, MaxFFNHidden)
		} else if m.SharedFFNHidden < 0 || m.SharedFFNHidden > MaxFFNHidden {
			inRange("moe.shared_ffn_hidden", m.SharedFFNHidden, 0, MaxFFNHidden)
		}
		if okLayers {
			inRange("moe.first_dense_layers", m.FirstDenseLayers, 0, c.Layers-1)
		} else if m.FirstDenseLayers < 0 {
			add("moe.first_dense_layers is %d; it must be at least 0", m.FirstDenseLayers)
		}
		if math.IsNaN(m.CapacityFactor) || m.CapacityFactor < 1 || m.CapacityFactor > MaxCapacityFactor {
			add("moe.capacity_factor is %g; it must be between 1 and %d (1 means no padding)", m.CapacityFactor, MaxCapacityFactor)
		}
		if math.IsNaN(m.Imbalance) || m.Imbalance < 1 || m.Imbalance > MaxCapacityFactor {
			add("moe.imbalance is %g; it must be between 1 (balanced) and %d", m.Imbalance, MaxCapacityFactor)
		}
		if !(m.SwiGLULimit >= 0) || math.IsInf(m.SwiGLULimit, 0) {
			add("moe.swiglu_limit is %g; it must be a finite number, at least 0 (0 means no clamp)", m.SwiGLULimit)
		}
		if inRange("moe.groups", m.Groups, 0, max(m.Experts, 1)) && m.Groups > 0 {
			if m.Experts%m.Groups != 0 {
				add("moe.groups is %d, which does not divide the %d experts; use a divisor of moe.experts", m.Groups, m.Experts)
			}
			inRange("moe.group_limit", m.GroupLimit, 1, m.Groups)
		} else if m.GroupLimit != 0 {
			add("moe.group_limit is %d without moe.groups; set moe.groups (the number of expert groups) too", m.GroupLimit)
		}
	}

	// The size check needs every field in range, or the estimate is noise.
	if len(p) == 0 {
		if n := c.paramsFloat(); n > MaxParams {
			add("the model has %.3g parameters, more than the %.0g this tool plans for; check layers, hidden, ffn_hidden and moe.experts", n, float64(MaxParams))
		}
	}
	return p
}

// paramsFloat is Counts().Total plus Counts().MTP computed in float64, so
// that it cannot overflow on absurd shapes (same formulas as Counts,
// docs/formulas.md §1.1, with every bias counted).
func (s Spec) paramsFloat() float64 {
	h, q, kv := float64(s.Hidden), float64(s.Heads)*float64(s.HeadDim), float64(s.KVHeads)*float64(s.HeadDim)
	mlp := func(f float64) float64 { return float64(s.mlpMatrices())*h*f + 2*f + h }
	attn := 2*h*q + 2*h*kv + q + 2*kv + h
	if m := s.MLA; m != nil {
		// mlaParams and the latents' norms.
		n, qk, rq, rkv := float64(s.Heads), float64(m.QKHeadDim()), float64(m.QLoRARank), float64(m.KVLoRARank)
		qProj := h * n * qk
		if rq > 0 {
			qProj = h*rq + rq*n*qk
		}
		attn = qProj + rkv*(h+n*float64(m.QKNopeHeadDim+m.VHeadDim)) + h*float64(m.QKRopeHeadDim) + n*float64(m.VHeadDim)*h + 2*(rq+rkv)
	}
	layer := attn + 4*h
	denseLayer := layer + mlp(float64(s.FFNHidden))
	dense := float64(s.DenseLayers()) * denseLayer
	moe, moeLayer := 0.0, 0.0
	if m := s.MoE; m != nil {
		moeLayer = layer + h*float64(m.Experts) +
			float64(m.SharedExperts)*mlp(float64(m.SharedFFNHidden)) +
			float64(m.Experts)*mlp(float64(m.ExpertFFNHidden))
		moe = float64(s.MoELayers()) * moeLayer
	}
	// MTPModuleParams: three norms, the 2h-to-h projection and one layer of the last kind.
	mtpLayer := denseLayer
	if s.MoELayers() > 0 {
		mtpLayer = moeLayer
	}
	mtp := float64(s.MTPLayers) * (6*h + 2*h*h + mtpLayer)
	return dense + moe + mtp + 2*float64(s.Vocab)*h + 2*h
}

// largestDivisorAtMost returns the largest divisor of n that is at most k (k >= 1).
func largestDivisorAtMost(n, k int) int {
	for d := k; d > 1; d-- {
		if n%d == 0 {
			return d
		}
	}
	return 1
}

// nearest returns the candidates closest to s, best first: candidates that
// contain s (letters and digits only) first, then by edit distance between the
// letters and digits only, then between the lowercased strings,
// then by longest common subsequence (longer first), then alphabetically.
func nearest(s string, candidates []string, n int) []string {
	type scored struct {
		name          string
		contains      bool
		dAlnum, dFull int
		lcs           int
	}
	ls, as := strings.ToLower(s), alnum(s)
	sc := make([]scored, len(candidates))
	for i, c := range candidates {
		lc, ac := strings.ToLower(c), alnum(c)
		sc[i] = scored{c, as != "" && strings.Contains(ac, as), text.EditDistance(as, ac), text.EditDistance(ls, lc), lcsLen(as, ac)}
	}
	less := func(a, b scored) bool {
		switch {
		case a.contains != b.contains:
			return a.contains
		case a.dAlnum != b.dAlnum:
			return a.dAlnum < b.dAlnum
		case a.dFull != b.dFull:
			return a.dFull < b.dFull
		case a.lcs != b.lcs:
			return a.lcs > b.lcs
		}
		return a.name < b.name
	}
	// Insertion sort: the candidate lists are short.
	for i := 1; i < len(sc); i++ {
		for j := i; j > 0 && less(sc[j], sc[j-1]); j-- {
			sc[j], sc[j-1] = sc[j-1], sc[j]
		}
	}
	if n > len(sc) {
		n = len(sc)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = sc[i].name
	}
	return out
}

// alnum lowercases s and keeps only its ASCII letters and digits.
func alnum(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// lcsLen is the length of the longest common subsequence of a and b, in bytes.
func lcsLen(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// rotaryField names the rotary setting of s that ALiBi cannot join: yarn
// or mla.
func rotaryField(s Spec) string {
	if s.YaRN {
		return "yarn"
	}
	return "mla"
}
