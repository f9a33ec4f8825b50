"""Show (and with --write, record) how each scenario's verdicts differ from its expected.json."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report

CASES = Path(__file__).resolve().parent
ROOT = CASES.parent.parent


def main() -> int:
    write = "--write" in sys.argv[1:]
    changed = 0
    for case in sorted(p for p in CASES.iterdir() if p.is_dir()):
        opts_file = case / "options.json"
        extra = json.loads(opts_file.read_text()) if opts_file.is_file() else {}
        facts = ROOT / extra.pop("facts_file") if "facts_file" in extra else case / "facts.json"
        report, _ = build_report(Options(facts_file=str(facts), **extra))
        got: dict[str, Any] = {
            "exit_code": 0 if report["summary"]["consistent"] else 1,
            "features": {
                f["id"]: f["status"] + (f"/{f['effect']}" if f.get("effect") else "") for f in report["features"]
            },
            "checks": {c["id"]: c["status"] for c in report["checks"]},
        }
        path = case / "expected.json"
        old = json.loads(path.read_text()) if path.is_file() else {"features": {}, "checks": {}, "exit_code": None}
        for kind in ("features", "checks"):
            for key in sorted(set(got[kind]) | set(old[kind])):
                if got[kind].get(key) != old[kind].get(key):
                    changed += 1
                    print(f"{case.name}: {kind[:-1]} {key}: {old[kind].get(key)} -> {got[kind].get(key)}")
        if got["exit_code"] != old["exit_code"]:
            changed += 1
            print(f"{case.name}: exit code {old['exit_code']} -> {got['exit_code']}")
        if write:
            path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    print(f"{changed} difference(s)" + (" written" if write and changed else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
