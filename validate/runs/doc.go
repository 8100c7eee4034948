// Package runs holds measured training runs and compares the planner's
// predictions with them (`plan validate`).
//
// # Runs
//
// A Run is one row of a runs file: a CSV whose header names the columns. The
// built-in data set (Default) is validate/runs/testdata/published-runs.csv,
// embedded: the published runs that docs/published-runs.md describes (what
// every row measured), with a "framework" column appended (the profile each
// row ran on). Read takes either that full form or a user file with a
// subset of the columns:
//
//   - id (required): a unique name for the row;
//   - the model: "model" (a preset name, a YAML file or a config.json, as
//     --model takes), or the shape columns layers, hidden, heads and vocab
//     (ffn_hidden, kv_heads, head_dim, moe_experts and moe_topk optional);
//   - the cluster: "cluster" (a name or YAML file, as --cluster takes), or
//     chip and chips;
//   - the batch: global_batch_seqs (alias "batch") or global_batch_tokens;
//     seq_len (alias "seq") unless the model preset carries one;
//   - the layout: "strategy" (the contract's strategy string), or the
//     columns tp, pp, dp, cp_or_sp, ep, zero_or_fsdp, micro_batch,
//     interleave_v and recompute;
//   - at least one measured figure: measured_step_s, measured_tokens_per_s
//     (whole job), measured_mfu or measured_tflops_per_chip, with the FLOP
//     convention of the row's source (see below) or an explicit
//     flops_convention column;
//   - optionally "framework": the profile the run was measured on (a
//     built-in name or a framework YAML file); without it the row id's
//     source prefix picks one (Run.FrameworkName), and --framework overrides
//     both.
//
// An unknown column is an error that names it and the nearest known column,
// as unknown keys are elsewhere in the contract. A blank cell means "not
// published"; a cell that is not a number names the row id and the column.
//
// # Conversion
//
// Run.Plan turns a row into the planner's inputs: a model.Spec, a
// profiles.Cluster, a space.Workload and a space.Strategy. A row that the
// contract cannot express (no published layout, a batch that does not
// divide over the data-parallel replicas, a GPU count that is not whole
// 8-GPU nodes, an unknown chip) returns an error whose text is the reason.
// Run.Measured converts the row's measured figure to tokens per second per
// chip with the row's own FLOP convention (docs/published-runs.md §2), so that
// HFU-style TFLOP/s figures (Narayanan 2021, BLOOM, MT-NLG, GPT-NeoX) are
// not mistaken for model FLOPs.
//
// # Validation
//
// Validate predicts every row with cost.Evaluate and reports, per row, the
// measured and predicted tokens/s per chip and error = predicted/measured-1,
// plus the mean absolute error (MAPE) and the rows it skipped with their
// reasons, in the order of the input.
//
// # Published runs and memory
//
// ReadFormat also reads the later published data sets as they are written
// and tells them apart by their header (Format): published-runs-2.csv
// (per-chip tokens/s, cp, vp, etp, precision, MoE layer patterns, MLA
// widths, the FLOP convention in words) and published-memory.csv
// (measured_peak_gb in GiB, peak_kind, oom). Their rows take a preset when
// the model's name says one, map the published chip labels and framework
// names to profiles, and pass precisions and recompute policies the
// planner may not know (mxfp8, int8, MaxText's custom offload) to the
// strategy parser, so that the reason a row is not posable is the
// planner's own error. ValidatePublished compares time rows' tokens/s per
// chip and memory rows' peaks and fit verdicts, per source, chip and
// framework; where a row leaves the optimizer-state sharding open (blank
// zero_or_fsdp or "not stated") it tries zero=0 and zero=1 and keeps the
// fastest that fits, as for an unpublished micro-batch. Read refuses input over MaxFileBytes or MaxRows rows and
// lists at most 20 row problems.
//
// Every error the package returns is a lowercase sentence prefixed "runs:".
package runs
