"""Snapshot every feature verdict (and, for the cases, every stack check) the manifests give, and diff two snapshots.

Two sets are recorded:

- `cases`: `audit --facts` on every scenario under tests/cases/* and tests/realworld/* (the facts file, or
  the one options.json names), each feature's status (with its effect when blocked) and each stack check's status;
- `matrix`: every feature on every architecture of architectures.json (8 GPUs, TP 8 and TP 1) against every
  SGLang release of components.json with that release's pinned dependencies (as `stackcheck explain` builds
  them): the claims the manifests make about (architecture, release) pairs.

    python bench/verdict_diff.py snapshot before.json [CASES_ROOT]  # record (cases from CASES_ROOT/tests/...)
    python bench/verdict_diff.py diff before.json after.json          # list what changed, with a count

Run it with the source first on the path: `PYTHONPATH=$PWD .venv/bin/python bench/verdict_diff.py ...`. To
measure an older state, export it (`git archive REV | tar -x -C /tmp/old`) and run this script with
`PYTHONPATH=/tmp/old` and CASES_ROOT set to this checkout, so both states judge the same cases.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _label(v: dict[str, Any]) -> str:
    return str(v.get("status")) + ("/" + str(v["effect"]) if v.get("effect") else "")


def case_verdicts(root: Path) -> dict[str, str]:
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import build_report
    from stackcheck.errors import StackcheckError

    out: dict[str, str] = {}
    for base in (root / "tests" / "cases", root / "tests" / "realworld"):
        if not base.is_dir():
            continue
        for case in sorted(p for p in base.iterdir() if p.is_dir()):
            opts_file = case / "options.json"
            extra = json.loads(opts_file.read_text()) if opts_file.is_file() else {}
            facts = root / extra.pop("facts_file") if "facts_file" in extra else case / "facts.json"
            if not facts.is_file():
                continue
            extra = {k: v for k, v in extra.items() if k in Options.__dataclass_fields__}
            name = f"{base.name}/{case.name}"
            try:
                report, _ = build_report(Options(facts_file=str(facts), **extra))
            except (StackcheckError, ValueError, KeyError, TypeError) as exc:  # an older state may not read new facts
                out[f"{name} (error)"] = f"{type(exc).__name__}: {exc}"
                continue
            for f in report["features"]:
                out[f"{name} {f['id']}"] = _label(f)
            for c in report.get("checks") or []:
                out[f"{name} check {c['id']}"] = str(c.get("status"))
    return out


def matrix_verdicts() -> dict[str, str]:
    from stackcheck.commands.explain import release_facts
    from stackcheck.knowledge.loader import load
    from stackcheck.verdicts.context import Context, assumed_gpus
    from stackcheck.verdicts.engine import evaluate_feature

    manifests = load([])
    ccs = [str(a.get("compute_capability")) for a in manifests.architectures]
    out: dict[str, str] = {}
    for cc in ccs:
        for interconnect in ("nvlink", "pcie"):
            base = {
                "gpus": assumed_gpus(manifests, f"{cc}x8"),
                "topology": {
                    "interconnect": interconnect,
                    "same_model": True,
                    "gpu_count": 8,
                    "p2p": "all" if interconnect == "nvlink" else "none",
                },
            }
            for rel in manifests.releases("sglang"):
                version = str(rel.get("version"))
                facts = release_facts(base, manifests, version, None, None)
                for tp in (1, 8):
                    ctx = Context(facts=facts, manifests=manifests, launch={"tp": tp})  # type: ignore[arg-type]
                    for feature in manifests.features:
                        v = evaluate_feature(feature, ctx)
                        out[f"cc {cc} {interconnect} tp{tp} sglang {version} {feature.get('id')}"] = _label(v)
    return out


def main(argv: list[str]) -> int:
    if len(argv) in (2, 3) and argv[0] == "snapshot":
        root = Path(argv[2]).resolve() if len(argv) == 3 else ROOT
        doc = {"cases": case_verdicts(root), "matrix": matrix_verdicts()}
        Path(argv[1]).write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")
        print(f"{len(doc['cases'])} case verdicts, {len(doc['matrix'])} matrix verdicts -> {argv[1]}")
        return 0
    if len(argv) == 3 and argv[0] == "diff":
        old, new = (json.loads(Path(p).read_text()) for p in argv[1:])
        for part in ("cases", "matrix"):
            keys = sorted(set(old.get(part, {})) | set(new.get(part, {})))
            changed = [k for k in keys if old[part].get(k) != new[part].get(k)]
            print(f"== {part}: {len(changed)} of {len(keys)} verdicts changed")
            for k in changed:
                print(f"{k}: {old[part].get(k)} -> {new[part].get(k)}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
