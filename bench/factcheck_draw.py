"""What the seeded fact-check draws share (bench/factcheck7_draw.py onward; tests/realworld/FACTCHECK.md).

Each sample's script builds its populations and hands them to `draw`, which fixes the draw: per population its rows
sorted by their JSON text, written out, shuffled with one `random.Random(seed)` in the order given, the first k kept.
`gate` runs `stackcheck gate --dry-run --format json` in this process on a saved facts file.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _path in (ROOT, ROOT / "bench", ROOT / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


def stackcheck_json(args: list[str]) -> dict[str, Any]:
    """`stackcheck ARGS` run in this process; its stdout read as JSON (stderr dropped)."""
    from stackcheck.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        main(args)
    doc: dict[str, Any] = json.loads(buf.getvalue())
    return doc


def gate(facts: Path, line: list[str]) -> dict[str, Any]:
    """The JSON decision of `gate --dry-run` on facts for `python3 -m sglang.launch_server LINE`."""
    args = ["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--"]
    return stackcheck_json([*args, "python3", "-m", "sglang.launch_server", *line])


def write_models(out: Path, models: dict[str, dict[str, Any]]) -> None:
    """Each model's config.json under OUT/models/NAME, the directory a `--model-path` names."""
    for name, config in models.items():
        (out / "models" / name).mkdir(parents=True, exist_ok=True)
        (out / "models" / name / "config.json").write_text(json.dumps(config))


def final_releases() -> list[str]:
    """The SGLang releases of components.json without a post suffix, oldest first."""
    from stackcheck.knowledge.loader import load

    return [r["version"] for r in load().releases("sglang") if "post" not in r["version"]]


def draw(out: Path, seed: int, populations: list[tuple[int, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """The seeded draw over POPULATIONS ((k, rows) in order): each written to OUT/population-POP.json and its count
    printed, the drawn rows to OUT/drawn.json and printed one a line (without their "key")."""
    rng = random.Random(seed)
    drawn: list[dict[str, Any]] = []
    for k, rows in populations:
        rows.sort(key=lambda r: json.dumps(r, sort_keys=True))
        pop = rows[0]["pop"] if rows else "empty"
        (out / f"population-{pop}.json").write_text(json.dumps(rows, indent=1))
        print(f"population {pop}: {len(rows)} rows", flush=True)
        rng.shuffle(rows)
        drawn += rows[:k]
    (out / "drawn.json").write_text(json.dumps(drawn, indent=1))
    for row in drawn:
        print(json.dumps({k: v for k, v in row.items() if k != "key"}))
    return drawn
