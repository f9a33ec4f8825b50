"""NVML started first (issue 21): the command line starts nvmlInit and the reads in a thread before anything
else, and the NVML probe adopts the result. What the probe reports is what it reports when it reads NVML
itself, every fallback included; each start is adopted once; a start nobody adopts is dropped; a hung driver
is still bounded by the probe's timeout; the command line starts it only when the NVML probe will run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import FakeNVML, load_doc, synthetic_doc

from stackcheck.cli import _reads_driver, main
from stackcheck.probes import nvml_early
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.nvml import NvmlProbe
from stackcheck.probes.runner import run_probes

ROOT = Path(__file__).resolve().parent.parent.parent
TESTS = Path(__file__).resolve().parent.parent


def bare_ctx(tmp_path: Path, nvml: Any = None) -> ProbeContext:
    """No nvidia-smi on PATH, an empty fake root: the fallbacks find nothing, deterministically."""
    return ProbeContext(env={"PATH": ""}, root=tmp_path, path_dirs=[], subprocess_timeout_s=3.0, nvml=nvml)


@pytest.fixture(autouse=True)
def _nothing_pending() -> Any:
    nvml_early.discard()
    yield
    nvml_early.discard()


def _same(a: Any, b: Any) -> None:
    assert (a.facts, a.status, a.reason) == (b.facts, b.status, b.reason)


def _fakes() -> list[tuple[str, Any]]:
    return [
        ("h200", lambda: FakeNVML(load_doc("h200-1x.json"))),
        ("8x pcie", lambda: FakeNVML(load_doc("sm120-8x-pcie.json"))),
        ("4x nvlink", lambda: FakeNVML(synthetic_doc(4))),
        ("init fails", lambda: FakeNVML(load_doc("h200-1x.json")).fail("nvmlInit", "LibraryNotFound")),
        ("driver mismatch", lambda: FakeNVML(load_doc("h200-1x.json")).fail("nvmlInit", "LibRmVersionMismatch")),
        ("a gpu lost", lambda: FakeNVML(synthetic_doc(4)).lose_gpu(2)),
        ("no name", lambda: FakeNVML(load_doc("h200-1x.json")).fail("nvmlDeviceGetName", "NotSupported", index=0)),
    ]


@pytest.mark.parametrize(("label", "make"), _fakes(), ids=[f[0] for f in _fakes()])
def test_adopted_result_is_what_the_probe_reads_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, label: str, make: Any
) -> None:
    direct = NvmlProbe().run(bare_ctx(tmp_path, make()))
    monkeypatch.setitem(sys.modules, "pynvml", make())  # what `import pynvml` gives the early thread
    nvml_early.start()
    adopted = NvmlProbe().run(bare_ctx(tmp_path))
    _same(adopted, direct)


def test_pynvml_missing_gives_the_same_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError
    direct = NvmlProbe().run(bare_ctx(tmp_path))
    nvml_early.start()
    adopted = NvmlProbe().run(bare_ctx(tmp_path))
    _same(adopted, direct)
    assert adopted.reason is not None and "pynvml" in adopted.reason


def test_an_unexpected_error_is_raised_by_the_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNVML(load_doc("h200-1x.json"))
    fake.nvmlDeviceGetCount = lambda: (_ for _ in ()).throw(RuntimeError("boom"))  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    nvml_early.start()
    facts, outcomes = run_probes(["nvml"], bare_ctx(tmp_path), budget_s=10)
    assert outcomes[0]["status"] == "failed" and "boom" in str(outcomes[0]["reason"])
    assert facts["gpus"] == []


def test_each_start_is_adopted_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML(load_doc("h200-1x.json")))
    nvml_early.start()
    nvml_early.start()  # a second start while one is pending does nothing
    first = NvmlProbe().run(bare_ctx(tmp_path))
    assert nvml_early.take() is None
    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML(load_doc("sm120-8x-pcie.json")))
    second = NvmlProbe().run(bare_ctx(tmp_path))  # reads NVML itself: the other box
    assert len(first.facts["gpus"]) == 1 and len(second.facts["gpus"]) == 8


def test_an_injected_module_is_read_and_the_start_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML(load_doc("h200-1x.json")))
    nvml_early.start()
    got = NvmlProbe().run(bare_ctx(tmp_path, FakeNVML(load_doc("sm120-8x-pcie.json"))))
    assert len(got.facts["gpus"]) == 8
    assert nvml_early.take() is not None


class _Hung(FakeNVML):
    def __init__(self, doc: dict[str, Any], release: threading.Event) -> None:
        super().__init__(doc)
        self._release = release

    def nvmlInit(self) -> None:
        self._release.wait(30)
        super().nvmlInit()


def test_a_hung_driver_is_bounded_by_the_probe_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    monkeypatch.setitem(sys.modules, "pynvml", _Hung(load_doc("h200-1x.json"), release))
    nvml_early.start()
    start = time.monotonic()
    try:
        facts, outcomes = run_probes(["nvml"], bare_ctx(tmp_path), budget_s=0.5)
        assert time.monotonic() - start < 5
        assert outcomes[0]["status"] == "timeout"
        assert facts["driver"] == {"error": "probe timed out after 0.5s"}
    finally:
        release.set()


def test_a_command_that_stops_early_leaves_nothing_pending(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML(load_doc("h200-1x.json")))
    started: list[nvml_early.Session] = []
    real_start = nvml_early.start

    def start() -> None:
        real_start()
        started.extend(s for s in nvml_early._pending if s not in started)

    monkeypatch.setattr(nvml_early, "start", start)
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--no-such-option"])  # a usage error after NVML was started
    assert exc.value.code == 2
    assert len(started) == 1 and started[0].done.is_set()  # it was started, and waited for
    assert nvml_early.take() is None


@pytest.mark.parametrize(
    ("argv", "reads"),
    [
        (["audit"], True),
        (["audit", "--format", "json", "--deep"], True),
        (["probe"], True),
        (["plan", "--want", "fp8-block-gemm"], True),
        (["recommend"], True),
        (["gate", "--dry-run", "--", "python", "-m", "sglang.launch_server", "--facts", "x"], True),
        (["explain", "deepgemm"], True),
        (["--version"], False),
        (["audit", "--facts", "f.json"], False),
        (["audit", "--fact=f.json"], False),
        (["audit", "--host-facts", "h.json"], False),
        (["audit", "--help"], False),
        (["audit", "-h"], False),
        (["audit", "--assume-gpu", "9.0", "--assume-driver", "580"], False),
        (["audit", "--assume-gpu", "9.0"], True),
        (["explain", "deepgemm", "--assume-gpu", "9.0"], False),
        (["gate", "--facts", "f.json", "--", "python"], False),
        (["triage", "log"], False),
        (["fleet", "dir"], False),
        (["diff", "a.json"], False),
        ([], False),
    ],
)
def test_the_command_line_starts_nvml_only_where_the_probe_runs(argv: list[str], reads: bool) -> None:
    verb = next((a for a in argv if not a.startswith("-")), None)
    assert _reads_driver(verb, argv) is reads


def test_probe_command_reads_the_driver_through_the_early_start(tmp_path: Path) -> None:
    # a pynvml that is the tests' fake NVML (an H200), first on the path of a real `stackcheck probe`
    (tmp_path / "pynvml.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(TESTS)!r})\n"
        "from fake_nvml import FakeNVML, load_doc\n"
        "sys.modules[__name__] = FakeNVML(load_doc('h200-1x.json'))\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    code = (
        "import json, sys\n"
        "from stackcheck.probes import nvml_early\n"
        "started = []\n"
        "real = nvml_early.start\n"
        "nvml_early.start = lambda: (started.append(1), real())[1]\n"
        "from stackcheck.cli import main\n"
        "rc = main(['probe', '--format', 'json', '--output', sys.argv[1]])\n"
        "sys.stderr.write(json.dumps({'rc': rc, 'started': len(started)}))\n"
    )
    out = tmp_path / "probe.json"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(out)], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path
    )
    said = json.loads(proc.stderr.strip().splitlines()[-1])
    assert said == {"rc": 0, "started": 1}, proc.stderr
    facts = json.loads(out.read_text())["facts"]
    expected = NvmlProbe().run(bare_ctx(tmp_path, FakeNVML(load_doc("h200-1x.json")))).facts
    assert facts["gpus"] == expected["gpus"]
    assert {k: v for k, v in facts["driver"].items()} == expected["driver"]
    assert facts["topology"] == expected["topology"]
