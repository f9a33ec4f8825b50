"""ismall, finding two: `stackcheck triage` on what a path names besides a file never hangs.

Before: `triage /dev/zero` read one endless line forever (a LINE_CAP window at a time), `triage FIFO` waited in
open() for a writer that never came, and `triage <(zcat log.gz)` (a pipe) failed 'not seekable' on the gzip sniff's
seek. Each runs in a child with a timeout."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest
from cli_process import clean_env, run_stackcheck

ROOT = Path(__file__).resolve().parents[1]
LOG = b'Traceback (most recent call last):\n  File "a.py", line 3, in f\nRuntimeError: the ismall pipe error\n'


def run(*args: str, timeout: float = 30, pass_fds: tuple[int, ...] = ()) -> subprocess.CompletedProcess[str]:
    return run_stackcheck("triage", *args, env=clean_env(PYTHONPATH=str(ROOT)), timeout=timeout,
                          stdin=subprocess.DEVNULL, pass_fds=pass_fds)  # fmt: skip


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_character_device_is_bad_input_not_a_hang(device: str) -> None:
    proc = run(device)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (f"stackcheck: error: {device}: a character device, not a log file (a device "
                                   "such as /dev/zero never ends)")  # fmt: skip
    assert proc.stdout == ""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_without_a_writer_is_bad_input_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "server.log"
    os.mkfifo(fifo)
    proc = run(str(fifo), timeout=20)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and f"{fifo}: a named pipe with nothing in it" in proc.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("gzipped", [False, True])
def test_a_named_pipe_with_a_writer_is_read_to_its_end(tmp_path: Path, gzipped: bool) -> None:
    import gzip

    fifo = tmp_path / "server.log"
    os.mkfifo(fifo)
    data = gzip.compress(LOG) if gzipped else LOG

    def write() -> None:
        with open(fifo, "wb") as w:  # blocks until triage opens the pipe, then writes slowly
            for i in range(0, len(data), 7):
                w.write(data[i : i + 7])
                w.flush()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    proc = run(str(fifo), "--format", "json", timeout=20)
    writer.join(timeout=10)
    assert proc.returncode == 0, proc.stderr
    assert "the ismall pipe error" in proc.stdout


def test_a_pipe_given_by_its_fd_path_is_read() -> None:
    # `triage <(zcat server.log.gz)`: the shell passes /dev/fd/N, a pipe; before, the gzip sniff's seek failed
    r, w = os.pipe()
    try:
        os.write(w, LOG)
        os.close(w)
        proc = run(f"/dev/fd/{r}", "--format", "json", pass_fds=(r,))
    finally:
        os.close(r)
    assert proc.returncode == 0, proc.stderr
    assert "the ismall pipe error" in proc.stdout


def test_a_regular_file_and_a_gzip_file_are_read_as_before(tmp_path: Path) -> None:
    import gzip

    (tmp_path / "a.log").write_bytes(LOG)
    (tmp_path / "a.log.gz").write_bytes(gzip.compress(LOG))
    for name in ("a.log", "a.log.gz"):
        proc = run(str(tmp_path / name), "--format", "json")
        assert proc.returncode == 0 and "the ismall pipe error" in proc.stdout, proc.stderr
