"""Nothing leaks, nothing reaches a terminal raw, every write fails cleanly (issue 14, items 3, 4, 6, 11-13).

Each test plants something hostile where the box (or a user) can put it (a GPU name with escape sequences,
a token in a log or on the command line, a lone surrogate in a facts file, a link in /tmp) and runs the
real command line."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from cli_process import clean_env, run_stackcheck

from stackcheck.atomic import write_atomic
from stackcheck.errors import OutputError

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases"
H200 = CASES / "h200-newest" / "facts.json"
# a model the gate reads (tests/data/models/README.md): with an unread one SGLang's MiniCPM override may apply, which
# is blocked on this Python 3.12 box
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", str(ROOT / "tests" / "data" / "models" / "llama3-8b")]
CONTROLS = ("\x1b", "\x07", "\x9b", "\x85", "\u202e", "\r")
ESC_GPU = "NVIDIA H200\x1b]0;owned\x07\x1b[2J\x9b31m<img src=x onerror=alert(1)>\u202e"


def run(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.CompletedProcess[bytes]:
    return run_stackcheck(*args, env=clean_env(**(env or {})), text=False, **kw)


def hostile_facts(tmp_path: Path) -> Path:
    doc = json.loads(H200.read_text())
    f = doc["facts"]
    f["gpus"][0]["name"] = ESC_GPU
    f["driver"]["error"] = "nvidia-smi: \x1b[31mfailed\x1b[0m\x9b"
    f["packages"]["torch"]["version"] = "2.14.1+cu130\x1b[1A"
    f["system"]["os"] = "Ubuntu\x1b]8;;http://evil/\x07click\x1b]8;;\x07"
    doc["host"] = {"hostname": "node\x1b[2K\ud800\u202e7", "collected_at": "2026-12-01T00:00:00Z"}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    return path


# ---- item 6: control characters never reach a terminal -------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "prometheus", "nfd"])
def test_audit_formats_neutralise_controls(tmp_path: Path, fmt: str) -> None:
    proc = run("audit", "--facts", str(hostile_facts(tmp_path)), "--format", fmt)
    assert proc.returncode in (0, 1), proc.stderr
    out = proc.stdout.decode("utf-8")  # always valid UTF-8, whatever the facts held
    if fmt in ("text", "markdown", "json"):
        for raw in CONTROLS:
            assert raw not in out, (fmt, raw)
    if fmt == "markdown":
        assert "<img" not in out and "&lt;img src=x" in out
    if fmt == "json":
        assert json.loads(out)["facts"]["gpus"][0]["name"] == ESC_GPU  # the value itself is kept


def test_probe_and_colour_table_neutralise_controls(tmp_path: Path) -> None:
    facts = str(hostile_facts(tmp_path))
    out = run("probe", "--facts", facts).stdout.decode()
    assert not any(raw in out for raw in CONTROLS)
    from stackcheck.render import REPORT_FORMATS
    from stackcheck.render.interface import RenderOptions

    report = json.loads(run("audit", "--facts", facts, "--format", "json").stdout)
    coloured = REPORT_FORMATS["text"](report, RenderOptions(color=True))
    assert "\\x1b]0;owned" in coloured  # shown as text; stackcheck's own colour codes are the only ESC left
    assert "\x1b]0;owned" not in coloured and "\x07" not in coloured and "\x9b" not in coloured


def test_triage_neutralises_controls_and_secrets_in_every_format(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(
        b"[2026-11-29 10:00:00] server_args=ServerArgs(api_key='sk-live-abcdef123456', hf_token='hf_abcdefgh1234')\n"
        b"Traceback (most recent call last):\n"
        b'  File "/x/\x1b[31mevil.py", line 1, in <module>\n'
        b"RuntimeError: fetch https://bob:hunter2@hub.example/m failed \x1b]0;owned\x07 token=abc123xyz\n"
    )
    for fmt in ("text", "json"):
        proc = run("triage", str(log), "--format", fmt)
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout.decode()
        for secret in ("sk-live-abcdef123456", "hf_abcdefgh1234", "hunter2", "abc123xyz"):
            assert secret not in out, (fmt, secret)
        for raw in CONTROLS:
            assert raw not in out, (fmt, raw)
        assert "RuntimeError" in out


def test_gate_text_and_json_mask_the_command_line_on_every_path(tmp_path: Path) -> None:
    secret_args = ["--api-key", "s3cr3t-value-1", "--admin-api-key=s3cr3t-value-2", "--hf-token", "hf_s3cr3tvalue3",
                   "--model-path", "https://u:s3cr3t4@hub.example/m"]  # fmt: skip
    secrets = ("s3cr3t-value-1", "s3cr3t-value-2", "hf_s3cr3tvalue3", "s3cr3t4")
    cmd = [*LAUNCH, *secret_args, "--attention-backend", "\x1b[31mfa3"]
    for fmt in ("text", "json"):
        dry = run("gate", "--facts", str(H200), "--dry-run", "--format", fmt, "--", *cmd)
        assert dry.returncode == 1  # the unknown backend value refuses
        out = (dry.stdout + dry.stderr).decode()
        assert not any(s in out for s in secrets), out
        assert "\x1b" not in out
    # the exec path: the decision goes to stderr, and the server still gets its real arguments
    probe = "import sys; print(sys.argv[1:])"
    # (fa3 named: the model URL is not read, and SGLang's MiniCPM override, blocked on this Python 3.12 box, might
    # otherwise apply; --allow-unknown: with the model not read, fa3 is unknown since imodel2, as the model may be
    # Gemma 4, whose attention backends SGLang 0.5.13-0.5.23 assert without fa3)
    proc = run("gate", "--facts", str(H200), "--format", "json", "--allow-unknown", "--", sys.executable, "-c", probe,
               *secret_args, "--attention-backend", "fa3")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert not any(s.encode() in proc.stderr for s in secrets)
    assert b"s3cr3t-value-1" in proc.stdout  # the server's own output: its argv, unchanged


def test_fleet_csv_neutralises_formulas_and_controls(tmp_path: Path) -> None:
    report = json.loads(run("audit", "--facts", str(H200), "--format", "json").stdout)
    for i, name in enumerate(["=HYPERLINK(\"http://evil\")", "+1+cmd|' /C calc'!A0", "@SUM(1)", "-2+3", "\tx",
                              "ok\x1b[31m"]):  # fmt: skip
        report["host"]["hostname"] = name
        (tmp_path / f"{i}.json").write_text(json.dumps(report))
    proc = run("fleet", str(tmp_path), "--format", "csv", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    assert "\x1b" not in text
    for row in csv.DictReader(io.StringIO(text)):
        assert not row["hostname"].startswith(("=", "+", "-", "@", "\t")), row["hostname"]
    for fmt in ("text", "markdown"):
        out = run("fleet", str(tmp_path), "--format", fmt, "--jobs", "1").stdout.decode()
        assert "\x1b" not in out


def test_error_messages_are_terminal_safe(tmp_path: Path) -> None:
    proc = run("audit", "--facts", str(tmp_path / "no\x1b[2Jsuch.json"))
    assert proc.returncode == 2
    assert b"\x1b" not in proc.stderr and b"\\x1b[2J" in proc.stderr


# ---- item 11: lone surrogates and bytes that are not UTF-8 -------------------------------------------


def test_surrogates_in_facts_env_and_argv_are_escaped_and_no_tmp_file_is_left(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    facts = hostile_facts(tmp_path)
    env_bytes = {**os.environ, "NCCL_SOCKET_IFNAME": "eth\udcff"}  # the byte \xff, as os.environ holds it
    for fmt in ("json", "text", "markdown", "prometheus", "nfd"):
        target = out_dir / f"r.{fmt}"
        proc = subprocess.run(
            [sys.executable, "-m", "stackcheck", "audit", "--facts", str(facts), "--format", fmt, "--output",
             str(target)],
            capture_output=True, timeout=120, env=env_bytes,
        )  # fmt: skip
        assert proc.returncode in (0, 1), proc.stderr
        target.read_text(encoding="utf-8")
    live = subprocess.run(
        [sys.executable, "-m", "stackcheck", "probe", "--format", "json", "--output", str(out_dir / "p.json")],
        capture_output=True, timeout=120, env=env_bytes,
    )  # fmt: skip
    assert live.returncode == 0, live.stderr
    env_out = json.loads((out_dir / "p.json").read_text())["facts"]["system"]["env"]
    assert env_out["NCCL_SOCKET_IFNAME"] == "eth\udcff"  # kept as the escape \udcff: valid JSON, no crash
    argv = subprocess.run(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", str(H200), "--dry-run", "--",
         *LAUNCH, os.fsdecode(b"--served-model-name=\xff")],
        capture_output=True, timeout=120,
    )  # fmt: skip
    assert argv.returncode == 0, argv.stderr
    argv.stdout.decode("utf-8")
    # a flag the release does not declare is refused, its undecodable byte shown as an escape
    refused = subprocess.run(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", str(H200), "--dry-run", "--",
         *LAUNCH, os.fsdecode(b"--x\xff=1")],
        capture_output=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 1, refused.stderr
    assert "REFUSE --x\\udcff [command]" in refused.stdout.decode("utf-8")
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(
        ["r.json", "r.text", "r.markdown", "r.prometheus", "r.nfd", "p.json"]
    )


@pytest.mark.parametrize("where", ["write", "fsync", "chmod", "replace", "interrupt"])
def test_output_never_leaves_a_tmp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")

    def boom(*_a: object, **_k: object) -> None:
        if where == "interrupt":
            raise KeyboardInterrupt
        raise OSError(28, "No space left on device")

    if where == "write":
        real_fdopen = os.fdopen

        class Full(io.BufferedWriter):
            def write(self, _data: Any) -> int:
                raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "fdopen", lambda fd, mode: Full(real_fdopen(fd, "wb", buffering=0)))
    else:
        monkeypatch.setattr(os, {"interrupt": "replace"}.get(where, where), boom)
    with contextlib.suppress(OutputError, KeyboardInterrupt):
        write_atomic(target, "new \udcff text")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_surrogate_text_is_written_as_an_escape(tmp_path: Path) -> None:
    target = tmp_path / "o.txt"
    write_atomic(target, "host \ud800")
    assert target.read_text() == "host \\ud800"


# ---- item 12: exit codes of the unusual paths ------------------------------------------------------


def test_gate_with_an_empty_command_is_127_with_one_line() -> None:
    for watch in ([], ["--watch"]):
        proc = run("gate", "--facts", str(H200), *watch, "--", "")
        assert proc.returncode == 127, proc.stderr
        lines = proc.stderr.decode().strip().splitlines()
        assert len(lines) == 1 and "command not found" in lines[0], lines


def test_output_to_a_self_symlink_is_exit_2(tmp_path: Path) -> None:
    link = tmp_path / "loop.json"
    link.symlink_to(link.name)
    proc = run("audit", "--facts", str(H200), "--format", "json", "--output", str(link))
    assert proc.returncode == 2
    assert len(proc.stderr.decode().strip().splitlines()) == 1 and b"symbolic links" in proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["loop.json"]


@pytest.mark.parametrize("verb", ["audit", "gate", "triage", "fleet", "manifests", "version"])
def test_closed_stdout_is_exit_2(verb: str) -> None:
    args = {
        "audit": ["audit", "--facts", str(H200)],
        "gate": ["gate", "--facts", str(H200), "--dry-run", "--", *LAUNCH],
        "triage": ["triage", str(ROOT / "tests" / "data" / "logs" / "oom.log")],
        "fleet": ["fleet", str(H200)],
        "manifests": ["manifests", "validate", str(ROOT / "tests")],
        "version": ["--version"],
    }[verb]
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        timeout=120, cwd=ROOT, close_fds=True, pass_fds=(), preexec_fn=lambda: os.close(1),
    )  # fmt: skip
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert "Traceback" not in err and "standard output is closed" in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_dev_full_is_exit_2_with_one_line() -> None:
    oom = str(ROOT / "tests" / "data" / "logs" / "oom.log")
    for args in (["audit", "--facts", str(H200), "--format", "json"], ["triage", oom]):
        with open("/dev/full", "wb") as full:
            proc = subprocess.run(
                [sys.executable, "-m", "stackcheck", *args], stdout=full, stderr=subprocess.PIPE, timeout=120
            )
        err = proc.stderr.decode().strip().splitlines()
        assert proc.returncode == 2, err
        assert len(err) == 1 and "No space left on device" in err[0], err
    with open("/dev/full", "wb") as full:  # --output /dev/full: a device, written in place
        proc = subprocess.run(
            [sys.executable, "-m", "stackcheck", "audit", "--facts", str(H200), "--output", "/dev/full"],
            stdout=full, stderr=subprocess.PIPE, timeout=120,
        )  # fmt: skip
    assert proc.returncode == 2 and b"No space left" in proc.stderr


def test_output_to_a_fifo_without_reader_is_an_error_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="no reader"):
        write_atomic(fifo, "x")


# ---- item 13: links planted in a sticky world-writable directory ------------------------------------


def _sticky_tmp() -> str:
    st = os.stat(tempfile.gettempdir())
    if not (st.st_mode & stat.S_ISVTX and st.st_mode & stat.S_IWOTH):
        pytest.skip("the temporary directory is not sticky and world-writable")
    return tempfile.gettempdir()


def test_a_link_planted_by_another_user_in_tmp_is_not_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    victim = tmp_path / "root-owned.conf"
    victim.write_text("precious")
    sticky = _sticky_tmp()
    link = Path(tempfile.mktemp(prefix="stackcheck-plant-", suffix=".json", dir=sticky))
    link.symlink_to(victim)
    try:
        if os.geteuid() == 0:
            os.lchown(link, 65534, 65534)  # planted by "nobody", followed by root
        else:
            monkeypatch.setattr(os, "geteuid", lambda: 0)  # we planted it; root would follow it
        with pytest.raises(OutputError, match="protected_symlinks"):
            write_atomic(link, "report")
        assert victim.read_text() == "precious" and link.is_symlink()
    finally:
        link.unlink()


def test_own_links_in_tmp_are_still_followed(tmp_path: Path) -> None:
    sticky = _sticky_tmp()
    real = tmp_path / "real.json"
    link = Path(tempfile.mktemp(prefix="stackcheck-own-", suffix=".json", dir=sticky))
    link.symlink_to(real)
    try:
        write_atomic(link, "mine")
        assert real.read_text() == "mine"
    finally:
        link.unlink()


def test_examples_write_under_a_private_directory(tmp_path: Path) -> None:
    for script in (ROOT / "examples" / "slurm" / "prolog.sh", ROOT / "examples" / "gate" / "shell.sh"):
        text = script.read_text()
        code = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
        assert not any("/tmp/" in ln for ln in code), script  # no predictable /tmp path
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    fake = tmp_path / "bin" / "stackcheck"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/args\nexit 0\n')
    fake.chmod(0o755)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    env = {"PATH": f"{fake.parent}:/usr/bin:/bin", "SLURM_JOB_ID": "7", "TMPDIR": str(tmp_path),
           "STACKCHECK_REPORT_DIR": str(blocker / "reports")}  # fmt: skip
    proc = subprocess.run([bash, str(ROOT / "examples" / "slurm" / "prolog.sh")], env=env, capture_output=True,
                          text=True, timeout=30)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = (tmp_path / "args").read_text().split()
    report = Path(out[out.index("--output") + 1])
    assert report.name == "7.json" and report.parent.parent == tmp_path
    assert report.parent.name.startswith("stackcheck-prolog.") and len(report.parent.name) > 20
    assert stat.S_IMODE(report.parent.stat().st_mode) == 0o700


def test_home_directories_never_show_in_probe_reasons(tmp_path: Path) -> None:
    home = tmp_path / "home" / "alice-private-name"
    site = home / ".venv" / "site-packages"
    (site / "sglang-0.5.9.dist-info").mkdir(parents=True)  # no METADATA: the probe's reason names the path
    env = {"HOME": str(home), "PYTHONPATH": f"{ROOT}:{site}"}
    proc = run("audit", "--format", "json", env=env)
    report = json.loads(proc.stdout)
    reasons = " ".join(str(p.get("reason")) for p in report["probes"])
    assert "~/.venv/site-packages/sglang-0.5.9.dist-info" in reasons
    assert "alice-private-name" not in proc.stdout.decode() + proc.stderr.decode()


@pytest.mark.parametrize(
    "args", [["audit", "--facts", "-"], ["triage", "-"], ["fleet", "-"]], ids=["facts", "triage", "fleet"]
)
def test_closed_stdin_is_exit_2(args: list[str]) -> None:
    """Found in the adversarial pass: `<&-` left sys.stdin None, and reading '-' was exit 4."""
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", *args], stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
        cwd=ROOT, preexec_fn=lambda: os.close(0),
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert b"standard input is closed" in proc.stderr and b"Traceback" not in proc.stderr
