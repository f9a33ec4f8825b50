"""The sixtieth fact-check sample's population and seeded draw (its text is bench/factcheck60_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck60_draw.py OUT_DIR

Fixed before any row was checked. A third uniform draw over the gate's allows of common launch lines, for an unbiased
rate of false passes a user meets at the gate: the fifty-third and fifty-fifth samples' population
(factcheck53_draw.gate_rows: factcheck51_draw.BOXES built by factcheck27_draw._box, 7 GPU kinds x every final SGLang
release 0.5.1-0.5.23 x its 16 launch lines), built on this tree. Rows the fifty-third and fifty-fifth drew are kept
in the population (a uniform draw over every allow, as the fifty-third's).

Draw: random.Random(20270129); the rows sorted by JSON text, shuffled, the first 20. Nothing is replaced after the
draw.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck53_draw import MODELS, gate_rows
from factcheck_draw import draw, write_models

SEED = 20270129
K = 20


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    rows = gate_rows(out)
    print(f"g: {len(rows)} allows (rows earlier samples drew kept)", file=sys.stderr)
    draw(out, SEED, [(K, rows)])


if __name__ == "__main__":
    main()
