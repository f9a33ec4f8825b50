"""SGLang's prebuilt DeepEP, the sgl-deep-ep distribution (check moe-a2a-package, irev44).

sglang 0.5.18-0.5.23 require sgl-deep-ep (0.5.18 ==0.1.0, 0.5.19-0.5.21 ==0.1.2, 0.5.22-0.5.23 ==0.1.2.post1 in their
METADATA), which installs the import package deep_ep under another distribution name. The check read only the
distribution deep-ep, so `pip install sglang` of those releases with --moe-a2a-backend deepep was refused with 'DeepEP
is not installed' (an over-refusal). Its import runs check_prerequisites with the CUDA major deep_ep/_build_info.py
names (13 in 0.1.0 and 0.1.2.post1) and raises ImportError under a torch of another major (deep_ep/__init__.py:1-6,
deep_ep/prerequisites.py:34-37), which the check now judges. The site-packages trees are written here in that shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import QWEN3_MOE, gate_tp8, model_dir, release_box

A2A = "moe-a2a-package"


def _site(tmp_path: Path, build_info: str | None = "EXPECTED_CUDA_MAJOR = 13\nCUDA_TAG = 'cu130'\n") -> Path:
    sp = tmp_path / "lib" / "python3.12" / "site-packages"
    meta = sp / "sgl_deep_ep-0.1.2.post1.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.4\nName: sgl-deep-ep\nVersion: 0.1.2.post1\n")
    pkg = sp / "deep_ep"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    if build_info is not None:
        (pkg / "_build_info.py").write_text(build_info)
    return sp


def _facts(sp: Path) -> dict[str, Any]:
    from stackcheck.probes.packages import find_distributions, package_facts
    from stackcheck.readers.fsview import HostView

    return package_facts("sgl-deep-ep", find_distributions({"sgl-deep-ep"}, [str(sp)])["sgl-deep-ep"], HostView())


def test_probe_reads_the_build_cuda_major(tmp_path: Path) -> None:
    # fails on the parent: no build_cuda_major (and sgl-deep-ep not among the probed distributions)
    from stackcheck.probes.packages import WANTED

    assert "sgl-deep-ep" in WANTED
    entry = _facts(_site(tmp_path))
    assert entry["installed"] is True and entry["build_cuda_major"] == 13
    bare = _facts(_site(tmp_path / "b", build_info=None))
    assert "build_cuda_major" not in bare and "_build_info.py" in bare["error"]
    odd = _facts(_site(tmp_path / "c", build_info="EXPECTED_CUDA_MAJOR = None\n"))
    assert "build_cuda_major" not in odd and "EXPECTED_CUDA_MAJOR" in odd["error"]


def _check(tmp_path: Path, sgl: dict[str, Any] | None, torch_cuda: str = "13.0",
           deep_ep: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(box.read_text())
    packages = doc["facts"]["packages"]
    packages["deep-ep"] = deep_ep or {"installed": False}
    if sgl is None:
        packages.pop("sgl-deep-ep", None)
    else:
        packages["sgl-deep-ep"] = sgl
    packages["torch"]["cuda"] = torch_cuda
    box.write_text(json.dumps(doc))
    out = gate_tp8(box, model_dir(tmp_path, "qwen3moe", QWEN3_MOE), "--moe-a2a-backend", "deepep")
    return next(c for c in (out.get("preflight") or {}).get("checks") or [] if c.get("check") == A2A)


SGL = {"installed": True, "version": "0.1.2.post1", "build_cuda_major": 13}


def test_sgl_deep_ep_of_torchs_major_is_ok(tmp_path: Path) -> None:
    # fails on the parent: fail 'DeepEP is not installed' for the DeepEP that pip install sglang==0.5.23 brings
    check = _check(tmp_path, SGL)
    assert check["status"] == "ok", check
    assert "sgl-deep-ep" in check["observed"] and "CUDA 13" in check["observed"]


def test_sgl_deep_ep_of_another_major_fails(tmp_path: Path) -> None:
    # fails on the parent (its message: not installed, rather than the build's CUDA major)
    check = _check(tmp_path, SGL, torch_cuda="12.9")
    assert check["status"] == "fail" and "This wheel requires CUDA 13, but PyTorch uses CUDA 12" in check["message"]


def test_not_read_is_unknown(tmp_path: Path) -> None:
    # fails on the parent (fail): the build's major not read, torch's CUDA not known, both DeepEPs installed
    assert _check(tmp_path / "a", {"installed": True, "version": "0.1.2.post1"})["status"] == "unknown"
    assert _check(tmp_path / "b", SGL, torch_cuda="")["status"] == "unknown"
    both = _check(tmp_path / "c", SGL, deep_ep={"installed": True, "version": "1.2.1", "extension_files": []})
    assert both["status"] == "unknown" and "both installed" in both["message"]


def test_neither_installed_still_fails(tmp_path: Path) -> None:
    # a guard (fails on the parent too, with the same message): neither DeepEP is installed
    check = _check(tmp_path, {"installed": False})
    assert check["status"] == "fail" and "DeepEP is not installed" in check["message"]


@pytest.mark.registry
@pytest.mark.parametrize(("release", "pin"), [("0.5.18", "0.1.0"), ("0.5.23", "0.1.2.post1")])
def test_registry_sglang_requires_sgl_deep_ep_whose_build_names_cuda_13(tmp_path: Path, release: str,
                                                                       pin: str) -> None:  # fmt: skip
    import zipfile

    from registry_wheels import extract, fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sglang", release)) as zf:
        meta = next(zf.read(n).decode() for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
    assert f"Requires-Dist: sgl-deep-ep=={pin}" in meta
    sp = extract(fetch_wheel("sgl-deep-ep", pin), tmp_path / "site-packages", lambda n: not n.endswith(".so"))
    entry = _facts(sp)
    assert entry["installed"] is True and entry["build_cuda_major"] == 13
    init = (sp / "deep_ep" / "__init__.py").read_text()
    assert "check_prerequisites(expected_cuda_major=" in init
    assert "torch_cuda_major != expected_cuda_major" in (sp / "deep_ep" / "prerequisites.py").read_text()
