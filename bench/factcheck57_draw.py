"""The fifty-seventh fact-check sample's population and seeded draw (its text is bench/factcheck57_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck57_draw.py OUT_DIR

Fixed before any row was checked. A second uniform draw over audit's ok verdicts, to tighten the rate of false passes a
user meets: the fifty-first sample's population exactly (factcheck51_draw.audit_rows: `audit --facts F --format json`
of factcheck51_draw.BOXES, 7 GPU kinds built by factcheck27_draw._box, x every final SGLang release 0.5.1-0.5.23; every
ok feature and ok check row, labelled with the first release that gives it), built on this tree, with the rows the
fifty-first drew (bench/factcheck51_drawn.json: the same box, item and reasons, whatever the first release) left out.

Draw: random.Random(20270126); the rows sorted by JSON text, shuffled, the first 20. Nothing is replaced after the
draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck51_draw import audit_rows
from factcheck_draw import draw

SEED = 20270126
K = 20
BEFORE = Path(__file__).resolve().parent / "factcheck51_drawn.json"


def _key(row: dict[str, Any]) -> str:
    return json.dumps({k: row.get(k) for k in ("box", "feature", "check", "reasons")}, sort_keys=True)


def undrawn51(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ROWS less those the fifty-first sample drew; how many were left out printed to stderr."""
    before = {_key(r) for r in json.loads(BEFORE.read_text())}
    kept = [r for r in rows if _key(r) not in before]
    print(f"u: {len(rows)} ok rows, {len(rows) - len(kept)} drawn by the fifty-first, left out", file=sys.stderr)
    return kept


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    draw(out, SEED, [(K, undrawn51(audit_rows(out)))])


if __name__ == "__main__":
    main()
