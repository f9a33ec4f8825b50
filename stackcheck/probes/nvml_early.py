"""NVML started before anything else, in a thread, for the NVML probe to adopt.

The driver's start (nvmlInit) is the longest single wait of an audit on a GPU box, and NVML calls release the
interpreter lock (ctypes). So the command line starts it first (stackcheck.cli, from the words of the
command line, before argparse is even imported), in a daemon thread that also reads the driver, the GPUs and
their topology exactly as the NVML probe does (stackcheck.probes.nvml_read.read_nvml), and then shuts NVML down;
meanwhile the main thread imports, parses, loads the manifests and runs the other probes. The NVML probe,
when it runs with no injected NVML module, takes the started session (once: `take`) and waits for it; its
own timeout still bounds that wait (the runner abandons a probe that overruns), so a hung driver hangs
nothing. A session no probe took is dropped when the command ends (`discard`).

This module imports only threading at import time: the thread imports pynvml, and the NVML probe's reader
after nvmlInit has returned."""

from __future__ import annotations

import contextlib
import threading

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

#: how long `discard` waits for an unadopted session's thread before the interpreter may shut down
DISCARD_WAIT_S = 2.0


class Session:
    """One early NVML start: what importing pynvml, nvmlInit and the reads gave (exactly one of `result`,
    `import_error`, `init_error`, `error` is set once `done` is)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Any = None  # the NVML probe's ProbeResult
        self.import_error: ImportError | None = None  # `import pynvml` failed: the probe's fallback says so
        self.init_error: Exception | None = None  # nvmlInit failed: the probe's fallback, with its reason
        self.error: BaseException | None = None  # anything else: raised by the probe, as if it had raised
        self.thread = threading.Thread(target=self._run, name="stackcheck-nvml-early", daemon=True)

    def _run(self) -> None:
        try:
            try:
                import pynvml
            except ImportError as exc:
                self.import_error = exc
                return
            try:
                pynvml.nvmlInit()
            except Exception as exc:
                self.init_error = exc
                return
            try:
                from stackcheck.probes.nvml_read import read_nvml

                self.result = read_nvml(pynvml)
            finally:
                with contextlib.suppress(Exception):  # shutting down is best effort (as in the probe)
                    pynvml.nvmlShutdown()
        except BaseException as exc:  # handed to the probe, which raises it in its own thread
            self.error = exc
        finally:
            self.done.set()


_lock = threading.Lock()
_pending: list[Session] = []  # the started session no probe has taken yet (at most one)


def start() -> None:
    """Start NVML now in a daemon thread (once: a second call while one is pending does nothing)."""
    with _lock:
        if not _pending:
            _pending.append(Session())
            _pending[0].thread.start()


def take() -> Session | None:
    """The pending session, for the NVML probe: each start is adopted at most once."""
    with _lock:
        return _pending.pop() if _pending else None


def discard() -> None:
    """Drop a session that no probe took, waiting a little for its thread (see the module's docstring)."""
    session = take()
    if session is not None:
        session.done.wait(DISCARD_WAIT_S)
