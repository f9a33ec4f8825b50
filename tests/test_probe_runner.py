"""The probe runner: concurrency, timeouts, failures become data, merge, torch toolkit marking."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from stackcheck.errors import UsageError
from stackcheck.facts import Facts
from stackcheck.probes import PROBES
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult
from stackcheck.probes.runner import mark_torch_toolkit, run_probes

_release = threading.Event()


class HangProbe(Probe):
    name: ClassVar[str] = "hang"
    timeout_s: ClassVar[float] = 0.3
    sections: ClassVar[tuple[str, ...]] = ("driver", "gpus")

    def run(self, ctx: ProbeContext) -> ProbeResult:
        _release.wait(30)
        return ProbeResult({"driver": {"version": "late"}})


class RaiseProbe(Probe):
    name: ClassVar[str] = "raise"
    sections: ClassVar[tuple[str, ...]] = ("system",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        raise RuntimeError("boom\nsecond line")


class OkProbe(Probe):
    name: ClassVar[str] = "ok"
    sections: ClassVar[tuple[str, ...]] = ("cuda_toolkits",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        time.sleep(0.05)
        return ProbeResult({"cuda_toolkits": []})


REGISTRY: dict[str, type[Probe]] = {"hang": HangProbe, "raise": RaiseProbe, "ok": OkProbe}


def test_hang_raise_ok() -> None:
    start = time.monotonic()
    facts, outcomes = run_probes(["hang", "raise", "ok"], ProbeContext(env={}), budget_s=5, registry=REGISTRY)
    elapsed = time.monotonic() - start
    _release.set()
    assert elapsed < 2
    by_name = {o["name"]: o for o in outcomes}
    assert [o["name"] for o in outcomes] == ["hang", "raise", "ok"]
    assert by_name["hang"]["status"] == "timeout"
    assert by_name["hang"]["reason"] == "probe timed out after 0.3s"
    assert facts["driver"] == {"error": "probe timed out after 0.3s"}
    assert facts["gpus"] == []
    assert by_name["raise"]["status"] == "failed"
    assert by_name["raise"]["reason"] == "RuntimeError: boom"
    assert facts["system"] == {"error": "RuntimeError: boom"}
    assert by_name["ok"]["status"] == "ok"
    assert facts["cuda_toolkits"] == []
    assert by_name["ok"]["duration_ms"] >= 40


def test_budget_caps_probe_timeout() -> None:
    _release.clear()
    start = time.monotonic()
    _, outcomes = run_probes(["hang"], ProbeContext(env={}), budget_s=0.1, registry=REGISTRY)
    _release.set()
    assert time.monotonic() - start < 1
    assert outcomes[0]["reason"] == "probe timed out after 0.1s"


def test_unknown_probe_is_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown probe 'nope'"):
        run_probes(["nope"], ProbeContext(env={}), registry=REGISTRY)


def test_registry_names() -> None:
    assert set(PROBES) >= {"nvml", "toolkits", "packages", "system"}
    for name, cls in PROBES.items():
        assert cls.name == name
        assert cls.sections


def test_real_probes_on_a_fake_root(tmp_path: Path) -> None:
    ctx = ProbeContext(env={"PATH": ""}, root=tmp_path, path_dirs=[str(tmp_path)])
    facts, outcomes = run_probes(list(PROBES), ctx)
    assert {o["name"] for o in outcomes} == set(PROBES)
    for section in ("driver", "gpus", "topology", "cuda_toolkits", "packages", "system"):
        assert section in facts
    assert facts["packages"]["torch"] == {"installed": False}


def _facts(torch_cuda: Any, toolkits: list[dict[str, Any]]) -> Facts:
    return {"packages": {"torch": {"installed": True, "cuda": torch_cuda}}, "cuda_toolkits": toolkits}  # type: ignore[typeddict-item]


def test_mark_torch_toolkit() -> None:
    tks: list[dict[str, Any]] = [
        {"path": "/usr/local/cuda", "version": "13.0.88", "source": "/usr/local/cuda"},
        {"path": "/sp/nvidia/cuda_runtime", "version": "12.8.90", "source": "pip"},
        {"path": "/sp/nvidia/cu13", "version": "13.0.96", "source": "pip"},
    ]
    facts = _facts("13.0", tks)
    mark_torch_toolkit(facts)
    assert [t["active_for_torch"] for t in tks] == [False, False, True]
    mark_torch_toolkit(_facts(None, tks))
    assert not any(t["active_for_torch"] for t in tks)
