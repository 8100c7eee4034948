package calibrate

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/validate/runs"
)

// HeldOut is one run's time error with the default coefficients, with the
// coefficients fitted on every run of its chip (in sample) and with those
// fitted without its source's runs (out of source).
type HeldOut struct {
	// ID is the run's id, Source its source (runs.Run.SourceName), Chip
	// the profiles chip whose coefficients are fitted.
	ID     string `json:"id"`
	Source string `json:"source"`
	Chip   string `json:"chip"`
	// Framework is the framework profile it was predicted with, Chips the
	// job's chip count and Strategy the layout evaluated (runs.Row).
	Framework string `json:"framework"`
	Chips     int    `json:"chips"`
	Strategy  string `json:"strategy"`
	// FP4 says the run's fp8 precision ran under the nvfp4 recipe, at the
	// chip's fp4 rate (runs.Run.FP8RecipeName): its band is the fp4
	// precision class's (profiles.PrecisionKey).
	FP4 bool `json:"fp4,omitempty"`
	// Measured is the published tokens/s per chip; Default, InSample and
	// OutOfSource the predictions, and the *Error fields predicted/measured - 1.
	Measured         float64 `json:"measured_tokens_per_s_per_chip"`
	Default          float64 `json:"default_tokens_per_s_per_chip"`
	InSample         float64 `json:"in_sample_tokens_per_s_per_chip"`
	OutOfSource      float64 `json:"out_of_source_tokens_per_s_per_chip"`
	DefaultError     float64 `json:"default_error"`
	InSampleError    float64 `json:"in_sample_error"`
	OutOfSourceError float64 `json:"out_of_source_error"`
	// Refit says the out-of-source coefficients were fitted on other
	// sources' runs of the chip; false means no other source has runs on
	// the chip, so the run is predicted with the defaults.
	Refit bool `json:"refit"`
}

// ChipFit says what was fitted for one chip.
type ChipFit struct {
	// Chip is the profiles chip name; Base the cluster whose coefficients
	// were fitted (the chip's run with the most link tiers, then chips).
	Chip string `json:"chip"`
	Base string `json:"base"`
	// Runs counts the chip's predicted runs, Sources their sources.
	Runs    int      `json:"runs"`
	Sources []string `json:"sources"`
	// Fitted says the in-sample fit succeeded; Note says why not, or that
	// a single source leaves nothing to refit.
	Fitted bool   `json:"fitted"`
	Note   string `json:"note,omitempty"`
}

// SourceReport is LeaveOneSourceOut's outcome.
type SourceReport struct {
	// Rows are the predicted time runs, in input order.
	Rows []HeldOut `json:"rows"`
	// Chips are the chips fitted, in order of first appearance.
	Chips []ChipFit `json:"chips"`
	// DefaultMAPE, InSampleMAPE and OutOfSourceMAPE are the means of the
	// rows' absolute errors (0 without rows).
	DefaultMAPE     float64 `json:"default_mape"`
	InSampleMAPE    float64 `json:"in_sample_mape"`
	OutOfSourceMAPE float64 `json:"out_of_source_mape"`
}

// LeaveOneSourceOut measures how the calibrated cost model predicts a
// source it has not seen. For every chip with predictable time runs
// (runs.Validate), Calibrate fits the chip's coefficients on all its runs
// (in sample) and, for each source S of the chip, on the runs of the other
// sources only; S's runs are then predicted with that refit (out of
// source). A chip whose runs all come from one source has nothing to refit
// on: its runs' out-of-source prediction is the default one (Refit false)
// and its ChipFit says so. A chip whose in-sample fit fails keeps the
// defaults in sample too, with the reason. Cross-validation inside each
// fit is off (o.Folds is ignored). The per-row out-of-source errors are
// the distribution a prediction interval can be drawn from.
func LeaveOneSourceOut(rs []runs.Run, o Options) (SourceReport, error) {
	o.Folds = -1
	rep := SourceReport{Rows: []HeldOut{}, Chips: []ChipFit{}}
	v := runs.Validate(rs, nil, o.Runs)
	byID := map[string]runs.Run{}
	for _, r := range rs {
		byID[r.ID] = r
	}
	var chips []string
	for _, row := range v.Rows {
		if !slices.Contains(chips, row.Chip) {
			chips = append(chips, row.Chip)
		}
		r := byID[row.ID]
		rep.Rows = append(rep.Rows, HeldOut{
			ID: row.ID, Source: r.SourceName(), Chip: row.Chip, Framework: row.Framework, Chips: row.Chips, Strategy: row.Strategy,
			FP4:      r.FP8RecipeName() == model.FP4NV,
			Measured: row.MeasuredTokensPerSPerChip,
			Default:  row.PredictedTokensPerSPerChip, DefaultError: row.Error,
			InSample: row.PredictedTokensPerSPerChip, InSampleError: row.Error,
			OutOfSource: row.PredictedTokensPerSPerChip, OutOfSourceError: row.Error,
		})
	}
	for _, chip := range chips {
		fit, err := fitChip(&rep, chip, byID, o)
		if err != nil {
			return rep, err
		}
		rep.Chips = append(rep.Chips, fit)
	}
	if n := float64(len(rep.Rows)); n > 0 {
		for _, h := range rep.Rows {
			rep.DefaultMAPE += math.Abs(h.DefaultError) / n
			rep.InSampleMAPE += math.Abs(h.InSampleError) / n
			rep.OutOfSourceMAPE += math.Abs(h.OutOfSourceError) / n
		}
	}
	return rep, nil
}

// fitChip fits one chip in sample and without each of its sources, and
// sets its rows' in-sample and out-of-source figures.
func fitChip(rep *SourceReport, chip string, byID map[string]runs.Run, o Options) (ChipFit, error) {
	var idx []int
	var on []runs.Run
	var sources []string
	for i, h := range rep.Rows {
		if h.Chip == chip {
			idx = append(idx, i)
			on = append(on, byID[h.ID])
			if !slices.Contains(sources, h.Source) {
				sources = append(sources, h.Source)
			}
		}
	}
	fit := ChipFit{Chip: chip, Runs: len(on), Sources: sources}
	base, err := baseOf(on)
	if err != nil {
		fit.Note = "no base cluster: " + err.Error() + "; in-sample and out-of-source are the defaults"
		return fit, nil
	}
	fit.Base = base.Name
	in, err := Calibrate(on, base, o)
	if err != nil {
		if !errors.Is(err, ErrNoRuns) {
			fit.Note = "the fit failed: " + err.Error() + "; in-sample and out-of-source are the defaults"
			return fit, nil
		}
		fit.Note = err.Error() + "; in-sample and out-of-source are the defaults"
		return fit, nil
	}
	fit.Fitted = true
	after := map[string]Row{}
	for _, r := range in.Rows {
		after[r.ID] = r
	}
	for _, i := range idx {
		if a, ok := after[rep.Rows[i].ID]; ok {
			rep.Rows[i].InSample, rep.Rows[i].InSampleError = a.After, a.AfterError
		}
	}
	if len(sources) == 1 {
		fit.Note = fmt.Sprintf("only one source (%s) on %s: no coefficient can be fitted without it, so out-of-source is the default prediction", sources[0], chip)
		return fit, nil
	}
	for _, s := range sources {
		var train, test []runs.Run
		for _, r := range on {
			if r.SourceName() == s {
				test = append(test, r)
			} else {
				train = append(train, r)
			}
		}
		out, err := Calibrate(train, base, o)
		if err != nil {
			// Nothing fitted without s: its runs keep the defaults.
			continue
		}
		got := map[string]runs.Row{}
		for _, r := range runs.Validate(test, &out.Fitted, o.Runs).Rows {
			got[r.ID] = r
		}
		for _, i := range idx {
			h := &rep.Rows[i]
			if h.Source != s {
				continue
			}
			if g, ok := got[h.ID]; ok {
				h.OutOfSource, h.OutOfSourceError, h.Refit = g.PredictedTokensPerSPerChip, g.Error, true
			}
		}
	}
	return fit, nil
}

// baseOf returns the cluster whose coefficients a chip's fit writes: the
// own cluster of the run with the most link tiers, then the most chips
// (Calibrate fits only the tiers its base has).
func baseOf(rs []runs.Run) (profiles.Cluster, error) {
	var best profiles.Cluster
	found := false
	for _, r := range rs {
		c, err := r.ClusterOf(nil)
		if err != nil {
			continue
		}
		if !found || tiers(c) > tiers(best) || (tiers(c) == tiers(best) && c.Chips() > best.Chips()) {
			best, found = c, true
		}
	}
	if !found {
		return profiles.Cluster{}, errors.New("calibrate: no run has a cluster")
	}
	return best, nil
}

// tiers counts the distinct link tiers of c.
func tiers(c profiles.Cluster) int {
	var seen []profiles.Tier
	for _, a := range c.Axes {
		if !slices.Contains(seen, a.Tier) {
			seen = append(seen, a.Tier)
		}
	}
	return len(seen)
}
