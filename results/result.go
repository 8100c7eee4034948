package results

import (
	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// GB is the contract's unit for every _gb field: 10^9 bytes.
const GB = 1e9

// Strategy is the JSON form of a strategy: its degrees and knobs, the mesh
// axes each parallel dimension occupies, and the --strategy string (Spec)
// that reproduces it.
type Strategy struct {
	DP              int                 `json:"dp"`
	Zero            int                 `json:"zero"`
	FSDP            int                 `json:"fsdp"`
	TP              int                 `json:"tp"`
	SP              bool                `json:"sp"`
	CP              int                 `json:"cp"`
	PP              int                 `json:"pp"`
	First           int                 `json:"first,omitempty"`
	Last            int                 `json:"last,omitempty"`
	EP              int                 `json:"ep"`
	MB              int                 `json:"mb"`
	ETP             int                 `json:"etp"`
	NumMicrobatches int                 `json:"num_microbatches"`
	Schedule        string              `json:"schedule"`
	V               int                 `json:"v"`
	Recompute       string              `json:"recompute"`
	Precision       string              `json:"precision"`
	Weights         string              `json:"weights,omitempty"`
	Offload         string              `json:"offload,omitempty"`
	OffloadFraction float64             `json:"offload_fraction,omitempty"`
	A2AOverlap      bool                `json:"a2a_overlap,omitempty"`
	ActOffload      int                 `json:"act_offload,omitempty"`
	Dispatcher      string              `json:"dispatcher,omitempty"`
	Mesh            map[string][]string `json:"mesh"`
	Spec            string              `json:"spec"`
}

// Time is a step's time breakdown in seconds: compute_s is the sum of
// matmul_s, attention_s, memory_bound_s and optimizer_s; matmul_tail_s is
// the part of matmul_s that is the GEMM calls' fixed tails; exposed_a2a_s is
// the part of exposed_comm_s that is the MoE dispatch and combine (absent
// for a dense model); collective_sms_s the part that is the compute's loss
// of the SMs overlapped collectives hold (absent when none overlaps, and on
// TPUs); exposed_offload_s the part that is host offload's copies over the
// host link (absent without an offload, or when they hide).
type Time struct {
	ComputeS     float64 `json:"compute_s"`
	ExposedCommS float64 `json:"exposed_comm_s"`
	ExposedA2AS  float64 `json:"exposed_a2a_s,omitempty"`
	// CollectiveSMS is cost.Estimate.CollectiveSMSeconds.
	CollectiveSMS float64 `json:"collective_sms_s,omitempty"`
	// ExposedOffloadS is cost.Estimate.ExposedOffloadSeconds.
	ExposedOffloadS float64 `json:"exposed_offload_s,omitempty"`
	BubbleS         float64 `json:"bubble_s"`
	MatmulS         float64 `json:"matmul_s"`
	// MatmulTailS is the part of matmul_s that is the GEMM calls' fixed
	// tails (cost.Estimate.MatmulTailSeconds); absent when none.
	MatmulTailS float64 `json:"matmul_tail_s,omitempty"`
	AttentionS  float64 `json:"attention_s"`
	// ScanS is the state-space and linear-attention scans' time
	// (cost.Estimate.ScanSeconds), absent for a model without them.
	ScanS        float64 `json:"scan_s,omitempty"`
	MemoryBoundS float64 `json:"memory_bound_s"`
	OptimizerS   float64 `json:"optimizer_s"`
}

// Memory is the busiest chip's memory breakdown in 10^9 bytes.
type Memory struct {
	ParamsGB      float64 `json:"params_gb"`
	GradsGB       float64 `json:"grads_gb"`
	OptimizerGB   float64 `json:"optimizer_gb"`
	ActivationsGB float64 `json:"activations_gb"`
	BuffersGB     float64 `json:"buffers_gb"`
	// HostActivationsGB is the activations in host memory under
	// act_offload (memory.Breakdown.HostActivationsBytes), outside the
	// total; absent without it.
	HostActivationsGB float64 `json:"host_activations_gb,omitempty"`
	// HostStatesGB is the model states a host offload keeps in host
	// memory (memory.Breakdown.HostStatesBytes); absent without one.
	HostStatesGB float64 `json:"host_states_gb,omitempty"`
	// Parts breaks the components down by part (plan explain only).
	Parts []MemoryPart `json:"parts,omitempty"`
}

// MemoryPart is one named piece of a memory component (memory.Part).
type MemoryPart struct {
	// Component is params, grads, optimizer, activations or buffers.
	Component string `json:"component"`
	// Name is the part: a block of the layers or a buffer.
	Name string  `json:"name"`
	GB   float64 `json:"gb"`
}

// Collective is the JSON form of one kind of communication of a step.
type Collective struct {
	Op         string   `json:"op"`
	Axes       []string `json:"axes"`
	Bytes      float64  `json:"bytes"`
	Count      int      `json:"count"`
	TimeS      float64  `json:"time_s"`
	Overlapped bool     `json:"overlapped"`
	Why        string   `json:"why"`
}

// Result is the contract's RESULT: one evaluated strategy, as printed by
// `plan explain --format json` and as each element of a plan's pareto list.
type Result struct {
	Strategy          Strategy    `json:"strategy"`
	StepTimeS         float64     `json:"step_time_s"`
	StepTimeSRange    *[2]float64 `json:"step_time_s_range,omitempty"`
	StepTimeSRange95  *[2]float64 `json:"step_time_s_range_95,omitempty"`
	TokensPerS        float64     `json:"tokens_per_s"`
	TokensPerSRange   *[2]float64 `json:"tokens_per_s_range,omitempty"`
	TokensPerSPerChip float64     `json:"tokens_per_s_per_chip"`
	MFU               float64     `json:"mfu"`
	HFU               float64     `json:"hfu"`
	MemoryGBPerChip   float64     `json:"memory_gb_per_chip"`
	UsableGBPerChip   float64     `json:"usable_gb_per_chip"`
	Fits              bool        `json:"fits"`
	// OOMRisk is the probability that the strategy needs more than the
	// usable memory per chip (profiles.OOMRisk).
	OOMRisk     float64      `json:"oom_risk"`
	Time        Time         `json:"time"`
	Memory      Memory       `json:"memory"`
	Collectives []Collective `json:"collectives"`

	// Days is the wall time to train on Training.Tokens at TokensPerS;
	// ChipHours is Days x 24 x chips and Cost is ChipHours x
	// Training.PricePerChipHour. They are present only when --tokens
	// (and, for Cost, --price) is given.
	Days      *float64 `json:"days,omitempty"`
	ChipHours *float64 `json:"chip_hours,omitempty"`
	Cost      *float64 `json:"cost,omitempty"`
	// Goodput and Energy are the time to train with interruptions,
	// checkpoints and restarts, and the energy of the run; present only
	// with --goodput or --deadline (and --tokens).
	Goodput *Goodput `json:"goodput,omitempty"`
	Energy  *Energy  `json:"energy,omitempty"`

	// BatchDefault says how the batch was defaulted and how to set it, in
	// the RESULT `plan explain --format json` prints (a plan says it once,
	// in its batch object); absent when the batch was given.
	BatchDefault string `json:"batch_default,omitempty"`
}

// Evaluation is everything known about one strategy of one problem: the
// inputs and the cost and memory estimates. It is what [NewResult] and
// [WriteExplainTable] render.
type Evaluation struct {
	Model    model.Spec
	Cluster  profiles.Cluster
	Workload space.Workload
	// Strategy is validated and placed (Mesh filled).
	Strategy space.Strategy
	Time     cost.Estimate
	Memory   memory.Breakdown
	// UsableBytes is the HBM per chip the strategy may fill (memory.UsableBytes).
	UsableBytes float64
	// Err is the models' error when they could not score the strategy.
	Err error
	// Framework names the framework profile the models ran under ("" for
	// the default).
	Framework string
	// FP8Recipe names the recipe of the strategy's fp8 matmuls
	// (model.FP8Recipe; "" for a bf16 strategy).
	FP8Recipe string
	// MemoryParts breaks Memory down by part (memory.Model.Parts), for
	// explain; nil elsewhere.
	MemoryParts []memory.Part
	// BatchDefault says how the batch was defaulted, and how to set it;
	// empty when the user gave it (Batch.Default).
	BatchDefault string
	// Searched says a search chose the strategy (a plan's row) rather
	// than the user (explain): its band carries the search's selection
	// error (profiles.RegimeSearched).
	Searched bool
}

// Batch is the evaluation's global batch.
func (e Evaluation) Batch() Batch {
	return Batch{Sequences: e.Workload.Batch, SeqLen: e.Workload.SeqLen, Tokens: e.Workload.Tokens(), Default: e.BatchDefault}
}

// FrameworkName is the evaluation's framework profile, DefaultFramework
// when none was named.
func (e Evaluation) FrameworkName() string {
	if e.Framework == "" {
		return DefaultFramework
	}
	return e.Framework
}

// Band returns the interval of the evaluation's step time
// (profiles.StepTimeBand): its chip family at its chip count, its
// framework and precision (fp4 for fp8 under the nvfp4 recipe, which no
// band's run covers), whether a search chose the strategy, and whether
// the model is a mixture of experts.
func (e Evaluation) Band() profiles.Band {
	prec := space.PrecisionBF16
	if e.Strategy.EightBit() {
		prec = e.Strategy.Precision
	}
	if e.Strategy.FP8() && e.FP8Recipe == model.FP4NV {
		prec = profiles.PrecisionFP4
	}
	return profiles.StepTimeBand(profiles.BandQuery{
		Family: e.Cluster.Chip.Family, Chips: e.Cluster.Chips(), Chip: e.Cluster.Chip.Name, Framework: e.FrameworkName(),
		Precision: prec, Searched: e.Searched, MoE: e.Model.MoE != nil,
	})
}

// OOMRisk is the probability that the strategy needs more than the usable
// memory per chip (profiles.OOMRisk).
func (e Evaluation) OOMRisk() float64 {
	return profiles.OOMRisk(e.Memory.TotalBytes(), e.UsableBytes, e.Cluster.Chips(), e.FrameworkName())
}

// Fits reports whether the memory estimate is within the usable HBM.
func (e Evaluation) Fits() bool { return e.Memory.TotalBytes() <= e.UsableBytes }

// MFU is model FLOPs per step over step time x chips x peak bf16 FLOP/s.
func (e Evaluation) MFU() float64 { return e.utilisation(e.Time.ModelFLOPs) }

// HFU is like MFU with the hardware FLOPs (recomputation included).
func (e Evaluation) HFU() float64 { return e.utilisation(e.Time.HardwareFLOPs) }

func (e Evaluation) utilisation(flops float64) float64 {
	d := e.Time.StepSeconds * float64(e.Cluster.Chips()) * e.Cluster.Chip.PeakBF16FLOPs
	if d <= 0 {
		return 0
	}
	return flops / d
}

// TokensPerS is the throughput of the whole cluster.
func (e Evaluation) TokensPerS() float64 {
	if e.Time.StepSeconds <= 0 {
		return 0
	}
	return float64(e.Workload.Tokens()) / e.Time.StepSeconds
}

// NewStrategy converts a placed strategy to its JSON form; the workload
// fixes the number of micro-batches.
func NewStrategy(s space.Strategy, w space.Workload) Strategy {
	mesh := map[string][]string{}
	for d, shares := range s.Mesh {
		key := space.Dim(d).String()
		for _, sh := range shares {
			mesh[key] = append(mesh[key], sh.Axis)
		}
	}
	nmb := s.NumMicrobatches(w)
	prec := space.PrecisionBF16
	if s.EightBit() {
		prec = s.Precision
	}
	weights := "" // fp32, the default, left out
	if s.BF16Weights() || s.BF16Moments() {
		weights = s.Weights
	}
	out := Strategy{
		DP: s.Degree[space.DP], Zero: s.Zero, FSDP: s.Degree[space.FSDP], TP: s.Degree[space.TP], SP: s.SP, CP: s.Degree[space.CP], PP: s.Degree[space.PP], EP: s.Degree[space.EP],
		First: s.Split.First, Last: s.Split.Last,
		MB: s.MB, ETP: s.ExpertTP(), NumMicrobatches: nmb, Schedule: string(s.Schedule), V: s.V, Recompute: s.Recompute,
		Precision:  prec,
		Weights:    weights,
		Offload:    s.Offload,
		A2AOverlap: s.A2AOverlap,
		ActOffload: s.ActOffload,
		Dispatcher: s.Dispatcher,
		Mesh:       mesh,
		Spec:       s.String(),
	}
	if s.Offload != "" {
		out.OffloadFraction = s.HostOptimizerFraction()
	}
	return out
}

// NewResult converts an evaluation to the contract's RESULT.
func NewResult(e Evaluation) Result {
	chips := float64(e.Cluster.Chips())
	tps := e.TokensPerS()
	colls := make([]Collective, len(e.Time.Collectives))
	for i, c := range e.Time.Collectives {
		colls[i] = newCollective(c)
	}
	var stepRange, stepRange95, tpsRange *[2]float64
	if e.Time.StepSeconds > 0 {
		// The measured step time of a prediction p lies in
		// [p·Lo80, p·Hi80] for 80% of the runs the band was measured on;
		// the throughput in tokens over that.
		b := e.Band()
		lo, hi := e.Time.StepSeconds*b.Lo80, e.Time.StepSeconds*b.Hi80
		stepRange = &[2]float64{lo, hi}
		stepRange95 = &[2]float64{e.Time.StepSeconds * b.Lo95, e.Time.StepSeconds * b.Hi95}
		tokens := float64(e.Workload.Tokens())
		tpsRange = &[2]float64{tokens / hi, tokens / lo}
	}
	return Result{
		Strategy:          NewStrategy(e.Strategy, e.Workload),
		StepTimeS:         e.Time.StepSeconds,
		StepTimeSRange:    stepRange,
		StepTimeSRange95:  stepRange95,
		TokensPerSRange:   tpsRange,
		TokensPerS:        tps,
		TokensPerSPerChip: tps / chips,
		MFU:               e.MFU(),
		HFU:               e.HFU(),
		MemoryGBPerChip:   e.Memory.TotalBytes() / GB,
		UsableGBPerChip:   e.UsableBytes / GB,
		Fits:              e.Fits(),
		OOMRisk:           e.OOMRisk(),
		Time: Time{
			ComputeS:        e.Time.ComputeSeconds,
			MatmulS:         e.Time.MatmulSeconds,
			MatmulTailS:     e.Time.MatmulTailSeconds,
			AttentionS:      e.Time.AttentionSeconds,
			ScanS:           e.Time.ScanSeconds,
			MemoryBoundS:    e.Time.MemoryBoundSeconds,
			OptimizerS:      e.Time.OptimizerSeconds,
			ExposedCommS:    e.Time.ExposedCommSeconds,
			ExposedA2AS:     e.Time.ExposedA2ASeconds,
			CollectiveSMS:   e.Time.CollectiveSMSeconds,
			ExposedOffloadS: e.Time.ExposedOffloadSeconds,
			BubbleS:         e.Time.BubbleSeconds,
		},
		Memory: Memory{
			ParamsGB:          e.Memory.ParamsBytes / GB,
			GradsGB:           e.Memory.GradsBytes / GB,
			OptimizerGB:       e.Memory.OptimizerBytes / GB,
			ActivationsGB:     e.Memory.ActivationsBytes / GB,
			BuffersGB:         e.Memory.BuffersBytes / GB,
			HostActivationsGB: e.Memory.HostActivationsBytes / GB,
			HostStatesGB:      e.Memory.HostStatesBytes / GB,
			Parts:             memoryParts(e.MemoryParts),
		},
		Collectives: colls,
	}
}

// memoryParts converts memory.Parts to the contract's units.
func memoryParts(ps []memory.Part) []MemoryPart {
	var out []MemoryPart
	for _, p := range ps {
		out = append(out, MemoryPart{Component: p.Component, Name: p.Name, GB: p.Bytes / GB})
	}
	return out
}

func newCollective(c cost.Collective) Collective {
	axes := c.Axes
	if axes == nil {
		axes = []string{}
	}
	return Collective{
		Op: c.Op, Axes: axes, Bytes: c.Bytes, Count: c.Count,
		TimeS: c.Seconds, Overlapped: c.Overlapped, Why: c.Why,
	}
}

// NewTrainingResult is NewResult with the days, chip-hours and cost of
// training t (none when t is zero).
func NewTrainingResult(e Evaluation, t Training) Result {
	r := NewResult(e)
	t.apply(&r, e.Cluster.Chips())
	// A budget that cannot be computed leaves the row without it (the
	// inputs are checked by the command line before).
	_ = t.applyBudget(&r, e.Cluster, e.FrameworkName())
	return r
}

// oomBasis says what the evaluation's out-of-memory risk is drawn from
// (profiles.Bands.MemoryFitFor).
func (e Evaluation) oomBasis() string {
	return "the memory model's error on " + profiles.DefaultBands().MemoryFitFor(e.Cluster.Chips(), e.FrameworkName()).Basis
}
