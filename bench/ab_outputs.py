"""Whether two trees' JSON outputs of one row are equal, their trees' paths and timing fields aside (the A/B scripts
bench/iperf21_h200.sh and bench/iperf24_h200.sh): prints "output A == B (ROW): True", or False with the top-level
keys that differ; an output that is not JSON (a text plan) is compared as text, each tree's path aside.

    python3 bench/ab_outputs.py [--timing F,F...] A.json B.json TREE_A TREE_B ROW

--timing names the fields set aside in place of TIMING (bench/iperf15_h200.sh keeps its own, without collected_at).
"""

from __future__ import annotations

import json
import sys
from typing import Any

#: fields that hold times, not answers
TIMING = ("duration_ms", "generated_at", "elapsed_ms", "ms", "collected_at")


def norm(x: Any, tree: str, timing: tuple[str, ...] = TIMING) -> Any:
    if isinstance(x, dict):
        return {k: norm(v, tree, timing) for k, v in x.items() if k not in timing}
    if isinstance(x, list):
        return [norm(v, tree, timing) for v in x]
    return x.replace(tree, "TREE") if isinstance(x, str) else x


def main(argv: list[str]) -> int:
    timing = TIMING
    if argv[:1] == ["--timing"]:
        timing, argv = tuple(argv[1].split(",")), argv[2:]
    a_path, b_path, tree_a, tree_b, row = argv
    try:
        with open(a_path, encoding="utf-8") as fa, open(b_path, encoding="utf-8") as fb:
            a, b = norm(json.load(fa), tree_a, timing), norm(json.load(fb), tree_b, timing)
    except ValueError:  # text (a plan's): equal byte for byte, each tree's path aside
        with open(a_path, encoding="utf-8") as fa, open(b_path, encoding="utf-8") as fb:
            ta, tb = fa.read().replace(tree_a, "TREE"), fb.read().replace(tree_b, "TREE")
        print(f"output A == B ({row}): {ta == tb} (text)")
        return 0
    differ = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    print(f"output A == B ({row}): {a == b}", "" if a == b else differ)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
