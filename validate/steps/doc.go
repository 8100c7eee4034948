// Package steps compares the planner with single-chip training steps that
// a user measured on their own hardware (`plan validate --steps FILE`).
//
// # The steps file
//
// A steps file is a CSV whose header names the columns, in any order; the
// project's reference file (measured on one H100) has this form. Each row is
// one training step of one model on one chip with no parallelism:
//
//   - model (required): a model file, looked up relative to the CSV's
//     directory and then as models/MODEL.json next to the CSV, or else a
//     preset name (model.Load);
//   - seq (required): the sequence length in tokens;
//   - micro_batch (required): the sequences per micro-batch;
//   - accumulated_micro_batches (default 1): micro-batches per optimizer
//     step (gradient accumulation); the step's batch is their product;
//   - recompute (required): none, selective, full or a framework's policy
//     name, as in the strategy string;
//   - outcome (required): "ran" or "out of memory";
//   - step_s and peak_allocated_bytes: required (and positive) in rows that
//     ran: the step's time in seconds and the allocator's peak in bytes;
//   - compiled (0 or 1), framework (a framework profile name or YAML file)
//     and cluster (default h100-1): how to predict the row, see below;
//   - params, tokens_per_s, optimizer_step_s and peak_reserved_bytes: read
//     (they must be numbers when given) and not used.
//
// An unknown column is an error naming it and the nearest known column. A
// blank required cell, a cell that is not a number where one is expected,
// or a count that is zero or negative is an error naming the line and the
// column. Lines whose cells are all blank are skipped.
//
// # Predictions
//
// Each row is predicted as `plan explain` predicts it:
//
//	plan explain --model M --cluster C --batch MB*K --seq S --strategy mb=MB,recompute=R --framework F
//
// with the same numbers. The framework F is the row's framework cell when
// given; else Options.Framework when set; else, from the compiled cell,
// torchtitan for compiled (1) and pytorch for eager (0) steps; else
// generic. A framework or cluster YAML file in a cell is looked up relative
// to the CSV's directory first.
//
// # The report
//
// Validate returns a Report; `plan validate --steps FILE --format json`
// prints it with these fields:
//
//	{"rows": [ROW, ...], "frameworks": [SUMMARY, ...], "overall": SUMMARY}
//
// A ROW is one measured step and its prediction:
//
//   - line: the row's line in the file (the header is line 1);
//   - id: "MODEL sSEQ mbMB kK RECOMPUTE", followed by "compiled" or "eager"
//     when the compiled cell is given, e.g. "llama32-1b s2048 mb2 k1 none compiled";
//   - model, framework, cluster: the names the row was predicted with;
//   - seq, micro_batch, accumulated_micro_batches, batch (their product),
//     recompute, and strategy (the --strategy string evaluated);
//   - predicted_step_s, measured_step_s and step_error
//     (predicted/measured - 1);
//   - predicted_memory_gb, measured_memory_gb (peak_allocated_bytes) and
//     memory_error (predicted/measured - 1), in 10^9 bytes; usable_gb is
//     the memory the planner lets a step fill on the chip;
//   - predicted_fits, measured_fits (the step ran) and verdict_ok (they
//     agree).
//
// The measured_* and *_error fields are absent in rows that did not run.
//
// A SUMMARY aggregates rows: framework (absent in overall), rows, ran (the
// rows that ran), step_mape and memory_mape (the mean |step_error| and
// |memory_error| over the rows that ran, fractions; 0 when none ran) and
// wrong_verdicts (rows whose verdict_ok is false). Frameworks are listed in
// order of their first row.
package steps
