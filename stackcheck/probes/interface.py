"""The probe interface: a context that says where to look, a Probe base class, and its result.

A probe reads one part of the box and returns facts sections (see stackcheck/facts/model.py). It never raises on
purpose: every situation it can meet (missing library, no permission, a hung tool) becomes data with a
reason. The runner (runner.py) still guards against the unexpected.
"""

from __future__ import annotations

import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.result import ProbeResult, ProbeStatus, one_line
from stackcheck.readers.fsview import FileView, HostView

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, ClassVar

    from stackcheck.assembly.target import Target

#: ProbeResult, ProbeStatus and one_line are stackcheck.probes.result's, named here for the probes that import them
__all__ = [
    "OUTPUT_CAP",
    "CommandTimeout",
    "Probe",
    "ProbeContext",
    "ProbeResult",
    "ProbeStatus",
    "SearchPathUnknown",
    "one_line",
    "run_command",
]


def _environ_snapshot() -> dict[str, str]:
    return dict(os.environ)


class SearchPathUnknown(Exception):
    """The target environment's sys.path could not be learned: package facts must be unknown, never read
    from another environment (the audit would look in the wrong place and call the stack not installed)."""


class ProbeContext:
    """Where and how probes look.

        `view` is the box being audited (the host, a root directory, an image): probes read files only through
        it, with box paths. `root` is the host's own root for what only the host has (the driver's /proc files);
        a test fakes both with `root` (the view then defaults to that directory). `env` is the environment the
        server starts with (the gated command's, or an image's config Env); `launch_env`, where a command is gated,
    is that command's own (its `env NAME=VALUE` prefix applied), which the loader probes read even when the
    audited interpreter was named otherwise (--python runs with `env`). The runner fills `facts` with the
        sections of the probes a probe `needs`, and `deadline` with the end of the --timeout budget.
    """

    # a plain class, not a dataclass (the dataclasses module costs ~8 ms of imports at every start); the same
    # keyword arguments, equality, repr and `replace`
    FIELDS: ClassVar[tuple[str, ...]] = (
        "env", "root", "path_dirs", "subprocess_timeout_s", "nvml", "view", "target", "facts", "deadline", "gates",
        "manifests", "cache_dir", "host_env", "launch_env", "launch_first_path", "launch_first_path_before_311",
        "launch_cwd", "judged_gpus",
    )  # fmt: skip

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        root: str | os.PathLike[str] = "/",  # host prefix of /proc/driver/nvidia (tests fake it); the default view root
        path_dirs: list[str] | None = None,  # sys.path entries searched for packages; None: facts.python.sys_path
        subprocess_timeout_s: float = 3.0,
        nvml: Any | None = None,  # an NVML module (pynvml-shaped); None: the probe imports pynvml itself
        view: FileView | None = None,  # None: HostView(root)
        target: Target | None = None,  # the interpreter whose packages are audited; None: stackcheck's own
        facts: Mapping[str, Any] | None = None,  # sections of finished probes (set by the runner); None: {}
        deadline: float | None = None,  # time.monotonic() at which the --timeout budget ends
        gates: Callable[[], Sequence[Mapping[str, Any]]] | None = None,  # manifests' gates; None: shipped ones
        manifests: Callable[[], Any] | None = None,  # the manifests the command loaded (derived); None: shipped
        cache_dir: str | None = None,  # interpreter answers; None: the user cache dir, "": no cache
        host_env: Mapping[str, str] | None = None,  # this host's environment, for the host probes; None: `env`
        launch_env: Mapping[str, str] | None = None,  # the gated command's own (its `env X=Y` prefix); None: `env`
        launch_first_path: str | None = None,  # the gated command's sys.path[0] (target.command_first_path)
        # its sys.path[0] on a Python before 3.11, where only PYTHONSAFEPATH (3.11's, ignored before) left it out
        launch_first_path_before_311: str | None = None,
        launch_cwd: str | None = None,  # the directory the gated command starts in, where given (gate --cwd)
        # the GPUs the verdicts will judge: "probed" (the NVML probe's `gpus`), a list (--host-facts' gpus), None (not
        # known while probing: --assume-gpu replaces them after); the cubin probe reads its families only where one
        # of them may load them (iperf43)
        judged_gpus: Any = "probed",
    ) -> None:
        self.env: Mapping[str, str] = env if env is not None else _environ_snapshot()
        self.root = root
        self.path_dirs = path_dirs
        self.subprocess_timeout_s = subprocess_timeout_s
        self.nvml = nvml
        self.view: FileView | None = view if view is not None else HostView(str(root))
        self.target = target
        self.facts: Mapping[str, Any] = facts if facts is not None else {}
        self.deadline = deadline
        self.gates = gates
        self.manifests = manifests
        self.cache_dir = cache_dir
        self.host_env = host_env
        self.launch_env = launch_env
        self.launch_first_path = launch_first_path
        self.launch_first_path_before_311 = launch_first_path_before_311
        self.launch_cwd = launch_cwd
        self.judged_gpus = judged_gpus

    def replace(self, **changes: Any) -> ProbeContext:
        """A copy with `changes` (as dataclasses.replace did)."""
        values = {name: getattr(self, name) for name in self.FIELDS}
        values.update(changes)
        return ProbeContext(**values)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProbeContext):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        return "ProbeContext(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.FIELDS) + ")"

    def launch_sys_path0(self) -> str | None:
        """The directory the gated command puts first on sys.path: `launch_first_path`, else, where PYTHONSAFEPATH
        alone left it out and the audited Python is older than 3.11 (facts.python.version; not given: taken as
        older, so that a shadowing copy is not missed), `launch_first_path_before_311`: Python 3.10 ignores
        PYTHONSAFEPATH (added in 3.11) and puts the working directory first still (irev64)."""
        if self.launch_first_path or not self.launch_first_path_before_311:
            return self.launch_first_path
        python = self.facts.get("python")
        version = python.get("version") if isinstance(python, Mapping) else None
        parts = str(version or "").split(".")
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit() and (int(parts[0]), int(parts[1])) >= (3, 11):
            return None
        return self.launch_first_path_before_311

    @property
    def host_environ(self) -> Mapping[str, str]:
        """The environment of the host probes (nvidia-smi's PATH): this host's, which differs from `env`
        when the box is an image whose config Env the server starts with."""
        return self.host_env if self.host_env is not None else self.env

    @property
    def loader_environ(self) -> Mapping[str, str]:
        """The environment whose LD_LIBRARY_PATH the server's dynamic loader searches: the gated command's (a
        `--python` or `--env` target runs with the audit's own `env`, the launch may not), else `env`."""
        return self.launch_env if self.launch_env is not None else self.env

    @property
    def fs(self) -> FileView:
        """The view, typed as always present (set in __post_init__)."""
        assert self.view is not None
        return self.view

    def _host_root(self) -> bool:
        # spelled as Path("/") == Path(root) compares, without importing pathlib (~5 ms on 3.12) at start-up
        return os.path.normpath(os.fspath(self.root)) == "/"

    def rooted(self, path: str | Path) -> Path:
        """An absolute box path ("/usr/local/cuda") as seen through `root`."""
        from pathlib import Path

        p = Path(path)
        if self._host_root():
            return p
        return Path(self.root) / str(p).lstrip("/")

    def rooted_text(self, path: str) -> str:
        """`rooted` as a string, for a caller that only opens the file (no pathlib at start-up)."""
        if self._host_root():
            return path
        return os.path.join(os.fspath(self.root), path.lstrip("/"))

    def unrooted(self, path: str | Path) -> str:
        """The box path of a path under `root` (the inverse of `rooted`); other paths unchanged."""
        from pathlib import Path

        p = Path(path)
        if self._host_root():
            return str(p)
        try:
            return "/" + str(p.relative_to(self.root)).lstrip(".")
        except ValueError:
            return str(p)

    def search_dirs(self) -> list[str]:
        """Where packages are looked for: `path_dirs` when given, else the target's sys.path from the python
        probe (facts.python.sys_path), else (no python probe ran: a library caller) this process's sys.path.
        Raises SearchPathUnknown when the python probe ran and could not learn the path."""
        if self.path_dirs is not None:
            return list(self.path_dirs)
        python = self.facts.get("python")
        if isinstance(python, Mapping):
            sys_path = python.get("sys_path")
            if isinstance(sys_path, list):
                return [p for p in sys_path if isinstance(p, str)]
            raise SearchPathUnknown(
                f"the target environment's sys.path is unknown: {python.get('error') or 'the python probe failed'}"
            )
        return list(sys.path)


class Probe(ABC):
    """One probe. Subclasses set `name`, `timeout_s`, `sections` (the facts sections they set) and `needs`
    (the sections they read from `ctx.facts`: the runner starts a probe once the probes that produce its
    needs are done, so a probe never reads a half-made section)."""

    name: ClassVar[str]
    timeout_s: ClassVar[float] = 5.0
    sections: ClassVar[tuple[str, ...]] = ()
    needs: ClassVar[tuple[str, ...]] = ()
    #: started before the other probes ready at the same time (the NVML probe: it takes the forked reader's answer,
    #: stackcheck.probes.nvml_early, and waits on a pipe, not on the interpreter lock)
    starts_first: ClassVar[bool] = False
    #: the runner calls `prepare` when it starts the first wave (the toolkits probe: `nvcc --version`)
    prepares: ClassVar[bool] = False
    list_sections: ClassVar[frozenset[str]] = frozenset({"gpus", "cuda_toolkits"})

    @abstractmethod
    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Read the box; never raise on purpose."""

    def prepare(self, ctx: ProbeContext) -> None:
        """Start, in the background, slow work that needs none of `needs` (a command to run), when the runner starts
        the first wave; `run`, started later on this same object, takes its answer. Returns at once (called
        only where `prepares` is set; what it raises is ignored and `run` does the work itself)."""
        return None

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


class NotStarted(Exception):
    """run_command's `started` line was not printed within its window while the command, still running, printed
    something else: stopped (with its process group). The message names what it printed first."""


def _runs_its_arguments(pid: int, argv: Sequence[str]) -> bool:
    """(irobust14) Whether process `pid` still holds the last word it was started with among its arguments
    (/proc/PID/cmdline, Linux): a wrapper script's shell passes "$@" on (its own command line holds it while it sleeps
    or activates an environment, and the interpreter it execs with "$@" too), whereas one that ignores its arguments
    and execs another program (`exec python3 -m server`, `exec sleep`) no longer does. False where that is not
    readable (no /proc; the process gone): the window's rule then stands as imend16 wrote it."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            words = fh.read(1 << 20).split(b"\0")
    except OSError:
        return False
    last = os.fsencode(argv[-1]) if argv else b""
    return bool(last) and last in words


def run_command(
    argv: Sequence[str],
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    started: bytes | None = None,
    window_s: float = 1.0,
) -> tuple[int, str, str]:
    """Run a command without a shell (in `cwd`, this process's directory where None) and return (returncode, stdout,
    stderr), each output capped.

    The command runs in its own session so that on timeout its whole process group is killed: a wrapper
    script's children cannot keep the pipes open past the timeout. Raises CommandTimeout or OSError.

    `started`: the line the command prints first on stdout when it runs what it was given (the python probe's
    one-liner). Where, `window_s` after the start and at each 50 ms after that, the command is still running, has
    printed something on stdout or stderr and not that line, it is stopped at once and NotStarted is raised (imend16:
    a `python3` wrapper that ignores "$@" runs whatever it runs until the timeout), unless its process still holds
    its last argument (irobust14: a wrapper that prints, then sleeps or activates an environment for over the window
    before it execs the interpreter with "$@", was stopped and called one that ignores its arguments; it now runs to
    the timeout). A command that prints nothing waits for the timeout, as before."""
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
        cwd=cwd,
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
    # Popen.wait(timeout) polls with growing sleeps (up to 50 ms late); a thread blocked in waitpid and an
    # Event wakes the caller as soon as the child exits (an interpreter start is 20-40 ms: it matters)
    exited = threading.Event()

    def reap() -> None:
        proc.wait()
        exited.set()

    threading.Thread(target=reap, daemon=True).start()
    try:
        not_started: str | None = None
        if started is None or window_s >= timeout_s:
            done = exited.wait(timeout_s)
        else:
            import time

            end = time.monotonic() + timeout_s
            done = exited.wait(window_s)
            while not done:
                if started not in bufs[0] and (bufs[0] or bufs[1]) and not _runs_its_arguments(proc.pid, argv):
                    first = (bytes(bufs[0]) or bytes(bufs[1])).decode("utf-8", errors="replace").strip()
                    not_started = (first.splitlines() or [""])[0][:60]
                    break
                left = end - time.monotonic()
                if left <= 0:
                    break
                done = exited.wait(min(0.05, left))
        if not done:
            import signal  # (here, not at the top: it imports enum, ~0.5 ms of every start; subprocess has it)

            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                proc.kill()
            exited.wait()
            if not_started is not None:
                raise NotStarted(
                    f"printed {not_started!r} and not its first line within {window_s:g}s, still running (stopped)"
                )
            raise CommandTimeout(f"{os.path.basename(os.path.normpath(argv[0]))} timed out after {timeout_s:g}s")
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


def view_of(ctx: ProbeContext) -> FileView:
    """The probe context's filesystem view (issue 15's field when it exists), else the host below ctx.root."""
    view = getattr(ctx, "view", None)
    return view if view is not None else HostView(str(ctx.root))
