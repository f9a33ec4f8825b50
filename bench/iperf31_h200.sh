#!/bin/sh
# iperf31 (issue 21): on a GPU box, with the real driver, in one device command (~1-2 minutes): where the lent H100's
# 16 ms between the command's os._exit and its reaping go, and what still runs after the forked NVML reader's answer.
#
#   sh bench/iperf31_h200.sh [RUNS]     (from this tree's root; RUNS default 15)
#
# - bench/exit_cost.py --real-nvml: `reap` (os._exit -> the parent's wait4, nothing written in between) plain, with
#   critical_path's marks file written (`marked`), with the reader waited for first (`reaped`), with malloc_trim
#   first (`trimmed`), and a bare `python -c` os._exit; what the process holds when it leaves (RSS, threads, fds,
#   maps, atexit callbacks, the reader running / zombie / gone) and which exit cli.run took (os._exit or sys.exit);
# - bench/main_thread.py --real-nvml: the main thread's marks and each probe thread's begin / end, latest last (the
#   probes still running after `answer` are what `after` waits for);
# - bench/critical_path.py --real-nvml, this tree alone: its exit -> end beside exit_cost's reap.
set -u
RUNS=${1:-15}
py=${PYTHON:-python3}
here=$(cd "$(dirname "$0")/.." && pwd)
unset PYTHONDONTWRITEBYTECODE
p3=""
[ -x /usr/bin/python3 ] && p3="--python3 /usr/bin/python3"
echo "== exit_cost ($RUNS rounds)"
PYTHONPATH="$here" timeout 200 "$py" "$here/bench/exit_cost.py" --runs "$RUNS" --real-nvml $p3 "$here"
echo "== main_thread ($RUNS runs)"
PYTHONPATH="$here" timeout 150 "$py" "$here/bench/main_thread.py" --runs "$RUNS" --rows audit,gate --real-nvml $p3 "$here"
echo "== critical_path ($RUNS rounds)"
PYTHONPATH="$here" timeout 150 "$py" "$here/bench/critical_path.py" --runs "$RUNS" --real-nvml $p3 "$here" | tail -n 5
