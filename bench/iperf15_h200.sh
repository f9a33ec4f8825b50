#!/bin/sh
# iperf15 (issue 21: audit <= 1.2x and the served gate <= 1.15x the bare-NVML floor) on the H200: what the main
# thread does after the driver answers, main (A) against this tree (B), in one device command (~6-8 minutes with
# 21 rounds; under 9).
#
#   sh bench/iperf15_h200.sh TREE_A [RUNS [SPAN_RUNS]]   (from this tree's root; RUNS 21, SPAN_RUNS 11; TREE_A: a
#                                       checkout of main, e.g. git -C /work/main archive 642d880 | tar -x -C /tmp/ip15-a)
# Prints:
# - "output A == B" for `audit --format json` and the gate's decision (`gate --dry-run --format json` of the SGLang
#   command line), the trees' paths and the probes' durations aside: the cuts change no output;
# - bench/critical_path.py --real-nvml (audit, the served gate): the reader's fork, its answer (`ready`), the
#   command's reading of it (`answer`) and its exit; `after` = exit - ready, the main thread's work after the
#   driver's answer (642d880 on the H200: audit 40.4 ms, gate 31.6 ms);
# - bench/iperf15_spans.py --init-ms 20 with the H200's own interpreter: the main thread's steps after the facts
#   (key_of, load_entry, normalize, masking, the JSON writer) and each thread's CPU, A and B;
# - bench/ab_trees.py: wall and CPU medians of audit, the served gate and audit --deep, ratios to the floor, B - A.
# The JSON goes to $OUT when it is set.
set -u
A=$(cd "$1" && pwd)
B=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${2:-21}
SPAN_RUNS=${3:-11}
py=${PYTHON:-python3}
tmp=$(mktemp -d)
unset PYTHONDONTWRITEBYTECODE
for row in audit gate; do
  for t in A B; do
    eval "tree=\$$t"
    if [ "$row" = audit ]; then
      set -- audit --format json
    else
      set -- gate --dry-run --format json -- python3 -m sglang.launch_server --model-path x --tp 1
    fi
    (cd "$tree" && PYTHONPATH="$tree" STACKCHECK_CACHE_DIR="$tmp/cache-out-$t" $py -m stackcheck "$@" \
      >"$tmp/$row-$t.json" 2>/dev/null; echo "$row [$t] rc=$?")
  done
  $py - "$tmp/$row-A.json" "$tmp/$row-B.json" "$A" "$B" "$row" <<'PY'
import json, sys
a_path, b_path, tree_a, tree_b, row = sys.argv[1:]
def norm(x, tree):
    if isinstance(x, dict):
        return {k: norm(v, tree) for k, v in x.items() if k not in ("duration_ms", "generated_at", "elapsed_ms", "ms")}
    if isinstance(x, list):
        return [norm(v, tree) for v in x]
    return x.replace(tree, "TREE") if isinstance(x, str) else x
try:
    a, b = norm(json.load(open(a_path)), tree_a), norm(json.load(open(b_path)), tree_b)
except ValueError as exc:
    print(f"output A == B ({row}): not JSON: {exc}")
    sys.exit(0)
print(f"output A == B ({row}): {a == b}", "" if a == b else [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)])
PY
done
$py bench/critical_path.py --real-nvml --runs "$RUNS" --rows "audit,gate" "$A" "$B"
$py bench/iperf15_spans.py --runs "$SPAN_RUNS" --init-ms 20 --rows "audit,gate" --python3 "$(command -v $py)" "$A" "$B"
$py bench/ab_trees.py --runs "$RUNS" --rows "audit,gate,audit --deep" --json "$tmp/ab.json" "$A" "$B"
echo "figures kept in $tmp"
if [ -n "${OUT:-}" ]; then cp "$tmp"/*.json "$OUT"/ 2>/dev/null; fi
