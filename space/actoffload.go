package space

import (
	"fmt"
	"slices"
	"strconv"
)

// actOffloadKey is the strategy key act_offload (Strategy.ActOffload).
func actOffloadKey(knob func(string, func(*Strategy, string) error, func(*Strategy) string, func(*Strategy) bool) keySpec) keySpec {
	return knob("act_offload", func(st *Strategy, val string) error {
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return fmt.Errorf("space: act_offload=%s must be a whole number of layers (0 keeps every layer's activations in HBM)", val)
		}
		st.ActOffload = n
		return nil
	}, func(st *Strategy) string { return strconv.Itoa(st.ActOffload) }, func(st *Strategy) bool { return st.ActOffload == 0 })
}

// actOffloadProblem says why a strategy that offloads the activations of
// n of a model's layers layers, with pp pipeline stages and recompute
// policy rc, cannot run, "" when it can. Megatron-Core's CPU offloading
// refuses a pipeline and any activation recomputation, and offloads fewer
// layers than the model has (Megatron-LM@d98e8a64
// megatron/core/transformer/transformer_config.py:1883-1897); Transformer
// Engine keeps the last layer on the chip to overlap the copies
// (TransformerEngine@d0067d0d transformer_engine/pytorch/cpu_offload.py,
// get_cpu_offload_context).
func actOffloadProblem(n, layers, pp int, rc string) string {
	switch {
	case n <= 0:
		return ""
	case pp > 1:
		return fmt.Sprintf("act_offload=%d with pp=%d: Megatron-Core's CPU offloading runs without a pipeline (use pp=1 or act_offload=0)", n, pp)
	case rc != "" && rc != RecomputeNone:
		return fmt.Sprintf("act_offload=%d with recompute=%s: Megatron-Core's CPU offloading refuses activation recomputation (use recompute=none or act_offload=0)", n, rc)
	case n >= layers:
		return fmt.Sprintf("act_offload=%d of a model of %d layers: offload fewer layers than the model has (at most %d)", n, layers, max(layers-1, 1))
	}
	return ""
}

// validateActOffload adds actOffloadProblem's reason for s on a model of
// layers layers.
func (s *Strategy) validateActOffload(layers int, add func(format string, args ...any)) {
	if why := actOffloadProblem(s.ActOffload, layers, s.Degree[PP], s.Recompute); why != "" {
		add("%s", why)
	}
}

// actOffloadShares are the shares of a model's layers the search
// offloads, as sixteenths: the values Megatron-Bridge's performance
// recipes set, 5, 10, 20, 30 and 40 of Llama 3 70B's 80 layers and 92 or
// 95 of Llama 3.1 405B's 126 (about three quarters) (v0.1.0rc3 to v0.4.2
// scripts/performance/configs/llama*): 1/16, 1/8, 1/4, 3/8, 1/2 and 3/4.
// --fix act_offload takes any number.
var actOffloadShares = [...]int{1, 2, 4, 6, 8, 12}

// ActOffloadChoices returns the act_offload values the search tries on a
// model of layers layers besides 0: actOffloadShares of them rounded to
// whole layers, each once, below layers.
func ActOffloadChoices(layers int) []int {
	var out []int
	for _, k := range actOffloadShares {
		n := (k*layers + 8) / 16
		if n >= 1 && n < layers && (len(out) == 0 || out[len(out)-1] != n) {
			out = append(out, n)
		}
	}
	return out
}

// addActOffloads fills sp.actOffloads for the recompute choices New made
// and adds the activation offloads of a model of layers layers: a pinned
// act_offload above 0 on every strategy (the only recompute choice then
// none), else, where the framework runs it (Limits.ActOffload) and none is
// a choice, ActOffloadChoices as further choices of recompute none. fp
// is the parsed fix, whose text is fix.
func (sp *Space) addActOffloads(lim Limits, fp pinned, fix Fix, layers int) error {
	sp.actOffloads = make([]int, len(sp.recomputes))
	if fp.has("act_offload") {
		n := fp.ActOffload
		if n == 0 {
			return nil
		}
		if !lim.ActOffload {
			return fmt.Errorf("space: --fix act_offload=%d: %s keeps every layer's activations in HBM (use --framework megatron)", n, lim.name())
		}
		pp := 1
		if fp.hasDim(PP) {
			pp = fp.Degree[PP]
		}
		rc := RecomputeNone
		if fp.has("recompute") {
			rc = fp.Recompute
		}
		if why := actOffloadProblem(n, layers, pp, rc); why != "" {
			return fmt.Errorf("space: --fix %q: %s", fix.String(), why)
		}
		sp.recomputes, sp.actOffloads = []string{RecomputeNone}, []int{n}
		return nil
	}
	if !lim.ActOffload || !slices.Contains(sp.recomputes, RecomputeNone) {
		return nil
	}
	for _, n := range ActOffloadChoices(layers) {
		sp.recomputes = append(sp.recomputes, RecomputeNone)
		sp.actOffloads = append(sp.actOffloads, n)
	}
	return nil
}
