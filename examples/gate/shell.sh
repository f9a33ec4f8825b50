#!/usr/bin/env bash
# Shell: check first (dry run, JSON for scripts), then start through the gate.
set -euo pipefail

cmd=(python3 -m sglang.launch_server --model-path "${MODEL_PATH:-/models/model}" --tp 8 --attention-backend flashinfer)

# What would be required and decided, without running anything:
stackcheck gate --dry-run --format json -- "${cmd[@]}" > /tmp/gate-decision.json || {
  rc=$?
  echo "gate refused (exit ${rc}); see /tmp/gate-decision.json" >&2
  exit "${rc}"
}

# Only features, no command (exit 0 when all are ok):
stackcheck gate --require attention-flashinfer cuda-graph

# Start the server through the gate (exec: the gate's pid becomes the server's).
exec stackcheck gate -- "${cmd[@]}"
