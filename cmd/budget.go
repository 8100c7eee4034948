package cmd

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/meshplan/meshplan/results"
)

// Bounds of the budget's flags: beyond them a number is a typo or a value
// in another unit.
const (
	maxInterruptionsPerChipDay = 10    // one chip stopping the job ten times a day
	maxCheckpointGBPerS        = 1000  // 1 TB/s of storage per chip
	maxRestartMinutes          = 10080 // a week
	maxChipWatts               = 10000 // 10 kW per chip
	maxPUE                     = 5     // the worst data centres report about 2.5
	maxEnergyPrice             = 100   // per kWh, in any currency
	maxDeadlineDays            = 36500 // a century
)

// addBudgetFlags adds the flags of the time to train as a budget sees it
// (plan and plan explain).
func addBudgetFlags(fs *pflag.FlagSet) {
	fs.Bool("goodput", false, "with --tokens, add the time to train with interruptions, checkpoints and restarts (goodput) and the energy of the run")
	fs.Float64("interruptions-per-chip-day", 0, "job interruptions per chip per `day` (default: the chip family's published rate, Llama 3's 466 in 54 days on 16,384 H100 = 5.27e-4)")
	fs.Float64("checkpoint-bandwidth", 0, "storage bandwidth per chip in `GB/s` for writing and reading checkpoints (default: Llama 3's 2 TB/s for 16,384 GPUs = 0.122)")
	fs.Float64("restart-minutes", 0, "`minutes` from an interruption to the first useful step besides reading the checkpoint (default: 10, assumed)")
	fs.Float64("chip-watts", 0, "the chip's full power in `watts`: its TDP or a power cap (default: the chip's datasheet TDP)")
	fs.Float64("pue", 0, "the data centre's power usage `effectiveness` (default: 1.10, Google's fleet in 2023)")
	fs.Float64("energy-price", 0, "price of one `kWh`: adds the energy cost of the run (needs --goodput or --deadline)")
}

// budgetFlags pairs each budget override with its flag.
func (c Config) budgetFlags() []struct {
	flag string
	v    float64
	max  float64
	unit string
} {
	return []struct {
		flag string
		v    float64
		max  float64
		unit string
	}{
		{"interruptions-per-chip-day", c.InterruptionsPerChipDay, maxInterruptionsPerChipDay, "interruptions per chip-day"},
		{"checkpoint-bandwidth", c.CheckpointBandwidth, maxCheckpointGBPerS, "GB/s per chip"},
		{"restart-minutes", c.RestartMinutes, maxRestartMinutes, "minutes"},
		{"chip-watts", c.ChipWatts, maxChipWatts, "watts"},
		{"pue", c.PUE, maxPUE, "(facility power over IT power)"},
		{"energy-price", c.EnergyPrice, maxEnergyPrice, "per kWh"},
	}
}

// validateBudget reports every budget setting out of range or given
// without what it needs.
func (c Config) validateBudget() []error {
	var errs []error
	budget := c.Goodput || c.Deadline != ""
	for _, f := range c.budgetFlags() {
		switch {
		case f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0):
			errs = append(errs, fmt.Errorf("--%s must be a positive number %s, got %g (leave it out for the default)", f.flag, f.unit, f.v))
		case f.v > f.max:
			errs = append(errs, fmt.Errorf("--%s %g is more than %g %s", f.flag, f.v, f.max, f.unit))
		case f.v > 0 && !budget:
			errs = append(errs, fmt.Errorf("--%s %g needs --goodput or --deadline (with --tokens)", f.flag, f.v))
		}
	}
	if c.PUE > 0 && c.PUE < 1 {
		errs = append(errs, fmt.Errorf("--pue must be at least 1 (the facility's power over its IT equipment's), got %g", c.PUE))
	}
	if c.Deadline != "" {
		if _, err := parseDeadline(c.Deadline); err != nil {
			errs = append(errs, fmt.Errorf("--deadline: %w", err))
		}
	}
	if budget && c.Tokens == "" {
		flag := "--goodput"
		if c.Deadline != "" {
			flag = "--deadline " + c.Deadline
		}
		errs = append(errs, fmt.Errorf("%s needs --tokens: the time to train is for that many tokens", flag))
	}
	return errs
}

// budget returns the budget of c, nil without --goodput or --deadline.
// c must have passed Validate.
func (c Config) budget() *results.Budget {
	if !c.Goodput && c.Deadline == "" {
		return nil
	}
	days, _ := parseDeadline(c.Deadline)
	return &results.Budget{
		InterruptionsPerChipDay: c.InterruptionsPerChipDay, CheckpointGBPerSPerChip: c.CheckpointBandwidth,
		RestartMinutes: c.RestartMinutes, ChipWatts: c.ChipWatts, PUE: c.PUE, EnergyPricePerKWh: c.EnergyPrice,
		DeadlineDays: days,
	}
}

// parseDeadline reads a wall time as days: a number with the unit d
// (days), h (hours) or w (weeks), or a bare number of days: 90d, 2160h,
// 13w, 90. "" is 0.
func parseDeadline(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	t := strings.ToLower(strings.TrimSpace(s))
	scale := 1.0 // days
	switch {
	case strings.HasSuffix(t, "d"):
		t = strings.TrimSuffix(t, "d")
	case strings.HasSuffix(t, "h"):
		t, scale = strings.TrimSuffix(t, "h"), 1.0/24
	case strings.HasSuffix(t, "w"):
		t, scale = strings.TrimSuffix(t, "w"), 7
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a wall time: give days, hours or weeks such as 90d, 2160h or 13w", s)
	}
	days := v * scale
	switch {
	case days <= 0:
		return 0, fmt.Errorf("%q must be a positive wall time such as 90d", s)
	case days > maxDeadlineDays:
		return 0, fmt.Errorf("%q is more than %d days", s, maxDeadlineDays)
	}
	return days, nil
}
