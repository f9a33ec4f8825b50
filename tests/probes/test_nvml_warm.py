"""The forked NVML reader starts the driver itself, beside its imports (issue 21, stackcheck.probes.nvml_early.Warm):
the call pynvml's nvmlInit makes (nvmlInitWithFlags(0) on libnvidia-ml.so.1) is begun in a thread as soon as the
child is forked, pynvml is imported meanwhile, pynvml's own nvmlInit comes after the early start has returned and
the early start is shut down after pynvml's. What the NVML probe reports is unchanged, whatever the early start does
(fails, returns an error, cannot load the library), and a child whose pynvml cannot be imported answers at once even
while the early start hangs. The fake driver library and the fake pynvml write what they are called with to a log
file, since they run in the forked child."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import FakeNVML, load_doc
from one_thread import wait_for_one_thread

from stackcheck.probes import nvml_early
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.nvml import NvmlProbe

TESTS = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the forked reader is Linux's")


@pytest.fixture(autouse=True)
def forked(monkeypatch: pytest.MonkeyPatch) -> Any:
    nvml_early.discard()
    left = wait_for_one_thread()
    if left is not None or threading.active_count() != 1:
        pytest.skip(f"the forked reader needs a single-threaded test process (still running: {left})")
    monkeypatch.setattr(nvml_early, "MODE", "auto")
    yield
    nvml_early.discard()


def bare_ctx(tmp_path: Path, nvml: Any = None) -> ProbeContext:
    return ProbeContext(env={"PATH": ""}, root=tmp_path, path_dirs=[], subprocess_timeout_s=3.0, nvml=nvml)


def _log(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")


class FakeDriver:
    """libnvidia-ml.so.1 as the child's early start sees it: nvmlInitWithFlags / nvmlShutdown, logged."""

    def __init__(self, log: Path, code: int = 0, hold_s: float = 0.0, hang: bool = False) -> None:
        self.log, self.code, self.hold_s, self.hang = log, code, hold_s, hang

    def nvmlInitWithFlags(self, flags: int) -> int:
        _log(self.log, f"driver init {flags}")
        if self.hang:
            time.sleep(60)
        time.sleep(self.hold_s)
        _log(self.log, "driver init returned")
        return self.code

    def nvmlShutdown(self) -> int:
        _log(self.log, "driver shutdown")
        return 0


def _pynvml_file(tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch, wait_for_driver: bool = True) -> None:
    """A `pynvml` first on the path (not imported here: the child imports it), the tests' fake H200 whose import
    waits (at most 5 s) to see the early start begun, and whose nvmlInit / nvmlShutdown are logged."""
    (tmp_path / "pynvml.py").write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(TESTS)!r})\n"
        "from fake_nvml import FakeNVML, load_doc\n"
        f"LOG = {str(log)!r}\n"
        "def log(line):\n"
        "    with open(LOG, 'a', encoding='utf-8') as fh:\n"
        "        fh.write(line + '\\n')\n"
        "deadline = time.monotonic() + 5\n"
        f"while {wait_for_driver!r} and time.monotonic() < deadline:\n"
        "    with open(LOG, encoding='utf-8') as fh:\n"
        "        if 'driver init 0' in fh.read():\n"
        "            break\n"
        "    time.sleep(0.005)\n"
        "log('pynvml imported')\n"
        "class Logged(FakeNVML):\n"
        "    def nvmlInit(self):\n"
        "        log('pynvml init')\n"
        "        super().nvmlInit()\n"
        "    def nvmlShutdown(self):\n"
        "        log('pynvml shutdown')\n"
        "        super().nvmlShutdown()\n"
        "sys.modules[__name__] = Logged(load_doc('h200-1x.json'))\n",
        encoding="utf-8",
    )
    log.write_text("", encoding="utf-8")
    monkeypatch.delitem(sys.modules, "pynvml", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))


def _adopted(tmp_path: Path) -> Any:
    nvml_early.start()
    session = nvml_early.take()
    assert isinstance(session, nvml_early.ForkSession)
    nvml_early._pending.append(session)
    result = NvmlProbe().run(bare_ctx(tmp_path))
    nvml_early.discard(wait_s=10)  # the child has ended (it shuts NVML down after its answer): its log is whole
    return result


def _direct(tmp_path: Path) -> Any:
    return NvmlProbe().run(bare_ctx(tmp_path, FakeNVML(load_doc("h200-1x.json"))))


def _same(a: Any, b: Any) -> None:
    assert (a.facts, a.status, a.reason) == (b.facts, b.status, b.reason)


def test_the_driver_starts_beside_the_import_and_before_pynvmls_init(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "calls.log"
    _pynvml_file(tmp_path, log, monkeypatch)
    monkeypatch.setattr(nvml_early, "_open_driver", lambda: FakeDriver(log, hold_s=0.2))
    _same(_adopted(tmp_path), _direct(tmp_path))
    calls = log.read_text(encoding="utf-8").splitlines()
    # begun before pynvml's import ended (the import waited to see it), returned before pynvml's own start,
    # and shut down after pynvml's: NVML's count of starts ends where it began
    assert calls == [
        "driver init 0",
        "pynvml imported",
        "driver init returned",
        "pynvml init",
        "pynvml shutdown",
        "driver shutdown",
    ]


@pytest.mark.parametrize(
    "driver",
    [
        pytest.param(lambda log: FakeDriver(log, code=9), id="an error code (driver not loaded)"),
        pytest.param(lambda log: (_ for _ in ()).throw(OSError("libnvidia-ml.so.1: cannot open")), id="no library"),
        pytest.param(lambda log: object(), id="no nvmlInitWithFlags"),
    ],
)
def test_an_early_start_that_fails_is_left_to_pynvml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, driver: Any
) -> None:
    log = tmp_path / "calls.log"
    _pynvml_file(tmp_path, log, monkeypatch, wait_for_driver=False)
    monkeypatch.setattr(nvml_early, "_open_driver", lambda: driver(log))
    _same(_adopted(tmp_path), _direct(tmp_path))
    calls = log.read_text(encoding="utf-8").splitlines()
    assert "driver shutdown" not in calls  # nothing to balance: the start did not succeed
    assert calls[-2:] == ["pynvml init", "pynvml shutdown"]


def test_pynvmls_own_init_failure_is_reported_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The early start fails (no driver): pynvml's nvmlInit meets the failure and its words are the fallback's."""
    failing = FakeNVML(load_doc("h200-1x.json")).fail("nvmlInit", "DriverNotLoaded")
    direct = NvmlProbe().run(bare_ctx(tmp_path, failing))
    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML(load_doc("h200-1x.json")).fail("nvmlInit", "DriverNotLoaded"))
    monkeypatch.setattr(nvml_early, "_open_driver", lambda: FakeDriver(tmp_path / "calls.log", code=9))
    _same(_adopted(tmp_path), direct)


def test_no_pynvml_answers_at_once_while_the_early_start_hangs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError
    direct = NvmlProbe().run(bare_ctx(tmp_path))
    monkeypatch.setattr(nvml_early, "_open_driver", lambda: FakeDriver(tmp_path / "calls.log", hang=True))
    start = time.monotonic()
    adopted = _adopted(tmp_path)
    assert time.monotonic() - start < 10  # not the hung start's 60 s
    _same(adopted, direct)
    assert adopted.reason is not None and "pynvml" in adopted.reason


#: what pip writes for the installed `stackcheck` script (pyproject's [project.scripts] entry), in the same shape
CONSOLE_SCRIPT = "import re, sys\nfrom {module} import {func}\nsys.argv[0] = 'stackcheck'\nsys.exit({func}())\n"


def _script_entry() -> str:
    import re

    text = (TESTS.parent / "pyproject.toml").read_text(encoding="utf-8")  # tomllib is 3.11+; the tests run on 3.10
    scripts = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    found = re.search(r'^stackcheck\s*=\s*"([^"]+)"', scripts, re.M)
    assert found, "pyproject.toml names no stackcheck script"
    return found.group(1)


def test_the_installed_script_enters_where_python_m_does() -> None:
    """The console script's entry is the same function `python -m stackcheck` runs, so an installed stackcheck
    (pip, pipx) forks the reader before the command line's imports too (it entered at stackcheck.cli:run before)."""
    assert _script_entry() == "stackcheck.__main__:main"


@pytest.mark.parametrize("how", ["python -m", "console script"])
@pytest.mark.parametrize(
    "verb",
    [
        ["audit", "--format", "json", "--output", "report.json"],
        ["gate", "--dry-run", "--", "python", "-m", "sglang.launch_server", "--model-path", "m"],
    ],
)
def test_python_m_stackcheck_forks_before_the_command_lines_imports(tmp_path: Path, verb: list[str], how: str) -> None:
    """`python -m stackcheck` and the installed script start the reader before stackcheck.cli (and threading) is
    imported: the child, a copy of the command at its fork, says what it holds when it imports pynvml. The facts
    are the fake H200's. Every process that imports pynvml appends a line (the file was overwritten before: a
    second import hid the first, or was hidden by it), and the command itself never does: the
    gate's GPU usage comes from the child's answer (nvml_early.ForkSession._collect hands it over before `done`).

    The gate gates an SGLang launch, whose decision waits for the facts: the NVML probe adopts the child's answer
    before the command ends (bounded by the probe's own timeout). It gated /bin/true before, a decision made
    without the facts: the command could end while its probes still ran in the background, drop the NVML start
    (killing a child that had not imported pynvml yet: no line), and the NVML probe, finding no start to adopt,
    started NVML in the command itself (a second line, after stackcheck.cli): 2 runs in 40 and 1 in 80 under two
    busy loops on the 2-core box."""
    import json
    import os
    import subprocess

    seen = tmp_path / "seen.json"
    (tmp_path / "pynvml.py").write_text(
        "import json, sys\n"
        f"sys.path.insert(0, {str(TESTS)!r})\n"
        "import os\n"
        f"with open({str(seen)!r}, 'a') as fh:\n"
        "    mods = sorted(m for m in ('stackcheck.cli', 'threading', 'argparse') if m in sys.modules)\n"
        "    fh.write(json.dumps([os.getpid(), mods]) + '\\n')\n"
        "from fake_nvml import FakeNVML, load_doc\n"
        "sys.modules[__name__] = FakeNVML(load_doc('h200-1x.json'))\n",
        encoding="utf-8",
    )
    root = TESTS.parent
    module, func = _script_entry().split(":")
    script = tmp_path / "stackcheck-script"
    script.write_text(CONSOLE_SCRIPT.format(module=module, func=func), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{root}", "STACKCHECK_CACHE_DIR": str(tmp_path / "c")}
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", *verb] if how == "python -m" else [sys.executable, str(script), *verb],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode in (0, 1, 3), proc.stderr
    lines = [json.loads(line) for line in seen.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 1 and lines[0][1] == [], lines  # one import (pid, modules), in the forked reader
    if verb[0] == "audit":
        report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
        assert report["facts"]["driver"]["version"] == "580.159.04"


def test_the_gate_leaves_the_server_no_reader_of_ours(tmp_path: Path) -> None:
    """The reader shuts NVML down after its answer (here slowly) and the command does not wait for that; the gate
    reaps it (or stops and reaps one it did not need) before it replaces itself with the server, first run and
    served from its kept decision alike: the server (same pid) has no Python child of ours, not even a zombie. (A
    tool a probe runs, nvcc say, can still be running when a plain command is let through: not looked at here.)"""
    import os
    import subprocess

    if not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children"):
        pytest.skip("no /proc/PID/task/TID/children here")
    (tmp_path / "pynvml.py").write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(TESTS)!r})\n"
        "from fake_nvml import FakeNVML, load_doc\n"
        "class SlowShutdown(FakeNVML):\n"
        "    def nvmlShutdown(self):\n"
        "        time.sleep(0.1)\n"
        "        super().nvmlShutdown()\n"
        "sys.modules[__name__] = SlowShutdown(load_doc('h200-1x.json'))\n",
        encoding="utf-8",
    )
    server = tmp_path / "server.py"
    server.write_text(
        "import os\n"
        "me = os.getpid()\n"
        "tasks = [f'/proc/{me}/task/{t}/children' for t in os.listdir(f'/proc/{me}/task')]\n"
        "kids = [k for t in tasks for k in open(t).read().split()]\n"
        "stats = [open(f'/proc/{k}/stat').read() for k in kids]\n"
        "print([s for s in stats if s.split()[1].startswith('(python')])\n",
        encoding="utf-8",
    )
    root = TESTS.parent
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{root}", "STACKCHECK_CACHE_DIR": str(tmp_path / "c")}
    argv = [sys.executable, "-m", "stackcheck", "gate", "-q", "--", sys.executable, str(server)]
    for _ in range(2):  # the first run, then the decision served from its entry
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
        assert (proc.returncode, proc.stdout) == (0, "[]\n"), proc.stderr


def test_the_answer_does_not_wait_for_nvmls_shutdown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child writes its answer and closes the pipe before it shuts NVML down: a shutdown that takes seconds
    (a driver tearing its client down) is not on the command's path, and the facts are the same."""

    class SlowShutdown(FakeNVML):
        def nvmlShutdown(self) -> None:
            time.sleep(3)
            super().nvmlShutdown()

    monkeypatch.setitem(sys.modules, "pynvml", SlowShutdown(load_doc("h200-1x.json")))
    nvml_early.start()
    start = time.monotonic()
    adopted = NvmlProbe().run(bare_ctx(tmp_path))
    took = time.monotonic() - start
    _same(adopted, _direct(tmp_path))
    assert took < 2.95, took  # the failure waits for the 3 s shutdown
    child = nvml_early._children[0]
    nvml_early.discard(wait_s=10)  # reaped once its shutdown is over
    assert child.reaped


def test_the_driver_library_is_opened_without_the_ctypes_package(tmp_path: Path) -> None:
    """_open_driver goes through _ctypes itself (the driver's start begins ~2 ms sooner than after importing
    ctypes): a function of the library it opens is called with C ints and gives an int back, as through
    ctypes.CDLL; a library that cannot be opened is an OSError. Shown on the C library in a fresh interpreter."""
    import os
    import subprocess

    if not os.path.exists("/lib/x86_64-linux-gnu/libc.so.6") and not os.path.exists("/lib64/libc.so.6"):
        pytest.skip("no glibc here")
    code = (
        "import os, sys\n"
        "from stackcheck.probes import nvml_early\n"
        "nvml_early.DRIVER_LIBRARY = 'libc.so.6'\n"
        "lib = nvml_early._open_driver()\n"
        "assert lib.getpid() == os.getpid() and lib.abs(-7) == 7 and type(lib.abs(-7)) is int\n"
        "assert 'ctypes' not in sys.modules, 'the ctypes package was imported'\n"
        "nvml_early.DRIVER_LIBRARY = 'libstackcheck-absent.so.1'\n"
        "try:\n"
        "    nvml_early._open_driver()\n"
        "except OSError:\n"
        "    print('ok')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(TESTS.parent)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, "ok\n"), proc.stderr


#: what the forked reader never imports, up to its NVML shutdown: ctypes.util's imports (shutil, subprocess, tempfile)
#: and the probe interface's (its context, the file view), which the reader does not use (stackcheck.probes.result)
LATER = ("shutil", "subprocess", "tempfile", "stackcheck.probes.interface", "stackcheck.readers.fsview")


def test_the_reader_imports_pynvml_without_ctypes_util_behind_it(tmp_path: Path) -> None:
    """The forked child puts a stand-in for ctypes.util before it imports pynvml (nvidia-ml-py imports find_library
    from it and never calls it on Linux): the child's pynvml import then brings in neither shutil nor subprocess nor
    tempfile, a find_library it does call answers as the real one does, and the facts are the fake H200's. Nor does
    the rest of its reading, to its NVML shutdown, import them or the probe interface."""
    import ctypes.util
    import json
    import os
    import subprocess

    seen, later = tmp_path / "seen.json", tmp_path / "later.json"
    (tmp_path / "pynvml.py").write_text(
        "import json, os, sys\n"
        "from ctypes.util import find_library\n"
        f"sys.path.insert(0, {str(TESTS)!r})\n"
        "heavy = sorted(m for m in ('shutil', 'subprocess', 'tempfile') if m in sys.modules)\n"
        f"with open({str(seen)!r}, 'w') as fh:\n"
        "    json.dump({'heavy': heavy}, fh)\n"
        "from fake_nvml import FakeNVML, load_doc\n"
        "class Seen(FakeNVML):\n"
        "    def nvmlShutdown(self):\n"  # (in the child, after its answer: what the whole reading imported)
        "        super().nvmlShutdown()\n"
        "        loaded = sorted(m for m in LATER if m in sys.modules)\n"
        f"        with open({str(later) + '.part'!r}, 'w') as fh:\n"
        "            json.dump({'loaded': loaded, 'libc': find_library('c')}, fh)\n"
        f"        os.replace({str(later) + '.part'!r}, {str(later)!r})\n"
        f"LATER = {LATER!r}\n"
        "sys.modules[__name__] = Seen(load_doc('h200-1x.json'))\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{TESTS.parent}", "STACKCHECK_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "audit", "--format", "json", "--output", "report.json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert json.loads(seen.read_text(encoding="utf-8")) == {"heavy": []}
    deadline = time.monotonic() + 10  # (written by the child after its answer)
    while not later.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert json.loads(later.read_text(encoding="utf-8")) == {"loaded": [], "libc": ctypes.util.find_library("c")}
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["facts"]["driver"]["version"] == "580.159.04"


def test_the_ctypes_util_stand_in_serves_the_real_module() -> None:
    """In a fresh interpreter: after the stand-in, nvidia-ml-py (where installed) imports without shutil or
    subprocess; its find_library, `import ctypes.util` and any public name of the module then answer from the real
    ctypes.util; dunder lookups (the import system's) do not load it; a ctypes.util already imported is kept."""
    import os
    import subprocess

    code = (
        "import sys\n"
        "from stackcheck.probes import nvml_early\n"
        "nvml_early._defer_ctypes_util()\n"
        "stand_in = sys.modules['ctypes.util']\n"
        "try:\n"
        "    import pynvml\n"
        "except ImportError:\n"
        "    from ctypes.util import find_library\n"
        "else:\n"
        "    find_library = pynvml.find_library\n"
        "assert not hasattr(stand_in, '__path__')\n"
        "assert 'shutil' not in sys.modules and 'subprocess' not in sys.modules, 'loaded early'\n"
        "libc = find_library('c')\n"
        "import ctypes.util\n"
        "assert ctypes.util is not stand_in and sys.modules['ctypes.util'] is ctypes.util\n"
        "assert ctypes.util.__file__.endswith('util.py') and libc == ctypes.util.find_library('c')\n"
        "assert stand_in.find_library('c') == libc and stand_in.find_library is not ctypes.util.find_library\n"
        "nvml_early._defer_ctypes_util()\n"
        "assert sys.modules['ctypes.util'] is ctypes.util\n"
        "print(libc)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(TESTS.parent)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    import ctypes.util

    assert proc.stdout == f"{ctypes.util.find_library('c')}\n"
