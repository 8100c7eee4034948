package sweep

import (
	"fmt"

	"github.com/meshplan/meshplan/results"
)

// Training is the training section of a sweep configuration: what `plan`
// takes as --tokens, --price, --goodput and the budget flags, applied to
// every cell's plan so that each record carries the days, chip-hours and
// cost to train and, with Goodput, the goodput and energy of every row
// (docs/goodput.md). The zero value adds nothing.
type Training struct {
	// Tokens is the number of training tokens (15T, 300B, 2e12); "" adds
	// nothing.
	Tokens string `mapstructure:"tokens" json:"tokens,omitempty"`
	// Price is the price of one chip for one hour; 0 means none.
	Price float64 `mapstructure:"price" json:"price,omitempty"`
	// Goodput adds the goodput with interruptions, checkpoints and
	// restarts, and the energy, to every row (plan --goodput).
	Goodput bool `mapstructure:"goodput" json:"goodput,omitempty"`
	// InterruptionsPerChipDay, CheckpointBandwidth (GB/s per chip),
	// RestartMinutes, ChipWatts, PUE and EnergyPrice (per kWh) override
	// the sourced defaults as plan's flags of the same names do; 0 keeps
	// the default.
	InterruptionsPerChipDay float64 `mapstructure:"interruptions_per_chip_day" json:"interruptions_per_chip_day,omitempty"`
	CheckpointBandwidth     float64 `mapstructure:"checkpoint_bandwidth" json:"checkpoint_bandwidth,omitempty"`
	RestartMinutes          float64 `mapstructure:"restart_minutes" json:"restart_minutes,omitempty"`
	ChipWatts               float64 `mapstructure:"chip_watts" json:"chip_watts,omitempty"`
	PUE                     float64 `mapstructure:"pue" json:"pue,omitempty"`
	EnergyPrice             float64 `mapstructure:"energy_price" json:"energy_price,omitempty"`
}

// given reports whether t asks for anything.
func (t Training) given() bool { return t != Training{} }

// validate reports every setting of t that plan would refuse, as
// "training.KEY ..." sentences.
func (t Training) validate() []error {
	var errs []error
	if t.Tokens != "" {
		if n, err := results.ParseCount(t.Tokens); err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("training.tokens %q: give a number of tokens such as 15T, 300B or 2e12", t.Tokens))
		}
	} else if t.given() {
		errs = append(errs, fmt.Errorf("training: price, goodput and the budget settings need training.tokens"))
	}
	if t.Price < 0 || t.Price > 0 && t.Price < 1e-6 || t.Price > 1e6 {
		errs = append(errs, fmt.Errorf("training.price %g: give a price per chip-hour from 0.000001 to 1,000,000, or leave it out", t.Price))
	}
	budget := t.InterruptionsPerChipDay != 0 || t.CheckpointBandwidth != 0 || t.RestartMinutes != 0 || t.ChipWatts != 0 || t.PUE != 0 || t.EnergyPrice != 0
	if budget && !t.Goodput {
		errs = append(errs, fmt.Errorf("training: the interruption, checkpoint, restart, power and energy settings need training.goodput: true"))
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"interruptions_per_chip_day", t.InterruptionsPerChipDay}, {"checkpoint_bandwidth", t.CheckpointBandwidth},
		{"restart_minutes", t.RestartMinutes}, {"chip_watts", t.ChipWatts}, {"pue", t.PUE}, {"energy_price", t.EnergyPrice}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("training.%s %g: give a positive number, or leave it out for the sourced default", f.key, f.v))
		}
	}
	if t.PUE != 0 && t.PUE < 1 {
		errs = append(errs, fmt.Errorf("training.pue %g: the facility's power over the IT power is at least 1", t.PUE))
	}
	return errs
}

// results returns t as the plan's training figures (the zero value when
// no tokens are given).
func (t Training) results() results.Training {
	n, err := results.ParseCount(t.Tokens)
	if t.Tokens == "" || err != nil {
		return results.Training{}
	}
	rt := results.Training{Tokens: n, PricePerChipHour: t.Price}
	if t.Goodput {
		rt.Budget = &results.Budget{InterruptionsPerChipDay: t.InterruptionsPerChipDay, CheckpointGBPerSPerChip: t.CheckpointBandwidth,
			RestartMinutes: t.RestartMinutes, ChipWatts: t.ChipWatts, PUE: t.PUE, EnergyPricePerKWh: t.EnergyPrice}
	}
	return rt
}
