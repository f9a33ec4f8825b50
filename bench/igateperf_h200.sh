#!/bin/sh
# igateperf (issue 21's gate goal) on the H200: the gate's main thread after the facts, main (A) against this tree
# (B), and the goal's ratio to the bare-NVML floor. About 8 minutes with 21 rounds.
#
#   sh bench/igateperf_h200.sh TREE_A [RUNS]   (from this tree's root; TREE_A: a checkout of main before the merge,
#                                               e.g. git -C /work/main archive 9d59031 | tar -x -C /tmp/igp-a)
# Prints, for A and B: bench/gate_timeline.py of the live gate (no SGLang here: the H200 row) and of the gate of a
# venv with a stand-in SGLang (bench/fake_sglang_env.py: the dependency check reads its metadata), each step of the
# main thread with its CPU; bench/probe_threads.py of the same two gates (when each probe ends, B - A); then
# bench/ab_trees.py --fake-sglang over the gate rows (wall and CPU medians, ratios to the floor, B - A) and
# bench/h200_perf.py of B (the goal: gate <= 1.15x the floor). The JSON goes to $OUT when it is set.
# The switch interval alone (B's last commit, commands/gate.py PROBE_SWITCH_S): run again with TREE_A a checkout of
# the commit before it; the rows `gate` and `gate --python (fake SGLang)` say whether it pays on this machine.
set -u
A=$(cd "$1" && pwd)
B=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${2:-21}
py=${PYTHON:-python3}
tmp=$(mktemp -d)
unset PYTHONDONTWRITEBYTECODE
fake=$($py "$B/bench/fake_sglang_env.py" "$tmp/venv" | tail -n 1)
SGLANG="python3 -m sglang.launch_server --model-path x --tp 1"
for t in A B; do
  eval "tree=\$$t"
  echo "== gate_timeline [$t] live"
  $py bench/gate_timeline.py --tree "$tree" --runs 11 --min-ms 0.3
  echo "== gate_timeline [$t] --python $fake"
  $py bench/gate_timeline.py --tree "$tree" --runs 11 --min-ms 0.3 --python "$fake"
done
$py bench/probe_threads.py --runs "$RUNS" --json "$tmp/pt-gate.json" --args "gate --dry-run -- $SGLANG" "$A" "$B"
$py bench/probe_threads.py --runs "$RUNS" --json "$tmp/pt-gate-fake.json" \
  --args "gate --dry-run --python $fake -- $SGLANG" "$A" "$B"
$py bench/ab_trees.py --runs "$RUNS" --fake-sglang --rows "gate,gate --facts,audit" --json "$tmp/ab.json" "$A" "$B"
PYTHONPATH="$B" $py bench/h200_perf.py --runs "$RUNS" --json "$tmp/h200_perf.json"
echo "figures kept in $tmp"
if [ -n "${OUT:-}" ]; then cp "$tmp"/*.json "$OUT"/ 2>/dev/null; fi
