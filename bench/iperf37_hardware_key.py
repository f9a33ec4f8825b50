"""iperf37 (issue 21): whether the ok-elsewhere answers (plan.planner._upstream_ok, every feature) of a box are a
function of its hardware and of the facts the searched rules read. The write-up box before its upgrade
(tests/cases/writeup-before) is varied in one fact at a time that no feature's rule reads, or that is software, and
the answers compared with the box's own: a row with changed answers is a box that a cache keyed on the hardware and
the rules' read facts alone would answer wrongly (a stack named where none installs, or none named where one does).

    PYTHONPATH=. python3 bench/iperf37_hardware_key.py"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load
from stackcheck.plan import planner
from stackcheck.plan.hypothetical import Engine
from stackcheck.plan.solver import Restrict, Space, Stack, enumerate_stacks, read_box
from stackcheck.verdicts.context import Context

ROOT = Path(__file__).resolve().parent.parent
M = load([], env={})
FEATURES = [str(f["id"]) for f in M.features]
BASE: dict[str, Any] = dict(load_facts_file(str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json")))


def answers(facts: dict[str, Any]) -> dict[str, str | None]:
    ctx = Context(facts=copy.deepcopy(facts), manifests=M)  # type: ignore[arg-type]
    space = Space(ctx, read_box(ctx))
    stacks = sorted(enumerate_stacks(space, Restrict()), key=Stack.key)
    return planner._upstream_ok(space, Engine(ctx), Restrict(), stacks, FEATURES)


def _system(key: str, value: str) -> Callable[[dict[str, Any]], None]:
    return lambda f: f.__setitem__("system", {**f["system"], key: value})


def _packages(sglang: str, torch: str) -> Callable[[dict[str, Any]], None]:
    def change(f: dict[str, Any]) -> None:
        pkgs = dict(f["packages"])
        pkgs["sglang"] = {"installed": True, "version": sglang, "dist_version": sglang}
        pkgs["torch"] = {"installed": True, "version": torch, "dist_version": torch}
        f["packages"] = pkgs

    return change


def main() -> int:
    own = answers(BASE)
    rows: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
        ("system.python 3.9.18", _system("python", "3.9.18")),
        ("system.python 3.14.0", _system("python", "3.14.0")),
        ("system.glibc 2.17", _system("glibc", "2.17")),
        ("system.machine aarch64", _system("machine", "aarch64")),
        ("driver 535.104.05", lambda f: f.__setitem__("driver", {"version": "535.104.05", "cuda": "12.2"})),
        ("driver 590.44.01", lambda f: f.__setitem__("driver", {"version": "590.44.01", "cuda": "13.1"})),
        ("cuda_toolkits none", lambda f: f.__setitem__("cuda_toolkits", [])),
        ("collected_at 2025-06-01", lambda f: f.__setitem__("collected_at", "2025-06-01T00:00:00Z")),
    ]
    sglang = [str(r["version"]) for r in M.releases("sglang")][::4]
    torch = [str(r["version"]) for r in M.releases("torch")][::3]
    rows += [(f"sglang {s}, torch {t} installed", _packages(s, t)) for s, t in itertools.product(sglang, torch)]
    for name, change in rows:
        facts = copy.deepcopy(BASE)
        change(facts)
        got = answers(facts)
        moved = {k: [own[k], got[k]] for k in FEATURES if own[k] != got[k]}
        print(f"{name}: {len(moved)} answers differ" + (f" {json.dumps(moved)[:300]}" if moved else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
