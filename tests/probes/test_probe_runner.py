"""The probe runner: concurrency, timeouts, failures become data, merge, torch toolkit marking."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from stackcheck.errors import UsageError
from stackcheck.probes import PROBES
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult
from stackcheck.probes.runner import mark_torch_toolkit, run_probes

if TYPE_CHECKING:
    from collections.abc import Iterator

    from stackcheck.facts.model import Facts

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


@pytest.fixture
def hang() -> Iterator[None]:
    """HangProbe hangs during the test (the event cleared: a test run before it that released its own hung thread
    left it set, and the probe then answered at once, whatever the order) and is released after it."""
    _release.clear()
    try:
        yield
    finally:
        _release.set()


@pytest.mark.usefixtures("hang")
def test_hang_raise_ok() -> None:
    start = time.monotonic()
    facts, outcomes = run_probes(["hang", "raise", "ok"], ProbeContext(env={}), budget_s=5, registry=REGISTRY)
    elapsed = time.monotonic() - start
    assert elapsed < 4.5  # the failure waits for the 5 s budget (or the hung probe's 30 s); 0.3 s when right
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


@pytest.mark.usefixtures("hang")
def test_budget_caps_probe_timeout() -> None:
    start = time.monotonic()
    _, outcomes = run_probes(["hang"], ProbeContext(env={}), budget_s=0.1, registry=REGISTRY)
    assert time.monotonic() - start < 10  # the failure waits for the hung probe (30 s); the cap: the reason
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


# -- waves: a probe starts when the probes producing its needs are done ----------------------------------

_hold = threading.Event()


class ProduceProbe(Probe):
    name: ClassVar[str] = "produce"
    sections: ClassVar[tuple[str, ...]] = ("python",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        time.sleep(0.2)
        return ProbeResult({"python": {"sys_path": ["/x"]}})


class ConsumeProbe(Probe):
    name: ClassVar[str] = "consume"
    sections: ClassVar[tuple[str, ...]] = ("packages",)
    needs: ClassVar[tuple[str, ...]] = ("python",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        seen = ctx.facts.get("python")
        return ProbeResult({"packages": {"seen": seen, "deadline_set": ctx.deadline is not None}})


class SlowDriverProbe(Probe):
    name: ClassVar[str] = "slowdriver"
    timeout_s: ClassVar[float] = 1.5
    sections: ClassVar[tuple[str, ...]] = ("driver",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        _hold.wait(30)
        return ProbeResult({"driver": {}})


class HangProducer(Probe):
    name: ClassVar[str] = "hangproducer"
    timeout_s: ClassVar[float] = 30
    sections: ClassVar[tuple[str, ...]] = ("python",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        _hold.wait(30)
        return ProbeResult({"python": {}})


class CycleA(Probe):
    name: ClassVar[str] = "cycle_a"
    sections: ClassVar[tuple[str, ...]] = ("a",)
    needs: ClassVar[tuple[str, ...]] = ("b",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        return ProbeResult({})


class CycleB(CycleA):
    name: ClassVar[str] = "cycle_b"
    sections: ClassVar[tuple[str, ...]] = ("b",)
    needs: ClassVar[tuple[str, ...]] = ("a",)


WAVES: dict[str, type[Probe]] = {
    p.name: p for p in (ProduceProbe, ConsumeProbe, SlowDriverProbe, HangProducer, CycleA, CycleB)
}


def test_a_probe_waits_for_its_needs_and_not_for_a_slow_driver() -> None:
    _hold.clear()
    start = time.monotonic()
    facts, outcomes = run_probes(["slowdriver", "consume", "produce"], ProbeContext(env={}), 5, WAVES)
    _hold.set()
    by = {o["name"]: o for o in outcomes}
    assert [o["name"] for o in outcomes] == ["slowdriver", "consume", "produce"]
    assert facts["packages"] == {"seen": {"sys_path": ["/x"]}, "deadline_set": True}
    assert by["consume"]["status"] == "ok" and by["slowdriver"]["status"] == "timeout"
    assert 1.4 < time.monotonic() - start < 4.5  # the driver's own timeout (1.5 s), not the 5 s budget


def test_a_producer_that_eats_the_budget_leaves_no_time_to_its_consumers() -> None:
    _hold.clear()
    start = time.monotonic()
    facts, outcomes = run_probes(["hangproducer", "consume"], ProbeContext(env={}), 0.4, WAVES)
    _hold.set()
    assert time.monotonic() - start < 10  # not the producer's own 30 s timeout (the 0.4 s budget: the reasons)
    by = {o["name"]: o for o in outcomes}
    assert by["hangproducer"]["status"] == "timeout"
    assert by["consume"]["status"] == "timeout" and "no time left" in str(by["consume"]["reason"])
    assert facts["python"] == {"error": "probe timed out after 0.4s"}


def test_waves_of_the_real_registry_and_no_cycles() -> None:
    from stackcheck.probes import DEEP_PROBES, DEFAULT_PROBES
    from stackcheck.probes.runner import waves

    produced = {s for cls in PROBES.values() for s in cls.sections}
    for name, cls in PROBES.items():
        assert set(cls.needs) <= produced, f"{name} needs a section no probe produces"
        assert not set(cls.needs) & set(cls.sections), name
    assert set(DEFAULT_PROBES) | set(DEEP_PROBES) == set(PROBES)  # nothing registered and never run
    got = waves([*DEFAULT_PROBES, *DEEP_PROBES], PROBES)
    assert got[0] == ["python", "nvml", "cuda_libs", "pcie", "container_toolkit", "docker_daemon"]
    assert set(got[1]) == {"toolkits", "packages", "system"}
    assert set(got[2]) == {
        "source_tables", "derived", "environments", "binaries", "libs", "jit", "kernel_symbols", "flashinfer_cubins",
    }  # fmt: skip
    with pytest.raises(ValueError, match="depends on itself"):
        waves(["cycle_a", "cycle_b"], WAVES)


@pytest.mark.parametrize("root", ["/", "//", "/.", "ROOT", "ROOT/"])
@pytest.mark.parametrize("path", ["/proc/driver/nvidia/version", "usr/lib", "/"])
def test_rooted_text_is_rooted_as_a_string(tmp_path: Path, root: str, path: str) -> None:
    # rooted_text spells with os.path what rooted spells with pathlib (the nvml fallback opens it at start-up)
    ctx = ProbeContext(env={}, root=root.replace("ROOT", str(tmp_path)))
    assert os.path.normpath(ctx.rooted_text(path)) == os.path.normpath(str(ctx.rooted(path)))


def test_ready_probes_that_others_wait_on_start_first_and_facts_merge_in_names_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The real registry's order of start: among the probes ready together, the one more probes need goes
    first (packages before toolkits in the second wave); the facts and outcomes keep the order of `names`."""
    from stackcheck.probes import DEEP_PROBES, DEFAULT_PROBES
    from stackcheck.probes.runner import _dependencies, _start_order

    names = [*DEFAULT_PROBES, *DEEP_PROBES]
    rank = dict(zip(names, _start_order(_dependencies([PROBES[n] for n in names])), strict=True))
    assert min(names, key=rank.__getitem__) == "python"
    assert rank["packages"] < rank["toolkits"] < rank["system"]
    assert rank["nvml"] < rank["cuda_libs"] < rank["pcie"]  # nothing waits on these: the order given

    started: list[str] = []  # in the order the runner starts the threads (not the order they get the lock)

    class Recording(threading.Thread):
        def start(self) -> None:
            if self.name.startswith("probe-"):
                started.append(self.name.removeprefix("probe-"))
            super().start()

    monkeypatch.setattr(threading, "Thread", Recording)

    def recording(name: str, sections: tuple[str, ...], needs: tuple[str, ...]) -> type[Probe]:
        class Stub(Probe):
            def run(self, ctx: ProbeContext) -> ProbeResult:
                return ProbeResult({s: {"by": name} for s in sections})

        Stub.name, Stub.sections, Stub.needs = name, sections, needs
        return Stub

    registry = {n: recording(n, PROBES[n].sections, PROBES[n].needs) for n in names}
    facts, outcomes = run_probes(names, ProbeContext(env={}), 5, registry)
    assert started.index("packages") < started.index("toolkits") < started.index("system")
    assert [o["name"] for o in outcomes] == names
    sections = [s for n in names for s in PROBES[n].sections]
    assert [k for k in facts if k in sections] == list(dict.fromkeys(sections))


def test_the_lazy_table_agrees_with_the_probe_classes() -> None:
    """The runner orders the waves from stackcheck.probes' table, without the classes: the table must say what
    each class says (its name, sections and needs)."""
    from stackcheck.probes import lazy_registry

    lazy = lazy_registry()
    assert set(lazy) == set(PROBES)
    for name, spec in lazy.items():
        cls = spec.load()
        assert cls is PROBES[name]
        assert (spec.name, spec.sections, spec.needs) == (cls.name, cls.sections, cls.needs), name
        assert (spec.starts_first, spec.prepares) == (cls.starts_first, cls.prepares), name


def test_the_nvml_probe_starts_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21: the NVML probe only waits for the forked reader's answer: it starts before the other first-wave
    probes (then the target's Python, which the most probes wait on), so the answer is read as soon as it is there."""
    from stackcheck.probes import DEFAULT_PROBES, lazy_registry

    started: list[str] = []

    class Recording(threading.Thread):
        def start(self) -> None:
            if self.name.startswith("probe-"):
                started.append(self.name.removeprefix("probe-"))
            super().start()

    monkeypatch.setattr(threading, "Thread", Recording)
    lazy = lazy_registry()

    def stub(name: str) -> type[Probe]:
        class Stub(Probe):
            def run(self, ctx: ProbeContext) -> ProbeResult:
                return ProbeResult({s: {"by": name} for s in lazy[name].sections})

        Stub.name, Stub.sections, Stub.needs = name, lazy[name].sections, lazy[name].needs
        Stub.starts_first = lazy[name].starts_first
        return Stub

    names = list(DEFAULT_PROBES)
    run_probes(names, ProbeContext(env={}), 5, {n: stub(n) for n in names})
    assert started[:4] == ["nvml", "python", "cuda_libs", "pcie"]


def test_the_first_wave_starts_before_the_later_waves_modules_are_imported(tmp_path: Path) -> None:
    """Issue 21: the runner imports a probe's module when it starts the probe, so the first wave (the target's
    Python, NVML) is not held behind importing every probe module. In a fresh interpreter, when the first probe
    thread starts, no module of a later wave (packages, toolkits, jit, ...) is imported yet."""
    import subprocess
    import sys

    code = r"""
import sys, threading
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.runner import run_probes
from stackcheck.probes import DEFAULT_PROBES
seen = {}
real_start = threading.Thread.start
def start(self):
    if self.name.startswith("probe-") and not seen:
        seen["at"] = sorted(m for m in sys.modules if m.startswith("stackcheck.probes."))
    real_start(self)
threading.Thread.start = start
root = sys.argv[1]
run_probes([n for n in DEFAULT_PROBES if n != "nvml"], ProbeContext(env={"PATH": ""}, root=root, path_dirs=[root]))
print("\n".join(seen["at"]))
"""
    import stackcheck

    tree = os.path.dirname(os.path.dirname(stackcheck.__file__))
    env = {**os.environ, "PYTHONPATH": tree}
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], env=env, capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    later = {"packages", "toolkits", "system", "source_tables", "derived", "environments", "jit", "kernel_symbols"}
    assert "stackcheck.probes.python_env" in out
    assert not {f"stackcheck.probes.{m}" for m in later} & set(out), out


def test_prepare_runs_when_the_first_wave_starts() -> None:
    """Issue 21: a probe with `prepares` (the toolkits probe) has its prepare() called beside the first wave, before
    the probe it needs is done, on the same object whose run() comes later; a prepare that raises changes nothing."""
    import threading as th

    release = th.Event()
    log: list[str] = []

    class Slow(Probe):
        name, sections = "slow", ("python",)

        def run(self, ctx: ProbeContext) -> ProbeResult:
            release.wait(5)
            return ProbeResult({"python": {}})

    class Later(Probe):
        name, sections, needs, prepares = "later", ("cuda_toolkits",), ("python",), True

        def prepare(self, ctx: ProbeContext) -> None:
            log.append("prepare")
            self.prepared = True
            release.set()

        def run(self, ctx: ProbeContext) -> ProbeResult:
            log.append(f"run prepared={getattr(self, 'prepared', False)}")
            return ProbeResult({"cuda_toolkits": []})

    class Broken(Later):
        name, sections = "broken", ("jit",)

        def prepare(self, ctx: ProbeContext) -> None:
            raise RuntimeError("no")

        def run(self, ctx: ProbeContext) -> ProbeResult:
            return ProbeResult({"jit": {"ok": True}})

    reg: dict[str, type[Probe]] = {"slow": Slow, "later": Later, "broken": Broken}
    facts, outcomes = run_probes(["slow", "later", "broken"], ProbeContext(env={}), 5, reg)
    assert log == ["prepare", "run prepared=True"]
    assert [o["status"] for o in outcomes] == ["ok", "ok", "ok"]
    assert facts["jit"] == {"ok": True}


def test_a_probe_whose_module_fails_to_import_is_a_failed_probe_with_a_reason() -> None:
    """iperf11 imports each probe's module when the probe starts, in the runner's own thread: a module that fails to
    import (or a probe class that fails to build) is a failed probe whose sections carry the reason, never a traceback
    out of the audit; the probes that need its sections still run."""
    from stackcheck.probes import LazyProbe

    class NoBuild(Probe):
        name, sections = "nobuild", ("gpus",)

        def __init__(self) -> None:
            raise RuntimeError("cannot build\nsecond line")

        def run(self, ctx: ProbeContext) -> ProbeResult:
            return ProbeResult({})

    class After(Probe):
        name, sections, needs = "after", ("jit",), ("system",)

        def run(self, ctx: ProbeContext) -> ProbeResult:
            return ProbeResult({"jit": {"system": ctx.facts.get("system")}})

    reg: dict[str, type[Probe] | LazyProbe] = {
        "missing": LazyProbe("missing", "no_such_probe_module", "Missing", ("system",), ()),
        "nobuild": NoBuild,
        "after": After,
    }
    facts, outcomes = run_probes(["missing", "nobuild", "after"], ProbeContext(env={}), 5, reg)
    by_name = {o["name"]: o for o in outcomes}
    assert [o["name"] for o in outcomes] == ["missing", "nobuild", "after"]
    assert by_name["missing"]["status"] == "failed"
    assert "could not be loaded" in str(by_name["missing"]["reason"])
    assert "no_such_probe_module" in str(by_name["missing"]["reason"])
    assert by_name["nobuild"]["status"] == "failed"
    assert by_name["nobuild"]["reason"] == "probe could not be loaded: RuntimeError: cannot build"
    assert facts["system"] == {"error": by_name["missing"]["reason"]}
    assert facts["gpus"] == []  # (a list section: no sentinel entry)
    assert by_name["after"]["status"] == "ok"
    assert facts["jit"] == {"system": {"error": by_name["missing"]["reason"]}}
