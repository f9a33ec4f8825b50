#!/bin/sh
# iperf9 (issue 21) on the H200: the probes' CPU and wall, main (A) against this tree (B), and proof that the
# facts are the same. About 6 minutes.
#
#   sh bench/iperf9_h200.sh TREE_A [RUNS]     (from this tree's root; TREE_A: a checkout of main, e.g.
#                                              git -C /work/main archive main | tar -x -C /tmp/ip9-a)
# Prints: "facts A == B: True" for `probe` and `probe --deep` (the trees' own paths and the durations
# aside); bench/probe_threads.py tables (per-probe thread CPU, wall, end; B - A) for audit, the gate of an
# SGLang command line and audit --deep; then bench/ab_trees.py's ratios to the bare-NVML floor.
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
SGLANG="python3 -m sglang.launch_server --model-path x --tp 1"
$py bench/probe_threads.py --runs "$RUNS" --json "$tmp/pt-audit.json" --args "audit --format json" "$A" "$B"
$py bench/probe_threads.py --runs "$RUNS" --json "$tmp/pt-gate.json" --args "gate --dry-run -- $SGLANG" "$A" "$B"
$py bench/probe_threads.py --runs "$RUNS" --json "$tmp/pt-deep.json" --args "audit --deep --format json" "$A" "$B"
$py bench/ab_trees.py --runs "$RUNS" --rows "audit,gate,audit --deep" --json "$tmp/ab.json" "$A" "$B"
echo "figures kept in $tmp"
if [ -n "${OUT:-}" ]; then cp "$tmp"/*.json "$OUT"/ 2>/dev/null; fi
