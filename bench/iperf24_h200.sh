#!/bin/sh
# iperf24 (issue 21: audit <= 1.2x and audit --deep <= 1.5x the bare-NVML floor) on a GPU box: main (A) against this
# tree (B), in one device command (~2-3 minutes with 31 rounds; under 5).
#
#   sh bench/iperf24_h200.sh [TREE_A_OR_COMMIT] [RUNS]   (from this tree's root; A default 5d319778, made with
#                                                        `git archive` where git has it, else pass a directory;
#                                                        RUNS default 31)
# Prints:
# - "output A == B" for `audit --format json` and `audit --deep --format json`, the trees' paths and the timing fields
#   aside (each tree run twice with a cache directory of its own: the second run is the one compared, reading what
#   the first kept, as the rows below do);
# - which of stackcheck.readers.sourcetables, subprocess, stackcheck.verdicts.context and stackcheck.readers.elf
#   each tree's warm audit and audit --deep import (B: no sourcetables where no gate package is installed;
#   subprocess only where a probe runs a tool);
# - bench/ab_trees.py: wall and CPU medians of audit, the served gate and audit --deep, their ratios to the floor,
#   B - A (the figures the issue's goals are on).
# The JSON goes to $OUT when it is set.
set -u
B=$(cd "$(dirname "$0")/.." && pwd)
A_ARG=${1:-5d319778}
RUNS=${2:-31}
py=${PYTHON:-python3}
tmp=$(mktemp -d)
unset PYTHONDONTWRITEBYTECODE
if [ -d "$A_ARG" ]; then
  A=$(cd "$A_ARG" && pwd)
else
  A="$tmp/tree-a"
  mkdir -p "$A"
  if ! (cd "$B" && git archive "$A_ARG" | tar -x -C "$A") 2>/dev/null || [ ! -d "$A/stackcheck" ]; then
    echo "cannot make tree A from $A_ARG here (no git history?): pass a directory holding that commit's files" >&2
    exit 2
  fi
fi
echo "A = $A ($A_ARG), B = $B, $RUNS rounds"
MODS='import os, sys
sys.argv = ["stackcheck", *sys.argv[1:]]
_exit = os._exit
command = os.getpid()  # (the forked NVML reader leaves through os._exit too: only the command writes)
def record():
    if os.getpid() == command:
        with open(os.environ["IP24_MODULES"], "w") as fh:
            fh.write(" ".join(m for m in ("stackcheck.readers.sourcetables", "subprocess", "stackcheck.verdicts.context",
                                          "stackcheck.readers.elf") if m in sys.modules))
def leave(code):
    record()
    _exit(code)
os._exit = leave
import atexit
atexit.register(record)
from stackcheck.__main__ import main
main()'
for row in audit deep; do
  for t in A B; do
    eval "tree=\$$t"
    if [ "$row" = audit ]; then set -- audit --format json; else set -- audit --deep --format json; fi
    for n in 1 2; do
      (cd "$tree" && PYTHONPATH="$tree" STACKCHECK_CACHE_DIR="$tmp/cache-out-$t" $py -m stackcheck "$@" \
        >"$tmp/$row-$t.json" 2>/dev/null; rc=$?; [ "$n" = 2 ] && echo "$row [$t] rc=$rc")
    done
    (cd "$tree" && PYTHONPATH="$tree" STACKCHECK_CACHE_DIR="$tmp/cache-out-$t" IP24_MODULES="$tmp/mods-$row-$t" \
      $py -c "$MODS" "$@" >/dev/null 2>&1)
    echo "$row [$t] imports: $(cat "$tmp/mods-$row-$t" 2>/dev/null)"
  done
  $py bench/ab_outputs.py "$tmp/$row-A.json" "$tmp/$row-B.json" "$A" "$B" "$row"
done
$py bench/ab_trees.py --runs "$RUNS" --rows "audit,gate,audit --deep" --json "$tmp/ab.json" "$A" "$B"
echo "figures kept in $tmp"
if [ -n "${OUT:-}" ]; then cp "$tmp"/*.json "$OUT"/ 2>/dev/null; fi
