"""iperf41 (issue 21): bench/iperf39_attr.py's attribution as a table: one callgrind count (the command's own
process) per row of bench/iperf39_ab.py and per tree of the first-parent commits between two landings, each row's
change against the first tree and against the tree before it, in percent. A warm-up run first keeps the prepared
manifests (and, warm, the probes' per-file answers); --cold removes deep/ and upstream/ before the counted run too.

    python3 bench/iperf41_attr.py REV,REV,... ROW,ROW,... --target T --target0 T0 [--cold] [--prefix /tmp/iperf41-t-]

A tree: git archive REV -- stackcheck manifests schemas pyproject.toml tests/cases under PREFIX + REV."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import iperf39_ab


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("revs")
    ap.add_argument("rows")
    ap.add_argument("--target", required=True)
    ap.add_argument("--target0", required=True)
    ap.add_argument("--prefix", default="/tmp/iperf41-t-")
    ap.add_argument("--cold", action="store_true")
    args = ap.parse_args()
    revs = args.revs.split(",")
    for row in args.rows.split(","):
        first = prev = 0
        for rev in revs:
            tree = args.prefix + rev
            cache = tempfile.mkdtemp(prefix="iperf41-attr-")
            try:
                cmd = iperf39_ab.rows(args.target, args.target0, tree)[row]
                iperf39_ab.once(sys.executable, tree, cmd, cache, args.cold)
                ir = iperf39_ab.instructions(sys.executable, tree, cmd, cache, args.cold)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            first = first or ir
            step = f"{(ir - prev) / prev * 100:+6.2f} %" if prev > 0 else "       -"
            print(f"{row:8} {rev:10} Ir {ir / 1e6:8.1f}M  vs first {(ir - first) / first * 100:+6.2f} %  step {step}",
                  flush=True)  # fmt: skip
            prev = ir
    return 0


if __name__ == "__main__":
    sys.exit(main())
