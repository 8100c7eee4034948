// Package calibrate fits the cost model's coefficients for one chip to
// measured training runs (`plan calibrate`).
//
// # Parameters
//
// Calibrate fits, for the chip of a base cluster, the chip-wide
// coefficients of profiles.Efficiency and, for every link tier of the base
// cluster that the runs' clusters use, the axis figures of that tier. Each
// has physical bounds, which the fitted value never leaves, and a Gaussian
// prior centred on its default:
//
//	parameter          bounds                    prior σ    why
//	matmul_fraction    0.3 to 0.95               0.1        no matmul beats peak; the best large bf16
//	                                                        GEMM measured on any chip reaches 0.92 of it
//	                                                        (v5e, docs/tpu.md); under 0.3 a run is not the
//	                                                        matmul-bound step the model describes
//	matmul_half_flops  default/10 to default·10  ×3 (log)   the default is t0 = 25 µs per call fitted on
//	                                                        162 H100 GEMMs (docs/measured-h100.md): from
//	                                                        about a kernel launch to a quarter millisecond
//	hbm_fraction       0.5 to 0.9                0.1        a copy cannot beat the memory's line rate: the
//	                                                        H100 copies at 0.76 (docs/measured-h100.md),
//	                                                        STREAM-like kernels reach 0.8-0.9
//	                                                        (profiles/efficiency.go)
//	overlap_fraction   0.5 to 1                  0.15       a fraction; every modelled framework overlaps
//	                                                        gradient reduction by buckets
//	                                                        (docs/formulas.md §6)
//	TIER.efficiency    0.5 to 1                  0.1        a link cannot exceed its line rate; nccl-tests
//	                                                        reach 0.73-0.92 of it (profiles/efficiency.go);
//	                                                        under half, the fabric is misconfigured
//	TIER.latency_s     default/4 to default·4    ×2 (log)   NCCL's tuning-model latency per ring step
//	                                                        (3.4 µs NVLink, 9.6 µs network); Calculon's
//	                                                        20 µs is inside
//
// gonum/optimize has no bounds (docs/go-style.md §2.2), so each parameter is
// fitted through a transform of an unbounded variable z: fractions as
// Lo + (Hi−Lo)·σ(z) (Logistic), scales as exp(log Lo + (log Hi − log
// Lo)·σ(z)) (LogLogistic), σ(z) = 1/(1+e^-z). The prior of a fraction is on
// its value, that of a scale on its log. The defaults (the start of the fit
// and the centre of the priors) are the base cluster's values, which for a
// catalogue name are profiles' documented defaults (profiles/efficiency.go);
// a default outside the bounds is moved inside them, with a note. A tier
// the runs use but the base cluster lacks cannot be written into the
// profile (runs take per-tier figures only from tiers the profile has, see
// runs.Run.ClusterOf), so it is not fitted and a note says so: pick a base
// cluster with every tier, e.g. a100-16 rather than a100-8 for multi-node
// A100 runs.
//
// # Objective
//
// Each run's strategy is fixed once, with the base coefficients, as
// runs.Validate chooses it (the fastest micro-batch that fits when the run
// does not publish one), and its cost.Model is built once; then only the
// coefficients vary. With r_j = log predicted_j − log measured_j (tokens/s
// per chip) the objective is the negative log posterior per run,
//
//	f = (1/n)·[Σ_j ρ(r_j/s) + Σ_i ½·((u_i − u0_i)/τ_i)²]
//
// where ρ is Huber's loss (t²/2 up to HuberK = 1.345, linear beyond: a run
// the model misses by more than about 7% pulls with a constant force, so a
// few outliers cannot drag the fit), s = DefaultScatter = 5% is the scatter
// a run's log error is expected to have (the defaults' MAPE is 2.9% on the
// Megatron-LM A100 rows and 7.0% on all of them), and u_i, u0_i and τ_i are
// parameter i, its default and its prior's σ in the prior's unit. The runs
// decide wherever they see a parameter clearly; the priors decide where
// they do not, and keep a handful of runs from moving a coefficient further
// than physics allows.
//
// # Warnings
//
// Besides what the runs cannot identify (below), Calibrate warns when a
// fitted parameter ends on a physical bound (within BoundTolerance of its
// span), naming the runs that push it there most (those whose Huber
// gradient times their sensitivity to the parameter points past the
// bound), and when the fit makes any run's absolute error more than
// WorsenedPoints (10 points) worse, naming every such run.
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
// # Leave one source out
//
// LeaveOneSourceOut fits, per chip, the coefficients on every run of the
// chip (in sample) and, for each source, on the other sources' runs only,
// predicting that source with the refit (out of source); a chip with a
// single source keeps the defaults out of source and says so. It returns
// every run's default, in-sample and out-of-source errors.
//
// Every error the package returns is a lowercase sentence prefixed
// "calibrate:".
package calibrate
