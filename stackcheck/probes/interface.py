"""The probe interface: a context that says where to look, a Probe base class, and its result.

A probe reads one part of the box and returns facts sections (see stackcheck/facts.py). It never raises on
purpose: every situation it can meet (missing library, no permission, a hung tool) becomes data with a
reason. The runner (runner.py) still guards against the unexpected.
"""

from __future__ import annotations

import os
import signal
import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

ProbeStatus = Literal["ok", "partial", "failed", "skipped"]


def _environ_snapshot() -> dict[str, str]:
    return dict(os.environ)


@dataclass
class ProbeContext:
    """Where and how probes look. Tests fake a filesystem with `root` and NVML with `nvml`."""

    env: Mapping[str, str] = field(default_factory=_environ_snapshot)
    root: Path = Path("/")  # prefix for /usr/local/cuda*, /proc, /etc/os-release, /.dockerenv
    path_dirs: list[str] | None = None  # sys.path entries searched for packages; None means sys.path
    subprocess_timeout_s: float = 3.0
    nvml: Any | None = None  # an NVML module (pynvml-shaped); None: the probe imports pynvml itself

    def rooted(self, path: str | Path) -> Path:
        """An absolute box path ("/usr/local/cuda") as seen through `root`."""
        p = Path(path)
        if self.root == Path("/"):
            return p
        return self.root / str(p).lstrip("/")

    def unrooted(self, path: str | Path) -> str:
        """The box path of a path under `root` (the inverse of `rooted`); other paths unchanged."""
        p = Path(path)
        if self.root == Path("/"):
            return str(p)
        try:
            return "/" + str(p.relative_to(self.root)).lstrip(".")
        except ValueError:
            return str(p)

    def search_dirs(self) -> list[str]:
        return list(self.path_dirs) if self.path_dirs is not None else list(sys.path)


@dataclass
class ProbeResult:
    """What a probe found: top-level facts sections, a status and, unless ok, a one-line reason."""

    facts: dict[str, Any]
    status: ProbeStatus = "ok"
    reason: str | None = None


class Probe(ABC):
    """One probe. Subclasses set `name`, `timeout_s` and `sections` (the facts sections they set)."""

    name: ClassVar[str]
    timeout_s: ClassVar[float] = 5.0
    sections: ClassVar[tuple[str, ...]] = ()
    list_sections: ClassVar[frozenset[str]] = frozenset({"gpus", "cuda_toolkits"})

    @abstractmethod
    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Read the box; never raise on purpose."""

    def failure_facts(self, reason: str) -> dict[str, Any]:
        """The sections this probe would have set, each present with `error` (used when it fails or hangs).

        Object sections become `{"error": reason}`. List sections (gpus, cuda_toolkits) become `[]`: a
        sentinel entry would be counted as a GPU or a toolkit; the reason is in the probe outcome and, for
        the NVML probe, in driver.error and topology.error (topology.gpu_count null means unknown).
        """
        out: dict[str, Any] = {}
        for section in self.sections:
            out[section] = [] if section in self.list_sections else {"error": reason}
        return out


class CommandTimeout(Exception):
    """A subprocess ran past its timeout and was killed (with its process group)."""


#: the most of a tool's stdout or stderr that is kept; the rest is read and dropped (a tool that prints
#: without end cannot fill memory before its timeout)
OUTPUT_CAP = 1 << 20


def run_command(argv: Sequence[str], timeout_s: float, env: Mapping[str, str] | None = None) -> tuple[int, str, str]:
    """Run a command without a shell and return (returncode, stdout, stderr), each output capped.

    The command runs in its own session so that on timeout its whole process group is killed: a wrapper
    script's children cannot keep the pipes open past the timeout. Raises CommandTimeout or OSError.
    """
    import subprocess  # only the probes that run tools pay for it
    import threading

    run_env = dict(env) if env is not None else None
    if run_env is not None:
        run_env.setdefault("LC_ALL", "C")
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=run_env,
        start_new_session=True,
    )
    bufs = (bytearray(), bytearray())

    def drain(fd: int, buf: bytearray) -> None:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            if len(buf) < OUTPUT_CAP:
                buf += chunk[: OUTPUT_CAP - len(buf)]

    assert proc.stdout is not None and proc.stderr is not None
    readers = [
        threading.Thread(target=drain, args=(proc.stdout.fileno(), bufs[0]), daemon=True),
        threading.Thread(target=drain, args=(proc.stderr.fileno(), bufs[1]), daemon=True),
    ]
    for t in readers:
        t.start()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.wait()
        raise CommandTimeout(f"{Path(argv[0]).name} timed out after {timeout_s:g}s") from None
    finally:
        for t in readers:
            t.join(timeout=1.0)
        proc.stdout.close()
        proc.stderr.close()
    return (
        proc.returncode,
        bytes(bufs[0]).decode("utf-8", errors="replace"),
        bytes(bufs[1]).decode("utf-8", errors="replace"),
    )


def one_line(exc: BaseException) -> str:
    """An exception as one line: "ClassName: first line of its message"."""
    try:
        text = str(exc)
    except Exception:
        text = ""
    first = text.strip().splitlines()[0] if text.strip() else ""
    name = type(exc).__name__
    return f"{name}: {first}" if first else name
