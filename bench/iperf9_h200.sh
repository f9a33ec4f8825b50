#!/bin/sh
# iperf9 (issue 21: audit <= 1.2x and the served gate <= 1.15x the bare-NVML floor) on the H200: main (A) against
# this tree (B). About 3 minutes with 21 rounds; bench/h200_perf.py (the goals' ratios, ~8 minutes) is a second
# command (below), to stay inside one call's 10 minutes.
#
#   sh bench/iperf9_h200.sh TREE_A [RUNS]     (from this tree's root; TREE_A: a checkout of main, e.g.
#                                              git -C /work/main archive 50bf5e7 | tar -x -C /tmp/ip9-a)
#   PYTHONPATH=$PWD python3 bench/h200_perf.py --runs 21    (the goals, B alone)
# Prints:
# - "facts A == B: True" for `probe` and `probe --deep` (the trees' own paths and the durations aside): the forked
#   reader's leaner imports (a stand-in for ctypes.util, stackcheck.probes.result) read the same driver and GPUs;
# - bench/critical_path.py --real-nvml (audit, the served gate, audit --deep): when the reader forks, when it writes
#   its answer (`reader` = ready - fork: the driver's start, pynvml's import beside it, the reads), when the command
#   reads it and leaves (`after` = exit - ready). `after` near 0 and `exit` near `ready`: the command waits on the
#   driver (the reader's cuts show in the wall); `ready` well before `exit`: the main thread's own work is the path
#   (they show only in CPU);
# - bench/ab_trees.py: wall and CPU medians, ratios to the floor, B - A (the gate rows are served from the kept
#   decision after round 0; `(first run)` rows are not).
# The JSON goes to $OUT when it is set.
set -u
A=$(cd "$1" && pwd)
B=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${2:-21}
py=${PYTHON:-python3}
tmp=$(mktemp -d)
unset PYTHONDONTWRITEBYTECODE
for deep in "" "--deep"; do
  for t in A B; do
    eval "tree=\$$t"
    (cd "$tree" && PYTHONPATH="$tree" STACKCHECK_CACHE_DIR="$tmp/cache-$t" \
      $py -m stackcheck probe $deep --format json >"$tmp/probe-$t.json"; echo "probe $deep [$t] rc=$?")
  done
  $py - "$tmp/probe-A.json" "$tmp/probe-B.json" "$A" "$B" "$deep" <<'PY'
import json, sys
a_path, b_path, tree_a, tree_b, deep = sys.argv[1:]
def norm(x, tree):
    if isinstance(x, dict):
        return {k: norm(v, tree) for k, v in x.items() if k not in ("duration_ms", "generated_at", "elapsed_ms")}
    if isinstance(x, list):
        return [norm(v, tree) for v in x]
    return x.replace(tree, "TREE") if isinstance(x, str) else x
a = norm(json.load(open(a_path)), tree_a)
b = norm(json.load(open(b_path)), tree_b)
fa, fb = a.get("facts", a), b.get("facts", b)
print(f"facts A == B ({'probe ' + deep if deep else 'probe'}): {fa == fb}", "" if fa == fb else
      [k for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)])
PY
done
$py bench/critical_path.py --real-nvml --runs "$RUNS" --rows "audit,gate,audit --deep" "$A" "$B"
$py bench/ab_trees.py --runs "$RUNS" --rows "audit,gate,gate (first run),audit --deep,audit --facts,gate --facts" \
  --json "$tmp/ab.json" "$A" "$B"
echo "figures kept in $tmp"
if [ -n "${OUT:-}" ]; then cp "$tmp"/*.json "$OUT"/ 2>/dev/null; fi
