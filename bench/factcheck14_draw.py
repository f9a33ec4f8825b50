"""The fourteenth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Fourteenth sample").

    PYTHONPATH=. python bench/factcheck14_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the earlier samples hardly drew: the `ok` verdicts of the stack
checks (manifests/checks.json, every check id; the seventh and eighth samples drew 19 such rows, all from the
generated fleet boxes of bench/gen_reports). Two populations, built from the manifests of the tree it runs in:

(a) recorded boxes: the report (`stackcheck.assembly.pipeline.build_report`, as `audit --facts`) of every
    tests/cases/*/facts.json, tests/plan_cases/*/facts.json and tests/realworld/*/facts.json (a realworld case's
    options.json applied as bench/verdict_diff.py applies it); one row per distinct (check id, its reasons'
    rule / observed / result) whose status is ok, labelled with the first box (sorted by path) that gives it;
(b) generated release x architecture boxes: the h200-newest case (driver 580, CUDA 13.0 toolkit, x86_64, NVLink)
    with its GPUs replaced by eight of each compute capability of manifests/architectures.json and its packages
    by each final SGLang release of components.json with its pins (bench/factcheck7_draw.release_box: torch's
    PyPI build); one row per distinct (check id, reasons' rule / observed / result) whose status is ok, labelled
    with the first (architecture, release) that gives it, the rows already in (a) left out.

Draw: random.Random(20261214); per population its rows sorted by their JSON text, shuffled, the first k
(a: 14, b: 13), 27 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import ROOT, draw, final_releases

SEED = 20261214
BASE_CASE = "h200-newest"


def _checks(facts: Path, extra: dict[str, Any]) -> list[dict[str, Any]]:
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import build_report

    extra = {k: v for k, v in extra.items() if k in Options.__dataclass_fields__}
    report, _ = build_report(Options(facts_file=str(facts), **extra))
    return list(report.get("checks") or [])


def _key(check: dict[str, Any]) -> str:
    reasons = [[r.get("rule"), r.get("observed"), r.get("result")] for r in check.get("reasons") or []]
    return json.dumps([check["id"], reasons])


def recorded_rows() -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for base in ("cases", "plan_cases", "realworld"):
        for case in sorted(p for p in (ROOT / "tests" / base).iterdir() if p.is_dir()):
            opts = case / "options.json"
            extra = json.loads(opts.read_text()) if base == "realworld" and opts.is_file() else {}
            facts = ROOT / extra.pop("facts_file") if "facts_file" in extra else case / "facts.json"
            if not facts.is_file():
                continue
            for check in _checks(facts, extra):
                if check.get("status") == "ok":
                    box = f"tests/{base}/{case.name}"
                    seen.setdefault(_key(check), {"pop": "a", "box": box, "check": check["id"], "key": _key(check)})
    return list(seen.values())


def generated_rows(out: Path, skip: set[str]) -> list[dict[str, Any]]:
    from factcheck7_draw import release_box

    from stackcheck.knowledge.loader import load
    from stackcheck.verdicts.context import assumed_gpus

    manifests = load()
    seen: dict[str, dict[str, Any]] = {}
    for arch in manifests.architectures:
        cc = str(arch.get("compute_capability"))
        for rel in final_releases():
            doc = release_box(BASE_CASE, rel)
            doc["facts"]["gpus"] = assumed_gpus(manifests, f"{cc}x8")
            path = out / f"box-{cc}-{rel}.json"
            path.write_text(json.dumps(doc))
            for check in _checks(path, {}):
                if check.get("status") == "ok" and _key(check) not in skip:
                    row = {"pop": "b", "cc": cc, "sglang": rel, "check": check["id"], "key": _key(check)}
                    seen.setdefault(_key(check), row)
        print(f"cc {cc}: {len(seen)} rows", file=sys.stderr, flush=True)
    return list(seen.values())


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    a = recorded_rows()
    b = generated_rows(out, {r["key"] for r in a})
    draw(out, SEED, [(14, a), (13, b)])


if __name__ == "__main__":
    main()
