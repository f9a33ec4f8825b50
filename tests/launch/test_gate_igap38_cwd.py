"""`stackcheck gate --cwd DIR -- COMMAND` (igap38, issue 16): the directory the server starts in, read wherever the
gate reads the launch's working directory (a ./sglang checkout shadowing the installed one, a relative
--model-path, a relative SGLANG_NCCL_SO_PATH) and the one the server runs in; a DIR that is missing or not a
directory exits 2 with one line. Before, the gate read its own working directory only: run from elsewhere, a
launch meant for a checkout was judged with the installed sglang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from elfwriter import build_so

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, nccl_so_path
from stackcheck.readers.fsview import HostView

XY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def add_dist(site: Path, name: str, version: str) -> None:
    """An installed distribution's dist-info (METADATA's name and version)."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def checkout(directory: Path, version: str) -> Path:
    """An SGLang source tree's python/ folder: sglang/__init__.py and the _version.py setuptools-scm writes."""
    (directory / "sglang").mkdir(parents=True)
    (directory / "sglang/__init__.py").write_text("from sglang.version import __version__\n")
    (directory / "sglang/_version.py").write_text(f"__version__ = version = '{version}'\n")
    return directory


REPO = Path(__file__).parent.parent.parent


def _gate(
    run_in: Path, tmp_path: Path, *gate_args: str, command: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    drop = ("VIRTUAL_ENV", "CONDA_PREFIX", "STACKCHECK_PYTHON", "COLUMNS", "SGLANG_NCCL_SO_PATH")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(tmp_path / "cache"))
    argv = [sys.executable, "-m", "stackcheck", "gate", *gate_args, "--", *(command or [])]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=run_in, timeout=120)


def _venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    add_dist(venv / "lib" / f"python{XY}" / "site-packages", "sglang", "0.5.9")
    return venv


DRY = ("--dry-run", "--format", "json", "--assume-gpu", "9.0x8", "--assume-driver", "580.95.05", "--require",
       "torch-symm-mem")  # fmt: skip


def test_the_checkout_in_cwd_is_judged_from_elsewhere(tmp_path: Path) -> None:
    venv = _venv(tmp_path)
    co = checkout(tmp_path / "co", "0.5.3")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    line = [str(venv / "bin/python"), "-m", "sglang.launch_server", "--model-path", "/nonexistent"]
    plain = json.loads(_gate(elsewhere, tmp_path, *DRY, command=line).stdout)
    assert plain["sglang"] == "0.5.9" and "shadowed" not in plain
    # the same launch told to start in the checkout (fails on the parent: --cwd was no gate option)
    proc = _gate(elsewhere, tmp_path, *DRY, "--cwd", "../co", command=line)
    doc = json.loads(proc.stdout)
    assert doc["sglang"] == "0.5.3", proc.stderr
    (shadow,) = doc["shadowed"]
    assert shadow.startswith(f"sglang is imported from {co}/sglang") and "not the installed 0.5.9" in shadow


@pytest.mark.parametrize(("name", "words"), [("missing", "does not exist"), ("file", "is not a directory")])
def test_a_bad_cwd_is_one_line_and_exit_2(tmp_path: Path, name: str, words: str) -> None:
    (tmp_path / "file").write_text("")
    proc = _gate(tmp_path, tmp_path, "--dry-run", "--cwd", name, command=["python3", "-m", "sglang.launch_server"])
    assert proc.returncode == 2 and proc.stdout == "", (proc.returncode, proc.stdout)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"--cwd {name}: {words}" in lines[0] and "Traceback" not in proc.stderr, lines


@pytest.mark.skipif(os.geteuid() == 0, reason="root enters any directory")
def test_an_unreadable_cwd_is_one_line_and_exit_2(tmp_path: Path) -> None:
    shut = tmp_path / "shut"
    shut.mkdir(mode=0)
    try:
        proc = _gate(
            tmp_path, tmp_path, "--dry-run", "--cwd", "shut", command=["python3", "-m", "sglang.launch_server"]
        )
    finally:
        shut.chmod(0o755)
    assert proc.returncode == 2 and "--cwd shut: not readable" in proc.stderr, proc.stderr


def test_the_server_runs_in_cwd(tmp_path: Path) -> None:
    """No SGLang launch (nothing to judge): the gate execs the command, which starts in DIR."""
    target = tmp_path / "there"
    target.mkdir()
    proc = _gate(tmp_path, tmp_path, "--quiet", "--cwd", "there", command=["/bin/sh", "-c", "pwd"])
    assert proc.returncode == 0 and proc.stdout.strip() == str(target), (proc.stdout, proc.stderr)


def test_a_relative_nccl_so_path_is_read_from_cwd(tmp_path: Path) -> None:
    lib = tmp_path / "co" / "nccl" / "libnccl.so.2"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(build_so(defined=list(PYNCCL_FUNCTIONS), soname="libnccl.so.2"))
    env = {"SGLANG_NCCL_SO_PATH": "nccl/libnccl.so.2"}
    assert nccl_so_path(env, HostView())["nccl_so_path_found"] is None  # the working directory not known
    got = nccl_so_path(env, HostView(), cwd=str(tmp_path / "co"))
    assert got["nccl_so_path"] == "nccl/libnccl.so.2" and got["nccl_so_path_found"] is True, got
    assert nccl_so_path(env, HostView(), cwd=str(tmp_path))["nccl_so_path_found"] is False  # not there
    # a bare name stays the loader's to find
    assert (
        nccl_so_path({"SGLANG_NCCL_SO_PATH": "libnccl-x.so"}, HostView(), cwd=str(tmp_path))["nccl_so_path_found"]
        is None
    )


def test_the_probes_take_the_launch_cwd(tmp_path: Path) -> None:
    """The pipeline hands the launch's directory to the jit probe only where it was given (Options.cwd)."""
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import gather

    lib = tmp_path / "co" / "nccl" / "libnccl.so.2"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(build_so(defined=list(PYNCCL_FUNCTIONS), soname="libnccl.so.2"))
    command = ["env", "SGLANG_NCCL_SO_PATH=nccl/libnccl.so.2", sys.executable, "-m", "sglang.launch_server"]

    def found(cwd: str | None) -> object:
        opts = Options(assume_gpu="9.0x8", assume_driver="580.95.05", python=sys.executable, timeout_s=60.0)
        opts.command, opts.cwd = command, cwd
        facts = gather(opts)[0]
        return facts["jit"]["nccl_so_path_found"]

    assert found(None) is None
    assert found(str(tmp_path / "co")) is True


def test_a_relative_model_path_is_read_from_cwd(tmp_path: Path) -> None:
    """`--model-path ./m` of a launch told to start in DIR is DIR/m: read there, not in the gate's own directory."""
    from gate_cli import LLAMA3, cli_json, model_dir

    here = tmp_path / "serve"
    here.mkdir()
    model_dir(here, "m", LLAMA3)
    facts = str(REPO / "tests/cases/h200-newest/facts.json")
    line = ["python3", "-m", "sglang.launch_server", "--model-path", "./m", "--attention-backend", "fa3"]

    def model_check(*extra: str) -> dict[str, object]:
        _, doc = cli_json(["gate", "--facts", facts, "--dry-run", "--format", "json", *extra, "--", *line])
        (found,) = [c for c in doc["preflight"]["checks"] if c["check"] == "model"]
        return dict(found)

    elsewhere = model_check()  # (the test's own directory holds no ./m)
    there = model_check("--cwd", str(here))
    assert elsewhere["status"] != "ok" and there["status"] == "ok", (elsewhere, there)


def test_a_relative_path_entry_is_read_from_cwd(tmp_path: Path) -> None:
    # irev66: `PATH=.venv/bin:... python -m sglang.launch_server` with --cwd DIR runs DIR/.venv/bin/python (execvp
    # joins the relative entry to the name; the server starts in DIR); the gate passed the entry over and judged the
    # next python on PATH, another environment with another SGLang (fails before: 0.5.9 judged, 0.5.3 run)
    venv = _venv(tmp_path)
    launch = tmp_path / "launch"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(launch / ".venv")], check=True, timeout=120)
    add_dist(launch / ".venv" / "lib" / f"python{XY}" / "site-packages", "sglang", "0.5.3")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    line = ["env", f"PATH=.venv/bin:{venv / 'bin'}:/usr/bin:/bin", "python", "-m", "sglang.launch_server",
            "--model-path", "/nonexistent"]  # fmt: skip
    doc = json.loads(_gate(elsewhere, tmp_path, *DRY, "--cwd", "../launch", command=line).stdout)
    assert doc["sglang"] == "0.5.3"
    # from the gate's own directory, without --cwd: that directory's .venv (none here: the next entry's)
    assert json.loads(_gate(elsewhere, tmp_path, *DRY, command=line).stdout)["sglang"] == "0.5.9"
