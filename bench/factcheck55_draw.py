"""The fifty-fifth fact-check sample's population and seeded draw (its text is bench/factcheck55_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck55_draw.py OUT_DIR

Fixed before any row was checked. A second uniform draw over the gate's allows of common launch lines, to tighten the
rate of false passes a user meets at the gate: the fifty-third sample's population exactly (factcheck53_draw.gate_rows:
factcheck51_draw.BOXES built by factcheck27_draw._box, 7 GPU kinds x every final SGLang release 0.5.1-0.5.23 x its 16
launch lines), built on this tree, with the rows the fifty-third drew (bench/factcheck53_drawn.json) left out.

Draw: random.Random(20270124); the rows sorted by JSON text, shuffled, the first 20. Nothing is replaced after the
draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck53_draw import MODELS, gate_rows
from factcheck_draw import draw, write_models

SEED = 20270124
K = 20
BEFORE = Path(__file__).resolve().parent / "factcheck53_drawn.json"


def _key(row: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in row.items() if k != "pop"}, sort_keys=True)


def undrawn53(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ROWS less those the fifty-third sample drew; how many were left out printed to stderr."""
    before = {_key(r) for r in json.loads(BEFORE.read_text())}
    kept = [r for r in rows if _key(r) not in before]
    print(f"g: {len(rows)} allows, {len(rows) - len(kept)} drawn by the fifty-third, left out", file=sys.stderr)
    return kept


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    draw(out, SEED, [(K, undrawn53(gate_rows(out)))])


if __name__ == "__main__":
    main()
