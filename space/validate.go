package space

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// seqLen returns the workload's sequence length, or the model's default
// when the workload leaves it 0.
func seqLen(m *model.Spec, w Workload) int {
	if w.SeqLen > 0 {
		return w.SeqLen
	}
	return m.SeqLen
}

// Validate checks s against model m, cluster c and workload w (a zero
// w.SeqLen means m.SeqLen) and returns nil or the errors.Join of every rule
// s breaks, each a sentence saying why and what would work:
//
//   - every degree, mb and v are positive; zero is 0, 1 or 2, and above 0
//     only with dp > 1; sp needs tp > 1; the schedule and recompute names
//     are known;
//   - dp*fsdp*tp*cp*pp equals the chip count;
//   - tp divides the attention heads, and tp and the key/value heads divide
//     one another (when tp is a multiple of kv_heads each KV head is
//     replicated tp/kv_heads times, as Megatron does for GQA);
//   - ep divides the experts and dp*fsdp, and ep > 1 needs an MoE model;
//   - dp*fsdp divides the batch, and mb divides the per-replica batch
//     batch/(dp*fsdp);
//   - cp divides the sequence, and with sp tp divides seq/cp;
//   - pp is at most the layer count (layers need not divide evenly, see
//     StageLayers); first and last (Split) need pp > 1 and leave the
//     other stages at least one layer each, the same number on each
//     (Split.Check), and with v every stage at least v layers; v > 1 only with a schedule with virtual stages
//     (interleaved), which needs v >= 2, pp > 1 and pp*v <= layers+2
//     (MaxVirtualStages: the embedding and the output layer may each
//     fill a chunk); each
//     schedule's fewest micro-batches (interleaved and zb-h1: pp, zb-v:
//     2*pp-1, dualpipe and dualpipev: 2*pp); zb-h1, zb-v, dualpipe and
//     dualpipev need pp > 1, the V-shaped ones 2*pp <= layers, dualpipe an
//     even pp and an even number of micro-batches;
//   - the mesh is consistent with the cluster (see Place) and resolves (see
//     Resolve: ep within the dp and fsdp shares of each axis, and the tp
//     ones for whole experts under sp); an empty mesh
//     must admit the default placement.
func (s Strategy) Validate(m model.Spec, c profiles.Cluster, w Workload) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf("space: "+format, args...)) }
	for d := Dim(0); d < NumDims; d++ {
		if s.Degree[d] < 1 {
			add("%s=%d must be a positive integer", d, s.Degree[d])
		}
	}
	if s.MB < 1 {
		add("mb=%d must be a positive integer", s.MB)
	}
	if s.V < 1 {
		add("v=%d must be a positive integer", s.V)
	}
	degreesOK := len(errs) == 0
	if s.Zero < 0 || s.Zero > 2 {
		add("zero=%d is not a ZeRO stage for dp: use 0, 1 (shard optimizer state) or 2 (also gradients); stage 3 is fsdp", s.Zero)
	} else if s.Zero > 0 && s.Degree[DP] == 1 {
		add("zero=%d shards across dp, but dp=1: use zero=0, or move data-parallel chips from fsdp to dp", s.Zero)
	}
	tp := s.Degree[TP]
	if s.ETP > 1 && s.ETP != max(tp, 1) {
		add("etp=%d with tp=%d: each expert's matrices are split over all the tp chips (etp=%d) or none (etp=1, the default); a split over part of them is not modelled", s.ETP, max(tp, 1), max(tp, 1))
	}
	s.validateOffload(add)
	s.validateA2AOverlap(add)
	if s.SP && tp <= 1 {
		add("sp=true needs tp > 1 (sequence parallelism splits the sequence inside the tp group): set tp > 1 or sp=false")
	}
	if !s.Schedule.Known() {
		add("schedule %q is unknown: use %s", s.Schedule, strings.Join(scheduleNames(), ", "))
	}
	if !knownRecompute(s.Recompute) {
		add("recompute %q is unknown: use %s", s.Recompute, strings.Join(model.PolicyNames(), ", "))
	}
	switch {
	case s.Precision != "" && s.Precision != PrecisionBF16 && s.Precision != PrecisionFP8 && s.Precision != PrecisionInt8:
		add("precision %q is unknown: use %s, %s or %s", s.Precision, PrecisionBF16, PrecisionFP8, PrecisionInt8)
	case s.FP8() && c.Chip.PeakFP8FLOPs <= 0:
		add("precision=fp8: %s", noFP8(c.Chip))
	case s.Int8() && c.Chip.PeakInt8OPs <= 0:
		add("precision=int8: %s", noInt8(c.Chip.Name))
	}
	if s.Weights != "" && !slices.Contains(weightsNames(), s.Weights) {
		add("weights %q is unknown: use %s", s.Weights, strings.Join(weightsNames(), ", "))
	}
	if !degreesOK {
		return errors.Join(errs...)
	}
	chips := c.Chips()
	if n := s.Chips(); n != chips {
		hint := ""
		if rest := n / s.Degree[DP]; chips > 0 && rest > 0 && chips%rest == 0 {
			hint = fmt.Sprintf(" (e.g. dp=%d)", chips/rest)
		}
		add("dp*fsdp*tp*cp*pp = %d*%d*%d*%d*%d = %d, but cluster %s has %d chips: the degrees must multiply to %d%s",
			s.Degree[DP], s.Degree[FSDP], tp, s.Degree[CP], s.Degree[PP], n, c.Name, chips, chips, hint)
	}
	// The dimensions' rules (dims.go): tp and the heads, ep and the
	// experts, dp*fsdp, mb and the batch, cp, sp and the sequence, pp and
	// the layers.
	z := sizesOf(&m, w, s.MB)
	z.whole = s.ExpertsWhole()
	ruleErrs(&z, s.Degree, s.SP, add)
	s.validateActOffload(m.Layers, add)
	// A --recompute-modules list names modules of the model.
	if err := model.CheckModules(s.Recompute, &m); err != nil {
		errs = append(errs, fmt.Errorf("space: %w", err))
	}
	nmb := 0
	if r := s.Replicas(); w.Batch >= 1 && w.Batch%r == 0 && (w.Batch/r)%s.MB == 0 {
		nmb = w.Batch / r / s.MB
	}
	// Pipeline schedules and the split of the layers over the stages.
	pp := s.Degree[PP]
	splitErr := s.Split.Check(m.Layers, pp)
	if splitErr != nil {
		errs = append(errs, splitErr)
	}
	switch {
	case !s.Schedule.Virtual():
		if s.V != 1 {
			add("v=%d needs a schedule with virtual stages (%s): set schedule=interleaved or v=1", s.V, strings.Join(virtualScheduleNames(), ", "))
		}
		if s.Schedule.Rules().NeedsPipeline() {
			errs = append(errs, pipelineRuleErrs(s.Schedule, pp, nmb, m)...)
		}
	case s.Schedule.Known():
		if s.V < 2 {
			add("schedule=%s needs v >= 2 virtual stages per rank: set v=2 or more, or use 1f1b", s.Schedule)
		}
		if pp < 2 {
			add("schedule=%s needs pp > 1: use 1f1b, or pipeline stages", s.Schedule)
		} else if mx := MaxVirtualStages(m.Layers); mulSat(pp, s.V) > mx {
			add("pp*v = %d*%d = %d exceeds the %d chunks the %d layers of %s, the embedding and the output layer can fill: use v <= %d", pp, s.V, pp*s.V, mx, m.Layers, m.Name, max(1, mx/pp))
		} else if r, n, short := s.Split.ShortOfChunks(m.Layers, pp, s.V); splitErr == nil && s.Split.Explicit() && short {
			most := n
			if r == 0 || r == pp-1 {
				most = n + 1
			}
			add("v=%d splits each stage's layers into %d chunks, but %s leaves stage %d with %d layers (a middle stage needs %d, the first and the last %d, a chunk of theirs holding only the embedding or the output layer): use v <= %d or give that stage more layers",
				s.V, s.V, s.Split, r, n, s.V, s.V-1, most)
		}
		if need := s.Schedule.MinMicrobatches(pp); pp > 1 && nmb > 0 && nmb < need {
			add("schedule=%s needs at least pp=%d micro-batches, but batch/(dp*fsdp*mb) = %d: lower mb or dp*fsdp, raise the batch, or use 1f1b", s.Schedule, need, nmb)
		}
	}
	// Mesh. When ep does not divide dp*fsdp (or dp*fsdp*tp, reported
	// above) the rest of the mesh is still checked, without ep.
	if s.Chips() == chips {
		p := s
		if ep := s.Degree[EP]; ep > 1 && s.expertRoom()%ep != 0 {
			p.Degree[EP], p.Mesh[EP] = 1, nil
		}
		placed, err := p.Place(c)
		if err != nil {
			errs = append(errs, err)
		} else if _, err := placed.Resolve(c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pipelineRuleErrs reports what schedule sc, one that needs a pipeline and
// takes no v, asks of pp stages with nmb micro-batches (0: unknown) for
// model m: pp > 1, an even pp, its chunks within the layers, its fewest
// micro-batches and an even number of them.
func pipelineRuleErrs(sc Schedule, pp, nmb int, m model.Spec) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf("space: "+format, args...)) }
	r, _ := sc.spec()
	if pp < 2 {
		add("schedule=%s needs pp > 1: use 1f1b, or pipeline stages", sc)
		return errs
	}
	if r.evenStages && pp%2 != 0 {
		add("schedule=%s needs an even pp, as it pairs stage i with stage pp-1-i on one rank, but pp=%d: use pp=%d or %d", sc, pp, pp-1, pp+1)
	}
	if k := max(r.chunks, 1); k > 1 && mulSat(pp, k) > m.Layers {
		add("schedule=%s runs %d chunks per rank, so pp*%d = %d exceeds the %d layers of %s: use pp <= %d", sc, k, k, pp*k, m.Layers, m.Name, max(1, m.Layers/k))
	}
	if need := r.minMicrobatches(pp); nmb > 0 && nmb < need {
		add("schedule=%s needs at least %s = %d micro-batches, but batch/(dp*fsdp*mb) = %d: lower mb or dp*fsdp, raise the batch, or use 1f1b", sc, r.minText, need, nmb)
	}
	if r.evenMicrobatches && nmb > 0 && nmb%2 != 0 {
		add("schedule=%s splits the micro-batches between its two directions, so it needs an even number, but batch/(dp*fsdp*mb) = %d: change mb or the batch", sc, nmb)
	}
	return errs
}

// virtualScheduleNames lists the schedules that take v.
func virtualScheduleNames() []string {
	var out []string
	for _, s := range Schedules() {
		if s.Virtual() {
			out = append(out, string(s))
		}
	}
	return out
}

// divisorList formats the divisors of n, abbreviated when there are many:
// "1, 2, 4, 8" or "1, 2, 3, ..., 96 (the divisors of 96)".
func divisorList(n int) string {
	if n < 1 {
		return "none"
	}
	if n > 1<<40 {
		return "the divisors of " + strconv.Itoa(n)
	}
	var ds []string
	for i := 1; i*i <= n; i++ {
		if n%i == 0 {
			ds = append(ds, strconv.Itoa(i))
		}
	}
	k := len(ds)
	for i := k - 1; i >= 0; i-- {
		d, _ := strconv.Atoi(ds[i])
		if q := n / d; q != d {
			ds = append(ds, strconv.Itoa(q))
		}
	}
	if len(ds) > 8 {
		return strings.Join(ds[:4], ", ") + ", ..., " + ds[len(ds)-1] + " (the divisors of " + strconv.Itoa(n) + ")"
	}
	return strings.Join(ds, ", ")
}
