package goodput

import (
	"fmt"
	"math"
)

// Power is what one chip of a cluster draws, with the host and network
// share that comes with it.
type Power struct {
	// ChipWatts is the chip's power at full load: its TDP, or the cap it
	// runs under.
	ChipWatts float64
	// ChipSource names where ChipWatts comes from.
	ChipSource string
	// IdleFraction is the share of ChipWatts the chip draws while it waits
	// inside a step (on communication, in a pipeline bubble).
	IdleFraction float64
	// HostWattsPerChip is the rest of a node at load (CPUs, memory, NICs,
	// fans, switches) per chip.
	HostWattsPerChip float64
	// HostSource names where HostWattsPerChip comes from.
	HostSource string
}

// IdleFraction is the default share of a chip's full power it draws while
// it waits inside a step: assumed, between the ~10% an H100 draws at rest
// and full load, since a waiting chip keeps its clocks and memory busy.
const IdleFraction = 0.3

// chipPower is one row of the power table: the chip's full power and the
// host's share, per chip.
type chipPower struct {
	chipWatts  float64
	chipSource string
	hostWatts  float64
	hostSource string
}

// A DGX node's maximum system power less its eight GPUs' TDP, per GPU
// (NVIDIA DGX A100, DGX H100/H200 and DGX B200 datasheets).
const (
	dgxA100HostWatts = (6500 - 8*400) / 8.0   // DGX A100: 6.5 kW max
	dgxH100HostWatts = (10200 - 8*700) / 8.0  // DGX H100/H200: 10.2 kW max
	dgxB200HostWatts = (14300 - 8*1000) / 8.0 // DGX B200: ~14.3 kW max
	tpuHostWatts     = 100                    // assumed, no published figure
)

// powerTable returns the power of each catalogued chip by name.
func powerTable() map[string]chipPower {
	dgxA := "DGX A100 datasheet: 6.5 kW max less 8 x 400 W, per GPU"
	dgxH := "DGX H100 datasheet: 10.2 kW max less 8 x 700 W, per GPU"
	dgxB := "DGX B200 datasheet: ~14.3 kW max less 8 x 1000 W, per GPU"
	tpuHost := "assumed: 100 W per chip for the TPU VM host and its share of the network"
	tpu := func(w float64) chipPower {
		return chipPower{w, "assumed: Google publishes no per-chip power for this TPU", tpuHostWatts, tpuHost}
	}
	return map[string]chipPower{
		"a100-40gb": {400, "NVIDIA A100 datasheet: 400 W TDP (SXM)", dgxA100HostWatts, dgxA},
		"a100":      {400, "NVIDIA A100 datasheet: 400 W TDP (SXM)", dgxA100HostWatts, dgxA},
		"h100":      {700, "NVIDIA H100 datasheet: 700 W TDP (SXM)", dgxH100HostWatts, dgxH},
		"h200":      {700, "NVIDIA H200 datasheet: up to 700 W (SXM)", dgxH100HostWatts, dgxH},
		"h800":      {700, "NVIDIA H800 SXM: 700 W, as the H100 SXM", dgxH100HostWatts, dgxH},
		"b200":      {1000, "NVIDIA HGX/DGX B200: 1000 W per GPU", dgxB200HostWatts, dgxB},
		"gb200":     {1200, "NVIDIA GB200: up to 1200 W per Blackwell GPU (uncertain)", dgxB200HostWatts, "assumed: as the DGX B200's host share"},
		"b300":      {1100, "NVIDIA HGX B300: 1100 W per GPU (Verda's GB300 NVL72 architecture note, uncertain)", dgxB200HostWatts, "assumed: as the DGX B200's host share"},
		"gb300":     {1400, "NVIDIA GB300: up to 1400 W per Blackwell Ultra GPU (Verda's GB300 NVL72 architecture note, uncertain)", dgxB200HostWatts, "assumed: as the DGX B200's host share"},
		"mi300x":    {750, "AMD Instinct MI300X datasheet: 750 W", dgxH100HostWatts, "assumed: as the DGX H100's host share"},
		"mi325x":    {1000, "AMD Instinct MI325X datasheet: 1000 W", dgxH100HostWatts, "assumed: as the DGX H100's host share"},
		"v4":        tpu(192),
		"v5e":       tpu(200),
		"v5p":       tpu(450),
		"v6e":       tpu(300),
		"tpu7x":     tpu(1000),
	}
}

// ChipPower returns the default power of the chip called name (a
// profiles.Chip name such as "h100") and false for a chip with none in the
// table (a chip of a cluster file: give its power).
func ChipPower(name string) (Power, bool) {
	p, ok := powerTable()[name]
	if !ok {
		return Power{}, false
	}
	return Power{ChipWatts: p.chipWatts, ChipSource: p.chipSource, IdleFraction: IdleFraction, HostWattsPerChip: p.hostWatts, HostSource: p.hostSource}, true
}

// PUE is the default power usage effectiveness of the data centre, the
// facility's power over the IT equipment's: Google's fleet-wide
// trailing-twelve-month PUE of 1.10 (Google data centre efficiency report,
// 2023).
func PUE() Sourced {
	return Sourced{1.10, "Google's fleet-wide trailing-twelve-month PUE, 1.10 (2023)"}
}

// Energy is the energy of a run.
type Energy struct {
	// ChipWatts is the chip's average power over a step.
	ChipWatts float64
	// WattsPerChip is the facility's power per chip: chip and host, times
	// the PUE.
	WattsPerChip float64
	// Joules is the energy of the whole run.
	Joules float64
	// MWh is Joules in megawatt-hours.
	MWh float64
}

// JoulesPerMWh is the number of joules in a megawatt-hour.
const JoulesPerMWh = 3.6e9

// RunEnergy is the energy of chips chips drawing p for wallSeconds, busy
// (computing) a fraction busy of each step, in a facility of the given PUE:
// a chip draws idle + (full − idle)·busy, the host its share, and the
// facility PUE times both.
func RunEnergy(p Power, busy, pue float64, chips int, wallSeconds float64) (Energy, error) {
	switch {
	case !(p.ChipWatts > 0) || math.IsInf(p.ChipWatts, 0):
		return Energy{}, fmt.Errorf("goodput: a chip's power must be a positive number of watts, got %g", p.ChipWatts)
	case !(p.IdleFraction >= 0 && p.IdleFraction <= 1):
		return Energy{}, fmt.Errorf("goodput: the idle fraction must be between 0 and 1, got %g", p.IdleFraction)
	case !(p.HostWattsPerChip >= 0) || math.IsInf(p.HostWattsPerChip, 0):
		return Energy{}, fmt.Errorf("goodput: the host power must be a number of watts of at least 0, got %g", p.HostWattsPerChip)
	case !(busy >= 0 && busy <= 1):
		return Energy{}, fmt.Errorf("goodput: the busy fraction must be between 0 and 1, got %g", busy)
	case !(pue >= 1) || math.IsInf(pue, 0):
		return Energy{}, fmt.Errorf("goodput: the PUE must be at least 1, got %g", pue)
	case chips < 1:
		return Energy{}, fmt.Errorf("goodput: a run needs at least one chip, got %d", chips)
	case !(wallSeconds >= 0):
		return Energy{}, fmt.Errorf("goodput: the wall time must be a number of seconds of at least 0, got %g", wallSeconds)
	}
	idle := p.IdleFraction * p.ChipWatts
	var e Energy
	e.ChipWatts = idle + (p.ChipWatts-idle)*busy              // linear in load between idle and full power
	e.WattsPerChip = (e.ChipWatts + p.HostWattsPerChip) * pue // IT power times the facility's PUE
	e.Joules = e.WattsPerChip * float64(chips) * wallSeconds  // power x time
	e.MWh = e.Joules / JoulesPerMWh                           // 1 MWh = 3.6e9 J
	return e, nil
}
