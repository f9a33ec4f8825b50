"""The CI example (examples/ci/): the GitHub Actions job parses and audits before it pushes, every shell
block passes `bash -n`, and the script run against images built here passes a good image, fails a job on a
blocked required feature or an unmet NVIDIA_REQUIRE_CUDA, and stops on bad input."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from imagebuild import docker_save, layer_tar

REPO = Path(__file__).parent.parent
CI = REPO / "examples" / "ci"
SCRIPT = CI / "image-audit.sh"
SITE = "usr/local/lib/python3.12/dist-packages"
BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")


def _steps() -> list[dict[str, Any]]:
    yaml = pytest.importorskip("yaml", reason="pyyaml is not installed")
    doc = yaml.safe_load((CI / "image-audit.yml").read_text())
    assert doc["jobs"] and (doc.get("on") or doc.get(True))  # YAML 1.1 reads the key `on` as True
    (job,) = doc["jobs"].values()
    steps: list[dict[str, Any]] = job["steps"]
    return steps


def test_the_workflow_audits_before_it_pushes() -> None:
    steps = _steps()
    runs = [str(s.get("run", "")) for s in steps]
    save = next(i for i, r in enumerate(runs) if "docker save" in r)
    audit = next(i for i, r in enumerate(runs) if "image-audit.sh" in r)
    push = next(i for i, r in enumerate(runs) if "docker push" in r)
    assert save < audit < push
    assert "serve.tar" in runs[save] and "serve.tar" in runs[audit]
    env = steps[audit]["env"]
    assert re.match(r"^\d+\.\d+x\d+$", env["STACKCHECK_ASSUME_GPU"])
    assert re.match(r"^\d+\.\d+\.\d+$", env["STACKCHECK_ASSUME_DRIVER"])
    # the push is skipped when the audit failed: no `always()` / `failure()` on it, unlike the artifact step
    assert "always()" not in str(steps[push].get("if", "")) and "failure()" not in str(steps[push].get("if", ""))
    assert any("upload-artifact" in str(s.get("uses", "")) and "always()" in str(s.get("if", "")) for s in steps)
    # the required features are real feature ids
    from stackcheck.knowledge.loader import load

    known = {str(f["id"]) for f in load([]).features}
    assert set(env["STACKCHECK_REQUIRE"].split(",")) <= known
    # the token reaches docker login through the environment, never on a command line
    assert "secrets." not in runs[push] and "--password-stdin" in runs[push]


@needs_bash
def test_shell_blocks_pass_bash_n() -> None:
    assert BASH is not None
    proc = subprocess.run([BASH, "-n", str(SCRIPT)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    for step in _steps():
        if "run" in step:
            block = re.sub(r"\$\{\{[^}]*\}\}", "X", str(step["run"]))  # Actions expressions are not shell
            proc = subprocess.run([BASH, "-n", "-c", block], capture_output=True, text=True, timeout=30)
            assert proc.returncode == 0, (step.get("name"), proc.stderr)


def _image(path: Path, torch: str, cuda: str, require_cuda: str) -> Path:
    meta = f"Metadata-Version: 2.1\nName: torch\nVersion: {torch.split('+', maxsplit=1)[0]}\n".encode()
    version_py = f"__version__ = '{torch}'\ncuda = '{cuda}'\n".encode()
    base = [
        ("file", "etc/debian_version", b"12.5\n"),
        # an x86-64 ELF header: the system probe reads the image's machine from its interpreter
        ("file", "usr/bin/python3.12", b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x02\x00\x3e\x00", 0o755),
        ("symlink", "usr/bin/python3", "python3.12"),
        ("file", "usr/lib/python3.12/os.py", b""),
    ]
    # the cuDNN wheel PyPI's torch requires (libtorch_cuda.so finds libcudnn.so.9 there: check torch-cudnn-present)
    cudnn = f"nvidia-cudnn-cu{cuda.split('.', maxsplit=1)[0]}"
    cudnn_meta = f"Metadata-Version: 2.1\nName: {cudnn}\nVersion: 9.13.0.50\n".encode()
    pip = [
        ("file", f"{SITE}/torch-{torch.split('+', maxsplit=1)[0]}.dist-info/METADATA", meta),
        ("file", f"{SITE}/torch/version.py", version_py),
        ("file", f"{SITE}/{cudnn.replace('-', '_')}-9.13.0.50.dist-info/METADATA", cudnn_meta),
    ]
    env = ["PATH=/usr/local/bin:/usr/bin:/bin", f"CUDA_VERSION={cuda}.0", f"NVIDIA_REQUIRE_CUDA={require_cuda}"]
    return docker_save(path, [layer_tar(base), layer_tar(pip)], env=env)


def _run(image: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    assert BASH is not None
    base = {k: v for k, v in os.environ.items() if not k.startswith("STACKCHECK")}
    base.update(
        PYTHONPATH=str(REPO),
        STACKCHECK=f"{sys.executable} -m stackcheck",
        OUT_DIR=str(tmp_path / "out"),
        PATH=f"{tmp_path / 'nodocker'}:{base.get('PATH', '/usr/bin:/bin')}",
    )
    base.update(env)
    return subprocess.run([BASH, str(SCRIPT), image], capture_output=True, text=True, env=base, timeout=300)


@needs_bash
def test_the_script_passes_fails_and_stops(tmp_path: Path) -> None:
    fleet = {"STACKCHECK_ASSUME_GPU": "12.0x8", "STACKCHECK_ASSUME_DRIVER": "580.95.05"}
    good = _image(tmp_path / "good.tar", "2.11.0+cu130", "13.0", "cuda>=13.0")
    old_torch = _image(tmp_path / "old.tar", "2.9.1+cu126", "12.6", "cuda>=12.6")
    # a good image for the fleet: exit 0, the report and the decision kept
    proc = _run(str(good), tmp_path, STACKCHECK_REQUIRE="torch-cuda-arch", **fleet)
    assert proc.returncode == 0, proc.stderr
    decision = json.loads((tmp_path / "out" / "decision.json").read_text())
    assert decision["decision"] == "allow" and decision["image"] == str(good)
    report = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert report["facts"]["packages"]["torch"]["version"] == "2.11.0+cu130"
    assert "image-audit: ok" in proc.stderr
    # a required feature that is blocked on that fleet (torch built for CUDA 12.6 has no sm_120): exit 1
    proc = _run(str(old_torch), tmp_path, STACKCHECK_REQUIRE="torch-cuda-arch", **fleet)
    assert proc.returncode == 1, proc.stderr
    assert json.loads((tmp_path / "out" / "decision.json").read_text())["decision"] == "refuse"
    assert "image-audit: refused" in proc.stderr
    # the good image on a fleet whose driver is too old for its NVIDIA_REQUIRE_CUDA: exit 1
    proc = _run(
        str(good), tmp_path, STACKCHECK_REQUIRE="torch-cuda-arch", STACKCHECK_ASSUME_GPU="12.0x8",
        STACKCHECK_ASSUME_DRIVER="550.54.15",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    reasons = json.loads((tmp_path / "out" / "decision.json").read_text())["reasons"]
    assert "image-nvidia-require" in {r["feature"] for r in reasons}
    # a host's saved report instead of assumptions
    host = REPO / "tests" / "cases" / "h200-newest" / "facts.json"
    proc = _run(str(good), tmp_path, STACKCHECK_REQUIRE="torch-cuda-arch", STACKCHECK_HOST_FACTS=str(host))
    assert proc.returncode == 0, proc.stderr
    # bad input stops the job with 2: a truncated tarball, no fleet given, an unknown feature, no docker
    cut = tmp_path / "cut.tar"
    cut.write_bytes(good.read_bytes()[:3000])
    assert _run(str(cut), tmp_path, STACKCHECK_REQUIRE="torch-cuda-arch", **fleet).returncode == 2
    proc = _run(str(good), tmp_path, STACKCHECK_REQUIRE="torch-cuda-arch")
    assert proc.returncode == 2 and "say which fleet" in proc.stderr
    assert _run(str(good), tmp_path, STACKCHECK_REQUIRE="no-such-feature", **fleet).returncode == 2
    (tmp_path / "nodocker").mkdir()
    (tmp_path / "nodocker" / "docker").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "nodocker" / "docker").chmod(0o755)
    proc = _run("registry.example/serve:1", tmp_path, **fleet)
    assert proc.returncode == 2 and "docker save" in proc.stderr
