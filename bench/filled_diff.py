"""The real-world corpus with the case writers' inferred facts removed, judged by two states of stackcheck: what
filling a facts file's gaps from the manifests' tables (stackcheck/facts/filled.py) changes, and whether each change
is an unknown that the filled fact decides, to the verdict the writer's own inferred facts give.

    PYTHONPATH=/tmp/old python bench/filled_diff.py snapshot before.json   # each case's facts.json less case.json paths
    PYTHONPATH=$PWD python bench/filled_diff.py snapshot after.json
    PYTHONPATH=$PWD python bench/filled_diff.py diff before.json after.json

A snapshot holds, per case, every feature's and stack check's status on the stripped facts (`stripped`) and on the
facts as written (`written`). The diff lists every stripped verdict that changed, marks one that was not unknown
before ("NOT FROM UNKNOWN"), and says whether the new verdict is the one the written facts give ("= written").
The cases are read from this checkout (tests/realworld), whichever stackcheck is on the path.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from realworld_coverage import _inferred_entries, load_cases, strip_inferred  # noqa: E402


def _verdicts(path: Path) -> dict[str, str]:
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import build_report

    report, _ = build_report(Options(facts_file=str(path)), want_plan=False)
    out = {str(f["id"]): str(f["status"]) for f in report["features"]}
    out.update({f"check {c['id']}": str(c["status"]) for c in report.get("checks") or []})
    return out


def snapshot() -> dict[str, Any]:
    stripped: dict[str, str] = {}
    written: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in load_cases():
            entries = _inferred_entries(case)
            if not entries or not all(isinstance(e.get("paths"), list) for e in entries):
                continue
            doc = json.loads((case.path / "facts.json").read_text(encoding="utf-8"))
            facts = strip_inferred(doc, [str(p) for e in entries for p in e["paths"]])
            path = Path(tmp) / f"{case.id}.json"
            path.write_text(json.dumps(facts))
            for key, value in _verdicts(path).items():
                stripped[f"{case.id} {key}"] = value
            for key, value in _verdicts(case.path / "facts.json").items():
                written[f"{case.id} {key}"] = value
    return {"stripped": stripped, "written": written}


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "snapshot":
        doc = snapshot()
        Path(argv[1]).write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")
        print(f"{len(doc['stripped'])} stripped verdicts -> {argv[1]}")
        return 0
    if len(argv) == 3 and argv[0] == "diff":
        old, new = (json.loads(Path(p).read_text()) for p in argv[1:])
        keys = sorted(set(old["stripped"]) | set(new["stripped"]))
        changed = [k for k in keys if old["stripped"].get(k) != new["stripped"].get(k)]
        bad = [k for k in changed if old["stripped"].get(k) != "unknown"]
        same = [k for k in changed if new["stripped"].get(k) == new["written"].get(k)]
        print(
            f"{len(changed)} of {len(keys)} stripped verdicts changed; {len(bad)} not from unknown; "
            f"{len(same)} to the verdict of the facts as written"
        )
        for k in changed:
            tags = [] if k not in bad else ["NOT FROM UNKNOWN"]
            tags.append("= written" if k in same else f"written: {new['written'].get(k)}")
            print(f"{k}: {old['stripped'].get(k)} -> {new['stripped'].get(k)} ({'; '.join(tags)})")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
