"""gate --watch: output passes through unchanged, readiness is reported, an early death is triaged."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

H200 = str(Path(__file__).parent.parent / "cases" / "h200-newest" / "facts.json")

READY_THEN_EXIT = r"""
import sys
sys.stdout.write("stdout line\n"); sys.stdout.flush()
sys.stderr.write("[2026-11-29 10:00:00] The server is fired up and ready to roll!\n"); sys.stderr.flush()
sys.stdout.buffer.write(b"bytes \xff\xfe kept\n")
"""

CRASH = r"""
import sys
sys.stderr.write('''[2026-11-29 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/distributed/parallel_state.py", line 300, in __init__
    self.torch_symm_mem_comm = TorchSymmMemCommunicator(group=self.device_group, device=self.device)
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/distributed/device_communicators/torch_symm_mem.py", \
line 58, in __init__
    self.max_size = TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES[self.device_capability][self.world_size]
KeyError: 12

[2026-11-29 10:00:02] Rank 0 scheduler is dead. Please check if there are relevant logs.
''')
sys.exit(3)
"""


def gate(*cmd: str, **kw: object) -> subprocess.CompletedProcess[bytes]:
    proc: subprocess.CompletedProcess[bytes] = subprocess.run(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--", *cmd],
        capture_output=True,
        timeout=120,
        cwd="/",
        **kw,
    )  # type: ignore[call-overload]
    return proc


def test_output_passes_through_and_ready_is_reported() -> None:
    proc = gate(sys.executable, "-c", READY_THEN_EXIT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"stdout line\nbytes \xff\xfe kept\n"
    assert b"The server is fired up and ready to roll!\n" in proc.stderr
    assert b"stackcheck: the server is ready after" in proc.stderr
    assert b"root cause" not in proc.stderr


def test_early_death_is_triaged_and_the_status_is_the_servers() -> None:
    proc = gate(sys.executable, "-c", CRASH)
    assert proc.returncode == 3
    err = proc.stderr.decode()
    assert "the server ended with exit status 3 before it was ready" in err
    root = err[err.index("root cause") :]
    assert "KeyError: 12" in root and "torch_symm_mem.py:58" in root


def test_signals_are_forwarded_to_the_server(tmp_path: Path) -> None:
    marker = tmp_path / "got-term"
    script = (
        "import signal, sys, time\n"
        f"signal.signal(signal.SIGTERM, lambda *a: (open({str(marker)!r}, 'w').close(), sys.exit(0)))\n"
        "print('up', flush=True)\n"
        "time.sleep(60)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--", sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd="/",
    ) as p:
        assert p.stdout is not None
        assert p.stdout.readline() == b"up\n"
        os.kill(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert p.returncode == 0
    assert marker.exists()


def test_missing_command_is_127() -> None:
    assert gate("/nonexistent/server").returncode == 127


# ---- issue 14, items 7-9: nothing hangs, nothing dies unnoticed ----------------------------------------


def _pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            state = next((ln for ln in fh if ln.startswith("State:")), "")
    except OSError:
        return False
    return "Z" not in state.split(":", 1)[1][:3]


def _wait_for(path: Path, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def test_a_full_log_disk_never_blocks_the_server(tmp_path: Path) -> None:
    """The --log file hits its size limit (RLIMIT_FSIZE: what a full disk looks like to a writer): the
    server's 4 MB still pass through, it exits 0, and the gate says how much of the log was not kept."""
    import resource

    script = "import sys\nfor i in range(4096):\n    sys.stdout.write('x' * 1023 + '\\n')\nsys.stdout.flush()\n"
    log = tmp_path / "server.log"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))

    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--log", str(log), "--",
         sys.executable, "-c", script],
        capture_output=True, timeout=120, cwd="/", preexec_fn=small_files,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout) == 4096 * 1024
    assert b"bytes were not written: File too large" in proc.stderr
    assert 0 < log.stat().st_size <= 64 * 1024


def test_the_copy_for_triage_is_a_ring_of_the_last_part(tmp_path: Path) -> None:
    noise = "import sys\nfor i in range(20000):\n    sys.stderr.write(f'[2026-11-29 10:00:00] noise line {i}\\n')\n"
    proc = gate(sys.executable, "-c", noise + CRASH.replace("import sys\n", ""))
    assert proc.returncode == 3
    err = proc.stderr.decode()
    assert "its output was not kept on disk (use --log FILE to keep it)" in err
    big = subprocess.run(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--log-keep", "0.05", "--",
         sys.executable, "-c", noise + CRASH.replace("import sys\n", "")],
        capture_output=True, timeout=120, cwd="/",
    )  # fmt: skip
    tail = big.stderr.decode()
    assert big.returncode == 3
    assert "triage reads the last 52428 bytes" in tail
    assert "KeyError: 12" in tail[tail.index("root cause") :]


def test_the_death_is_reported_when_the_server_dies_not_when_its_children_let_go(tmp_path: Path) -> None:
    pidfile = tmp_path / "sleeper"
    script = (
        "import subprocess, sys\n"
        "p = subprocess.Popen(['sleep', '300'])\n"  # inherits the server's stdout and stderr
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "sys.stderr.write('RuntimeError: boom\\n'); sys.exit(3)\n"
    )
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--drain", "1", "--",
         sys.executable, "-c", script],
        capture_output=True, timeout=120, cwd="/",
    )  # fmt: skip
    took = time.monotonic() - start
    sleeper = int(_wait_for(pidfile))
    try:
        assert proc.returncode == 3
        assert took < 30, took  # not 300 s
        err = proc.stderr.decode()
        assert "still held its output open 1 s after it ended" in err
        reported = float(err.split("before it was ready, after ")[1].split(" s")[0])
        assert reported < took and reported < 20
    finally:
        with contextlib.suppress(OSError):
            os.kill(sleeper, signal.SIGKILL)


def test_sigkill_of_the_gate_kills_the_server(tmp_path: Path) -> None:
    pidfile = tmp_path / "server"
    script = f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n"
    gate_proc = subprocess.Popen(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--", sys.executable, "-c", script],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
    )  # fmt: skip
    try:
        server = int(_wait_for(pidfile))
        assert _pid_alive(server)
        gate_proc.kill()  # SIGKILL: no handler, no cleanup in the gate
        gate_proc.wait(30)
        deadline = time.monotonic() + 20
        while _pid_alive(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _pid_alive(server), "the server outlived its SIGKILLed gate"
    finally:
        if gate_proc.poll() is None:
            gate_proc.kill()
        if pidfile.exists() and pidfile.read_text().strip():
            with contextlib.suppress(OSError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_ctrl_c_on_a_terminal_reaches_the_server_once(tmp_path: Path) -> None:
    """A real pseudo-terminal: the gate is the foreground process group, and ^C makes the line discipline
    send SIGINT to that group. The server (in its own group) must get SIGINT once, from the gate (sent by
    the gate's pid), never from the terminal itself: two SIGINTs so close together would merge into one
    pending signal, so the test reads who sent each one (sigtimedwait's siginfo) instead of counting."""
    import pty

    infos = tmp_path / "infos"
    ready = tmp_path / "ready"
    script = (
        "import json, signal\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n"
        f"open({str(ready)!r}, 'w').write('1')\n"
        "got = []\n"
        "info = signal.sigtimedwait({signal.SIGINT}, 60)\n"
        "while info is not None:\n"
        "    got.append([info.si_code, info.si_pid])\n"
        "    info = signal.sigtimedwait({signal.SIGINT}, 1.5)\n"
        f"open({str(infos)!r}, 'w').write(json.dumps(got))\n"
    )
    pid, master = pty.fork()
    if pid == 0:  # the child: session leader on the pty, its foreground group: exec the gate
        try:
            os.execv(
                sys.executable,
                [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--", sys.executable,
                 "-c", script],
            )  # fmt: skip
        finally:
            os._exit(127)
    try:
        _wait_for(ready)
        time.sleep(0.2)
        os.write(master, b"\x03")  # ^C, as typed
        got = json.loads(_wait_for(infos))
        si_user = 0
        assert got == [[si_user, pid]], got  # once, from the gate; never the terminal's (SI_KERNEL)
        deadline = time.monotonic() + 30
        status = None
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            with contextlib.suppress(OSError):
                os.read(master, 65536)  # keep the pty drained
            time.sleep(0.05)
        assert status is not None and os.waitstatus_to_exitcode(status) == 0
    finally:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        os.close(master)


def test_a_server_killed_by_a_signal_gives_128_plus_n() -> None:
    proc = gate(sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)")
    assert proc.returncode == 128 + signal.SIGTERM
    assert b"the server ended with signal 15" in proc.stderr


def test_the_ready_line_starts_on_its_own_line() -> None:
    script = (
        "import sys, time\n"
        "sys.stderr.write('loading The server is fired up and ready'); sys.stderr.flush()\n"
        "time.sleep(0.3)\n"
        "sys.stderr.write(' to roll!\\n'); sys.stderr.flush()\n"
    )
    proc = gate(sys.executable, "-c", script)
    assert proc.returncode == 0
    err = proc.stderr.decode()
    assert "\nstackcheck: the server is ready after" in err
    assert "readystackcheck" not in err


def test_a_closed_stdout_of_the_gate_does_not_block_the_server() -> None:
    script = "import sys\nfor i in range(2000):\n    print('y' * 1000)\nsys.stderr.write('done\\n')\n"
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--", sys.executable, "-c", script],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120, cwd="/",
        preexec_fn=lambda: os.close(1),
    )  # fmt: skip
    assert proc.returncode in (0, 1)  # the server's own status (print to our closed stdout is its business)
    assert b"Traceback" not in proc.stderr.split(b"stackcheck:")[-1]


def test_the_log_file_never_follows_a_link_another_user_planted_in_tmp(tmp_path: Path) -> None:
    """Found in the adversarial pass: --log followed any link, so a root job could append to a file a user
    pointed a /tmp link at (the same attack as --output's, item 13)."""
    import stat
    import tempfile

    sticky = tempfile.gettempdir()
    st = os.stat(sticky)
    if not (st.st_mode & stat.S_ISVTX and st.st_mode & stat.S_IWOTH) or os.geteuid() != 0:
        import pytest

        pytest.skip("needs root and a sticky world-writable temporary directory")
    victim = tmp_path / "victim"
    victim.write_text("precious")
    link = Path(tempfile.mktemp(prefix="stackcheck-log-", dir=sticky))
    link.symlink_to(victim)
    os.lchown(link, 65534, 65534)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--log", str(link), "--", "true"],
            capture_output=True, timeout=60, cwd="/",
        )  # fmt: skip
        assert proc.returncode == 2 and b"protected_symlinks" in proc.stderr
        assert victim.read_text() == "precious"
    finally:
        link.unlink()


def test_only_the_main_thread_takes_the_signals_the_gate_handles(tmp_path: Path) -> None:
    """Python runs a signal handler in the main thread, once its system call (waitpid on the server) is
    interrupted. A SIGCONT the kernel gave to an output-copier thread interrupted nothing: the main thread slept
    on in waitpid, the handler that continues the server never ran, and after ^Z and `fg` the server stayed
    stopped (1 in 15 tries on a loaded box). Every other thread of a watching gate must block those signals."""
    pidfile = tmp_path / "server"
    code = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(30)"
    log = tmp_path / "server.log"  # --log starts the log writer's thread too
    gate_proc = subprocess.Popen(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--log", str(log), "--",
         sys.executable, "-c", code],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for(pidfile)
        time.sleep(0.3)
        handled = {signal.SIGCONT, signal.SIGTSTP, signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}
        masks = {}
        for task in sorted(os.listdir(f"/proc/{gate_proc.pid}/task")):
            status = Path(f"/proc/{gate_proc.pid}/task/{task}/status").read_text()
            blocked = int(status.split("SigBlk:")[1].split()[0], 16)
            masks[int(task)] = {s for s in handled if blocked & (1 << (int(s) - 1))}
        assert len(masks) >= 3, masks  # the main thread and at least the two copiers
        assert masks[gate_proc.pid] == set(), masks  # the main thread takes them all
        others = {tid: got for tid, got in masks.items() if tid != gate_proc.pid}
        assert all(got == handled for got in others.values()), others
    finally:
        gate_proc.kill()
        gate_proc.wait()
        if pidfile.exists() and pidfile.read_text().strip():
            with contextlib.suppress(OSError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_a_relative_log_is_the_shells_file_under_cwd(tmp_path: Path) -> None:
    """`gate --cwd DIR --watch --log server.log`: the server runs in DIR (igap38), while the log file named relative
    is the one of the directory the gate was started in. Fails before: the gate entered DIR before --watch opened
    the log, so the log landed in DIR/server.log."""
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--log", "server.log", "--cwd",
         str(there), "--", sys.executable, "-c", "import os; print('ran in', os.getcwd())"],
        capture_output=True, timeout=120, cwd=here,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"ran in {there}".encode() in proc.stdout
    assert (here / "server.log").is_file(), sorted(os.listdir(there))
    assert not (there / "server.log").exists()
