// Package goodput turns a failure-free time to train into the time a
// budget sees: interruptions of the job, the checkpoints written against
// them, the restarts that follow, and the energy the run draws.
//
// It is pure arithmetic over its inputs and imports nothing of this
// module. Every default carries its source; docs/goodput.md lists them.
//
// The job model is the first-order one of Young (1974) and Daly (2006): a
// job of n chips, each interrupted at a rate of r per chip-day, is
// interrupted every M = 86400 / (r·n) seconds on average. It writes a
// checkpoint every τ seconds of work; the δ seconds the write blocks the
// step are lost to every checkpoint, and each interruption costs the
// restart, the checkpoint's read and, on average, half an interval of work
// since the last checkpoint. The interval that minimises the total is
// τ ≈ sqrt(2·δ·M) − δ (Daly 2006, eq. 37's first-order term).
package goodput
