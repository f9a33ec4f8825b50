"""Recommendation cases: one folder per box under tests/recommend/ with facts.json, an optional options.json
(hold, to, tp, goal, assume_p2p_hang, assume_quantization) and expected.json: the recommended command and
environment, the plan's target and steps, the option chosen for each decision, the "never" entries shown.

When a manifest change moves a recommendation on purpose, print the differences, review each against its
source, then write them:

    python tests/recommend/update_expected.py          # show what changed
    python tests/recommend/update_expected.py --write  # write expected.json files
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def case_dirs() -> list[Path]:
    return sorted(p for p in HERE.iterdir() if p.is_dir() and (p / "facts.json").is_file())


def cli_args(case: Path, plan_facts: Path | None = None) -> list[str]:
    options = json.loads((case / "options.json").read_text()) if (case / "options.json").is_file() else {}
    args = ["recommend", "--facts", str(case / "facts.json"), "--format", "json"]
    for h in options.get("hold") or []:
        args += ["--hold", h]
    for t in options.get("to") or []:
        args += ["--to", t]
    if options.get("tp"):
        args += ["--tp", str(options["tp"])]
    if options.get("goal"):
        args += ["--goal", options["goal"]]
    if options.get("assume_quantization"):
        args += ["--assume-quantization", options["assume_quantization"]]
    if options.get("assume_p2p_hang"):
        args.append("--assume-p2p-hang")
    if plan_facts is not None:
        args += ["--plan-facts", str(plan_facts)]
    return args


def run_recommend(args: list[str]) -> tuple[int, dict[str, Any]]:
    sys.path.insert(0, str(ROOT))
    from stackcheck.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(args)
    return rc, json.loads(out.getvalue())


def observe(doc: dict[str, Any]) -> dict[str, Any]:
    """What a case pins down, from the JSON document of `stackcheck recommend`."""
    plan = doc.get("plan") or {}
    return {
        "command": doc["command"],
        "env": doc["env"],
        "plan_target": plan.get("target") or None,
        "plan_steps": [s.get("component") for s in plan.get("steps") or []],
        "chosen": {c["decision"]: c["option"] for c in doc["choices"]},
        "never": [n["id"] for n in doc["never"]],
    }


def main() -> int:
    write = "--write" in sys.argv[1:]
    changed = 0
    for case in case_dirs():
        _, doc = run_recommend(cli_args(case))
        got = observe(doc)
        path = case / "expected.json"
        old = json.loads(path.read_text()) if path.is_file() else None
        if old == got:
            continue
        changed += 1
        print(f"== {case.name}")
        for key in got:
            if old is None or old.get(key) != got[key]:
                print(f"  {key}: {json.dumps(None if old is None else old.get(key))} -> {json.dumps(got[key])}")
        if write:
            path.write_text(json.dumps(got, indent=2) + "\n")
    print(f"{changed} case(s) differ" + (" (written)" if write and changed else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
