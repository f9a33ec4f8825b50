"""What the gate's decision needs that does not depend on the facts is done in build_report's loading thread, while
the probes wait on the driver (commands/gate.py _prepare): once the facts are in, the decision parses no manifest
document and compiles none of the masking's patterns. The decision is the same either way (bench/record_outputs.py
compares every output); this guards the placement, which only the H200's timings would show otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import stackcheck.facts.versions as versions
import stackcheck.knowledge.sources as sources
import stackcheck.redact as redact
from stackcheck import lazy_re
from stackcheck.assembly import pipeline
from stackcheck.cli import main
from stackcheck.knowledge.loader import Manifests

ROOT = Path(__file__).resolve().parent.parent.parent
FACTS = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
# a model the gate reads (tests/data/models/README.md)
LLAMA3 = str(ROOT / "tests" / "data" / "models" / "llama3-8b")
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", LLAMA3, "--tp", "2"]


def _after_the_facts(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Record the documents parsed and the patterns compiled once build_report has the facts and its loading
    thread is joined (apply_assumptions is the first thing it does then)."""
    seen: dict[str, list[str]] = {"documents": [], "patterns": []}
    arrived = [False]
    real_assume = pipeline.apply_assumptions

    def assume(*args: Any) -> Any:
        arrived[0] = True
        return real_assume(*args)

    monkeypatch.setattr(pipeline, "apply_assumptions", assume)
    real_doc = Manifests.doc

    def doc(self: Manifests, name: str) -> Any:
        if arrived[0] and name in self._unparsed:
            seen["documents"].append(name)
        return real_doc(self, name)

    monkeypatch.setattr(Manifests, "doc", doc)
    for module in (redact, versions, sources):
        for value in list(vars(module).values()):
            if isinstance(value, lazy_re._Pattern):
                monkeypatch.setattr(value, "_compiled", None)  # as in a fresh process
    real_getattr = lazy_re._Pattern.__getattr__

    def getattr_(self: Any, attr: str) -> Any:
        if arrived[0] and self._compiled is None:
            seen["patterns"].append(self._args[0][:40])
        return real_getattr(self, attr)

    monkeypatch.setattr(lazy_re._Pattern, "__getattr__", getattr_)
    return seen


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_decision_parses_and_compiles_nothing_after_the_facts(
    fmt: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = _after_the_facts(monkeypatch)
    rc = main(["gate", "--dry-run", "--format", fmt, "--facts", str(FACTS), "--", *LAUNCH])
    out = capsys.readouterr().out
    assert rc == 0 and out  # the decision was made and printed
    assert seen == {"documents": [], "patterns": []}


def test_a_refused_live_gate_parses_nothing_after_the_facts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The probes run here (the driver and GPUs assumed): the same holds for a live gate."""
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path))
    seen = _after_the_facts(monkeypatch)
    rc = main(["gate", "--dry-run", "--assume-gpu", "9.0x2", "--assume-driver", "580.82.07", "--", *LAUNCH])
    capsys.readouterr()
    assert rc in (0, 1)
    assert seen["documents"] == []
