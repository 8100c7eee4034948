// Package sweep runs grids of plans as batch jobs: model x cluster x batch
// x sequence length x fix grids (or explicit cells), sharded across the
// tasks of a Kubernetes Indexed Job or a Slurm job array, resumable after a
// kill, and merged into one result with every cell exactly once.
//
// # Cells and grid order
//
// [Expand] turns a [Config] into a [Grid]: the product of models, clusters,
// batches, seqs and fix, in that nesting order (models outermost, fix
// innermost), followed by the explicit cells, all planned under the one
// framework profile of the configuration's framework key (plan's
// --framework: a built-in name or a YAML file; generic by default), whose
// name every cell's plan carries as "framework". A [Cell] is the canonical
// (model, cluster, batch, seq, fix) tuple: names as the configuration gives
// them, the sequence length resolved to the model's seq_len when none is
// given, the fix string in canonical key order. Repeated cells are an error.
//
// # Shards
//
// Cell i of the grid (0-based, in grid order) belongs to shard i mod N, so
// every shard of N gets every N-th cell: the assignment depends only on the
// configuration, and large and small cells are spread evenly. The shard is
// --shard I/N, else a Kubernetes Indexed Job's JOB_COMPLETION_INDEX (with
// JOB_COMPLETIONS, which the manifest sets), else a Slurm array's
// SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT
// ([ShardFromEnv]), else 0/1.
//
// # Files
//
// A run of shard I of N in DIR writes:
//
//   - DIR/sweep.json, the [Manifest]: the framework, the search settings
//     and every cell of the grid with their fingerprint; each shard writes
//     the same bytes, and a directory holding another sweep's manifest (one
//     that differs in any of them, the framework included) is refused;
//   - DIR/cells-I-of-N.jsonl, one JSON line per cell of the shard, in the
//     order cells finish: {"cell": {...}, "plan": {...}}, the plan being the
//     object `plan --format json` prints, or {"cell": {...}, "error": "..."}
//     when nothing fits or the fix does not divide the cluster;
//   - DIR/summary-I-of-N.csv (summary.csv when N is 1), the recommended row
//     of each of the shard's cells in grid order, written atomically at the
//     end of the run.
//
// # Crash safety and resume
//
// Each record is written with one append to a file opened with O_APPEND and
// fsynced before the next, so a run killed at any point (even with SIGKILL)
// loses no finished cell. With Resume, the shard file is read first: its
// complete lines are kept and their cells skipped, and a torn last line (no
// trailing newline, or not a record) is truncated and its cell redone.
//
// # Merge
//
// [Merge] reads the manifests and cells-*-of-*.jsonl files of one or more
// directories (shards may run in separate directories, one per node, as
// long as the manifests agree) and returns every cell of the manifest once,
// in grid order. A cell found twice is dropped when the lines are equal
// apart from their elapsed fields ([Canonical]) and is an error naming both
// files otherwise; missing cells are an error giving their count and the
// first few. The output is deterministic apart from plan.search.elapsed_s.
package sweep
