#!/bin/bash
# A sharded plan sweep as a Slurm job array (see docs/sweeps.md).
#
#   jid=$(sbatch --parsable docs/slurm-sweep.sh)
#   sbatch --dependency=afterok:$jid --array=0 docs/slurm-sweep.sh merge
#
# Task SLURM_ARRAY_TASK_ID of the array runs shard ID - SLURM_ARRAY_TASK_MIN
# of SLURM_ARRAY_TASK_COUNT (the cells i with i mod 4 = shard); the ids must
# be consecutive. A requeued or preempted task restarts with --resume and
# loses no finished cell. The second command merges the shards once every
# task has succeeded.
#SBATCH --job-name=plan-sweep
#SBATCH --array=0-3
#SBATCH --cpus-per-task=8
#SBATCH --mem=2G
#SBATCH --time=02:00:00
#SBATCH --requeue
#SBATCH --output=plan-sweep-%A_%a.log
set -euo pipefail

PLAN=${PLAN_BIN:-plan}
CONFIG=${SWEEP_CONFIG:-$HOME/sweeps/sweep.yaml}
OUT=${SWEEP_OUT:-$HOME/sweeps/out}

if [ "${1:-}" = merge ]; then
	exec "$PLAN" merge "$OUT" --out "$OUT/merged.jsonl" --summary "$OUT/summary.csv"
fi
exec "$PLAN" sweep --config "$CONFIG" --out "$OUT" --resume --quiet --jobs "${SLURM_CPUS_PER_TASK:-0}"
