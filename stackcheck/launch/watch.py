"""Run a server as a child, pass its output through unchanged, say when it is ready, and when it dies print
the triaged root cause instead of leaving the user to tail the log (`stackcheck gate --watch`).

What is promised, and how:
- The pass-through never waits on the copy. The child's stdout and stderr are copied byte for byte to ours
  as they arrive; the copy kept for triage is a ring of the last `keep_bytes` in memory (no disk to fill);
  with `--log FILE` the whole output is also appended to FILE by a writer thread fed through a bounded
  queue: what the disk cannot take (full, slow, gone) is dropped and counted, never waited for. A copier
  that meets any error keeps draining the pipe, so the server never blocks on a full pipe because of us.
  A closed or broken stdout/stderr of ours stops the pass-through to it, not the server.
- The server's death is reported when it dies: its exit is noticed at once (the time is measured then);
  its children (a `sleep 300 &` in a wrapper script) may still hold its pipes, so output is read for at
  most `drain_s` more seconds, then the watch stops reading and reports.
- Signals reach the server once. The server runs in its own process group, so the terminal's Ctrl-C
  (SIGINT to the terminal's foreground group) reaches only the gate, which forwards SIGINT, SIGTERM,
  SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to the server's group, once. Ctrl-Z stops the server and the gate
  together, and a SIGCONT continues both. The server's stdin is /dev/null when ours is a terminal (a
  background group reading the terminal would be stopped).
- On Linux the server gets PR_SET_PDEATHSIG(SIGKILL) (prctl through ctypes): if the gate is killed with
  SIGKILL, the kernel kills the server too, so it never outlives its supervisor unnoticed. (The signal is
  tied to the thread that started the server: watch() must run in the main thread, as the CLI does.)
  SGLang's own worker processes set the same on themselves, so they follow the server.
- The exit status is the server's (128 + N when signal N ended it). Readiness and the reports are written
  to stderr and always start on a line of their own.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import signal
import stat
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, BinaryIO

from stackcheck.errors import OutputError

SGLANG_READY = b"The server is fired up"
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
#: every signal the gate handles while it watches (FORWARDED, and ^Z / SIGCONT, which stop and continue both)
HANDLED = (*FORWARDED, signal.SIGTSTP, signal.SIGCONT)


@contextlib.contextmanager
def helper_threads_block_signals() -> Any:
    """Threads started inside inherit a signal mask that blocks HANDLED, so the kernel delivers those signals to
    the main thread. Python runs a handler only in the main thread, when its system call (waitpid on the server)
    is interrupted: a SIGCONT that the kernel gave to a copier thread left the main thread asleep in waitpid, its
    handler never ran, and the server stayed stopped after ^Z and `fg` (about 1 in 15 tries on a loaded box)."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
    except (AttributeError, OSError, ValueError):  # no pthread_sigmask: leave the mask alone
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


CHUNK = 65536
DEFAULT_KEEP_BYTES = 8 * 2**20
DEFAULT_DRAIN_S = 2.0
POLL_S = 0.1
PR_SET_PDEATHSIG = 1


class Ring:
    """The last `cap` bytes written to it (thread-safe)."""

    def __init__(self, cap: int) -> None:
        self.cap = max(1, cap)
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.total = 0
        self.lock = threading.Lock()

    def add(self, data: bytes) -> None:
        with self.lock:
            self.total += len(data)
            if len(data) >= self.cap:
                self.chunks.clear()
                self.chunks.append(data[-self.cap :])
                self.size = self.cap
                return
            self.chunks.append(data)
            self.size += len(data)
            while self.size > self.cap:
                head = self.chunks[0]
                excess = self.size - self.cap
                if len(head) <= excess:
                    self.chunks.popleft()
                    self.size -= len(head)
                else:
                    self.chunks[0] = head[excess:]
                    self.size -= excess

    def getvalue(self) -> bytes:
        with self.lock:
            return b"".join(self.chunks)

    @property
    def truncated(self) -> bool:
        return self.total > self.size


class LogWriter(threading.Thread):
    """Appends the server's output to a file from a bounded queue. `offer` never blocks: when the queue is
    full (the disk is slow) or writing failed (the disk is full), the data is dropped and counted."""

    def __init__(self, path: str, queue_cap: int) -> None:
        super().__init__(daemon=True, name="stackcheck-watch-log")
        self.path = path
        self.queue: deque[bytes] = deque()
        self.queued = 0
        self.queue_cap = max(CHUNK, queue_cap)
        self.written = 0
        self.dropped = 0
        self.error: str | None = None
        self.cond = threading.Condition()
        self.stopping = False
        self.fd = _open_log(path)

    def offer(self, data: bytes) -> None:
        with self.cond:
            if self.error is not None or self.queued + len(data) > self.queue_cap:
                self.dropped += len(data)
                return
            self.queue.append(data)
            self.queued += len(data)
            self.cond.notify()

    def run(self) -> None:
        while True:
            with self.cond:
                while not self.queue and not self.stopping:
                    self.cond.wait()
                if not self.queue and self.stopping:
                    break
                data = self.queue.popleft()
                self.queued -= len(data)
            if self.error is not None:
                with self.cond:
                    self.dropped += len(data)
                continue
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self.fd, view) :]
                self.written += len(data)
            except OSError as exc:  # a full disk: stop writing, keep counting what is dropped
                with self.cond:
                    self.error = exc.strerror or str(exc)
                    self.dropped += len(data)
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def finish(self, timeout: float) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify()
        self.join(timeout)
        with self.cond:
            if self.is_alive():  # the disk is hung: what is still queued is not written
                self.dropped += self.queued

    def summary(self) -> str:
        text = f"the server's output is in {self.path} ({self.written} bytes"
        if self.dropped:
            why = f": {self.error}" if self.error else " (the disk could not keep up)"
            text += f"; {self.dropped} bytes were not written{why}"
        return text + ")"


def _open_log(path: str) -> int:
    """The --log file, opened for appending before the server starts (a bad path is exit 2, never a server
    without its log). A FIFO nobody reads, a directory or a device is refused; links are followed as
    --output follows them (stackcheck.atomic.resolve_target: not one another user planted in /tmp), and the
    last one is opened with O_NOFOLLOW, so it cannot be swapped for a link in between."""
    from stackcheck.atomic import resolve_target

    target = resolve_target(path)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(target, flags, 0o640)
    except OSError as exc:
        raise OutputError(f"--log {path}: cannot open: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OutputError(f"--log {path}: not a regular file")
    os.set_blocking(fd, True)
    return fd


class Output:
    """Our stdout and stderr: the pass-through writes, and our own messages, which always start on a line
    of their own (the last byte written to the terminal is tracked)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.dead: set[int] = set()
        self.at_line_start = {1: True, 2: True}
        self.shared = _same_file(1, 2)

    def passthrough(self, fd: int, data: bytes) -> None:
        if fd not in self.dead and not _write_all(fd, data):
            self.dead.add(fd)  # closed, broken or full: stop writing there, keep the server running
        with self.lock:
            ends = data.endswith(b"\n")
            self.at_line_start[fd] = ends
            if self.shared:
                self.at_line_start[3 - fd] = ends

    def say(self, text: str) -> None:
        from stackcheck.redact import terminal_safe

        data = terminal_safe(text).encode("utf-8", errors="backslashreplace")
        with self.lock:
            if not self.at_line_start.get(2, True):
                data = b"\n" + data
            if 2 not in self.dead and not _write_all(2, data):
                self.dead.add(2)
            self.at_line_start[2] = data.endswith(b"\n")
            if self.shared:
                self.at_line_start[1] = self.at_line_start[2]


def _same_file(a: int, b: int) -> bool:
    try:
        sa, sb = os.fstat(a), os.fstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _write_all(fd: int, data: bytes) -> bool:
    """Write everything; False when the descriptor cannot take it (closed, broken pipe, full device)."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        except BlockingIOError:  # a non-blocking descriptor we inherited: wait until it takes more
            with contextlib.suppress(OSError, ValueError):
                select.select([], [fd], [], 1.0)
            continue
        except OSError:
            return False
        view = view[n:]
    return True


class Copier(threading.Thread):
    """Copies one of the child's pipes to one of our descriptors, to the ring and to the log, watching for
    the readiness text. It never stops reading the pipe before EOF or `stop` (an error in any of the
    copies is recorded and the pipe is still drained), so the child never blocks on it."""

    def __init__(
        self,
        src: BinaryIO,
        dst_fd: int,
        out: Output,
        ring: Ring,
        log: LogWriter | None,
        ready: bytes,
        on_ready: Callable[[], None],
    ) -> None:
        super().__init__(daemon=True, name=f"stackcheck-watch-{dst_fd}")
        self.src, self.dst_fd, self.out, self.ring, self.log = src, dst_fd, out, ring, log
        self.ready, self.on_ready = ready, on_ready
        self.tail = b""
        self.stop = threading.Event()
        self.error: str | None = None

    def run(self) -> None:
        fd = self.src.fileno()
        while not self.stop.is_set():
            try:
                readable, _, _ = select.select([fd], [], [], POLL_S)
            except (OSError, ValueError):
                return
            if not readable:
                continue
            try:
                data = os.read(fd, CHUNK)
            except InterruptedError:
                continue
            except OSError:
                return
            if not data:
                return
            try:
                self.out.passthrough(self.dst_fd, data)
                self.ring.add(data)
                if self.log is not None:
                    self.log.offer(data)
                if self.ready:
                    window = self.tail + data
                    if self.ready in window:
                        self.ready = b""
                        self.on_ready()
                    self.tail = window[-len(self.ready) :] if self.ready else b""
            except Exception as exc:  # never stop draining: a dead copier would block the server
                self.error = f"{type(exc).__name__}: {exc}"


def _prctl() -> Any:
    """libc's prctl through ctypes (Linux), resolved before the fork; None elsewhere or when unavailable."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.prctl
        fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        fn.restype = ctypes.c_int
        return fn
    except (OSError, AttributeError):
        return None


def _child_setup(parent: int) -> Callable[[], None]:
    """What the child does between fork and exec: its own process group (the terminal's signals reach the
    gate only, which forwards them once), and death with the gate (PR_SET_PDEATHSIG)."""
    prctl = _prctl()
    sigkill = int(signal.SIGKILL)

    def setup() -> None:
        os.setpgid(0, 0)
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, sigkill, 0, 0, 0)
            if os.getppid() != parent:  # the gate died before the prctl: nobody is left to watch us
                os._exit(137)

    return setup


def _exit_code(status: int) -> int:
    return status if status >= 0 else 128 - status


def watch(
    command: list[str],
    ready: bytes = SGLANG_READY,
    report: Callable[[str], None] | None = None,
    keep_bytes: int = DEFAULT_KEEP_BYTES,
    log_path: str | None = None,
    drain_s: float = DEFAULT_DRAIN_S,
    assumed: list[str] | None = None,
) -> int:
    """Run `command`, pass its output through, and triage what it wrote if it dies with a failure status.
    `assumed`: the --assume-* facts the gate judged with; every line stackcheck writes says so, so that a
    what-if is never read as this box's measurement."""
    from stackcheck.redact import field_safe

    out = Output()
    plain = report or out.say
    mark = f" [assumed: {', '.join(assumed)}]" if assumed else ""

    def say(text: str) -> None:
        if mark and text.startswith("stackcheck") and text.endswith("\n"):
            text = text[:-1] + mark + "\n"
        plain(text)

    if assumed:
        say("stackcheck gate: the decision was made on assumed facts, not measured on this box\n")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    if not command or not command[0]:
        say("stackcheck gate: '': command not found (the command is an empty string)\n")
        return 127
    log = LogWriter(log_path, keep_bytes) if log_path else None
    ring = Ring(keep_bytes)
    start = time.monotonic()
    state = {"ready": False}

    def on_ready() -> None:
        state["ready"] = True
        say(f"stackcheck: the server is ready after {time.monotonic() - start:.1f} s\n")

    stdin = subprocess.DEVNULL if _isatty(0) else None
    try:
        child = subprocess.Popen(
            command,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=_child_setup(os.getpid()),  # noqa: PLW1509 - only setpgid and prctl, both async-signal-safe
        )
    except FileNotFoundError:
        _close_unstarted(log)
        say(f"stackcheck gate: {field_safe(command[0])}: command not found\n")
        return 127
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        _close_unstarted(log)
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        say(f"stackcheck gate: {field_safe(command[0])}: cannot execute: {field_safe(why)}\n")
        return 126
    with helper_threads_block_signals():
        if log is not None:
            log.start()
    previous = _forward_signals(child)
    assert child.stdout is not None and child.stderr is not None
    copiers = [
        Copier(child.stdout, 1, out, ring, log, ready, on_ready),  # type: ignore[arg-type]
        Copier(child.stderr, 2, out, ring, log, ready, on_ready),  # type: ignore[arg-type]
    ]
    with helper_threads_block_signals():
        for c in copiers:
            c.start()
    try:
        status = child.wait()
        died = time.monotonic()
        deadline = died + drain_s
        for c in copiers:
            c.join(max(0.0, deadline - time.monotonic()))
        held = [c for c in copiers if c.is_alive()]
        for c in held:
            c.stop.set()
        for c in held:
            c.join(2 * POLL_S + 1.0)
    finally:
        _restore_signals(previous)
        for pipe in (child.stdout, child.stderr):
            with contextlib.suppress(OSError):
                pipe.close()
    if log is not None:
        log.finish(timeout=5.0)
    code = _exit_code(status)
    if held:
        say(
            f"stackcheck: the server's children still held its output open {drain_s:g} s after it ended; "
            "stopped reading it (their later output is not shown)\n"
        )
    for c in copiers:
        if c.error:
            say(f"stackcheck: copying the server's output met an error (the output went on): {c.error}\n")
    if status != 0:
        how = f"exit status {status}" if status > 0 else f"signal {-status}"
        when = "after it was ready" if state["ready"] else "before it was ready"
        say(f"stackcheck: the server ended with {how} {when}, after {died - start:.1f} s\n")
        say(_kept_text(ring, log))
        _triage(ring, say)
    elif log is not None and log.dropped:
        say(f"stackcheck: {log.summary()}\n")
    return code


def _close_unstarted(log: LogWriter | None) -> None:
    if log is not None:
        with contextlib.suppress(OSError):
            os.close(log.fd)


def _kept_text(ring: Ring, log: LogWriter | None) -> str:
    kept = f"the last {ring.size} bytes" if ring.truncated else f"all {ring.size} bytes"
    where = log.summary() if log is not None else "its output was not kept on disk (use --log FILE to keep it)"
    return f"stackcheck: {where}; triage reads {kept} of it, held in memory\n"


def _triage(ring: Ring, say: Callable[[str], None]) -> None:
    try:
        from stackcheck.launch.triage import TriageReport, triage_stream
        from stackcheck.render import TRIAGE_FORMATS
        from stackcheck.render.interface import RenderOptions

        label = "the server's output" + (" (its last part)" if ring.truncated else "")
        result = triage_stream(io.BytesIO(ring.getvalue()), label)
        say(TRIAGE_FORMATS["text"](TriageReport(result), RenderOptions()))
    except Exception as exc:  # triage must never hide the server's own status
        say(f"stackcheck: could not triage the output: {type(exc).__name__}: {exc}\n")


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _forward_signals(child: subprocess.Popen[bytes]) -> dict[int, Any]:
    """Install the handlers that pass each signal on to the server's process group, once."""

    def to_child(sig: int) -> None:
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            pass
        except OSError:
            with contextlib.suppress(OSError):
                os.kill(child.pid, sig)

    def forward(signum: int, _frame: object) -> None:
        to_child(signum)

    def stop(_signum: int, _frame: object) -> None:  # Ctrl-Z: the server stops with us
        to_child(signal.SIGSTOP)
        os.kill(os.getpid(), signal.SIGSTOP)

    def cont(_signum: int, _frame: object) -> None:
        to_child(signal.SIGCONT)

    previous: dict[int, Any] = {}
    handlers: list[tuple[int, Callable[[int, object], None]]] = [(s, forward) for s in FORWARDED]
    handlers += [(signal.SIGTSTP, stop), (signal.SIGCONT, cont)]
    for sig, handler in handlers:
        try:
            previous[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread: leave signals alone
            break
    return previous


def _restore_signals(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        with contextlib.suppress(ValueError, OSError, TypeError):
            signal.signal(sig, handler)
