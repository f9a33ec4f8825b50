"""The gate imports the modules its decision uses after the verdicts in build_report's loading thread
(commands/gate.py _import_later), while the probes wait on the driver. A module that cannot be imported there
must change nothing: the decision fails where it uses the module, as it did without the preload."""

from __future__ import annotations

import importlib.abc
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main
from stackcheck.commands import gate as gate_command

ROOT = Path(__file__).resolve().parent.parent.parent
FACTS = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
# a model the gate reads (tests/data/models/README.md)
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", str(ROOT / "tests" / "data" / "models" / "llama3-8b")]


class _Broken(importlib.abc.MetaPathFinder):
    """Every import of `name` fails, and counts how often it was tried."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.tries = 0

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname == self.name:
            self.tries += 1
            raise ImportError(f"{fullname} is broken here")
        return None


def _break(monkeypatch: pytest.MonkeyPatch, name: str) -> _Broken:
    finder = _Broken(name)
    monkeypatch.delitem(sys.modules, name, raising=False)
    parent, _, child = name.rpartition(".")
    if parent in sys.modules and hasattr(sys.modules[parent], child):
        monkeypatch.delattr(sys.modules[parent], child)
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    return finder


def _gate(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(["gate", "--dry-run", "--format", "json", *args])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


_SPY = """
import json, sys
from stackcheck.assembly import pipeline
from stackcheck.cli import main
from stackcheck.commands import gate as gate_command

wanted = gate_command.later_modules(live=False, advice=True, fmt="json")
seen = []
real = pipeline.build_report

def spy(*args, **kwargs):
    out = real(*args, **kwargs)
    seen.append(sorted(set(wanted) - set(sys.modules)))
    return out

pipeline.build_report = spy
rc = main(["gate", "--dry-run", "--format", "json", "--facts", sys.argv[1], "--", *sys.argv[2:]])
print(json.dumps({"rc": rc, "seen": seen}), file=sys.stderr)
"""


def test_the_later_modules_exist_and_are_imported_before_the_verdicts_are_returned() -> None:
    every = gate_command.later_modules(live=True, advice=True, fmt="text")
    for name in every:
        assert importlib.util.find_spec(name) is not None, name
    wanted = gate_command.later_modules(live=False, advice=True, fmt="json")  # gate --facts --format json
    assert set(every) - set(wanted) == {
        *gate_command._LIVE_MODULES,
        *gate_command._LIVE_ALSO,
        *gate_command._TEXT_MODULES,
    }
    # a fresh interpreter: removing modules from this one would leave two copies of classes such as pep440.Version,
    # whose instances other tests' memos keep (a TypeError comparing them, which is this test's doing, not the gate's)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _SPY, str(FACTS), *LAUNCH], capture_output=True, text=True, env=env, timeout=120
    )
    result = json.loads(done.stderr.strip().splitlines()[-1])
    assert result["rc"] == 0, done.stderr
    assert result["seen"] == [[]]  # every one of them was loaded by the time the verdicts came back


@pytest.mark.parametrize("name", ["stackcheck.knowledge.sources", "stackcheck.launch.recommend"])
def test_an_unimportable_later_module_still_refuses_the_launch(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rc_good, _, _ = _gate(["--facts", str(FACTS), "--", *LAUNCH], capsys)
    assert rc_good == 0
    broken = _break(monkeypatch, name)
    rc, out, err = _gate(["--facts", str(FACTS), "--", *LAUNCH], capsys)
    assert rc == 4, out  # an internal error: refused, never run
    assert "refused" in err and f"{name} is broken here" in err
    assert broken.tries >= 2  # the preload's failure was skipped; the decision's own import failed again


def test_the_rules_texts_are_written_before_the_verdicts_and_are_reevaluates_own(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """gate's loading thread writes reevaluate's text of every rule (pipeline.rules_texts) before the verdicts come
    back, as reevaluate itself writes it: the same keys and texts, so what reevaluate judges again is unchanged."""
    import json

    from stackcheck.assembly import pipeline

    real = pipeline.build_report
    seen: list[dict[Any, str]] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        seen.append(dict(kwargs["manifests"].derived("rules-text")))
        return out

    monkeypatch.setattr(pipeline, "build_report", spy)
    rc, out, _ = _gate(["--facts", str(FACTS), "--", *LAUNCH], capsys)
    assert rc == 0, out
    from stackcheck.knowledge.loader import load

    manifests = load([])
    items = [*manifests.features, *manifests.checks]
    (texts,) = seen
    assert sorted(k[1] for k in texts) == sorted(str(i.get("id")) for i in items)
    assert sorted(texts.values()) == sorted(json.dumps(i.get("rules")) for i in items)


def test_a_gate_of_saved_facts_loads_none_of_the_live_checks_modules() -> None:
    """gate --facts reads no port, no locked-memory limit, no dependency and no GPU usage: the modules of those
    live checks are not imported for it, neither by the preload nor by the decision (a fresh interpreter)."""
    import subprocess

    live_only = [m for m in gate_command._LIVE_MODULES if m.startswith("stackcheck.")]
    code = (
        "import sys\n"
        "from stackcheck.cli import main\n"
        f"rc = main(['gate', '--dry-run', '--facts', {str(FACTS)!r}, '--', *{LAUNCH!r}])\n"
        f"print('LOADED', sorted(m for m in {live_only!r} if m in sys.modules))\n"
    )
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT), "STACKCHECK_PLAN_CACHE": "0"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    line = next(x for x in out.stdout.splitlines() if x.startswith("LOADED"))
    assert line == "LOADED []", out.stdout[-2000:] + out.stderr[-2000:]


def test_a_live_gate_imports_nothing_after_the_facts_arrive(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A live gate of an SGLang launch (this box's probes) has loaded, by the time the verdicts come back, the
    modules its decision imports afterwards on a box without SGLang (the H200 goal's row; with SGLang installed the
    model-architecture check reads its registry then): the preload (later_modules) overlaps them with the driver's
    start. At least those of later_modules are never imported late."""
    from stackcheck.assembly import pipeline

    real = pipeline.build_report
    before: list[set[str]] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        before.append(set(sys.modules))
        return out

    monkeypatch.setattr(pipeline, "build_report", spy)
    for name in [*gate_command._LIVE_MODULES, *gate_command._TEXT_MODULES]:
        if name.startswith("stackcheck."):
            monkeypatch.delitem(sys.modules, name, raising=False)
            parent, _, child = name.rpartition(".")
            if parent in sys.modules and hasattr(sys.modules[parent], child):
                monkeypatch.delattr(sys.modules[parent], child)
    rc = main(["gate", "--dry-run", "--", "python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"])
    capsys.readouterr()
    assert rc in (0, 1)
    (loaded,) = before
    late = set(sys.modules) - loaded
    assert late & set(gate_command.later_modules(live=True, advice=True, fmt="text")) == set(), late
    # beside those, only the planner (a refusal's plan where the plan cache does not hold this box's), the derive
    # registry (the model-architecture check, where the target has SGLang) and the lean Requires-Dist reader (the
    # dependency check, where the target has SGLang) may come after the facts
    late_ok = ("stackcheck.plan", "stackcheck.derive", "stackcheck.launch.preflight.lean_req")
    extra = {m for m in late if m.startswith("stackcheck.") and not m.startswith(late_ok)}
    assert extra == set(), late


_LATE = """
import json, sys
from stackcheck.assembly import pipeline
from stackcheck.cli import main

real = pipeline.build_report
before = []

def spy(*args, **kwargs):
    out = real(*args, **kwargs)
    before.append(set(sys.modules))
    return out

pipeline.build_report = spy
rc = main(["gate", "--dry-run", *sys.argv[1:]])
print(json.dumps({"rc": rc, "late": sorted(set(sys.modules) - before[0])}), file=sys.stderr)
"""


@pytest.mark.parametrize("facts", [True, False], ids=["facts-file", "live"])
def test_a_fresh_gate_imports_none_of_the_preflights_checks_after_the_facts(facts: bool, tmp_path: Path) -> None:
    """In a fresh interpreter (nothing a test imported before), a gate of an SGLang launch has loaded the preflight's
    checks (preflight.gpus, memory, model, a2a: every such decision runs them) and the filled facts' module before
    the verdicts come back: the preload imports them while the probes wait on the driver. Only the planner (a
    refusal's plan, the plan cache off here), the derive registry and the lean Requires-Dist reader (where the
    target has SGLang) may come after the facts."""
    args = ["--facts", str(FACTS), "--", *LAUNCH] if facts else ["--", "python3", "-m", "sglang.launch_server",
                                                                  "--model-path", "x", "--tp", "1"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STACKCHECK_PLAN_CACHE": "0", "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("STACKCHECK_CACHE_DIR", None)
    done = subprocess.run(
        [sys.executable, "-c", _LATE, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    result = json.loads(done.stderr.strip().splitlines()[-1])
    assert result["rc"] in ((0,) if facts else (0, 1)), done.stderr[-2000:]
    late_ok = ("stackcheck.plan", "stackcheck.derive", "stackcheck.launch.preflight.lean_req")
    late = [m for m in result["late"] if m.startswith("stackcheck.") and not m.startswith(late_ok)]
    assert late == [], late
