#!/bin/sh
# iperf29 (issue 21: audit <= 1.2x and the served gate <= 1.15x the bare-NVML floor) on a GPU box, in one device
# command (~3-5 minutes): where the audit's and the gate's wall time goes against the real driver, then the ratios.
#
#   sh bench/iperf29_h200.sh [RUNS]        (from this tree's root; RUNS default 15)
#
# Prints, for this tree, with the box's pynvml and driver (--real-nvml) and /usr/bin/python3 as the gate's `python3`:
# - bench/thread_cpu.py: each thread's own CPU (main from the process's start, the loading thread, each probe) beside
#   the wall time: wall - the sum of the threads' CPU is the time nothing held the interpreter lock (a wait: the
#   driver's answer, a tool, a file); the sum less `python -c pass` is stackcheck's work under the lock;
# - bench/critical_path.py: when the forked NVML reader starts, answers, and how long the command runs after that
#   (`after`: the part of the path that is not the driver);
# - bench/h200_perf.py: the rows and ratios against the floor (the issue's goals), its JSON in $OUT when set.
set -u
RUNS=${1:-15}
py=${PYTHON:-python3}
here=$(cd "$(dirname "$0")/.." && pwd)
unset PYTHONDONTWRITEBYTECODE
p3=""
[ -x /usr/bin/python3 ] && p3="--python3 /usr/bin/python3"
echo "== thread_cpu ($RUNS runs)"
PYTHONPATH="$here" timeout 150 "$py" "$here/bench/thread_cpu.py" --runs "$RUNS" --real-nvml $p3 "$here"
echo "== critical_path ($RUNS rounds)"
PYTHONPATH="$here" timeout 120 "$py" "$here/bench/critical_path.py" --runs "$RUNS" --real-nvml $p3 "$here" | tail -n 6
echo "== h200_perf ($RUNS runs)"
cd "$here" && PYTHONPATH="$here" timeout 300 "$py" bench/h200_perf.py --runs "$RUNS" --budget-s 280
