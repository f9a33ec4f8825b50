"""Run a server as a child, pass its output through unchanged, say when it is ready, and when it dies early
print the triaged root cause instead of leaving the user to tail the log (`stackcheck gate --watch`).

The child's stdout and stderr are copied byte for byte to ours (in chunks, as they arrive) and appended to
a temporary log file on disk, so memory stays bounded however long the server runs. SIGINT, SIGTERM, SIGHUP
and SIGQUIT are forwarded to the child. The exit status is the child's (128 + N when a signal N ended it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import BinaryIO

SGLANG_READY = b"The server is fired up"
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
CHUNK = 65536


class _Copier(threading.Thread):
    """Copies one pipe to one of our file descriptors and to the shared log, watching for `ready`."""

    def __init__(
        self,
        src: BinaryIO,
        dst_fd: int,
        log: BinaryIO,
        lock: threading.Lock,
        ready: bytes,
        on_ready: Callable[[], None],
    ) -> None:
        super().__init__(daemon=True)
        self.src, self.dst_fd, self.log, self.lock = src, dst_fd, log, lock
        self.ready, self.on_ready = ready, on_ready
        self.tail = b""

    def run(self) -> None:
        fd = self.src.fileno()
        while True:
            try:
                data = os.read(fd, CHUNK)
            except OSError:
                return
            if not data:
                return
            _write_all(self.dst_fd, data)
            with self.lock:
                self.log.write(data)
            if self.ready:
                window = self.tail + data
                if self.ready in window:
                    self.on_ready()
                    self.ready = b""
                self.tail = window[-len(self.ready) :] if self.ready else b""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BrokenPipeError:
            return  # our reader went away; keep the server running and keep logging
        except InterruptedError:
            continue
        view = view[n:]


def watch(command: list[str], ready: bytes = SGLANG_READY, report: Callable[[str], None] | None = None) -> int:
    """Run `command`, pass its output through, and triage its log if it dies with a failure status."""
    say = report or (lambda text: (sys.stderr.write(text), sys.stderr.flush()))
    sys.stdout.flush()
    sys.stderr.flush()
    start = time.monotonic()
    state = {"ready": False}

    def on_ready() -> None:
        state["ready"] = True
        say(f"stackcheck: the server is ready after {time.monotonic() - start:.1f} s\n")

    with tempfile.NamedTemporaryFile(prefix="stackcheck-watch-", suffix=".log") as log:
        try:
            child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except FileNotFoundError:
            say(f"stackcheck gate: {command[0]}: command not found\n")
            return 127
        except OSError as exc:
            say(f"stackcheck gate: {command[0]}: cannot execute: {exc.strerror or exc}\n")
            return 126
        previous = {}
        for sig in FORWARDED:
            try:
                previous[sig] = signal.signal(sig, lambda signum, _frame: child.send_signal(signum))
            except ValueError:  # not the main thread: leave signals alone
                break
        lock = threading.Lock()
        assert child.stdout is not None and child.stderr is not None
        copiers = [
            _Copier(child.stdout, sys.stdout.fileno(), log, lock, ready, on_ready),  # type: ignore[arg-type]
            _Copier(child.stderr, sys.stderr.fileno(), log, lock, ready, on_ready),  # type: ignore[arg-type]
        ]
        for c in copiers:
            c.start()
        try:
            status = child.wait()
            for c in copiers:
                c.join()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        code = status if status >= 0 else 128 - status
        if status != 0:
            log.flush()
            elapsed = time.monotonic() - start
            how = f"exit status {status}" if status > 0 else f"signal {-status}"
            when = "after it was ready" if state["ready"] else "before it was ready"
            say(f"\nstackcheck: the server ended with {how} {when}, after {elapsed:.1f} s\n")
            try:
                from stackcheck.triage import render_text, triage_file

                say(render_text(triage_file(log.name)))
            except Exception as exc:  # triage must never hide the server's own status
                say(f"stackcheck: could not triage the log: {type(exc).__name__}: {exc}\n")
        return code
