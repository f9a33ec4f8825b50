"""`--root DIR` is audited with the root's own environment, never this host's (issue 16): the programs a JIT build
runs (nvcc, c++, ninja) and the toolkit it picks are looked up on the default PATH inside the root, and the host's
PATH, CUDA_HOME, CXX and PYTHONPATH are not read. A host nvcc 13 on the auditing machine's PATH was otherwise
reported for a root that has none, or a toolkit of the root off its PATH was taken for its build toolkit: the audit
passed a JIT build that fails when the root's server starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from root_boxes import executable, serving_root

CASES = Path(__file__).parent.parent / "cases"
REPO = Path(__file__).parent.parent.parent


def toolkit(home: Path, version: str) -> Path:
    """A CUDA toolkit folder: version.json and bin/nvcc (a script that prints nvcc's banner for that version)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "version.json").write_text(json.dumps({"cuda": {"name": "CUDA SDK", "version": f"{version}.0"}}))
    executable(home / "bin" / "nvcc", f"#!/bin/sh\necho 'Cuda compilation tools, release {version}, V{version}.0'\n")
    return home


def probe_root(root: Path, host_env: dict[str, str]) -> dict[str, Any]:
    drop = ("VIRTUAL_ENV", "CONDA_PREFIX", "STACKCHECK_PYTHON", "COLUMNS", "CUDA_HOME", "CUDA_PATH", "CXX")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(host_env)
    env["PYTHONPATH"] = str(REPO) + (":" + host_env["PYTHONPATH"] if "PYTHONPATH" in host_env else "")
    host = str(CASES / "writeup-after" / "facts.json")
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "probe", "--root", str(root), "--host-facts", host, "--format", "json"],
        capture_output=True, text=True, env=env, timeout=120, cwd="/",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    facts: dict[str, Any] = json.loads(proc.stdout)["facts"]
    return facts


def test_a_host_nvcc_and_cuda_home_are_not_the_roots(tmp_path: Path) -> None:
    """The root has no nvcc and no toolkit; this host's PATH has a fake nvcc 13.0 and a c++, its CUDA_HOME a
    toolkit, its CXX a compiler, its PYTHONPATH a directory: the root's facts name none of them."""
    root = serving_root(tmp_path / "root")
    host_bin = tmp_path / "hostbin"
    executable(host_bin / "nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n")
    executable(host_bin / "c++")
    executable(host_bin / "ninja")
    host_cuda = toolkit(tmp_path / "host-cuda-13.0", "13.0")
    facts = probe_root(
        root,
        {"PATH": f"{host_bin}:{os.environ.get('PATH', '')}", "CUDA_HOME": str(host_cuda),
         "CXX": str(host_bin / "c++"), "PYTHONPATH": "/opt/host-only"},
    )  # fmt: skip
    assert facts["cuda_toolkits"] == []
    jit = facts["jit"]
    assert (jit["toolkit"], jit["chosen_by"], jit["nvcc_found"]) == (None, "none", False), jit
    assert jit["cxx_found"] is False and jit["ninja_found"] is False
    text = json.dumps(facts)
    assert str(host_bin) not in text and str(host_cuda) not in text
    assert "/opt/host-only" not in facts["python"]["sys_path"]
    assert facts["python"]["executable"] == "/usr/bin/python3"
    assert facts["packages"]["sglang"]["version"] == "0.5.9"


def test_the_host_path_does_not_find_a_toolkit_off_the_roots_path(tmp_path: Path) -> None:
    """The root holds CUDA 13.0 at /usr/local/cuda-13.0, not on its PATH and without /usr/local/cuda: its JIT builds
    find no nvcc (torch's cpp_extension: CUDA_HOME, nvcc on PATH, /usr/local/cuda). This host's PATH names that
    folder's bin; read through the root it found the root's nvcc and judged the build with CUDA 13.0."""
    root = serving_root(tmp_path / "root")
    toolkit(root / "usr/local/cuda-13.0", "13.0")
    facts = probe_root(root, {"PATH": f"/usr/local/cuda-13.0/bin:{os.environ.get('PATH', '')}"})
    assert [t["path"] for t in facts["cuda_toolkits"]] == ["/usr/local/cuda-13.0"]
    assert facts["cuda_toolkits"][0]["active_for_build"] is False
    jit = facts["jit"]
    assert (jit["toolkit"], jit["nvcc_found"]) == (None, False), jit
    # with the toolkit's bin on the root's default PATH (a link in /usr/local/bin) the same audit finds it
    (root / "usr/local/bin").mkdir(parents=True, exist_ok=True)
    (root / "usr/local/bin/nvcc").symlink_to("/usr/local/cuda-13.0/bin/nvcc")
    facts = probe_root(root, {})
    assert facts["jit"]["nvcc_found"] is True and facts["jit"]["toolkit"] in ("/usr/local/cuda-13.0", "/usr/local")
