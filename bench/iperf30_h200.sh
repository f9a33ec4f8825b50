#!/bin/sh
# iperf30 (issue 21: audit <= 1.2x and the served gate <= 1.15x the bare-NVML floor) on a GPU box, in one device
# command (~5 minutes): whether a lower switch interval while the NVML probe's thread waits for the forked reader's
# answer shortens the path, and where the driver's start falls on it; then the ratios.
#
#   sh bench/iperf30_h200.sh [RUNS] [SWITCH_MS]     (from this tree's root; RUNS default 21, SWITCH_MS default 0.5)
#
# - bench/critical_path.py --real-nvml, this tree given twice, B's runs with the interpreter's switch interval at
#   SWITCH_MS while the NVML probe's thread waits for the answer (set from the bench's wrapper, not by stackcheck):
#   `init0` (everything before the driver's start begins, the interpreter's start included), `init1` (it returns),
#   `take` (the written answer waiting for the probe's thread), `tail` (exit less init1), `end`, `cpu`; B - A is the
#   setting's own effect;
# - bench/h200_perf.py: the rows and ratios against the floor (the issue's goals), its JSON in $OUT when set.
set -u
RUNS=${1:-21}
SWITCH=${2:-0.5}
py=${PYTHON:-python3}
here=$(cd "$(dirname "$0")/.." && pwd)
unset PYTHONDONTWRITEBYTECODE
p3=""
[ -x /usr/bin/python3 ] && p3="--python3 /usr/bin/python3"
echo "== critical_path ($RUNS rounds; A = this tree, B = this tree with the switch interval at $SWITCH ms)"
PYTHONPATH="$here" timeout 200 "$py" "$here/bench/critical_path.py" --runs "$RUNS" --real-nvml $p3 \
  --switch-ms "$SWITCH" "$here" "$here" | tail -n 9
echo "== h200_perf ($RUNS runs)"
cd "$here" && PYTHONPATH="$here" timeout 300 "$py" bench/h200_perf.py --runs "$RUNS" --budget-s 240
