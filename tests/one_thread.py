"""Wait for the threads an earlier test left behind, for tests that need a single-threaded process (the forked NVML
reader starts only in one).

A test that abandons a hung probe releases it at its end, but the probe's thread needs a moment to finish; a test
of the forked reader run right after it (another order, a loaded machine) found two threads and skipped itself, so
which fork tests ran depended on the order and the load (2 of them skipped in one of 4 shuffled runs of
tests/probes). Waiting for those threads first makes the skip a real answer: a thread that is still there after
`timeout_s` is named in the reason.
"""

from __future__ import annotations

import threading
import time


def wait_for_one_thread(timeout_s: float = 10.0) -> str | None:
    """None once this process runs only its main thread (waiting at most `timeout_s` for the others to end), else
    the names of the threads still running."""
    deadline = time.monotonic() + timeout_s
    main = threading.main_thread()
    for thread in threading.enumerate():
        if thread is not main:
            thread.join(max(0.0, deadline - time.monotonic()))
    left = [t.name for t in threading.enumerate() if t is not main]
    return ", ".join(left) if left else None
