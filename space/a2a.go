package space

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// a2aOverlapKey is the strategy key a2a_overlap (Strategy.A2AOverlap).
func a2aOverlapKey(knob func(string, func(*Strategy, string) error, func(*Strategy) string, func(*Strategy) bool) keySpec) keySpec {
	return knob("a2a_overlap", func(st *Strategy, val string) error {
		b, err := strconv.ParseBool(val)
		if err != nil {
			return fmt.Errorf("space: a2a_overlap=%s must be true or false", val)
		}
		st.A2AOverlap = b
		return nil
	}, func(st *Strategy) string { return strconv.FormatBool(st.A2AOverlap) }, func(st *Strategy) bool { return !st.A2AOverlap })
}

// a2aOverlapProblem says why a strategy of ep expert-parallel degree, pp
// pipeline stages, schedule sc and recompute policy rc cannot overlap its
// MoE all-to-all with another micro-batch's compute, "" when it can.
// Megatron-Core's overlap_moe_expert_parallel_comm pairs the forward of one
// micro-batch with the backward of another in the 1F1B steady state, so it
// needs expert parallelism, the interleaved schedule under a pipeline, and
// no full or MoE-module recompute (Megatron-LM@d98e8a64
// megatron/core/transformer/transformer_config.py:3002-3041); DualPipe's
// schedules overlap it by themselves.
func a2aOverlapProblem(ep, pp int, sc Schedule, rc string) string {
	switch {
	case ep <= 1:
		return "a2a_overlap hides the MoE all-to-all of expert parallelism, but ep=1: set ep > 1 or a2a_overlap=false"
	case sc == DualPipe || sc == DualPipeV:
		return "a2a_overlap with schedule=" + string(sc) + ": DualPipe overlaps the all-to-all by itself; drop a2a_overlap"
	case pp > 1 && sc != Interleaved:
		return "a2a_overlap with pp=" + strconv.Itoa(pp) + " needs schedule=interleaved (Megatron-Core pairs the micro-batches of its interleaved 1F1B)"
	case rc == RecomputeFull:
		return "a2a_overlap cannot run with recompute=full (Megatron-Core refuses it): use selective or a module list without moe"
	case model.IsModuleList(rc) && slices.Contains(strings.Split(rc, "+"), "moe"):
		return "a2a_overlap cannot run with the moe module recomputed (Megatron-Core refuses it): drop moe from the list"
	}
	return ""
}

// a2aAllowed reports whether ep, pp and schedule sc allow a2a_overlap
// (a2aOverlapProblem's first three cases, without allocating): for the
// search's per-strategy decision (Space.setInner), the recompute policy
// checked once per choice.
func a2aAllowed(ep, pp int, sc Schedule) bool {
	return ep > 1 && sc != DualPipe && sc != DualPipeV && (pp <= 1 || sc == Interleaved)
}

// validateA2AOverlap adds a2aOverlapProblem's reason when s asks for the
// overlap.
func (s *Strategy) validateA2AOverlap(add func(format string, args ...any)) {
	if !s.A2AOverlap {
		return
	}
	if why := a2aOverlapProblem(s.Degree[EP], s.Degree[PP], s.Schedule, s.Recompute); why != "" {
		add("%s", why)
	}
}

// A2AOverlapMicrobatches is how many of m micro-batches (in units of a
// rank's layers) the first of p ranks runs as overlapped forward-backward
// pairs under Strategy.A2AOverlap, with v virtual stages: without a
// pipeline every forward but the first runs beside the previous
// micro-batch's backward (m-1); under the interleaved schedule the 1F1B
// steady state pairs m·v chunks less the warm-up's (p-1)·2 + (v-1)·p + 1,
// the overlap's one extra forward chunk making each pair's forward and
// backward independent (Megatron-LM@d98e8a64
// megatron/core/pipeline_parallel/schedules.py:964-970,
// get_pp_rank_microbatches: num_warmup_microbatches of rank 0), v chunks a
// micro-batch of the rank's layers.
func A2AOverlapMicrobatches(p, v, m int) float64 {
	if p <= 1 {
		return float64(max(m-1, 0))
	}
	v = max(v, 1)
	warm := 2*(p-1) + (v-1)*p + 1
	return max(0, float64(m*v-warm)/float64(v))
}

// EPScaleOut reports whether the placed strategy s spreads ep over an axis
// of c's scale-out network (epScaleOut): where a Space whose framework runs
// the EP overlap eagerly turns it on (Limits.A2AOverlapScaleUp), so two
// placements of one degree tuple can differ in it and in the memory it
// holds.
func EPScaleOut(c *profiles.Cluster, s *Strategy) bool {
	return epScaleOut(c, &s.Mesh)
}

// epScaleOut reports whether mesh spreads ep over an axis of c's scale-out
// network (InfiniBand, Ethernet, DCN), not only over NVLink or ICI: there
// an eager EP overlap hides its all-to-all; within one NVLink domain the
// host's synchronisation of its phases costs what it hides (the cost
// model's evaluator.epOverlapHides, docs/formulas.md §5).
func epScaleOut(c *profiles.Cluster, mesh *[NumDims][]Share) bool {
	for _, sh := range mesh[EP] {
		if sh.Size <= 1 {
			continue
		}
		for _, a := range c.Axes {
			if a.Name == sh.Axis && a.Tier.Fabric() == profiles.FabricNetwork {
				return true
			}
		}
	}
	return false
}
