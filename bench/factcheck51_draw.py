"""The fifty-first fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Fifty-first
sample"). Run:

    PYTHONPATH=.:tests python bench/factcheck51_draw.py OUT_DIR

Fixed before any row was checked. A uniform draw over what a user meets, for an unbiased rate of false passes (the
earlier samples were mostly aimed at what no sample drew before; this one is not, and leaves out nothing drawn before).

Boxes: factcheck27_draw._box (tests/cases/h200-newest with the release's pins, the extra packages, libnuma) with the
GPUs of BOXES: A100 8.0, L40S 8.9, H100 9.0, B200 10.0, B300 10.3, RTX PRO 6000 12.0 (8 each, x86_64) and GB10 12.1
(one, aarch64: a DGX Spark; architectures.json names it).

Population (u): `audit --facts F --format json` of each box with every final SGLang release of components.json
(0.5.1-0.5.23): one row per distinct (box, feature, its reasons' rule / observed / result) whose status is ok and per
distinct (box, check, its reasons' rule / observed / result) whose status is ok, labelled with the first release that
gives it. Rows an earlier sample drew are kept (how many is printed to stderr: the same box, item and reasons, with or
without the same first release).

Draw: random.Random(20270120); the rows sorted by JSON text, shuffled, the first 20. Nothing is replaced after the
draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck27_draw import _box
from factcheck_draw import ROOT, draw, final_releases, stackcheck_json_or_error

SEED = 20270120
K = 20
# name: (GPU name, compute capability, machine, GPU count)
BOXES: dict[str, tuple[str, str, str, int]] = {
    "a100": ("NVIDIA A100-SXM4-80GB", "8.0", "x86_64", 8),
    "l40s": ("NVIDIA L40S", "8.9", "x86_64", 8),
    "h100": ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 8),
    "b200": ("NVIDIA B200", "10.0", "x86_64", 8),
    "b300": ("NVIDIA B300 SXM6 AC", "10.3", "x86_64", 8),
    "pro6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "x86_64", 8),
    "gb10": ("NVIDIA GB10", "12.1", "aarch64", 1),
}


def _reasons(entry: dict[str, Any]) -> list[list[Any]]:
    return [[r.get("rule"), r.get("observed"), r.get("result")] for r in entry.get("reasons") or []]


def audit_rows(out: Path) -> list[dict[str, Any]]:
    """Population u: one audit per (box, release); ok features and ok checks, deduplicated."""
    rows: dict[str, dict[str, Any]] = {}
    for box, spec in BOXES.items():
        for rel in final_releases():
            doc = stackcheck_json_or_error(["audit", "--facts", str(_box(out, rel, spec)), "--format", "json"])
            for kind, key in (("features", "feature"), ("checks", "check")):
                for e in doc.get(kind) or []:
                    if e.get("status") == "ok":
                        row = {"pop": "u", "box": box, key: e.get("id"), "reasons": _reasons(e)}
                        rows.setdefault(json.dumps(row, sort_keys=True), {**row, "sglang": rel})
        print(f"u {box}: {len(rows)}", file=sys.stderr, flush=True)
    return list(rows.values())


def _drawn_before(rows: list[dict[str, Any]]) -> None:
    """How many of ROWS an earlier sample drew: same box, item and reasons (and same first release), to stderr."""

    def key(r: dict[str, Any], release: bool) -> str:
        keep = ("box", "feature", "check", "reasons") + (("sglang",) if release else ())
        return json.dumps({k: v for k, v in r.items() if k in keep}, sort_keys=True)

    for release in (True, False):
        before: dict[str, list[str]] = {}
        for path in sorted((ROOT / "bench").glob("factcheck*_drawn.json")):
            if path.name == "factcheck51_drawn.json":
                continue
            for r in json.loads(path.read_text()):
                if isinstance(r, dict):
                    before.setdefault(key(r, release), []).append(path.name)
        hits = [(r, before[key(r, release)]) for r in rows if key(r, release) in before]
        print(f"drawn before ({'same' if release else 'any'} first release): {len(hits)}", file=sys.stderr)
        for r, names in hits:
            print(f"  {key(r, True)} <- {sorted(set(names))}", file=sys.stderr)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rows = audit_rows(out)
    drawn = draw(out, SEED, [(K, rows)])
    _drawn_before(drawn)


if __name__ == "__main__":
    main()
