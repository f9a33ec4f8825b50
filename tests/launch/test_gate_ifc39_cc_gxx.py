"""ifc39 (the thirty-ninth fact-check sample, row f2's reading: SGLang 0.5.5, FlashInfer 0.5.0, CC=g++-12): FlashInfer
passes `-ccbin $CC` to nvcc wherever CC is set (flashinfer-python 0.5.0 flashinfer/jit/cpp_ext.py:138-140; the tags
v0.2.11.post3 :74-76 to v0.4.1 :133-135 the same). A g++ driver is a GCC host compiler like gcc: the toolkit's
include/crt/host_config.h tests __GNUC__ whatever the driver's name (nvidia-cuda-nvcc-cu12 12.8.93 :139-145: gcc later
than 14 refused; nvidia-cuda-crt 13.1.115 :133-139: later than 15). The probe judged CC's major only for a name gcc /
gcc-N, so CC=g++-15 (or CC=c++, a link to g++-15) beside CUDA 12.8 was found and never judged: the gate allowed the
launch, and FlashInfer's first JIT build stops at '#error -- unsupported GNU version!'."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import CUDA_128_HOME, LLAMA3, cli_json, model_dir, release_box, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HEADER = "#if defined(__GNUC__)\n\n#if __GNUC__ > 14\n\n#error -- unsupported GNU version! gcc versions later than 14\n"
PATH = {"PATH": "/usr/bin"}
HOST_KEYS = ("cxx", "nvcc_host", "flashinfer_host", "flashinfer_allow_unsupported", "cc_host")


def _gcc(root: Path, major: str, *, cc1plus: bool = True) -> None:
    for name in ("cc1", "cc1plus") if cc1plus else ("cc1",):
        touch_exe(root / f"usr/lib/gcc/x86_64-linux-gnu/{major}/{name}")


def _box(root: Path, gxx: str | None, *, cc1plus: bool = True) -> HostView:
    """CUDA 12.8 (host_config.h takes gcc 14 at most), /usr/bin/gcc -> gcc-14 with g++ 14, and g++-`gxx` (with or
    without its cc1plus) that /usr/bin/c++ links to."""
    home = root / CUDA_128_HOME.lstrip("/")
    touch_exe(home / "bin/nvcc")
    (home / "include/crt").mkdir(parents=True, exist_ok=True)
    (home / "include/crt/host_config.h").write_text(HEADER)
    touch_exe(root / "usr/bin/gcc-14")
    (root / "usr/bin/gcc").symlink_to("gcc-14")
    _gcc(root, "14")
    if gxx is not None:
        touch_exe(root / f"usr/bin/g++-{gxx}")
        (root / "usr/bin/c++").symlink_to(f"g++-{gxx}")
        _gcc(root, gxx, cc1plus=cc1plus)
    return HostView(str(root))


def _gate(tmp_path: Path, jit: dict[str, Any]) -> dict[str, Any]:
    """gate of a Llama 3 launch on SGLang 0.5.5 with FlashInfer 0.5.0 (its pin) and no flashinfer-jit-cache, the jit
    section's host-compiler keys from the probe, --allow-unknown (the case's torch is not 0.5.5's)."""
    path = release_box(tmp_path, "0.5.5", "9.0")
    doc = json.loads(path.read_text())
    packages = doc["facts"]["packages"]
    packages["flashinfer-python"].update(version="0.5.0", dist_version="0.5.0")
    packages["flashinfer-jit-cache"] = {"installed": False}
    packages["sgl-kernel"] = {"installed": True, "version": "0.3.16.post5", "location": "/x"}  # 0.5.5's pins
    packages["sglang-kernel"] = {"installed": False}
    packages["torch"].update(version="2.8.0+cu128", dist_version="2.8.0")
    section = doc["facts"]["jit"]
    section.update({k: v for k, v in jit.items() if k.startswith(HOST_KEYS) and not k.startswith("cxx_")})
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--allow-unknown", "--format", "json", "--", *line])[1]


def _rule(doc: dict[str, Any], rule: str) -> str | None:
    return next(
        (str(x.get("result")) for r in doc.get("reasons") or [] for x in r.get("reasons") or [] if x["rule"] == rule),
        None,
    )


@pytest.mark.parametrize("cc", ["g++-15", "/usr/bin/g++-15", "c++"])
def test_cc_naming_a_gxx_too_new_for_the_toolkit_is_refused(tmp_path: Path, cc: str) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": cc}, _box(tmp_path / "box", "15"))
    assert jit["flashinfer_host"] == "cc" and jit["cc_host_gnu_major"] == 15, jit
    assert jit["cc_host_gnu_max"] == 14 and jit["cc_host_gnu_supported"] is False, jit
    doc = _gate(tmp_path, jit)
    assert doc["decision"] == "refuse" and _rule(doc, "flashinfer-jit-cc-host-version") == "fail", doc.get("reasons")


def test_cc_naming_a_supported_gxx_is_allowed(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "g++-12"}, _box(tmp_path / "box", "12"))
    assert jit["cc_host_gnu_major"] == 12 and jit["cc_host_gnu_supported"] is True, jit
    doc = _gate(tmp_path, jit)
    assert doc["decision"] == "allow", doc.get("reasons")


def test_a_gxx_without_its_cc1plus_is_not_found(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "g++-13"}, _box(tmp_path / "box", "13", cc1plus=False))
    assert jit["cc_host_found"] is False and "cc1plus" in jit["cc_host_reason"], jit
    doc = _gate(tmp_path, jit)
    assert doc["decision"] == "refuse" and _rule(doc, "flashinfer-jit-cc-host") == "fail", doc.get("reasons")
