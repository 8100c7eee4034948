package runs

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// gibBytes is one GiB: docs/published-memory.md reads the sources' "GB" as
// PyTorch byte counters divided by 2^30.
const gibBytes = 1 << 30

// gbBytes is one decimal GB: Megatron-Bridge's report_memory divides
// torch.cuda.memory_stats()'s byte counters by 1.0e9
// (NVIDIA-NeMo/Megatron-Bridge@600d069b src/megatron/bridge/training/utils/train_utils.py:1204;
// the same at @33655ef8 and @7ded17da, the cards' revisions).
const gbBytes = 1e9

// peakUnitBytes is the bytes of one unit of r's measured_peak_gb: a
// decimal GB for Megatron-Bridge's logs, a GiB otherwise
// (docs/published-memory.md).
func (r Run) peakUnitBytes() float64 {
	if strings.HasPrefix(r.SourceName(), "NVIDIA-NeMo/Megatron-Bridge") {
		return gbBytes
	}
	return gibBytes
}

// PublishedRow is one row of a published-runs-2 or published-memory file
// compared with its prediction: the time, the memory, or both.
type PublishedRow struct {
	// ID is the run's id.
	ID string `json:"id"`
	// Source is the row's source (Run.SourceName).
	Source string `json:"source"`
	// Framework is the framework profile it was predicted with.
	Framework string `json:"framework"`
	// Chip is the profiles chip name; Cluster the cluster it was predicted on.
	Chip    string `json:"chip"`
	Cluster string `json:"cluster"`
	// Chips is the job's chip count.
	Chips int `json:"chips"`
	// Strategy is the contract strategy string that was evaluated.
	Strategy string `json:"strategy"`
	// MeasuredTokensPerSPerChip is the published throughput per chip,
	// converted as MeasuredFrom says (0 for a memory row).
	MeasuredTokensPerSPerChip float64 `json:"measured_tokens_per_s_per_chip"`
	// MeasuredFrom says which published figure the throughput comes from.
	MeasuredFrom string `json:"measured_from,omitempty"`
	// PredictedTokensPerSPerChip is batch*seq / predicted step time / chips.
	PredictedTokensPerSPerChip float64 `json:"predicted_tokens_per_s_per_chip"`
	// TimeError is predicted/measured tokens/s - 1; null without a measured time.
	TimeError *float64 `json:"time_error"`
	// MeasuredPeakBytes is the published per-chip peak memory (GiB read
	// as 2^30 bytes), 0 when none is published.
	MeasuredPeakBytes float64 `json:"measured_peak_bytes"`
	// PeakKind is the counter behind it: allocated, reserved or unknown.
	PeakKind string `json:"peak_kind,omitempty"`
	// PredictedPeakBytes is the memory model's peak of the busiest chip.
	PredictedPeakBytes float64 `json:"predicted_peak_bytes"`
	// UsableBytes is the HBM per chip the fit verdict compares with.
	UsableBytes float64 `json:"usable_bytes"`
	// MemoryError is predicted/measured peak - 1; null without a measured
	// peak or for a run that ran out of memory (its peak is partial).
	MemoryError *float64 `json:"memory_error"`
	// Fits is the planner's verdict: the predicted peak is within UsableBytes.
	Fits bool `json:"fits"`
	// OOMRisk is the probability the planner gives that the run needs
	// more than UsableBytes (profiles.OOMRisk).
	OOMRisk float64 `json:"oom_risk"`
	// OOM is the published outcome: true when the run ran out of memory,
	// false when it ran (every time row ran), null when not stated.
	OOM *bool `json:"oom"`
	// FitRight says whether Fits agrees with OOM; null without an outcome.
	FitRight *bool `json:"fit_right"`
	// Note lists the assumptions made for this row.
	Note string `json:"note,omitempty"`
}

// Summary is the error of a group of rows: a source, a chip, a framework
// or all of them.
type Summary struct {
	// Name is the source, chip or framework ("all" for every row).
	Name string `json:"name"`
	// Rows counts the posable rows of the group.
	Rows int `json:"rows"`
	// TimeRows, TimeMAPE and TimeBias are the number of rows with a time
	// error, the mean of |error| and the mean error (fractions).
	TimeRows int     `json:"time_rows"`
	TimeMAPE float64 `json:"time_mape"`
	TimeBias float64 `json:"time_bias"`
	// MemoryRows and MemoryMAPE are the number of rows with a memory error
	// and the mean of |error|.
	MemoryRows int     `json:"memory_rows"`
	MemoryMAPE float64 `json:"memory_mape"`
	// FitRight and FitWrong count the fit verdicts that agree and disagree
	// with the published outcome.
	FitRight int `json:"fit_right"`
	FitWrong int `json:"fit_wrong"`
}

// PublishedReport is ValidatePublished's outcome, in the contract's JSON form.
type PublishedReport struct {
	// Format is the file's format: "published-runs" or "published-memory".
	Format string `json:"format"`
	// Rows are the posable rows, in input order.
	Rows []PublishedRow `json:"rows"`
	// NotPosable are the rows the planner cannot express, with its reason.
	NotPosable []Skip `json:"not_posable"`
	// All summarises every posable row; BySource, ByChip and ByFramework
	// break it down, in order of first appearance.
	All         Summary   `json:"all"`
	BySource    []Summary `json:"by_source"`
	ByChip      []Summary `json:"by_chip"`
	ByFramework []Summary `json:"by_framework"`
}

// ValidatePublished predicts every row of a published-runs-2 or
// published-memory file (or a user file in their columns): time rows
// compare the predicted tokens/s per chip with the measured one (per-chip
// tokens/s, else the step time, else TFLOP/s through the source's FLOP
// convention), memory rows the predicted peak per chip with the measured
// one and the fit verdict with the published out-of-memory outcome. Rows
// the planner cannot express are listed with the planner's reason.
func ValidatePublished(rs []Run, f Format, override *profiles.Cluster, o Options) PublishedReport {
	rep := PublishedReport{Format: f.String(), Rows: []PublishedRow{}, NotPosable: []Skip{}}
	for _, r := range rs {
		row, err := r.validatePublished(override, o)
		if err != nil {
			rep.NotPosable = append(rep.NotPosable, Skip{ID: r.ID, Reason: reason(err)})
			continue
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.All = summarize("all", rep.Rows)
	rep.BySource = summaries(rep.Rows, func(r PublishedRow) string { return r.Source })
	rep.ByChip = summaries(rep.Rows, func(r PublishedRow) string { return r.Chip })
	rep.ByFramework = summaries(rep.Rows, func(r PublishedRow) string { return r.Framework })
	return rep
}

// validatePublished predicts one row.
func (r Run) validatePublished(override *profiles.Cluster, o Options) (PublishedRow, error) {
	timed := r.MeasuredTokensPerSPerChip > 0 || r.MeasuredTokensPerS > 0 || r.MeasuredStepS > 0 ||
		r.MeasuredTFLOPsPerChip > 0 || r.MeasuredMFU > 0
	var meas Measurement
	var check func(m model.Spec, c profiles.Cluster, w space.Workload) error
	if timed {
		check = func(m model.Spec, c profiles.Cluster, w space.Workload) error {
			var err error
			meas, err = r.Measured(m, c.Chips(), w.Batch, w.SeqLen)
			return err
		}
	}
	p, err := r.predict(override, o, check)
	if err != nil {
		return PublishedRow{}, err
	}
	notes := p.notes
	row := PublishedRow{
		ID: r.ID, Source: r.SourceName(), Framework: p.fw, Chip: p.c.Chip.Name, Cluster: p.c.Name,
		Chips: p.c.Chips(), Strategy: p.best.s.String(),
		PredictedTokensPerSPerChip: float64(p.w.Tokens()) / p.best.est.StepSeconds / float64(p.c.Chips()),
		PredictedPeakBytes:         p.best.mem.TotalBytes(),
		UsableBytes:                p.usable,
		Fits:                       p.best.fit,
		PeakKind:                   r.PeakKind,
	}
	if timed {
		row.MeasuredTokensPerSPerChip, row.MeasuredFrom = meas.TokensPerSPerChip, meas.From
		e := row.PredictedTokensPerSPerChip/meas.TokensPerSPerChip - 1
		row.TimeError = &e
	}
	if ratio, ok := geminiMargin(r.ZeroOrFSDP); ok {
		// The optimizer state on the chip: fp32 master weights and two
		// moments, 12 bytes a parameter, over the chips that shard it.
		opt := 12 * float64(p.m.Counts().Total) / float64(max(p.best.s.Degree[space.FSDP]*p.best.s.Degree[space.DP], 1))
		row.PredictedPeakBytes = geminiAutoPeak(row.PredictedPeakBytes, p.usable, ratio, opt)
		row.Fits = row.PredictedPeakBytes <= p.usable
		notes = append(notes, fmt.Sprintf("Gemini auto placement: the predicted floor plus gpu_margin_mem_ratio %g of the HBM it leaves, filled with optimizer state", ratio))
	}
	switch {
	case r.OOM == "1":
		row.OOM = ptr(true)
	case r.OOM == "0" || timed:
		// A run with a measured time ran.
		row.OOM = ptr(false)
	}
	if row.OOM != nil {
		row.FitRight = ptr(row.Fits == !*row.OOM)
	}
	if r.MeasuredPeakGB > 0 {
		// PyTorch byte counters over 1e9 (Megatron-Bridge) or 2^30.
		row.MeasuredPeakBytes = r.MeasuredPeakGB * r.peakUnitBytes()
		if r.OOM != "1" {
			e := row.PredictedPeakBytes/row.MeasuredPeakBytes - 1
			row.MemoryError = &e
		} else {
			notes = append(notes, "out of memory: the published peak is partial, no memory error")
		}
		if k := strings.ToLower(r.PeakKind); k != "" && k != "allocated" {
			notes = append(notes, "peak_kind "+k+": compared with the predicted allocated peak")
		}
	}
	row.OOMRisk = profiles.OOMRisk(row.PredictedPeakBytes, row.UsableBytes, row.Chips, row.Framework)
	row.Note = strings.Join(notes, "; ")
	return row, nil
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// summarize returns the summary of rows under name.
func summarize(name string, rows []PublishedRow) Summary {
	s := Summary{Name: name, Rows: len(rows)}
	for _, r := range rows {
		if r.TimeError != nil {
			s.TimeRows++
			s.TimeMAPE += math.Abs(*r.TimeError)
			s.TimeBias += *r.TimeError
		}
		if r.MemoryError != nil {
			s.MemoryRows++
			s.MemoryMAPE += math.Abs(*r.MemoryError)
		}
		if r.FitRight != nil {
			if *r.FitRight {
				s.FitRight++
			} else {
				s.FitWrong++
			}
		}
	}
	if s.TimeRows > 0 {
		s.TimeMAPE /= float64(s.TimeRows)
		s.TimeBias /= float64(s.TimeRows)
	}
	if s.MemoryRows > 0 {
		s.MemoryMAPE /= float64(s.MemoryRows)
	}
	return s
}

// summaries groups rows by key, in order of first appearance.
func summaries(rows []PublishedRow, key func(PublishedRow) string) []Summary {
	var names []string
	for _, r := range rows {
		if k := key(r); !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	out := make([]Summary, 0, len(names))
	for _, n := range names {
		var in []PublishedRow
		for _, r := range rows {
			if key(r) == n {
				in = append(in, r)
			}
		}
		out = append(out, summarize(n, in))
	}
	return out
}

// geminiMarginRe reads ColossalAI Gemini's gpu_margin_mem_ratio.
var geminiMarginRe = regexp.MustCompile(`gpu_margin_mem_ratio\s*=?\s*([0-9.]+)`)

// geminiMargin returns the gpu_margin_mem_ratio of a zero_or_fsdp text
// naming Gemini's auto placement, and false for any other.
func geminiMargin(text string) (float64, bool) {
	t := strings.ToLower(text)
	if !strings.Contains(t, "gemini") || !strings.Contains(t, "placement_policy=auto") {
		return 0, false
	}
	m := geminiMarginRe.FindStringSubmatch(t)
	if m == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil || f < 0 || f > 1 {
		return 0, false
	}
	return f, true
}

// geminiAutoPeak is the peak of ColossalAI Gemini's auto placement: after
// the first step, with everything it may offload in host memory at floor
// bytes, it moves optimizer state (at most opt bytes) onto the chip into
// ratio of the HBM left free (ColossalAI's AutoPlacementPolicy,
// colossalai/zero/gemini/placement_policy.py: "gpu_margin_mem_ratio: the
// ratio of GPU remaining memory (after the first forward-backward) which
// will be used to hold optimizer states").
func geminiAutoPeak(floor, usable, ratio, opt float64) float64 {
	return floor + min(ratio*max(usable-floor, 0), opt)
}
