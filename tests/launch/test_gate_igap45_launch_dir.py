"""igap45 (issue 16, loader item 5): the launch directory of a gate of this host without --cwd. `gate --cwd` documents
its default as the gate's own directory, the gate runs the server there (exec, --watch's child) and the preflight reads
a relative --model-path from there, but the probes took it as unknown: a relative SGLANG_NCCL_SO_PATH, LD_LIBRARY_PATH
or PATH entry was unknown and refused at tp > 1 though the server's directory was the gate's own. Now a gate of this
host reads them from its own working directory and says so in the JSON (launch_dir); --facts (a box whose directory
the gate does not know), --image (its WorkingDir) and --root (its own /) never take it. The libraries are our own
(tests/elfwriter.py) with a version string of NCCL's shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cli_process import clean_env, run_stackcheck
from launch.test_gate_irev67_nccl_bare_name_ld_path import NAME, _box

XY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def _venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    info = venv / "lib" / f"python{XY}" / "site-packages" / "sglang-0.5.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.9\n")
    return venv


def test_a_host_gate_reads_relative_loader_elements_from_its_own_directory(tmp_path: Path) -> None:
    """The real `python -m stackcheck gate --dry-run -- env LD_LIBRARY_PATH=:SYS SGLANG_NCCL_SO_PATH=NAME
    VENV/bin/python -m sglang.launch_server --tp 2`, run in the launch directory (no --cwd), the driver assumed at R575
    (CUDA 12.9)."""
    # fails before: nccl-so-path-cuda-unread unknown (the gate's own directory not taken), no launch_dir
    launch, system = _box(tmp_path)
    venv = _venv(tmp_path)
    line = ["env", f"LD_LIBRARY_PATH=:{system}", f"SGLANG_NCCL_SO_PATH={NAME}", str(venv / "bin/python"), "-m",
            "sglang.launch_server", "--model-path", "m", "--tp", "2"]  # fmt: skip
    env = clean_env("VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH", XDG_CACHE_HOME=str(tmp_path / "cache"))
    args = ["--dry-run", "--format", "json", "--assume-gpu", "9.0x2", "--assume-driver", "575.57.08"]
    proc = run_stackcheck("gate", *args, "--", *line, env=env, cwd=launch, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    rules = {str(r.get("rule")): str(r.get("result")) for b in doc.get("reasons") or [] for r in b.get("reasons") or []}
    # the working directory's CUDA 13.0 build under a CUDA 12.9 driver: read, and refused for what it is
    assert rules.get("nccl-so-path-cuda-driver") == "fail", (rules, proc.stderr[-300:])
    assert doc["launch_dir"] == {"path": str(launch), "from": "the gate's own working directory (no --cwd)"}
    # --cwd names another directory: that one is read, and the JSON says so
    other = tmp_path / "elsewhere"
    other.mkdir()
    proc = run_stackcheck("gate", *args, "--cwd", str(other), "--", *line, env=env, cwd=launch, timeout=120)
    doc = json.loads(proc.stdout)
    assert doc["launch_dir"] == {"path": str(other.resolve()), "from": "--cwd"}


def test_a_facts_gate_never_takes_its_own_directory(tmp_path: Path) -> None:
    from gate_cli import LLAMA3, cli_json, model_dir, release_box

    box = release_box(tmp_path, "0.5.11", "9.0")
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3))]
    _, out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    assert "launch_dir" not in out, out.get("launch_dir")
