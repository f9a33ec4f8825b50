#!/bin/sh
# iperf25 (issue 21): whether tree A and tree B give the same outputs (bench/ab_outputs.py: JSON equal, the trees'
# paths and timing fields aside) for audit, audit --deep, gate, plan, plan --want, explain and triage, over the examples/
# box and the write-up's box (tests/cases/writeup-after), and the live box's audit and audit --deep (each live row
# run twice with a cache directory of its own per tree, the second compared: it reads what the first kept).
#
#   sh bench/iperf25_ab.sh TREE_A [TREE_B]   (B default: this tree; standard library only)
set -u
B=$(cd "${2:-$(dirname "$0")/..}" && pwd)
A=$(cd "$1" && pwd)
py=${PYTHON:-python3}
tmp=$(mktemp -d)
unset PYTHONDONTWRITEBYTECODE
. "$B/bench/ab_run.sh"
EX=examples/facts/h200-cu130.json
WU=tests/cases/writeup-after/facts.json
LOG=tests/realworld/sglang-5002-runtime-image-libnvrtc12/server.log
SG="python3 -m sglang.launch_server --model-path x --tp 1"
n=0
row() {  # row NAME ARGS...: run ARGS in both trees (twice), compare the second outputs
  name=$1
  shift
  n=$((n + 1))
  for t in A B; do
    ab_run "$t" 2 "$tmp/$n-$t.json" "$tmp/$n-$t.err" "$tmp/cache-$t" STACKCHECK_PLAN_CACHE=1 -- -m stackcheck "$@"
    echo $? >"$tmp/$n-$t.rc"
  done
  echo "rc A=$(cat "$tmp/$n-A.rc") B=$(cat "$tmp/$n-B.rc")"
  $py "$B/bench/ab_outputs.py" "$tmp/$n-A.json" "$tmp/$n-B.json" "$A" "$B" "$name"
}
for box in "$EX" "$WU"; do
  row "audit --facts $box" audit --facts "$box" --format json
  row "gate --facts $box" gate --facts "$box" --dry-run --format json -- $SG
  row "plan $box" plan --facts "$box" --format json
  row "plan --want torch-symm-mem $box" plan --facts "$box" --want torch-symm-mem --format json
  row "plan --want torch-symm-mem (text) $box" plan --facts "$box" --want torch-symm-mem --format text
  row "plan --want fp8-block-gemm $box" plan --facts "$box" --want fp8-block-gemm --format json
  row "explain fp8-block-gemm $box" explain fp8-block-gemm --facts "$box" --format json
  row "triage $box" triage --facts "$box" --format json "$LOG"
done
row "audit (live)" audit --format json
row "audit --deep (live)" audit --deep --format json
row "gate (live)" gate --dry-run --format json -- $SG
echo "outputs kept in $tmp"
