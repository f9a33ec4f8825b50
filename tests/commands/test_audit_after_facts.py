"""The report's normalization of sources (the ids of inline sources), which follows the facts, compiles no pattern:
the ids were derived by patterns compiled in build_report's loading thread (commands/audit.py _prepare, ~0.55 ms
of CPU off the path after the NVML answer on the 2-core box), and are now read by string methods (iperf14: held
equal to the patterns in tests/knowledge/test_source_id_readings.py), so no run compiles them at all. The report is
the same either way; this guards that nothing compiles a pattern while ids are derived after the facts."""

from __future__ import annotations

import json
import re
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
    assert not [v for v in vars(sources).values() if isinstance(v, lazy_re._Pattern | re.Pattern)]
    late: list[str] = []
    real_compile = re._compile  # type: ignore[attr-defined]

    def compile_(pattern: Any, flags: Any) -> Any:
        if deriving[0]:
            late.append(str(pattern)[:40])
        return real_compile(pattern, flags)

    monkeypatch.setattr(re, "_compile", compile_)
    monkeypatch.setattr(sources, "_INLINE", {})  # (inline sources' ids are kept per process: derived again here)
    deriving = [False]
    derived: list[str] = []
    real_derived = sources.derived_id

    def derived_id(src: Any) -> str:
        if not arrived[0]:
            return real_derived(src)
        deriving[0] = True
        try:
            derived.append(real_derived(src))
        finally:
            deriving[0] = False
        return derived[-1]

    monkeypatch.setattr(sources, "derived_id", derived_id)
    rc = main(["audit", "--assume-gpu", "9.0x2", "--assume-driver", "580.82.07", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert rc in (0, 1) and report["features"]
    assert derived, "no inline source was normalised after the facts: the test shows nothing"
    assert arrived[0] and late == []


def test_compile_all_compiles_each_lazy_pattern_of_a_module() -> None:
    module = type(sources)("stackcheck_test_lazy")
    module.a = lazy_re.lazy(r"a+")  # type: ignore[attr-defined]
    module.b = lazy_re.lazy_bytes(rb"b+")  # type: ignore[attr-defined]
    module.c = "not a pattern"  # type: ignore[attr-defined]
    lazy_re.compile_all(module)
    assert all(getattr(module, n)._compiled is not None for n in ("a", "b"))
    assert module.a.match("aa") and module.b.match(b"b")
