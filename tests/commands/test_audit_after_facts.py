"""A probed audit compiles the patterns of the sources' normalization (the ids of inline sources) in build_report's
loading thread, while the probes wait on the driver (commands/audit.py _prepare), not after the facts: the report's
normalization, which follows the facts, then compiles none of them (~0.55 ms of CPU off the path after the NVML answer
on the 2-core box). The report is the same either way; this guards the placement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import stackcheck.knowledge.sources as sources
from stackcheck import lazy_re
from stackcheck.assembly import pipeline
from stackcheck.cli import main


def test_the_sources_patterns_are_compiled_before_the_facts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path))
    arrived = [False]
    real_assume = pipeline.apply_assumptions

    def assume(*args: Any) -> Any:
        arrived[0] = True
        return real_assume(*args)

    monkeypatch.setattr(pipeline, "apply_assumptions", assume)
    ours = [v for v in vars(sources).values() if isinstance(v, lazy_re._Pattern)]
    assert len(ours) >= 5
    for value in ours:
        monkeypatch.setattr(value, "_compiled", None)  # as in a fresh process
    late: list[str] = []
    real_getattr = lazy_re._Pattern.__getattr__

    def getattr_(self: Any, attr: str) -> Any:
        if arrived[0] and self._compiled is None and any(self is p for p in ours):
            late.append(self._args[0][:40])
        return real_getattr(self, attr)

    monkeypatch.setattr(lazy_re._Pattern, "__getattr__", getattr_)
    monkeypatch.setattr(sources, "_INLINE", {})  # (inline sources' ids are kept per process: derived again here)
    derived: list[str] = []
    real_derived = sources.derived_id

    def derived_id(src: Any) -> str:
        if arrived[0]:
            derived.append(real_derived(src))
        return real_derived(src)

    monkeypatch.setattr(sources, "derived_id", derived_id)
    rc = main(["audit", "--assume-gpu", "9.0x2", "--assume-driver", "580.82.07", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert rc in (0, 1) and report["features"]
    assert derived, "no inline source was normalised after the facts: the test shows nothing"
    assert arrived[0] and late == []
    assert all(p._compiled is not None for p in ours)


def test_compile_all_compiles_each_lazy_pattern_of_a_module() -> None:
    module = type(sources)("stackcheck_test_lazy")
    module.a = lazy_re.lazy(r"a+")  # type: ignore[attr-defined]
    module.b = lazy_re.lazy_bytes(rb"b+")  # type: ignore[attr-defined]
    module.c = "not a pattern"  # type: ignore[attr-defined]
    lazy_re.compile_all(module)
    assert all(getattr(module, n)._compiled is not None for n in ("a", "b"))
    assert module.a.match("aa") and module.b.match(b"b")
