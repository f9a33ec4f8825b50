"""iperf39 (issue 21): one callgrind count per tree and row of bench/iperf39_ab.py (its rows, its environment; a
warm-up run first keeps the prepared manifests), to attribute a row's change to the merge that made it: trees of the
first-parent merges between two landings, each a git archive REV -- stackcheck manifests schemas pyproject.toml
tests/cases under /tmp/iperf39-t-REV.

    python3 bench/iperf39_attr.py REV,REV,... ROW,ROW,... --target T --target0 T0"""

from __future__ import annotations

import argparse
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
    ap.add_argument("--prefix", default="/tmp/iperf39-t-")
    args = ap.parse_args()
    for row in args.rows.split(","):
        for rev in args.revs.split(","):
            tree = args.prefix + rev
            cache = tempfile.mkdtemp(prefix="iperf39-attr-")
            cmd = iperf39_ab.rows(args.target, args.target0, tree)[row]
            iperf39_ab.once(sys.executable, tree, cmd, cache, False)
            ir = iperf39_ab.instructions(sys.executable, tree, cmd, cache, False)
            print(f"{row:8} {rev:10} Ir {ir / 1e6:8.1f}M", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
