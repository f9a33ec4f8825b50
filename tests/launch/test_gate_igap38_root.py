"""`stackcheck gate --root DIR -- COMMAND` (igap38, issue 16): the launch is judged inside the root, with the
environment its own processes start with (the default PATH looked up in the root, as `audit --root` since igap35;
the command's own `env NAME=VALUE` prefix on top), and the server is never run here: --root implies --dry-run, and
the decision says so (`root`, `dry_run`). Before, the gate derived the launch with this host's environment (a host
SGLANG_ENABLE_JIT_DEEPGEMM=0 dropped a feature the root's server turns on) and, when it allowed, exec'd the command
on this host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from root_boxes import executable, serving_root

REPO = Path(__file__).parent.parent.parent
HOST = REPO / "tests" / "cases" / "writeup-after" / "facts.json"


def _gate(tmp_path: Path, host_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    drop = ("VIRTUAL_ENV", "CONDA_PREFIX", "STACKCHECK_PYTHON", "COLUMNS", "CUDA_HOME", "CXX", "SGLANG_NCCL_SO_PATH")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("SGLANG_")}
    env.update(host_env, PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(tmp_path / "cache"))
    argv = [sys.executable, "-m", "stackcheck", "gate", "--host-facts", str(HOST), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/", timeout=200)


def _rules(doc: dict[str, Any]) -> set[str]:
    return {str(x.get("rule")) for r in doc.get("reasons") or [] for x in r.get("reasons") or []}


def test_the_roots_server_is_never_run_here(tmp_path: Path) -> None:
    root = serving_root(tmp_path / "root")
    proc = _gate(tmp_path, {}, "--root", str(root), "--format", "json", "--", "/bin/sh", "-c", "echo RAN$((6 * 7))")
    assert proc.returncode == 0 and "RAN42" not in proc.stdout, (proc.stdout, proc.stderr)
    doc = json.loads(proc.stdout)  # (the parent exec'd the command: "RAN42", no decision)
    assert doc["decision"] == "allow" and doc["root"] == str(root) and "implied by --root" in doc["dry_run"], doc
    text = _gate(tmp_path, {}, "--root", str(root), "--", "/bin/sh", "-c", "echo RAN$((6 * 7))")
    assert text.returncode == 0 and "RAN42" not in text.stdout and "note: --dry-run implied by --root" in text.stdout


def test_the_hosts_environment_does_not_reach_the_roots_judgement(tmp_path: Path) -> None:
    root = serving_root(tmp_path / "root")
    host_bin = executable(tmp_path / "hostbin" / "nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 13.0'\n")
    host_cuda = tmp_path / "host-cuda-13.0"
    executable(host_cuda / "bin" / "nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 13.0'\n")
    host = {"PATH": f"{host_bin.parent}:{os.environ.get('PATH', '')}", "CUDA_HOME": str(host_cuda),
            "SGLANG_NCCL_SO_PATH": "/nonexistent/libnccl.so.2", "SGLANG_ENABLE_JIT_DEEPGEMM": "0"}  # fmt: skip
    line = ["python3", "-m", "sglang.launch_server", "--model-path", "/nonexistent", "--tp", "2", "--enable-symm-mem"]
    proc = _gate(tmp_path, host, "--root", str(root), "--format", "json", "--", *line)
    assert proc.returncode == 1, proc.stderr  # (the root has no toolkit, no ninja: refused)
    doc = json.loads(proc.stdout)
    # the root's server turns DeepGEMM on: the host's SGLANG_ENABLE_JIT_DEEPGEMM=0 dropped it on the parent
    assert doc["derived"]["env"]["SGLANG_ENABLE_JIT_DEEPGEMM"] is True
    assert "deepgemm" in [r["feature"] for r in doc["derived"]["required"]]
    # the host's SGLANG_NCCL_SO_PATH names no library for the root's pynccl; its nvcc and CUDA_HOME no toolkit
    assert "symm-mem-nccl-so-path" not in _rules(doc)
    assert "nvcc-found" in _rules(doc) and str(host_bin.parent) not in proc.stdout and str(host_cuda) not in proc.stdout
    # the launch's own prefix is the root server's environment: read
    proc = _gate(tmp_path, host, "--root", str(root), "--format", "json", "--", "env",
                 "SGLANG_NCCL_SO_PATH=/nonexistent/libnccl.so.2", "SGLANG_ENABLE_JIT_DEEPGEMM=0", *line)  # fmt: skip
    doc = json.loads(proc.stdout)
    assert "symm-mem-nccl-so-path" in _rules(doc) and doc["derived"]["env"]["SGLANG_ENABLE_JIT_DEEPGEMM"] is False


def test_watch_and_cwd_with_root_are_one_line_exit_2(tmp_path: Path) -> None:
    root = serving_root(tmp_path / "root")
    for extra, words in ((["--watch"], "--watch with --root"), (["--cwd", "/"], "--cwd with --root")):
        proc = _gate(tmp_path, {}, "--root", str(root), *extra, "--", "python3", "-m", "sglang.launch_server")
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and words in lines[0], (proc.returncode, proc.stderr)
