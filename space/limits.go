package space

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// Limits is what a training framework can express (docs/frameworks.md):
// the strategies outside it are neither searched nor explained. The zero
// value limits nothing but recompute policies, which default to none,
// selective and full.
type Limits struct {
	// Framework names the framework, for messages.
	Framework string
	// NoDims are the parallel dimensions it cannot use: their degree is 1.
	NoDims []Dim
	// Schedules are the pipeline schedules it runs; empty means all.
	Schedules []Schedule
	// Recomputes are its recompute policies (model.Policies names); empty
	// means any policy, the search trying none, selective and full unless
	// a fix pins another.
	Recomputes []string
	// Zeros are the ZeRO stages it offers over pure data parallelism;
	// empty means 0, 1 and 2.
	Zeros []int
	// RequireSP says tensor parallelism runs only with sequence
	// parallelism.
	RequireSP bool
	// EqualChunks says an interleaved pipeline needs the layers to split
	// into pp·v equal chunks (Megatron-LM's virtual pipeline stages).
	EqualChunks bool
	// NoFP8 says the framework has no FP8 matmuls (precision=fp8).
	NoFP8 bool
	// NoInt8 says the framework has no int8 matmuls (precision=int8, AQT).
	NoInt8 bool
	// NoSplit says the framework cannot set the layers of a pipeline
	// stage (the first and last keys, Split): only the default split runs.
	NoSplit bool
}

// checkPrecision reports a precision the framework cannot run.
func (l Limits) checkPrecision(p string) error {
	if l.NoFP8 && p == PrecisionFP8 {
		return fmt.Errorf("%s cannot express precision=fp8: it has no FP8 matmuls (use precision=bf16 or a framework with an FP8 recipe)", l.name())
	}
	if l.NoInt8 && p == PrecisionInt8 {
		return fmt.Errorf("%s cannot express precision=int8: it has no int8 matmuls (use precision=bf16 or --framework maxtext, whose AQT runs them)", l.name())
	}
	return nil
}

// noFP8 says a chip has no fp8 matmul speed-up, and what would work.
func noFP8(chip profiles.Chip) string {
	name := chip.Name
	if name == "" {
		name = "chip"
	}
	if chip.PeakInt8OPs > 0 {
		return fmt.Sprintf("the %s has no FP8 matmul speed-up (peak_fp8_flops is 0): use precision=int8 or bf16", name)
	}
	return fmt.Sprintf("the %s has no FP8 matmul speed-up (peak_fp8_flops is 0): use precision=bf16", name)
}

// noInt8 says a chip has no int8 matmul speed-up.
func noInt8(chip string) string {
	if chip == "" {
		chip = "chip"
	}
	return fmt.Sprintf("the %s has no int8 matmul speed-up (peak_int8_ops is 0): use precision=bf16", chip)
}

// EightBitFix returns f for a cluster of chip: where f pins precision=fp8,
// the chip has no FP8 speed-up but an int8 one and the framework (l) runs
// int8 matmuls, the fix pins precision=int8 instead and note says so in one
// line ("v6e has no FP8: 8-bit matmuls planned as int8 (AQT)"); otherwise f
// itself and no note. Users name MaxText's quantization: int8 runs fp8.
func (l Limits) EightBitFix(f Fix, chip profiles.Chip) (Fix, string) {
	if f.Set["precision"] != PrecisionFP8 || chip.PeakFP8FLOPs > 0 || chip.PeakInt8OPs <= 0 || l.NoInt8 {
		return f, ""
	}
	g := Fix{Set: make(map[string]string, len(f.Set))}
	for k, v := range f.Set {
		g.Set[k] = v
	}
	g.Set["precision"] = PrecisionInt8
	return g, fmt.Sprintf("%s has no FP8: 8-bit matmuls planned as int8 (AQT)", chip.Name)
}

// recomputes returns the policy names of l.
func (l Limits) recomputes() []string {
	if len(l.Recomputes) > 0 {
		return l.Recomputes
	}
	return []string{RecomputeNone, RecomputeSelective, RecomputeFull}
}

// allowsRecompute reports whether the framework runs policy r.
func (l Limits) allowsRecompute(r string) bool {
	if len(l.Recomputes) == 0 {
		return knownRecompute(r)
	}
	return slices.Contains(l.Recomputes, r)
}

// name is the framework's name for messages.
func (l Limits) name() string {
	if l.Framework == "" {
		return "the framework"
	}
	return l.Framework
}

// Check reports, in one sentence, the first part of s (for a model of
// layers layers) the framework cannot express, naming it and what would
// work; nil when it can express s.
func (l Limits) Check(s Strategy, layers int) error {
	for _, d := range l.NoDims {
		if s.Degree[d] > 1 {
			return fmt.Errorf("%s cannot express %s=%d: it has no %s parallelism (use %s=1 or another --framework)", l.name(), d, s.Degree[d], d, d)
		}
	}
	if len(l.Schedules) > 0 && s.Degree[PP] > 1 && !slices.Contains(l.Schedules, s.Schedule) {
		return fmt.Errorf("%s cannot express schedule=%s: it runs %s", l.name(), s.Schedule, scheduleList(l.Schedules))
	}
	if !l.allowsRecompute(s.Recompute) {
		return fmt.Errorf("%s cannot express recompute=%s: its policies are %s", l.name(), s.Recompute, strings.Join(l.recomputes(), ", "))
	}
	if len(l.Zeros) > 0 && s.Degree[DP] > 1 && !slices.Contains(l.Zeros, s.Zero) {
		return fmt.Errorf("%s cannot express zero=%d over dp: it offers zero in %s (use fsdp for sharded states)", l.name(), s.Zero, intList(l.Zeros))
	}
	if pp := s.Degree[PP]; l.EqualChunks && pp > 1 && s.Schedule.Virtual() && layers%(pp*s.V) != 0 {
		return fmt.Errorf("%s cannot express schedule=%s,v=%d over pp=%d: its virtual stages need the %d layers in %d equal chunks", l.name(), s.Schedule, s.V, pp, layers, pp*s.V)
	}
	if l.NoSplit && s.Split.Explicit() {
		return fmt.Errorf("%s cannot express %s: it cannot set the layers of a pipeline stage (drop first and last for the default split)", l.name(), s.Split)
	}
	if l.RequireSP && s.Degree[TP] > 1 && !s.SP {
		return fmt.Errorf("%s cannot express tp=%d without sequence parallelism: use sp=true", l.name(), s.Degree[TP])
	}
	if err := l.checkPrecision(s.Precision); err != nil {
		return err
	}
	return nil
}

// scheduleList joins schedule names.
func scheduleList(ss []Schedule) string {
	var out []string
	for _, s := range ss {
		out = append(out, string(s))
	}
	return strings.Join(out, ", ")
}

// intList joins integers.
func intList(xs []int) string {
	var out []string
	for _, x := range xs {
		out = append(out, strconv.Itoa(x))
	}
	return strings.Join(out, ", ")
}

// validateLimits reports recompute names that no policy has.
func (l Limits) validate() error {
	for _, r := range l.Recomputes {
		if _, ok := model.LookupPolicy(r); !ok {
			return fmt.Errorf("space: %s's recompute policy %q is unknown: the policies are %s", l.name(), r, strings.Join(model.PolicyNames(), ", "))
		}
	}
	return nil
}
