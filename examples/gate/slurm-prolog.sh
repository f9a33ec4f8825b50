#!/usr/bin/env bash
# Slurm: gate the server inside the job step, so a blocked feature fails the step in under a second
# instead of after a 15-minute model load. Use in an sbatch script (or a TaskProlog wrapper):
#
#   srun --ntasks=1 examples/gate/slurm-prolog.sh
#
# `stackcheck gate` replaces itself with the server (exec: same pid, the server's own exit status and
# signals), so Slurm accounts and signals the server exactly as without the gate.
# Exit 1: refused (a required feature is not ok; the reasons are in the job's output). Exit 2: bad
# arguments. Exit 4: internal error in the gate (refused, never started).
set -euo pipefail

MODEL_PATH="${MODEL_PATH:-/models/model}"
TP="${SLURM_GPUS_ON_NODE:-8}"

exec stackcheck gate -- \
  python3 -m sglang.launch_server \
  --model-path "${MODEL_PATH}" \
  --tp "${TP}" \
  --host 0.0.0.0 --port "${PORT:-30000}"
