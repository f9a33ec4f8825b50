"""ifc38 (thirty-eighth fact-check sample, row j5, and 120 allows beside it): the host compiler nvcc runs for SGLang's
JIT kernels.

Row j5: NVCC_CCBIN=/usr/bin/gcc-15 beside a CUDA 12.8 toolkit (its include/crt/host_config.h takes gcc 14 at most) was
allowed: the jit probe left every NVCC_CCBIN unread. nvcc 13.0.88 (nvidia-cuda-nvcc wheel, -dryrun, 2026-12-05) runs
the file NVCC_CCBIN names, DIR/gcc for a directory, a bare name on its PATH, and stops ('Failed to preprocess host
compiler properties') where it is missing; the probe now reads a gcc / g++ it names as it reads gcc on the PATH.

Beside the rows: gcc 8 / 9 as nvcc's host compiler were allowed; nvcc 13.0.88 drops -std=c++20 for a gcc older than
10 ('The -std=c++20 flag is not supported with the configured host compiler. Flag will be ignored.', cudafe++
--c++14), and SGLang's JIT sources need C++20 (sglang 0.5.14 jit_kernel/include/sgl_kernel/tensor.h: <concepts>,
std::span). New rule sglang-jit-nvcc-host-cxx20."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box, rule_results, touch_exe
from registry_wheels import fetch_wheel

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = "/usr/local/cuda-12.8"
RULE = "sglang-jit-nvcc-host-cxx20"
# our own header in the shape of the toolkit's (tests/launch/test_gate_irev55_nvcc_host_gnu.py)
HEADER = "#if defined(__GNUC__)\n\n#if __GNUC__ > 14\n\n#error -- unsupported GNU version! later than 14\n\n#endif\n"
DEB = "usr/lib/gcc/x86_64-linux-gnu"
ENV = {"PATH": "/usr/bin"}


def _touch(path: Path, body: bytes | None = None) -> None:
    touch_exe(path, body)  # (a gcc-N / g++-N: a GCC driver of that major, igap34)


def _facts(home: str = HOME, version: str = "12.8.93") -> dict[str, Any]:
    tk = {"path": home, "version": version, "source": "/usr/local/cuda", "active_for_build": True}
    return {"cuda_toolkits": [tk], "system": {"machine": "x86_64"}}


def _gcc(root: Path, major: str, *, default: bool) -> None:
    """Debian's gcc-N / g++-N with cc1 and cc1plus; /usr/bin/gcc -> gcc-N where default."""
    for name in (f"usr/bin/gcc-{major}", f"usr/bin/g++-{major}", f"{DEB}/{major}/cc1", f"{DEB}/{major}/cc1plus"):
        _touch(root / name)
    if default:
        (root / "usr/bin/gcc").symlink_to(f"gcc-{major}")
        (root / "usr/bin/c++").symlink_to(f"g++-{major}")


def _box(root: Path, *majors: str, header: str | None = HEADER, home: str = HOME) -> HostView:
    _touch(root / home.lstrip("/") / "bin/nvcc")
    if header is not None:
        (root / home.lstrip("/") / "include/crt").mkdir(parents=True, exist_ok=True)
        (root / home.lstrip("/") / "include/crt/host_config.h").write_text(header)
    for n, major in enumerate(majors):
        _gcc(root, major, default=n == 0)
    return HostView(str(root))


def test_nvcc_ccbin_naming_a_gcc_too_new_is_read(tmp_path: Path) -> None:  # row j5
    jit = probe_jit(_facts(), {**ENV, "NVCC_CCBIN": "/usr/bin/gcc-15"}, _box(tmp_path, "12", "15"))
    assert jit["nvcc_host"] == "/usr/bin/gcc-15" and jit["nvcc_host_found"] is True, jit
    assert jit["nvcc_host_gnu_major"] == 15 and jit["nvcc_host_gnu_supported"] is False, jit
    # the default gcc on that box is within the header: NVCC_CCBIN is what moves it
    assert probe_jit(_facts(), ENV, HostView(str(tmp_path)))["nvcc_host_gnu_supported"] is True


def test_nvcc_ccbin_forms(tmp_path: Path) -> None:
    view = _box(tmp_path, "12", "15")
    # a directory: nvcc runs DIR/gcc
    other = tmp_path / "opt/gcc13/bin"
    _touch(other / "gcc-13")
    (other / "gcc").symlink_to("gcc-13")
    _touch(tmp_path / "opt/gcc13/lib/gcc/x86_64-linux-gnu/13/cc1plus")
    jit = probe_jit(_facts(), {**ENV, "NVCC_CCBIN": "/opt/gcc13/bin"}, view)
    assert jit["nvcc_host"] == "/opt/gcc13/bin/gcc" and jit["nvcc_host_gnu_major"] == 13, jit
    # a bare name on the PATH, g++ spelled with its version
    jit = probe_jit(_facts(), {**ENV, "NVCC_CCBIN": "g++-15"}, view)
    assert jit["nvcc_host"] == "/usr/bin/g++-15" and jit["nvcc_host_gnu_supported"] is False, jit
    # missing: nvcc stops
    jit = probe_jit(_facts(), {**ENV, "NVCC_CCBIN": "/usr/bin/gcc-16"}, view)
    assert jit["nvcc_host_found"] is False and "Failed to preprocess" in jit["nvcc_host_reason"], jit
    # another compiler (a clang is read since igap28: test_gate_igap28_clang_host.py), a relative path, or a -ccbin in
    # the flags: not read
    for env in ({"NVCC_CCBIN": "/usr/bin/icpx"}, {"NVCC_CCBIN": "bin/gcc"}, {"NVCC_PREPEND_FLAGS": "-ccbin g++"}):
        jit = probe_jit(_facts(), {**ENV, **env}, view)
        assert "nvcc_host_found" not in jit and "nvcc_host_gnu_major" not in jit and jit["nvcc_host_reason"], env


def test_the_gnu_major_is_written_without_the_header_or_with_allow_unsupported(tmp_path: Path) -> None:
    jit = probe_jit(_facts(), ENV, _box(tmp_path / "a", "9", header=None))
    assert jit["nvcc_host_gnu_major"] == 9 and "nvcc_host_gnu_supported" not in jit, jit
    env = {**ENV, "NVCC_APPEND_FLAGS": "-allow-unsupported-compiler"}
    jit = probe_jit(_facts(), env, _box(tmp_path / "b", "8"))
    assert jit["nvcc_host_gnu_major"] == 8 and "nvcc_host_gnu_supported" not in jit, jit


def _gate(tmp_path: Path, release: str, major: int | None) -> dict[str, Any]:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    jit = doc["facts"]["jit"]
    jit.update(cxx_found=True, cxx="/usr/bin/c++", nvcc_host_found=True, nvcc_host="/usr/bin/gcc")
    if major is not None:
        jit.update(nvcc_host_gnu_major=major, nvcc_host_gnu_max=15, nvcc_host_gnu_supported=True)
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


@pytest.mark.parametrize(("release", "major"), [("0.5.9", 9), ("0.5.23", 8), ("0.5.14", 9)])
def test_the_gate_refuses_a_gcc_older_than_10_for_nvcc(tmp_path: Path, release: str, major: int) -> None:
    doc = _gate(tmp_path, release, major)
    assert doc["decision"] == "refuse" and ("blocked", "fail") in rule_results(doc, RULE), doc.get("reasons")
    assert "-std=c++20" in json.dumps(doc["reasons"])


@pytest.mark.parametrize(("release", "major"), [("0.5.23", 10), ("0.5.23", None)])
def test_gcc_10_or_unread_allows(tmp_path: Path, release: str, major: int | None) -> None:
    doc = _gate(tmp_path, release, major)
    assert doc["decision"] == "allow" and rule_results(doc, RULE) == [], (release, major, doc.get("reasons"))


def test_before_the_jit_kernels_the_rule_is_not_judged(tmp_path: Path) -> None:
    assert rule_results(_gate(tmp_path, "0.5.8", 9), RULE) == []  # 0.5.1-0.5.8 run sgl-kernel's prebuilt RoPE


# the toolkits' own host_config.h (nvidia-cuda-nvcc-cu12 12.8.93 / 12.9.86, nvidia-cuda-crt 13.0.88 / 13.1.115):
# the newest gcc each takes, as the probe reads it from the file
TOOLKIT_HEADERS = {
    ("nvidia-cuda-nvcc-cu12", "12.8.93"): ("nvidia/cuda_nvcc/include/crt/host_config.h", 14),
    ("nvidia-cuda-nvcc-cu12", "12.9.86"): ("nvidia/cuda_nvcc/include/crt/host_config.h", 14),
    ("nvidia-cuda-crt", "13.0.88"): ("nvidia/cu13/include/crt/host_config.h", 15),
    ("nvidia-cuda-crt", "13.1.115"): ("nvidia/cu13/include/crt/host_config.h", 15),
}


@pytest.mark.registry
@pytest.mark.parametrize(("dist", "version"), list(TOOLKIT_HEADERS))
def test_the_real_headers_limit_gcc_as_the_probe_reads_them(tmp_path: Path, dist: str, version: str) -> None:
    member, most = TOOLKIT_HEADERS[(dist, version)]
    with zipfile.ZipFile(fetch_wheel(dist, version)) as z:
        header = z.read(member).decode("utf-8", "replace")
    for major in (most, most + 1):
        jit = probe_jit(_facts(), ENV, _box(tmp_path / str(major), str(major), header=header))
        assert jit["nvcc_host_gnu_max"] == most, (version, jit)
        assert jit["nvcc_host_gnu_supported"] is (major <= most), (version, major)
