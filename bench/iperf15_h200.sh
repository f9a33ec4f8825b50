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
. "$B/bench/ab_run.sh"
for row in audit gate; do
  for t in A B; do
    if [ "$row" = audit ]; then
      set -- audit --format json
    else
      set -- gate --dry-run --format json -- python3 -m sglang.launch_server --model-path x --tp 1
    fi
    ab_run "$t" 1 "$tmp/$row-$t.json" /dev/null "$tmp/cache-out-$t" -- -m stackcheck "$@"
    echo "$row [$t] rc=$?"
  done
  # (its own comparison, kept: the probes' collected_at is not set aside, as bench/ab_outputs.py sets it aside)
  $py bench/ab_outputs.py --timing duration_ms,generated_at,elapsed_ms,ms "$tmp/$row-A.json" "$tmp/$row-B.json" "$A" \
    "$B" "$row"
done
$py bench/critical_path.py --real-nvml --runs "$RUNS" --rows "audit,gate" "$A" "$B"
$py bench/iperf15_spans.py --runs "$SPAN_RUNS" --init-ms 20 --rows "audit,gate" --python3 "$(command -v $py)" "$A" "$B"
$py bench/ab_trees.py --runs "$RUNS" --rows "audit,gate,audit --deep" --json "$tmp/ab.json" "$A" "$B"
echo "figures kept in $tmp"
if [ -n "${OUT:-}" ]; then cp "$tmp"/*.json "$OUT"/ 2>/dev/null; fi
