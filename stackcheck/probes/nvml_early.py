"""NVML started before anything else, in a thread, for the NVML probe to adopt.

The driver's start (nvmlInit) is the longest single wait of an audit on a GPU box, and NVML calls release the
interpreter lock (ctypes). So the command line starts it first (stackcheck.cli, from the words of the
command line, before argparse is even imported), in a daemon thread that also reads the driver, the GPUs and
their topology exactly as the NVML probe does (stackcheck.probes.nvml_read.read_nvml), and then shuts NVML down;
meanwhile the main thread imports, parses, loads the manifests and runs the other probes. The NVML probe,
when it runs with no injected NVML module, takes the started session (once: `take`) and waits for it; its
own timeout still bounds that wait (the runner abandons a probe that overruns), so a hung driver hangs
nothing. A session no probe took is dropped when the command ends (`discard`).

On Linux, when the command line is still one thread, the start is a forked child process instead of a thread
(ForkSession): importing pynvml (~20 ms of interpreter work on the H200) and the driver's start then run on
another core, not beside the main thread under the interpreter lock. The child answers once through a pipe
(JSON: plain data, the same facts, status and reason, or the same fallback reason) and exits; a child that
ends without an answer is an error of the NVML probe, and one still running when the command ends (a hung
driver) is killed. Elsewhere (no fork, threads already running) the thread (Session) does the same work.

The child begins the driver's start itself, in a thread, as soon as it is forked (Warm: the call pynvml's nvmlInit
makes, on the library it loads), and imports pynvml and the reader while the driver starts.

The command line starts it from its words alone (stackcheck.driver_words), first of all: `python -m
stackcheck` before even stackcheck.cli is imported (stackcheck.__main__). This module imports nothing at import
time that the interpreter has not imported already (threading comes after the fork, with the session); the
thread or the child imports pynvml, and the thread the NVML probe's reader after nvmlInit has returned."""

from __future__ import annotations

import _thread
import contextlib
import os
import sys

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

#: how long `discard` waits for an unadopted session's thread before the interpreter may shut down
DISCARD_WAIT_S = 2.0
#: how long `discard` waits for a killed forked reader to end, so that it is reaped
REAP_WAIT_S = 0.2
#: how long the forked reader waits for its driver start's thread to be in the driver (Warm)
BEGIN_WAIT_S = 0.05


class Session:
    """One early NVML start in a thread: `answer` is the reading as plain data (see `_reading`) once `done` is set."""

    def __init__(self) -> None:
        import threading

        self.done = threading.Event()
        self.answer: dict[str, Any] = {}
        self.thread = threading.Thread(target=self._run, name="stackcheck-nvml-early", daemon=True)

    def _run(self) -> None:
        try:
            self.answer = _reading(usage=False)
        finally:
            self.done.set()

    def outcome(self) -> tuple[Any, str | None]:
        """Wait, then (the NVML probe's ProbeResult, None), or (None, the fallback's reason); raises what the
        reading raised (under its class name, see `_as_raised`)."""
        self.done.wait()
        return _outcome(self.answer)

    def stop(self) -> None:
        """At the command's end, a session no probe took: wait a little for its thread."""
        self.done.wait(DISCARD_WAIT_S)


class EarlyReadError(RuntimeError):
    """What the forked NVML reading raised (its one-line text, `ClassName: message`), or why it gave no answer."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


class ForkSession:
    """One early NVML start in a forked child: the child imports pynvml, starts NVML, reads what the NVML probe
    reads, shuts NVML down and writes one answer to the pipe; `outcome` reads it (once, in the probe's thread:
    the read releases the interpreter lock) and reaps the child."""

    def __init__(self, pid: int, fd: int, usage: bool = False) -> None:
        import threading  # (after the fork: the child is already at work)
        import time

        self.started = time.monotonic()  # (just after the fork: the reader's waits are counted from here)
        self.pid = pid
        self._fd = fd
        self.usage = usage  # the child also reads GPU usage (the gate's), in the same NVML session
        self.done = threading.Event()  # set once the answer is in (or the child was stopped)
        self._reading = threading.Lock()
        self._answer: dict[str, Any] | None = None
        self.reaped = False
        #: why the child gave no answer (it died, was killed, was stopped); None while it may still answer or once
        #: it has answered
        self.failure: str | None = None

    def _answered(self) -> dict[str, Any]:
        with self._reading:
            if self._answer is None:
                self._answer = self._collect()
            return self._answer

    def outcome(self) -> tuple[Any, str | None]:
        return _outcome(self._answered())

    def usage_reading(self, timeout_s: float) -> Any:
        """The GPU-usage reading the child took (stackcheck.probes.gpu_usage.UsageReading), or None where it
        took none (it died, it was stopped); waits for the answer until `timeout_s` after the child was forked (a
        hung driver: the NVML probe, which waited for the same answer, has given up by then; a second full wait
        here made the gate's refusal take twice the timeout)."""
        import time

        deadline = self.started + timeout_s
        if not self.done.is_set() and self._reading.acquire(blocking=False):
            try:  # no probe is reading the answer (it was read already, or no NVML probe ran): read it here
                if self._answer is None and _readable(self._fd, max(0.0, deadline - time.monotonic())):
                    self._answer = self._collect()
            finally:
                self._reading.release()
        if not self.done.wait(max(0.0, deadline - time.monotonic())) or self._answer is None:
            return None
        usage = self._answer.get("usage")
        if usage is None:
            return None
        from stackcheck.probes.gpu_usage import reading_from_plain

        return reading_from_plain(usage)

    def _collect(self) -> dict[str, Any]:
        from stackcheck import lean_json

        chunks: list[bytes] = []
        try:
            while True:
                chunk = os.read(self._fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self._fd)
        try:
            answer = lean_json.loads(b"".join(chunks))
        except ValueError:  # nothing, or not the whole of it: no answer
            answer = None
        # the answer is in place before `done` says so: the gate's usage_reading, waiting on `done` in another thread
        # while the NVML probe's thread reads here, took a `done` without an answer for no reading and read GPU usage
        # again in the command itself (pynvml imported there, a second NVML start on a GPU box)
        if _well_formed(answer):
            # the child closed its end once the answer was written and shuts NVML down after it: its shutdown and
            # exit are not waited for here (reaped when it has ended: stop)
            self._reap(block=False)
            self._answer = answer
            self.done.set()
            return answer  # type: ignore[no-any-return]
        ended = self._reap(block=True)
        self.failure = f"the NVML reader (process {self.pid}) ended without an answer ({ended})"
        self._answer = failed = {"nvml": ("error", self.failure)}
        self.done.set()
        return failed

    def _reap(self, block: bool) -> str:
        if self.reaped:  # (stop and a probe's thread may both reap a stopped child: the first one does)
            return "already reaped"
        try:
            pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            self.reaped = True
            return "already reaped"
        if pid == 0:
            return "still running"
        self.reaped = True
        if os.WIFSIGNALED(status):
            return f"killed by signal {os.WTERMSIG(status)}"
        return f"exit status {os.waitstatus_to_exitcode(status)}"

    def _reap_killed(self, wait_s: float = REAP_WAIT_S) -> None:
        """Reap the child (just sent SIGKILL, or shutting NVML down after its answer), waiting at most `wait_s` (a
        child stuck in the driver, in an uninterruptible wait, dies only when the driver lets go: it is left to the
        system then)."""
        import time

        deadline = time.monotonic() + wait_s
        while self._reap(block=False) == "still running" and time.monotonic() < deadline:
            time.sleep(0.001)

    def stop(self, wait_s: float = 0.0) -> None:
        """At the command's end: a child still running (a hung driver, an abandoned probe) is killed and, where
        it has ended, reaped; the pipe is closed unless a probe's thread is still reading it. A child that has
        answered is reaped where it has ended, waited for at most `wait_s` (it shuts NVML down after its answer;
        one still at it when the program leaves is the system's to reap)."""
        if self.done.is_set():
            if not self.reaped:
                self._reap_killed(wait_s)
            return
        with contextlib.suppress(OSError):
            os.kill(self.pid, 9)
        waited = False
        if self._reading.acquire(blocking=False):
            try:
                if self._answer is None:
                    with contextlib.suppress(OSError):
                        os.close(self._fd)
                    self.failure = "the NVML reader was stopped before it answered"
                    self._answer = {"nvml": ("error", self.failure)}
                    self._reap_killed()
                    waited = True
                    self.done.set()
            finally:
                self._reading.release()
        if not waited:  # a probe's thread still reads the pipe (it reaps too): reaped here all the same
            self._reap_killed()


def _as_raised(line: str) -> EarlyReadError:
    """The child's `ClassName: message` raised under that class name, so that the probe's reason reads as it
    does when the thread raises the original (the runner writes `ClassName: message`)."""
    name, sep, message = line.partition(": ")
    if name.isidentifier() and name != "EarlyReadError":
        raised: EarlyReadError = type(name, (EarlyReadError,), {})(message if sep else "")
        return raised
    return EarlyReadError(line)


def _readable(fd: int, timeout_s: float) -> bool:
    import select

    try:
        return bool(select.select([fd], [], [], timeout_s)[0])
    except (OSError, ValueError):
        return False


def _well_formed(answer: Any) -> bool:
    if not isinstance(answer, dict) or set(answer) - {"nvml", "usage"}:
        return False
    nvml = answer.get("nvml")
    if not (isinstance(nvml, list) and len(nvml) == 2 and isinstance(nvml[0], str)):
        return False
    kind, value = nvml
    if kind == "result":
        return (
            isinstance(value, list)
            and len(value) == 3
            and isinstance(value[0], dict)
            and isinstance(value[1], str)
            and (value[2] is None or isinstance(value[2], str))
        )
    return kind in ("import", "init", "error") and isinstance(value, str)


def _outcome(answer: dict[str, Any]) -> tuple[Any, str | None]:
    """A reading as the NVML probe takes it: (its ProbeResult, None), (None, the fallback's reason), or raised."""
    nvml: Any = answer.get("nvml") or ("error", "the NVML reading gave no answer")
    kind, value = nvml
    if kind == "result":
        from stackcheck.probes.result import ProbeResult

        facts, status, reason = value
        return ProbeResult(facts, status, reason), None
    if kind == "import":
        return None, f"nvidia-ml-py (pynvml) cannot be imported: {value}"
    if kind == "init":
        return None, str(value)
    raise _as_raised(str(value))


def _reading(usage: bool, warm: Warm | None = None) -> dict[str, Any]:
    """One NVML reading as plain data, for the thread and the child alike: {"nvml": (kind, value)}, kind "result"
    ((facts, status, reason) as the NVML probe reads them), "import" or "init" (the fallback's reason), or "error"
    (what the reading raised, as one line); with `usage`, also "usage" (reading_to_plain of the gate's GPU-usage
    reading, taken in the same NVML session), which an error drops (the gate then reads usage itself). `warm`: the
    child's driver start begun beside the imports (see Warm), waited for before pynvml's own nvmlInit."""
    answer: dict[str, Any] = {}
    try:
        _read(answer, usage, warm)
    except BaseException as exc:
        from stackcheck.probes.result import one_line

        answer = {"nvml": answer.get("nvml") or ("error", one_line(exc))}
    return answer


def _read(answer: dict[str, Any], usage: bool, warm: Warm | None = None) -> None:
    if warm is not None:  # (the forked child, which ends after its answer: nothing else imports there)
        _defer_ctypes_util()
    try:
        import pynvml
    except ImportError as exc:
        from stackcheck.probes.result import one_line

        answer["nvml"] = ("import", one_line(exc))
        nv = None
    else:
        nv = pynvml
    if warm is not None and nv is not None:  # (the child: what it reads with comes in while the driver starts)
        from stackcheck.probes.nvml_read import read_nvml

        if usage:
            from stackcheck.probes.gpu_usage import read_gpu_usage  # noqa: F401
        warm.wait()
    if nv is not None and _started(nv, answer):
        from stackcheck.probes.nvml_read import read_nvml

        try:
            result = read_nvml(nv)
            answer["nvml"] = ("result", (result.facts, result.status, result.reason))
            if usage:  # while NVML is up: no second start
                _read_usage(answer, nv)
        finally:
            if warm is not None:  # (the child: after its answer is out)
                warm.later(nv.nvmlShutdown)
            else:
                with contextlib.suppress(Exception):  # shutting down is best effort (as in the probe)
                    nv.nvmlShutdown()
    elif usage:  # the same failure, in the usage reading's own words
        _read_usage(answer, nv)


def _defer_ctypes_util() -> None:
    """In the forked child, before pynvml is imported: `ctypes.util` stands in until something of it is used.
    nvidia-ml-py imports find_library from it at its top (13.615.71: pynvml.py line 33) and calls it nowhere
    (it loads CDLL("libnvidia-ml.so.1") by name on Linux, line 3190), and ctypes.util imports shutil, subprocess
    and tempfile (and they bz2, lzma, random, selectors, ...): about a third of the child's instructions before its
    first NVML call (2-core box, callgrind). The stand-in's find_library, and any other public name read from it,
    import the real module then and answer from it, so a pynvml that does call it gets the real answer. Only the child,
    which ends after its answer, ever holds the stand-in; a ctypes.util already imported is left alone."""
    if "ctypes.util" in sys.modules:
        return
    import ctypes

    stand_in = type(sys)("ctypes.util")

    def real() -> Any:
        if sys.modules.get("ctypes.util") is stand_in:
            del sys.modules["ctypes.util"]
        import ctypes.util as module

        ctypes.util = module
        return module

    def find_library(name: str) -> Any:
        return real().find_library(name)

    def other(name: str) -> Any:
        if name.startswith("__"):  # (the import system asks for __path__ on every `from ctypes.util import`)
            raise AttributeError(name)
        return getattr(real(), name)

    stand_in.find_library = find_library  # type: ignore[attr-defined]
    stand_in.__getattr__ = other  # type: ignore[method-assign]
    sys.modules["ctypes.util"] = stand_in
    ctypes.util = stand_in  # (as an import of it would set it)


def _started(nv: Any, answer: dict[str, Any]) -> bool:
    """nvmlInit; when it fails, the fallback's reason goes into the answer."""
    try:
        nv.nvmlInit()
    except Exception as exc:
        from stackcheck.probes.nvml_read import describe

        answer["nvml"] = ("init", describe(exc))
        return False
    return True


def _read_usage(answer: dict[str, Any], nv: Any) -> None:
    from stackcheck.probes.gpu_usage import read_gpu_usage, reading_to_plain

    answer["usage"] = reading_to_plain(read_gpu_usage(nv))


#: the library and the call pynvml's nvmlInit makes on Linux (nvidia-ml-py: CDLL("libnvidia-ml.so.1"), then
#: nvmlInitWithFlags(0)), which the forked child makes first, beside its imports (Warm)
DRIVER_LIBRARY = "libnvidia-ml.so.1"


def _open_driver() -> Any:
    """DRIVER_LIBRARY opened as ctypes.CDLL opens it (dlopen, RTLD_NOW | RTLD_LOCAL: the handle pynvml's own CDLL
    then gets again), each function it is asked for callable with C ints and returning one: through _ctypes
    itself, the start of the driver then ~0.8 ms after the fork on the 2-core box instead of ~2.6 ms with the
    ctypes package imported first (pynvml imports it meanwhile, in the child's other thread). A library that
    cannot be opened is the OSError; a _ctypes without what this uses, ctypes.CDLL."""
    try:
        import _ctypes

        class _Int(_ctypes._SimpleCData):  # type: ignore[type-arg]  # ctypes.c_int's own definition: a result comes back as an int
            _type_ = "i"

        class _Function(_ctypes.CFuncPtr):  # ctypes.CDLL's function class, C calling convention
            _flags_ = _ctypes.FUNCFLAG_CDECL
            _restype_ = _Int

        class _Library:
            def __init__(self, handle: int) -> None:
                self._handle = handle  # (read by _Function, as from a CDLL)

            def __getattr__(self, name: str) -> Any:
                return _Function((name, self))  # type: ignore[arg-type]

        return _Library(_ctypes.dlopen(DRIVER_LIBRARY, os.RTLD_NOW | os.RTLD_LOCAL))
    except OSError:
        raise
    except Exception:  # another _ctypes: the public way
        import ctypes

        return ctypes.CDLL(DRIVER_LIBRARY)


class Warm:
    """In the forked child: the driver's start (nvmlInitWithFlags(0) on DRIVER_LIBRARY, the call pynvml's nvmlInit
    makes) begun in a thread at once, while the child imports pynvml and the NVML reader (~20 ms of interpreter work
    on an H200, which the call, releasing the interpreter lock, runs beside). NVML counts its starts: pynvml's own
    nvmlInit, made once this one has returned (`wait`), is then only counted, and every read is pynvml's as before;
    `finish` balances the count (nvmlShutdown) where this start succeeded. A start that fails or cannot be made (no
    library, no such function, an error code) is left alone: pynvml's nvmlInit then meets the failure itself and
    reports it in its own words. Nothing here decides anything: it only moves the driver's start earlier."""

    def __init__(self) -> None:
        self._done = _thread.allocate_lock()
        self._done.acquire()
        self._begun = _thread.allocate_lock()  # held until the thread is about to call the driver
        self._begun.acquire()
        self._lib: Any = None
        self._later: list[Any] = []  # pynvml's nvmlShutdown, made after the answer is out (finish)
        _thread.start_new_thread(self._run, ())
        # the child's own thread waits (the interpreter lock released) until the call is under way: else the new
        # thread waits for the lock up to a switch interval (5 ms) while this one imports, and the driver's start
        # with it; bounded, should opening the library itself hang
        self._begun.acquire(timeout=BEGIN_WAIT_S)

    def _run(self) -> None:
        try:
            lib = _open_driver()
            start = lib.nvmlInitWithFlags  # (the symbol looked up before the child's thread goes on)
            self._begun.release()
            if start(0) == 0:
                self._lib = lib
        except Exception:  # noqa: S110 - pynvml's nvmlInit meets the same failure and says it
            pass
        finally:
            if self._begun.locked():
                self._begun.release()
            self._done.release()

    def wait(self) -> None:
        """Until the start has returned (a hung driver hangs here as it would in pynvml's nvmlInit)."""
        self._done.acquire()
        self._done.release()

    def later(self, shutdown: Any) -> None:
        """pynvml's nvmlShutdown, kept for `finish`: the child shuts NVML down once its answer is written."""
        self._later.append(shutdown)

    def finish(self) -> None:
        """pynvml's nvmlShutdown (kept by `later`), then this start's, where it succeeded and has returned (never
        waits for it: a child whose pynvml could not be imported answers at once, and a start still hung ends
        with the child)."""
        for shutdown in self._later:
            with contextlib.suppress(Exception):  # shutting down is best effort (as in the probe)
                shutdown()
        if self._done.acquire(blocking=False):
            lib, self._lib = self._lib, None
            if lib is not None:
                with contextlib.suppress(Exception):
                    lib.nvmlShutdown()
            self._done.release()


def _child(fd: int, usage: bool, parent: int) -> None:
    """The forked child's whole life: its standard streams put aside, the driver's start begun (Warm) before
    anything else, its life tied to the command's, answer, write, close the pipe (the command has its answer
    then), NVML shut down, leave (os._exit: no atexit, no buffered output of the parent's flushed twice)."""
    try:
        # the standard streams' slots filled first (a few system calls): the driver's start opens its device files,
        # which would land in a slot the command was started without and then be covered by /dev/null
        fd = _above_stdio(fd)
        _detach_stdio()
        warm = _warm()
        _die_with(parent)
        from stackcheck import lean_json

        answer = _reading(usage, warm)
        try:
            data = lean_json.dumps(answer, allow_nan=False).encode()
        except (TypeError, ValueError) as exc:
            data = lean_json.dumps({"nvml": ("error", f"the NVML reading cannot be passed back: {exc}")}).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.close(fd)  # the answer is whole: the command reads its end now, not when this process has ended
        if warm is not None:
            warm.finish()  # NVML's shutdown, after the answer: off the command's path
    finally:
        os._exit(0)


def _warm() -> Warm | None:
    """The driver's start begun beside the imports (Warm), or None where no thread can be started (a container's
    pids limit, RLIMIT_NPROC: threads count as processes there): the child then reads as the thread reader does,
    starting the driver itself, rather than ending without an answer."""
    try:
        return Warm()
    except RuntimeError:  # "can't start new thread"
        return None


def _above_stdio(fd: int) -> int:
    """In the child: the answer's pipe moved above the standard streams' slots. A command started with some of them
    closed (`<&- >&-`, a daemon's supervisor) gets the pipe in one of those slots, where `_detach_stdio` would put
    /dev/null over it and the answer would be lost (the NVML probe then failed on a healthy box)."""
    while fd <= 2:
        try:
            fd = os.dup(fd)  # the lowest free number: a slot still free is taken (and then covered by /dev/null)
        except OSError:
            os._exit(0)  # no answer: the NVML probe says so
    return fd


def _detach_stdio() -> None:
    """In the child: standard input, output and error on /dev/null, so that a reader of the command's output
    (`out=$(stackcheck audit)`, a pipe) sees its end when the command ends, even while a child stuck in a hung
    driver lives on; the child says everything through its pipe."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        os._exit(0)  # no answer: the NVML probe says so
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    if null > 2:
        os.close(null)


def _die_with(parent: int) -> None:
    """In the child: be killed when the command's main thread ends, however it ends (SIGTERM, SIGKILL, an
    interpreter that exits before `discard` runs), so that a reader stuck in a hung driver is not left behind
    holding it (Linux prctl PR_SET_PDEATHSIG); a parent already gone by then ends the child at once."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG = 1, SIGKILL = 9
    if os.getppid() != parent:
        os._exit(0)


#: "auto": fork where it is safe (Linux, one thread), else a thread; "thread": always a thread (tests set it)
MODE = "auto"


def _fork(usage: bool) -> ForkSession | None:
    """A forked reader, or None where forking is not safe or not possible (the caller starts a thread)."""
    if MODE != "auto" or not sys.platform.startswith("linux") or not _one_thread():
        return None
    try:
        read_fd, write_fd = os.pipe()
    except OSError:
        return None
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return None
    if pid == 0:  # the child
        os.close(read_fd)
        _child(write_fd, usage, parent)
    os.close(write_fd)
    return ForkSession(pid, read_fd, usage)


def _one_thread() -> bool:
    """Whether this process runs only its main thread (so that a fork copies no lock another thread holds):
    no thread started through _thread (threading's included), and none that threading knows of (a foreign
    thread that called into Python); threading is not imported for this."""
    threads = sys.modules.get("threading")
    return _thread._count() == 0 and (threads is None or threads.active_count() == 1)


_lock = _thread.allocate_lock()
_pending: list[Session | ForkSession] = []  # the started session no probe has taken yet (at most one)
_children: list[ForkSession] = []  # every forked reader of this process, stopped at the command's end
_usage: list[ForkSession] = []  # the forked reader that also read GPU usage, until the gate takes it


def start(usage: bool = False) -> None:
    """Start NVML now in a forked child or a daemon thread (once: a second call while one is pending does
    nothing). `usage`: the child also reads GPU usage for the gate (a thread does not: the gate reads it)."""
    with _lock:
        if not _pending:
            forked = _fork(usage)
            if forked is not None:
                _children.append(forked)
                _pending.append(forked)
                if usage:
                    _usage[:] = [forked]
            else:
                session = Session()
                _pending.append(session)
                session.thread.start()


def take() -> Session | ForkSession | None:
    """The pending session, for the NVML probe: each start is adopted at most once."""
    with _lock:
        return _pending.pop() if _pending else None


def take_usage() -> ForkSession | None:
    """The forked reader that read GPU usage, for the gate (once)."""
    with _lock:
        return _usage.pop() if _usage else None


def discard(wait_s: float = 0.0) -> None:
    """Drop a session that no probe took (a thread is waited for a little, see the module's docstring), stop
    every forked reader still running (a hung driver that the NVML probe gave up on), and reap those that
    answered, waiting at most `wait_s` for one still shutting NVML down (the gate waits REAP_WAIT_S before it
    replaces itself with the server, so that the server inherits no child of ours; the program's end waits
    for none)."""
    session = take()
    if session is not None:
        session.stop()
    with _lock:
        children = list(_children)
        _children.clear()
        _usage.clear()
    for child in children:
        child.stop(wait_s)
