"""The gate imports the modules its decision uses after the verdicts in build_report's loading thread
(commands/gate.py _import_later), while the probes wait on the driver. A module that cannot be imported there
must change nothing: the decision fails where it uses the module, as it did without the preload."""

from __future__ import annotations

import importlib.abc
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main
from stackcheck.commands import gate as gate_command

ROOT = Path(__file__).resolve().parent.parent.parent
FACTS = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]


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


def test_the_later_modules_exist_and_are_imported_before_the_verdicts_are_returned(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in gate_command._LATER_MODULES:
        assert importlib.util.find_spec(name) is not None, name
    seen: list[set[str]] = []
    from stackcheck.assembly import pipeline

    real = pipeline.build_report

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        seen.append(set(gate_command._LATER_MODULES) - set(sys.modules))
        return out

    for name in gate_command._LATER_MODULES:
        if name.startswith("stackcheck."):
            monkeypatch.delitem(sys.modules, name, raising=False)
            # the package's attribute too: the gate imports the module afresh and binds the new one there, which
            # teardown must undo with sys.modules (else later tests patch one copy while the code reads the other)
            parent, _, child = name.rpartition(".")
            if parent in sys.modules and hasattr(sys.modules[parent], child):
                monkeypatch.delattr(sys.modules[parent], child)
    monkeypatch.setattr(pipeline, "build_report", spy)
    rc, out, _ = _gate(["--facts", str(FACTS), "--", *LAUNCH], capsys)
    assert rc == 0, out
    assert seen == [set()]  # every one of them was loaded by the time the verdicts came back


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
