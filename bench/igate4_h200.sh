#!/bin/sh
# igate4 (issue 21's gate goal) on the H200: where the gate's CPU goes beside the audit's, thread by thread, main (A)
# against this tree (B); whether its probes starting late costs wall there (an experiment, no product change); and
# the goal's ratio to the bare-NVML floor. About 6 minutes with 21 rounds.
#
#   sh bench/igate4_h200.sh TREE_A [RUNS]   (from this tree's root; TREE_A: a checkout of main before the merge,
#                                            e.g. git -C /work/main archive 9337b77 | tar -x -C /tmp/igate4-a)
# Prints bench/gate_cpu.py of `gate` and `audit` for A and B (CPU per thread: the main thread before the probes'
# wait and after build_report, the probes' runner, build_report's preload with the gate's _import_later, _prepare
# and plan_cache.prepare, each probe, the process and its children: the forked NVML reader); gate_cpu.py
# --probes-first on B against B (the main thread lets the probes start before its own work: the `wall` line says
# whether that pays where the driver takes ~45 ms); bench/ab_trees.py over gate, gate --facts and audit; and
# bench/h200_perf.py of B (the goal: gate <= 1.15x the floor). PYTHON=... picks the interpreter (the device's
# /opt/torch/.venv/bin/python3); the JSON goes to $OUT when it is set.
set -u
A=$(cd "$1" && pwd)
B=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${2:-21}
py=${PYTHON:-python3}
tmp=$(mktemp -d)
unset PYTHONDONTWRITEBYTECODE
echo "== which python3 the gate's command finds: $(command -v python3)"
$py bench/gate_cpu.py --runs "$RUNS" --rows "gate,audit" "$A" "$B" | tee "$tmp/gate_cpu.txt"
$py bench/gate_cpu.py --runs "$RUNS" --rows "gate" --probes-first "$B" "$B" | tee "$tmp/gate_cpu_probes_first.txt"
$py bench/ab_trees.py --runs "$RUNS" --rows "gate,gate --facts,audit" --json "$tmp/ab.json" "$A" "$B"
PYTHONPATH="$B" $py bench/h200_perf.py --runs "$RUNS" --json "$tmp/h200_perf.json"
echo "figures kept in $tmp"
if [ -n "${OUT:-}" ]; then cp "$tmp"/*.json "$tmp"/*.txt "$OUT"/ 2>/dev/null; fi
