// Package calibrate fits the cost model's coefficients for one chip to
// measured training runs (`plan calibrate`).
//
// # Parameters
//
// Calibrate fits, for the chip of a base cluster, the chip-wide
// coefficients of profiles.Efficiency and, for every link tier of the base
// cluster that the runs' clusters use, the axis figures of that tier.
// gonum/optimize has no bounds (docs/go-style.md §2.2), so each parameter is
// fitted through a transform of an unbounded variable z:
//
//	parameter               transform                    range
//	matmul_fraction         0.2 + 0.8·σ(z)               (0.2, 1)
//	matmul_half_flops       e^z                          (0, ∞) FLOPs
//	hbm_fraction            σ(z)                         (0, 1)
//	overlap_fraction        σ(z)                         (0, 1)
//	TIER.efficiency         0.2 + 0.8·σ(z)               (0.2, 1)
//	TIER.latency_s          e^z                          (0, ∞) s
//
// with σ(z) = 1/(1+e^-z). The defaults (the start of the fit and the centre
// of its pull) are the base cluster's values, which for a catalogue name
// are profiles' documented defaults (profiles/efficiency.go). A tier the runs use
// but the base cluster lacks cannot be written into the profile (runs take
// per-tier figures only from tiers the profile has, see runs.Run.ClusterOf),
// so it is not fitted and a note says so: pick a base cluster with every
// tier, e.g. a100-16 rather than a100-8 for multi-node A100 runs.
//
// # Objective
//
// Each run's strategy is fixed once, with the base coefficients, as
// runs.Validate chooses it (the fastest micro-batch that fits when the run
// does not publish one), and its cost.Model is built once; then only the
// coefficients vary. With r_j = log predicted_j − log measured_j (tokens/s
// per chip) the objective is
//
//	f(z) = (1/n)·Σ_j r_j² + λ·‖z − z0‖²
//
// relative-error least squares with a ridge towards the defaults
// (docs/go-style.md §2.2 steps 1-2), λ = DefaultLambda = 1e-5 (its
// documentation derives it).
//
// # Method
//
// optimize.NelderMead (the cost model has kinks: max, bubbles, overlap)
// with at most DefaultMaxEvaluations evaluations per search and a
// FunctionConverge stop, from the defaults and from DefaultRestarts starts
// perturbed by up to ±1.5 in every z (a PCG source with a fixed seed), then
// restarted from the best point until that stops helping. Both the error
// and Result.Status are checked; a stop on the evaluation cap keeps the
// best point.
//
// # Identifiability
//
// After the fit every parameter is moved by ±20% (SensitivityStep) on its
// own; its sensitivity is the largest change of any run's log prediction.
// A parameter whose sensitivity is below 1% (IdentifyThreshold) both at
// the defaults and at the fit is held at its default and the others are
// re-fitted: the runs do not see it, and left free it would only drift. A
// parameter the runs see but whose effect the others can mimic (the
// residual of its Jacobian column regressed on the others' columns is
// below the threshold) keeps its fitted value with a warning that the runs
// cannot separate it.
//
// # Cross-validation
//
// Run i goes to fold i mod k, k = min(5, runs). For each fold the whole
// procedure (fit, hold, re-fit) runs on the other folds, and the held-out
// runs are predicted by runs.Validate with that fold's profile. The report
// gives the MAPE of the defaults, of the fit on all runs (in-sample) and
// the cross-validated MAPE (out-of-sample), and the per-run figures of
// each. The full fit and the fold fits run concurrently on private copies
// of the samples; every result is deterministic.
//
// Every error the package returns is a lowercase sentence prefixed
// "calibrate:".
package calibrate
