"""NVML started first (issue 21): the command line starts nvmlInit and the reads in a thread before anything
else, and the NVML probe adopts the result. What the probe reports is what it reports when it reads NVML
itself, every fallback included; each start is adopted once; a start nobody adopts is dropped; a hung driver
is still bounded by the probe's timeout; the command line starts it only when the NVML probe will run."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import FakeNVML, load_doc, synthetic_doc
from one_thread import wait_for_one_thread

from stackcheck.cli import main
from stackcheck.driver_words import reads_driver
from stackcheck.probes import nvml_early
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.nvml import NvmlProbe
from stackcheck.probes.runner import run_probes

ROOT = Path(__file__).resolve().parent.parent.parent
TESTS = Path(__file__).resolve().parent.parent


def bare_ctx(tmp_path: Path, nvml: Any = None) -> ProbeContext:
    """No nvidia-smi on PATH, an empty fake root: the fallbacks find nothing, deterministically."""
    return ProbeContext(env={"PATH": ""}, root=tmp_path, path_dirs=[], subprocess_timeout_s=3.0, nvml=nvml)


@pytest.fixture(autouse=True, params=["fork", "thread"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every test twice: the forked reader (Linux, one thread: what a command line gets) and the thread."""
    nvml_early.discard()
    left = wait_for_one_thread() if request.param == "fork" else None
    if request.param == "fork" and (not sys.platform.startswith("linux") or threading.active_count() != 1):
        pytest.skip(f"the forked reader needs Linux and a single-threaded test process (still running: {left})")
    monkeypatch.setattr(nvml_early, "MODE", "auto" if request.param == "fork" else "thread")
    yield request.param
    nvml_early.discard()


def _started_as(mode: str) -> None:
    """The pending session is of the kind the test is for (put back for the probe to take)."""
    session = nvml_early.take()
    assert isinstance(session, nvml_early.ForkSession if mode == "fork" else nvml_early.Session)
    nvml_early._pending.append(session)


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
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, label: str, make: Any
) -> None:
    direct = NvmlProbe().run(bare_ctx(tmp_path, make()))
    monkeypatch.setitem(sys.modules, "pynvml", make())  # what `import pynvml` gives the early thread or child
    nvml_early.start()
    _started_as(mode)
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
    """In the child too: the probe's reason is the same `ClassName: message`."""
    fake = FakeNVML(load_doc("h200-1x.json"))
    fake.nvmlDeviceGetCount = lambda: (_ for _ in ()).throw(RuntimeError("boom"))  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    nvml_early.start()
    facts, outcomes = run_probes(["nvml"], bare_ctx(tmp_path), budget_s=10)
    assert outcomes[0]["status"] == "failed" and outcomes[0]["reason"] == "RuntimeError: boom"
    assert facts["gpus"] == []


@pytest.mark.parametrize("mode", ["fork"], indirect=True)  # only a forked reader can die on its own
def test_a_reader_that_dies_without_an_answer_fails_the_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    fake = FakeNVML(load_doc("h200-1x.json"))
    fake.nvmlInit = lambda: os.kill(os.getpid(), 9)  # type: ignore[method-assign]  # a driver that kills it
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    nvml_early.start()
    _started_as(mode)
    facts, outcomes = run_probes(["nvml"], bare_ctx(tmp_path), budget_s=10)
    assert outcomes[0]["status"] == "failed"
    assert "ended without an answer (killed by signal 9)" in str(outcomes[0]["reason"])
    assert facts["gpus"] == [] and "error" in facts["driver"]


def test_a_second_thread_makes_it_a_thread(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML(load_doc("h200-1x.json")))
    release = threading.Event()
    other = threading.Thread(target=release.wait, args=(10,))
    other.start()
    try:
        nvml_early.start()  # forking now could copy a lock another thread holds: not done
        assert isinstance(nvml_early.take(), nvml_early.Session)
    finally:
        release.set()
        other.join()


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
        # the budget's remainder when the probe started (0.5 s, or a hair less on a loaded machine)
        assert list(facts["driver"]) == ["error"]
        assert re.fullmatch(r"probe timed out after 0\.(5|4\d*)s", facts["driver"]["error"])
    finally:
        release.set()
        nvml_early.discard()  # the command's end: a forked reader still hung is killed
        deadline = time.monotonic() + 10  # and the abandoned probe's thread then ends (EOF on the pipe)
        while threading.active_count() > 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert threading.active_count() == 1


def test_a_command_that_stops_early_leaves_nothing_pending(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML(load_doc("h200-1x.json")))
    started: list[nvml_early.Session | nvml_early.ForkSession] = []
    real_start = nvml_early.start

    def start(usage: bool = False) -> None:
        real_start(usage)
        started.extend(s for s in nvml_early._pending if s not in started)

    monkeypatch.setattr(nvml_early, "start", start)
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--no-such-option"])  # a usage error after NVML was started
    assert exc.value.code == 2
    assert len(started) == 1 and started[0].done.is_set()  # it was started, and waited for (or stopped)
    assert nvml_early.take() is None
    if isinstance(started[0], nvml_early.ForkSession):  # and its child is gone: reaped, or killed and reaped
        with pytest.raises(ChildProcessError):
            os.waitpid(started[0].pid, os.WNOHANG)


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
    assert reads_driver(verb, argv) is reads


def _fake_pynvml_first(tmp_path: Path, cls: str, define: str = "") -> dict[str, str]:
    """A `pynvml` module in tmp_path that is an instance of the tests' fake NVML class `cls` (an H200; `define`
    may define that class), and the environment that puts it first on a child interpreter's path."""
    (tmp_path / "pynvml.py").write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(TESTS)!r})\n"
        "from fake_nvml import FakeNVML, load_doc\n"
        f"{define}"
        f"sys.modules[__name__] = {cls}(load_doc('h200-1x.json'))\n",
        encoding="utf-8",
    )
    return {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}


def test_probe_command_reads_the_driver_through_the_early_start(tmp_path: Path) -> None:
    # a pynvml that is the tests' fake NVML (an H200), first on the path of a real `stackcheck probe`
    env = _fake_pynvml_first(tmp_path, "FakeNVML")
    code = (
        "import json, sys\n"
        "from stackcheck.probes import nvml_early\n"
        "started = []\n"
        "real = nvml_early.start\n"
        "nvml_early.start = lambda **k: (started.append(1), real(**k))[1]\n"
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


def _busy() -> FakeNVML:
    """An H200 with two processes on it (one without a name), and a lower free figure."""
    return FakeNVML(load_doc("h200-1x.json")).run_process(0, 4242, "python3", 8 << 30).run_process(0, 77, None, None)


def _plain(reading: Any) -> Any:
    from stackcheck.probes.gpu_usage import reading_to_plain

    gpus, error, _ = reading_to_plain(reading)
    return gpus, error  # the time it took aside


@pytest.mark.parametrize("probe_first", [True, False], ids=["probe read the answer", "usage reads it"])
def test_the_gates_gpu_usage_comes_from_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, probe_first: bool
) -> None:
    from stackcheck.launch.gate_preflight import EarlyUsage, start_usage
    from stackcheck.probes.gpu_usage import read_gpu_usage

    monkeypatch.setitem(sys.modules, "pynvml", _busy())
    nvml_early.start(usage=True)
    usage = start_usage(None, ["python3", "-m", "sglang.launch_server"])
    if mode == "thread":  # a thread reads no usage: the gate reads it itself, as before
        assert not isinstance(usage, EarlyUsage)
        return
    assert isinstance(usage, EarlyUsage)
    if probe_first:
        NvmlProbe().run(bare_ctx(tmp_path))
    got = usage.get()
    assert _plain(got) == _plain(read_gpu_usage(_busy()))
    assert [p.pid for p in got.gpus[0].processes] == [4242, 77] and got.gpus[0].processes[1].name is None


@pytest.mark.parametrize("mode", ["fork"], indirect=True)  # the thread reads no usage
def test_gpu_usage_of_a_hung_driver_is_bounded(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    from stackcheck.launch.gate_preflight import start_usage
    from stackcheck.probes.nvml import NvmlProbe as Probe

    release = threading.Event()
    monkeypatch.setitem(sys.modules, "pynvml", _Hung(load_doc("h200-1x.json"), release))
    monkeypatch.setattr(Probe, "timeout_s", 0.3)
    nvml_early.start(usage=True)
    usage = start_usage(None, ["python3", "-m", "sglang.launch_server"])
    start = time.monotonic()
    got = usage.get()
    assert time.monotonic() - start < 3
    assert got.gpus == [] and got.error == "NVML: no answer within 0.3 s"


@pytest.mark.parametrize("mode", ["fork"], indirect=True)  # only a forked reader can die on its own
def test_gpu_usage_is_not_read_again_here_when_the_driver_killed_the_child(
    monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Review irev46: a reader the driver killed (a crash in libnvidia-ml) made the gate read GPU usage itself, in
    its own process, where the same crash ended the gate without a word (no decision, no message; shown with a
    pynvml that kills the process that reads it). The gate now says why it has no usage reading; its NVML probe
    failed on the same answer, so the GPUs are unknown to the decision already (fail closed)."""
    from stackcheck.launch.gate_preflight import start_usage

    parent = os.getpid()
    fake = _busy()
    real_init = fake.nvmlInit
    calls: list[int] = []

    def init() -> None:
        calls.append(os.getpid())
        if os.getpid() != parent:
            os.kill(os.getpid(), 9)
        real_init()

    fake.nvmlInit = init  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    nvml_early.start(usage=True)
    got = start_usage(None, ["python3", "-m", "sglang.launch_server"]).get()
    assert calls == []  # (the child's calls are its own): the driver was not started again here
    assert got.gpus == []
    assert got.error is not None and re.fullmatch(
        r"NVML: the NVML reader \(process \d+\) ended without an answer \(killed by signal 9\)", got.error
    ), got.error


@pytest.mark.parametrize("mode", ["fork"], indirect=True)
def test_gpu_usage_is_read_here_when_the_child_answered_without_it(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """A reader that answered with NVML's own failure (no usage reading in its answer) leaves the usage to the
    gate, as without a forked reader: the reason is then NVML's, in the gate's words."""
    from stackcheck.launch.gate_preflight import start_usage
    from stackcheck.probes.gpu_usage import read_gpu_usage

    parent = os.getpid()
    fake = _busy()
    real_count = fake.nvmlDeviceGetCount

    def count() -> int:
        if os.getpid() != parent:
            raise RuntimeError("the reader's own failure")
        return real_count()

    fake.nvmlDeviceGetCount = count  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    nvml_early.start(usage=True)
    got = start_usage(None, ["python3", "-m", "sglang.launch_server"]).get()
    assert _plain(got) == _plain(read_gpu_usage(_busy()))


def test_a_hung_child_does_not_hold_the_commands_output_open(tmp_path: Path) -> None:
    """`out=$(stackcheck audit)` ends when the command ends, even while the driver hangs the child: the child
    holds none of the command's standard streams."""
    hung = "class Hung(FakeNVML):\n    def nvmlInit(self):\n        time.sleep(30)\n"
    env = _fake_pynvml_first(tmp_path, "Hung", hung)
    code = (
        "import os, sys\n"
        "from stackcheck.probes import nvml_early\n"
        "nvml_early.start()\n"
        "session = nvml_early._pending[0]\n"
        "print(type(session).__name__, flush=True)\n"
        "os._exit(0)\n"  # the command leaves at once, its child still in nvmlInit
    )
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path
    )
    assert time.monotonic() - start < 15  # not the child's 30 s: its output pipes were closed in the child
    assert proc.stdout.strip() == "ForkSession"


@pytest.mark.parametrize("mode", ["fork"], indirect=True)  # only a forked reader outlives the command
def test_a_command_killed_while_the_driver_hangs_leaves_no_reader_behind(tmp_path: Path, mode: str) -> None:
    """Review 2: a command ended by SIGTERM (no `finally`, no `discard`) while its child is stuck in nvmlInit
    used to leave the child running, re-parented, for as long as the driver hung; it now dies with the command."""
    hung = "class Hung(FakeNVML):\n    def nvmlInit(self):\n        time.sleep(60)\n"
    env = _fake_pynvml_first(tmp_path, "Hung", hung)
    code = (
        "import os, signal, time\n"
        "from stackcheck.probes import nvml_early\n"
        "nvml_early.start()\n"
        "print(nvml_early._pending[0].pid, flush=True)\n"
        "time.sleep(1.0)\n"  # the child is in nvmlInit by now
        "os.kill(os.getpid(), signal.SIGTERM)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path
    )
    child = int(proc.stdout.split()[0])
    deadline = time.monotonic() + 10
    alive = True
    while alive and time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            state = "gone"
        alive = state not in ("gone", "Z", "X")
        if alive:
            time.sleep(0.05)
    if alive:
        os.kill(child, 9)
    assert not alive, "the NVML reader outlived the command"


@pytest.mark.parametrize("mode", ["fork"], indirect=True)  # the thread reads no usage
def test_gpu_usage_of_a_hung_driver_waits_the_timeout_once(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """Review 2: with no NVML probe reading the child's answer, the gate waited for the pipe (the timeout) and
    then for the answer again (the timeout once more): 12 s on a hung driver where the reason says 6 s."""
    from stackcheck.launch.gate_preflight import start_usage
    from stackcheck.probes.nvml import NvmlProbe as Probe

    release = threading.Event()
    monkeypatch.setitem(sys.modules, "pynvml", _Hung(load_doc("h200-1x.json"), release))
    monkeypatch.setattr(Probe, "timeout_s", 1.0)
    start = time.monotonic()  # (before the fork: the reading waits until 1 s after it, whatever the load before get)
    nvml_early.start(usage=True)
    usage = start_usage(None, ["python3", "-m", "sglang.launch_server"])
    got = usage.get()
    took = time.monotonic() - start
    release.set()
    assert got.error == "NVML: no answer within 1 s"
    assert 0.9 < took < 1.95, took  # twice the timeout before: 2 s is the failure's floor, so any load below it


@pytest.mark.parametrize("mode", ["fork"], indirect=True)  # the pipe is the forked reader's
@pytest.mark.parametrize("closed", ["<&- >&-", ">&- 2>&-", "<&- >&- 2>&-"])
def test_a_command_started_without_its_standard_streams_still_reads_the_driver(
    tmp_path: Path, mode: str, closed: str
) -> None:
    """Review irev46: a command started with standard streams closed (a supervisor's `<&- >&-`) got the reader's pipe
    in one of those slots; the child put /dev/null over it with its own streams and its answer was lost: the NVML
    probe failed ("ended without an answer") on a healthy box, and the gate saw no GPU."""
    env = _fake_pynvml_first(tmp_path, "FakeNVML")
    out = tmp_path / "audit.json"
    proc = subprocess.run(
        ["sh", "-c", f'exec "$0" -m stackcheck audit --format json --output "$1" {closed}', sys.executable, str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    nvml = [p for p in doc["probes"] if p["name"] == "nvml"]
    assert nvml and nvml[0]["status"] == "ok", nvml
    assert [g["name"] for g in doc["facts"]["gpus"]] == ["NVIDIA H200"]


@pytest.mark.parametrize("mode", ["fork"], indirect=True)  # the thread reads no usage
def test_gpu_usage_after_the_probe_gave_up_on_a_hung_driver_waits_no_second_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Review irev46: on a hung driver the gate's NVML probe waited its timeout for the reader's answer (and was
    abandoned), then the gate's GPU-usage reading waited a whole timeout again: `stackcheck gate` took 12.5 s to
    refuse where the reason says 6 s. The usage reading now waits until the timeout since the reader was forked."""
    from stackcheck.launch.gate_preflight import start_usage
    from stackcheck.probes.nvml import NvmlProbe as Probe

    release = threading.Event()
    monkeypatch.setitem(sys.modules, "pynvml", _Hung(load_doc("h200-1x.json"), release))
    monkeypatch.setattr(Probe, "timeout_s", 1.0)
    nvml_early.start(usage=True)
    usage = start_usage(None, ["python3", "-m", "sglang.launch_server"])
    session = nvml_early.take()  # what the NVML probe adopts; its thread is abandoned at the timeout
    assert session is not None

    def probe() -> None:
        with contextlib.suppress(Exception):  # (the reader is killed at the test's end: no answer)
            session.outcome()

    threading.Thread(target=probe, daemon=True).start()
    time.sleep(1.0)  # the probe's timeout, spent
    start = time.monotonic()
    got = usage.get()
    took = time.monotonic() - start
    release.set()
    assert got.error == "NVML: no answer within 1 s"
    assert took < 0.95, took  # a second timeout (1 s) before: the failure's floor


@pytest.mark.parametrize("mode", ["fork"], indirect=True)  # the driver's early start is the forked reader's
def test_a_reader_that_cannot_start_a_thread_still_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Review irev46: the forked reader starts the driver in a thread (Warm); where no thread can be started (a
    container's pids limit, RLIMIT_NPROC, which count threads), the reader ended without an answer and the NVML
    probe failed on a box the thread reader reads. It now reads without the early start."""

    class NoThread:
        def __init__(self) -> None:
            raise RuntimeError("can't start new thread")

    direct = NvmlProbe().run(bare_ctx(tmp_path, FakeNVML(load_doc("h200-1x.json"))))
    monkeypatch.setattr(nvml_early, "Warm", NoThread)
    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML(load_doc("h200-1x.json")))
    nvml_early.start()
    _started_as(mode)
    adopted = NvmlProbe().run(bare_ctx(tmp_path))
    _same(adopted, direct)


@pytest.mark.parametrize("mode", ["fork"], indirect=True)  # (a forked reader's session; no start is made here)
def test_a_usage_reading_woken_by_the_answer_finds_it(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """The NVML probe's thread reads the child's answer (holding the reading lock) and sets `done`; the gate's
    usage reading, waiting on `done` in another thread, wakes at that moment. It must find the answer there: it
    took the answer not yet handed over for no reading, and read GPU usage again in the gate itself (pynvml imported
    into the command, a second NVML start on a GPU box). Here the waking reader runs inside `done.set()` itself, so
    the moment is not left to the scheduler."""
    from stackcheck.probes.gpu_usage import read_gpu_usage

    monkeypatch.setitem(sys.modules, "pynvml", _busy())
    answer = nvml_early._reading(usage=True)
    read_fd, write_fd = os.pipe()
    os.write(write_fd, json.dumps(answer).encode())
    os.close(write_fd)
    session = nvml_early.ForkSession(os.getpid(), read_fd, usage=True)  # (no child of that pid: "already reaped")
    woken: list[Any] = []

    class Handing(threading.Event):
        def set(self) -> None:
            super().set()
            woken.append(session.usage_reading(0.0))  # the gate's thread, woken by this very set()

    session.done = Handing()
    result, reason = session.outcome()  # the NVML probe's thread
    assert reason is None and result.facts["gpus"]
    assert woken and woken[0] is not None, "the usage reading woke to no answer"
    assert _plain(woken[0]) == _plain(read_gpu_usage(_busy()))
