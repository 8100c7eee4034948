package goodput

import (
	"fmt"
	"math"
)

// SecondsPerDay is the length of a day in seconds.
const SecondsPerDay = 86400

// Job is what the goodput of a training job depends on. Rates are per
// chip, sizes per chip, so that one Job describes every size of a cluster.
type Job struct {
	// Chips is the number of chips of the job.
	Chips int
	// StepSeconds is the failure-free time of one training step; a
	// checkpoint is taken between steps, so its interval is a whole number
	// of steps.
	StepSeconds float64
	// InterruptionsPerChipDay is the rate at which one chip interrupts the
	// whole job, planned or not (Rate).
	InterruptionsPerChipDay float64
	// CheckpointBytesPerChip is the state each chip saves: its share of the
	// weights and optimizer state.
	CheckpointBytesPerChip float64
	// StorageBytesPerSPerChip is each chip's share of the storage's
	// bandwidth, for writing and for reading a checkpoint back.
	StorageBytesPerSPerChip float64
	// SnapshotBytesPerSPerChip, when positive, makes checkpointing
	// asynchronous: only the copy of the state to host memory at this rate
	// blocks the step; the write to storage runs in the background. Zero
	// means every byte is written while the step waits.
	SnapshotBytesPerSPerChip float64
	// RestartSeconds is the time from an interruption to the first useful
	// step, besides reading the checkpoint: detection, rescheduling,
	// process start, initialisation of the communicators and the warm-up
	// of the first steps.
	RestartSeconds float64
}

// Estimate is a job's goodput and what it is made of, all in seconds of
// wall time unless named otherwise.
type Estimate struct {
	// MeanSecondsBetweenInterruptions is M = 86400 / (rate per chip-day · chips).
	MeanSecondsBetweenInterruptions float64
	// WriteSeconds is the time to write one checkpoint to storage, ReadSeconds
	// to read it back after a restart.
	WriteSeconds, ReadSeconds float64
	// BlockingSeconds is δ, the part of a checkpoint the steps wait for:
	// WriteSeconds when checkpointing is synchronous, the snapshot to host
	// memory when it is asynchronous.
	BlockingSeconds float64
	// IntervalSteps is the number of steps between two checkpoints and
	// IntervalSeconds (τ) their failure-free time.
	IntervalSteps   int
	IntervalSeconds float64
	// LostSecondsPerInterruption is what one interruption costs: the
	// restart, the read, and the work since the last durable checkpoint.
	LostSecondsPerInterruption float64
	// CheckpointFraction is the share of wall time spent blocked on
	// checkpoints, InterruptionFraction the share lost to interruptions.
	CheckpointFraction, InterruptionFraction float64
	// Goodput is the share of wall time that does useful training steps,
	// between 0 and 1.
	Goodput float64
}

// YoungDaly is the checkpoint interval of work, in seconds, that minimises
// the time lost to checkpoints and interruptions for a blocking write of
// deltaSeconds and a mean time between interruptions of mtbiSeconds:
// sqrt(2·δ·M) − δ (Young 1974; Daly 2006, eq. 37 to first order), and M
// when δ ≥ 2M, where the expansion no longer holds (Daly 2006). It is 0
// for a free checkpoint and +Inf for a job never interrupted.
func YoungDaly(deltaSeconds, mtbiSeconds float64) float64 {
	switch {
	case math.IsInf(mtbiSeconds, 1):
		return math.Inf(1)
	case deltaSeconds <= 0:
		return 0
	case deltaSeconds >= 2*mtbiSeconds:
		return mtbiSeconds // Daly 2006: τ_opt = M for δ ≥ 2M
	}
	return math.Sqrt(2*deltaSeconds*mtbiSeconds) - deltaSeconds // Young 1974, Daly 2006 eq. 37
}

// Check reports the first input of j that cannot be planned.
func (j Job) Check() error {
	switch {
	case j.Chips < 1:
		return fmt.Errorf("goodput: a job needs at least one chip, got %d", j.Chips)
	case !(j.StepSeconds > 0) || math.IsInf(j.StepSeconds, 0):
		return fmt.Errorf("goodput: the step time must be a positive number of seconds, got %g", j.StepSeconds)
	case !(j.InterruptionsPerChipDay >= 0) || math.IsInf(j.InterruptionsPerChipDay, 0):
		return fmt.Errorf("goodput: the interruption rate must be a rate per chip-day of at least 0, got %g", j.InterruptionsPerChipDay)
	case !(j.CheckpointBytesPerChip >= 0) || math.IsInf(j.CheckpointBytesPerChip, 0):
		return fmt.Errorf("goodput: the checkpoint size must be a number of bytes of at least 0, got %g", j.CheckpointBytesPerChip)
	case !(j.StorageBytesPerSPerChip > 0) || math.IsInf(j.StorageBytesPerSPerChip, 0):
		return fmt.Errorf("goodput: the storage bandwidth must be a positive number of bytes/s per chip, got %g", j.StorageBytesPerSPerChip)
	case !(j.SnapshotBytesPerSPerChip >= 0) || math.IsInf(j.SnapshotBytesPerSPerChip, 0):
		return fmt.Errorf("goodput: the snapshot bandwidth must be a number of bytes/s per chip of at least 0, got %g", j.SnapshotBytesPerSPerChip)
	case !(j.RestartSeconds >= 0) || math.IsInf(j.RestartSeconds, 0):
		return fmt.Errorf("goodput: the restart time must be a number of seconds of at least 0, got %g", j.RestartSeconds)
	}
	return nil
}

// Plan estimates the goodput of job j at its best checkpoint interval: the
// Young/Daly interval rounded to a whole number of steps (at least one),
// and, when checkpointing is asynchronous, no shorter than the background
// write, since a snapshot waits for the previous one to reach storage.
// The wall time of one interval of τ seconds of work is τ + δ; an
// interruption every M seconds of wall time costs the restart R, the read
// ρ and on average half an interval, (τ + δ)/2, plus the background write
// w of a checkpoint not yet durable. So
//
//	goodput = τ/(τ + δ) · (1 − (R + ρ + (τ + δ)/2 + w)/M),
//
// the first-order model of Young (1974) and Daly (2006), floored at 0.
func Plan(j Job) (Estimate, error) {
	if err := j.Check(); err != nil {
		return Estimate{}, err
	}
	var e Estimate
	e.MeanSecondsBetweenInterruptions = math.Inf(1)
	if j.InterruptionsPerChipDay > 0 {
		e.MeanSecondsBetweenInterruptions = SecondsPerDay / (j.InterruptionsPerChipDay * float64(j.Chips)) // M = 1/(rate per chip · chips)
	}
	e.WriteSeconds = j.CheckpointBytesPerChip / j.StorageBytesPerSPerChip // every chip writes its share in parallel
	e.ReadSeconds = e.WriteSeconds                                        // read back at the same bandwidth
	e.BlockingSeconds = e.WriteSeconds
	background := 0.0
	if j.SnapshotBytesPerSPerChip > 0 {
		e.BlockingSeconds = j.CheckpointBytesPerChip / j.SnapshotBytesPerSPerChip // only the copy to host memory blocks
		background = e.WriteSeconds
	}
	m := e.MeanSecondsBetweenInterruptions
	if math.IsInf(m, 1) {
		// Never interrupted: no checkpoint is needed, every second is useful.
		e.Goodput = 1
		return e, nil
	}
	tau := YoungDaly(e.BlockingSeconds, m)
	tau = math.Max(tau, background-e.BlockingSeconds) // a snapshot waits for the previous write
	e.IntervalSteps = max(1, int(math.Round(tau/j.StepSeconds)))
	e.IntervalSeconds = float64(e.IntervalSteps) * j.StepSeconds
	segment := e.IntervalSeconds + e.BlockingSeconds
	e.LostSecondsPerInterruption = j.RestartSeconds + e.ReadSeconds + segment/2 + background // Daly 2006: half a segment lost on average
	e.CheckpointFraction = e.BlockingSeconds / segment
	e.InterruptionFraction = math.Min(1, e.LostSecondsPerInterruption/m)
	e.Goodput = math.Max(0, (1-e.CheckpointFraction)*(1-e.InterruptionFraction)) // τ/(τ+δ) · (1 − lost/M)
	return e, nil
}

// CheckpointBytesPerChip is the state one chip writes to a checkpoint when
// the chips holding the same shard share the writing (as PyTorch's
// distributed checkpoint and Megatron-LM's distributed optimizer do):
// paramsBytes of weights held by paramReplicas chips and optimizerBytes
// of optimizer state held by optimizerReplicas chips, each divided by its
// replicas. Replicas below one count as one.
func CheckpointBytesPerChip(paramsBytes, optimizerBytes float64, paramReplicas, optimizerReplicas int) float64 {
	return paramsBytes/float64(max(1, paramReplicas)) + optimizerBytes/float64(max(1, optimizerReplicas)) // unique state per chip
}
