#!/usr/bin/env bash
# Shell: check first (dry run, JSON for scripts), then start through the gate.
set -euo pipefail

cmd=(python3 -m sglang.launch_server --model-path "${MODEL_PATH:-/models/model}" --tp 8 --attention-backend flashinfer)

# What would be required and decided, without running anything. The decision (secrets in the command line
# already masked by the gate) goes to a private directory made by mktemp -d, never a predictable /tmp path.
decision_dir=$(mktemp -d "${TMPDIR:-/tmp}/stackcheck-gate.XXXXXXXX")
stackcheck gate --dry-run --format json -- "${cmd[@]}" > "${decision_dir}/decision.json" || {
  rc=$?
  echo "gate refused (exit ${rc}); see ${decision_dir}/decision.json" >&2
  exit "${rc}"
}
rm -rf -- "${decision_dir}"

# Only features, no command (exit 0 when all are ok):
stackcheck gate --require attention-flashinfer cuda-graph

# Start the server through the gate (exec: the gate's pid becomes the server's).
exec stackcheck gate -- "${cmd[@]}"
