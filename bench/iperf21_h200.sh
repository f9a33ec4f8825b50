#!/bin/sh
# iperf21 (issue 21: audit <= 1.2x and the served gate <= 1.15x the bare-NVML floor) on a GPU box: main (A) against
# this tree (B), in one device command (~2-3 minutes with 31 rounds; under 5).
#
#   sh bench/iperf21_h200.sh TREE_A [RUNS]      (from this tree's root; RUNS 31; TREE_A: a copy of main before the
#                                              cuts, e.g. mkdir -p ip21-a && git archive 9169c17a | tar -x -C ip21-a)
# Prints:
# - "output A == B" for `audit --format json` and the gate's decision (`gate --dry-run --format json` of the SGLang
#   command line), the trees' paths and the probes' durations aside (each tree run twice: the second is the one
#   compared, the audit's plan and the gate's decision kept by the first, as the rows below read them);
# - which of json, json.decoder, launch.gate_preflight, launch.preflight (the package: iperf23) and packaging (the
#   caches' code stamp before iperf23) each tree's warm audit and served gate import (B: none);
# - bench/critical_path.py --real-nvml (audit, the served gate; 11 runs): the reader's answer (`ready`) and the exit;
#   `after` = exit - ready, the main thread's work after the driver's answer;
# - bench/ab_trees.py: wall and CPU medians of audit, the served gate and audit --deep, their ratios to the floor,
#   B - A (the figures the issue's goals are on).
# The JSON goes to $OUT when it is set.
set -u
A=$(cd "$1" && pwd)
B=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${2:-31}
py=${PYTHON:-python3}
tmp=$(mktemp -d)
unset PYTHONDONTWRITEBYTECODE
. "$B/bench/ab_run.sh"
MODS='import os, sys
sys.argv = ["stackcheck", *sys.argv[1:]]
_exit = os._exit
command = os.getpid()  # (the forked NVML reader leaves through os._exit too: only the command writes)
def record():
    if os.getpid() == command:
        with open(os.environ["IP21_MODULES"], "w") as fh:
            fh.write(" ".join(m for m in ("json", "json.decoder", "stackcheck.launch.gate_preflight",
                                          "stackcheck.launch.preflight", "packaging") if m in sys.modules))
def leave(code):
    record()
    _exit(code)
os._exit = leave
import atexit  # (where an atexit callback is registered, stackcheck.cli.run leaves by sys.exit, not os._exit: this
atexit.register(record)  # one makes it so here, and records then; the modules listed are the same either way)
from stackcheck.__main__ import main
main()'
for row in audit gate; do
  for t in A B; do
    if [ "$row" = audit ]; then
      set -- audit --format json
    else
      set -- gate --dry-run --format json -- python3 -m sglang.launch_server --model-path x --tp 1
    fi
    ab_run "$t" 2 "$tmp/$row-$t.json" /dev/null "$tmp/cache-out-$t" -- -m stackcheck "$@"
    echo "$row [$t] rc=$?"
    # (twice: the first keeps the gate's decision for this interpreter's sys.path, part of its key)
    ab_run "$t" 2 /dev/null /dev/null "$tmp/cache-out-$t" IP21_MODULES="$tmp/mods-$row-$t" -- -c "$MODS" "$@"
    echo "$row [$t] imports: $(cat "$tmp/mods-$row-$t" 2>/dev/null)"
  done
  $py bench/ab_outputs.py "$tmp/$row-A.json" "$tmp/$row-B.json" "$A" "$B" "$row"
done
$py bench/critical_path.py --real-nvml --runs 11 --rows "audit,gate" "$A" "$B"
$py bench/ab_trees.py --runs "$RUNS" --rows "audit,gate,audit --deep" --json "$tmp/ab.json" "$A" "$B"
echo "figures kept in $tmp"
if [ -n "${OUT:-}" ]; then cp "$tmp"/*.json "$OUT"/ 2>/dev/null; fi
