"""An audit of this host reads a relative or empty LD_LIBRARY_PATH element from its own working directory, as a gate of
this host does (igap45), and says so (report.launch_dir). `export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$X` with X
unset leaves a trailing ':' (an empty element: the working directory; glibc's elf/dl-load.c fillin_rpath), and before,
every CUDA library such an element could change was unknown in the audit of such a box ("the server's working
directory, which is not known"). --facts never takes the audit's own directory. The libraries are our own ELF headers
(probes/test_probe_issue16.elf64)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_process import clean_env, run_stackcheck
from probes.test_probe_issue16 import elf64

ROOT = Path(__file__).resolve().parents[2]


def test_a_host_audit_reads_an_empty_element_from_its_own_directory(tmp_path: Path) -> None:
    # fails before: cuda_libs.unreadable names every library (the working directory not taken), no launch_dir
    launch = tmp_path / "launch"
    elf64(launch / "libcudart.so.12")
    system = tmp_path / "system"
    system.mkdir()
    env = clean_env("VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH", XDG_CACHE_HOME=str(tmp_path / "cache"))
    env["LD_LIBRARY_PATH"] = f"{system}:"
    proc = run_stackcheck("audit", "--format", "json", env=env, cwd=launch, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr[-400:]
    doc = json.loads(proc.stdout)
    libs = doc["facts"]["cuda_libs"]
    assert libs["libcudart.so.12"] == str(launch / "libcudart.so.12"), libs
    assert not libs.get("unreadable"), libs.get("unreadable")
    assert doc["launch_dir"]["path"] == str(launch)
    assert "working directory" in doc["launch_dir"]["from"]


def test_an_audit_of_saved_facts_takes_no_directory(tmp_path: Path) -> None:
    facts = ROOT / "tests" / "cases" / "writeup-before" / "facts.json"
    env = clean_env(XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = run_stackcheck("audit", "--facts", str(facts), "--format", "json", env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr[-400:]
    assert "launch_dir" not in json.loads(proc.stdout)
