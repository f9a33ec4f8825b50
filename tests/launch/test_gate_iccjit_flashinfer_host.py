"""iccjit (issue 16; a false pass irev56 found and left): FlashInfer's own JIT build and its host compiler.

FlashInfer writes its own ninja file: nvcc gets `-ccbin $CC` only where CC is set (flashinfer-python 0.5.0
flashinfer/jit/cpp_ext.py:138-140 ... 0.7.2 :207-209), and `cxx = $CXX or c++` compiles its .cpp sources and links
every module not device-linked (0.5.0 :197 and :238-239, 0.7.2 :288 and :345-346). The host-compiler rules of
jit-toolchain (sglang-jit-cxx, sglang-jit-nvcc-host, sglang-jit-nvcc-host-version) applied from SGLang 0.5.9 only, so
SGLang 0.5.5 with FlashInfer 0.5.x and no flashinfer-jit-cache on a box with no c++, a gcc without cc1plus, or a gcc 15
beside CUDA 12.8 was allowed, and its first FlashInfer JIT build (the default sampler, attention) fails. The rules
flashinfer-jit-* now judge FlashInfer's build with its own condition (no jit-cache, or FlashInfer < 0.4.0), and where
CC is set they judge $CC (jit.cc_host_*) or stay unknown, never the PATH's gcc."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import CUDA_128_HOME, LLAMA3, cli_json, model_dir, release_box, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = CUDA_128_HOME
HEADER = (
    "#if defined(__GNUC__)\n\n#if __GNUC__ > 14\n\n#error -- unsupported GNU version! gcc versions later than 14 are "
    "not supported!\n\n#endif\n"
)
PATH = {"PATH": "/usr/bin"}
#: the keys of the jit section the probe writes for the host compilers (the rest comes from the case's section)
HOST_KEYS = ("cxx", "nvcc_host", "flashinfer_host", "flashinfer_allow_unsupported", "cc_host")


def _box(root: Path, gcc: str | None = "14", *, cc1plus: bool = True, cxx: bool = True) -> HostView:
    """A CUDA 12.8 toolkit (host_config.h takes gcc 14 at most), /usr/bin/gcc -> gcc-`gcc` with cc1 (and cc1plus),
    /usr/bin/c++ where `cxx`."""
    touch_exe(root / HOME.lstrip("/") / "bin/nvcc")
    (root / HOME.lstrip("/") / "include/crt").mkdir(parents=True, exist_ok=True)
    (root / HOME.lstrip("/") / "include/crt/host_config.h").write_text(HEADER)
    (root / "usr/bin").mkdir(parents=True, exist_ok=True)
    if cxx:
        touch_exe(root / "usr/bin/c++")
    if gcc is not None:
        touch_exe(root / f"usr/bin/gcc-{gcc}")
        (root / "usr/bin/gcc").symlink_to(f"gcc-{gcc}")
        for name in ("cc1", "cc1plus") if cc1plus else ("cc1",):
            touch_exe(root / f"usr/lib/gcc/x86_64-linux-gnu/{gcc}/{name}")
    return HostView(str(root))


def _host_keys(jit: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v for k, v in jit.items() if k.startswith(HOST_KEYS) and not k.startswith(("cxx_cuda", "cxx_nccl", "cxx_h"))
    }


# ---- the probe -------------------------------------------------------------------------------------------------


def test_without_cc_flashinfer_runs_nvccs_default(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), PATH, _box(tmp_path))
    assert jit["flashinfer_host"] == "nvcc-default" and jit["flashinfer_allow_unsupported"] is False, jit
    assert not any(k.startswith("cc_host") for k in jit), jit


def test_cc_is_judged_not_the_paths_gcc(tmp_path: Path) -> None:
    # the PATH's gcc is 15 (too new), CC names a good gcc-13 with its g++
    view = _box(tmp_path, "15")
    touch_exe(tmp_path / "usr/bin/gcc-13")
    for name in ("cc1", "cc1plus"):
        touch_exe(tmp_path / f"usr/lib/gcc/x86_64-linux-gnu/13/{name}")
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "gcc-13"}, view)
    assert jit["nvcc_host_gnu_supported"] is False and jit["flashinfer_host"] == "cc", jit
    assert jit["cc_host_found"] is True and jit["cc_host"] == "/usr/bin/gcc-13", jit
    assert jit["cc_host_gnu_major"] == 13 and jit["cc_host_gnu_supported"] is True, jit
    # CC names the gcc 15: too new
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/usr/bin/gcc"}, view)
    assert jit["cc_host_found"] is True and jit["cc_host_gnu_supported"] is False, jit


def test_cc_absent_or_without_cxx_is_false(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc-12/bin/gcc"}, _box(tmp_path / "a"))
    assert jit["cc_host_found"] is False and "cc_host" not in jit, jit
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "gcc"}, _box(tmp_path / "b", "14", cc1plus=False))
    assert jit["cc_host_found"] is False and "cc1plus" in jit["cc_host_reason"], jit


def test_unread_cc_is_null_never_left_out(tmp_path: Path) -> None:
    view = _box(tmp_path)
    for value in ("ccache gcc", "", "bin/gcc", "/usr/bin"):
        jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": value}, view)
        assert jit["flashinfer_host"] == "cc" and jit["cc_host_found"] is None and jit["cc_host_reason"], (value, jit)
    # (igap24: a -ccbin in NVCC_PREPEND_FLAGS loses to the command line's -ccbin $CC; an appended one wins)
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "gcc", "NVCC_APPEND_FLAGS": "-ccbin /opt/x"}, view)
    assert jit["cc_host_found"] is None, jit
    for env in ({"FLASHINFER_NVCC": "/opt/nvcc"}, {"FLASHINFER_EXTRA_CUDAFLAGS": "-ccbin=/opt/gcc"}):
        jit = probe_jit(toolkit_128_facts(), {**PATH, **env}, view)
        assert jit["flashinfer_host"] is None and jit["flashinfer_host_reason"], (env, jit)


def test_clang_as_cc_is_found_and_not_read_as_gcc(tmp_path: Path) -> None:
    # /usr/lib/gcc holds gcc 14's cc1 only: that says nothing of clang
    view = _box(tmp_path, "14", cc1plus=False)
    touch_exe(tmp_path / "usr/bin/clang")
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "clang"}, view)
    assert jit["cc_host_found"] is True and not any(k.startswith("cc_host_gnu") for k in jit), jit


def test_allow_unsupported_in_flashinfers_flags(tmp_path: Path) -> None:
    env = {**PATH, "FLASHINFER_EXTRA_CUDAFLAGS": "-allow-unsupported-compiler", "CC": "gcc"}
    jit = probe_jit(toolkit_128_facts(), env, _box(tmp_path, "15"))
    assert jit["flashinfer_allow_unsupported"] is True and "cc_host_gnu_supported" not in jit, jit


# ---- the gate --------------------------------------------------------------------------------------------------


def _gate(
    tmp_path: Path, host: dict[str, Any], *, jit_cache: bool = False, flags: tuple[str, ...] = ()
) -> dict[str, Any]:
    """gate of a Llama 3 launch on SGLang 0.5.5 with FlashInfer 0.5.3 (tests/cases/h200-newest otherwise), the jit
    section's host-compiler keys from the probe's `host`, --allow-unknown (the case's torch is not 0.5.5's)."""
    path = release_box(tmp_path, "0.5.5", "9.0")
    doc = json.loads(path.read_text())
    packages = doc["facts"]["packages"]
    packages["flashinfer-python"].update(version="0.5.3", dist_version="0.5.3")
    packages["sgl-kernel"] = {"installed": True, "version": "0.3.16.post5", "location": "/x"}
    packages["sglang-kernel"] = {"installed": False}
    packages["torch"].update(version="2.8.0+cu128", dist_version="2.8.0")  # sgl-kernel 0.3.16.post5's torch
    if jit_cache:
        packages["flashinfer-jit-cache"] = {"installed": True, "version": "0.5.3", "location": "/x"}
    doc["facts"]["jit"].update(_host_keys(host))
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1", *flags]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--allow-unknown", "--format", "json", "--", *line])[1]


def _jit_rules(doc: dict[str, Any]) -> dict[str, str]:
    """jit-toolchain's rules among a decision's refusals and warnings (--allow-unknown's unknowns): id -> result."""
    return {
        str(x.get("rule")): str(x.get("result"))
        for r in [*(doc.get("reasons") or []), *(doc.get("warnings") or [])]
        if r.get("feature") == "jit-toolchain"
        for x in r.get("reasons") or []
    }


BAD_BOXES: dict[str, tuple[dict[str, str], dict[str, Any], str]] = {
    # no c++ (the link of every FlashInfer module, the sampler's included)
    "no-cxx": ({}, {"cxx": False}, "flashinfer-jit-cxx"),
    # gcc without g++'s cc1plus: nvcc's default host compiler cannot compile C++
    "gcc-without-cc1plus": ({}, {"cc1plus": False}, "flashinfer-jit-nvcc-host"),
    # gcc 15 beside CUDA 12.8 (host_config.h takes 14 at most)
    "gcc-15-cuda-12.8": ({}, {"gcc": "15"}, "flashinfer-jit-nvcc-host-version"),
    # CC names a compiler that is not there
    "cc-absent": ({"CC": "/opt/gcc-12/bin/gcc"}, {}, "flashinfer-jit-cc-host"),
    # CC names a gcc 15 although the PATH's gcc 14 is good
    "cc-gcc-15": ({"CC": "gcc-15"}, {"extra_gcc": "15"}, "flashinfer-jit-cc-host-version"),
}


def _probe(root: Path, env: dict[str, str], box: dict[str, Any]) -> dict[str, Any]:
    extra = box.pop("extra_gcc", None)
    view = _box(root, **box)
    if extra is not None:
        touch_exe(root / f"usr/bin/gcc-{extra}")
        for name in ("cc1", "cc1plus"):
            touch_exe(root / f"usr/lib/gcc/x86_64-linux-gnu/{extra}/{name}")
    return probe_jit(toolkit_128_facts(), {**PATH, **env}, view)


@pytest.mark.parametrize("name", sorted(BAD_BOXES))
def test_the_gate_refuses_a_flashinfer_jit_build_that_fails(tmp_path: Path, name: str) -> None:
    env, box, rule = BAD_BOXES[name]
    host = _probe(tmp_path / "box", env, dict(box))
    doc = _gate(tmp_path, host)
    assert doc["decision"] == "refuse" and _jit_rules(doc).get(rule) == "fail", (name, doc.get("reasons"))
    # with flashinfer-jit-cache (FlashInfer 0.5.3 loads its modules prebuilt) the rule does not apply
    doc = _gate(tmp_path, host, jit_cache=True)
    assert doc["decision"] == "allow" and rule not in _jit_rules(doc), (name, doc.get("reasons"))
    # nor for a launch that never JIT-builds FlashInfer (FA3 attention, torch's sampler)
    doc = _gate(tmp_path, host, flags=("--attention-backend", "fa3", "--sampling-backend", "pytorch"))
    assert doc["decision"] == "allow" and rule not in _jit_rules(doc), (name, doc.get("reasons"))


def test_a_good_box_and_a_good_cc_are_allowed(tmp_path: Path) -> None:
    for i, env in enumerate(({}, {"CC": "gcc-14"}, {"CC": "/usr/bin/gcc"})):
        doc = _gate(tmp_path, _probe(tmp_path / f"box{i}", env, {}))
        assert doc["decision"] == "allow", (env, doc.get("reasons"))
        assert not any(r.startswith("flashinfer-jit") for r in _jit_rules(doc)), (env, doc.get("reasons"))


def test_an_unread_cc_is_unknown_not_ok(tmp_path: Path) -> None:
    # (igap24: CC='ccache gcc' is now refused by rule flashinfer-jit-cc-args, tests/launch/test_gate_igap24_cc_words.py;
    # a compiler with an option after it is still not read)
    host = _probe(tmp_path / "box", {"CC": "gcc -m64"}, {})
    doc = _gate(tmp_path, host)
    assert _jit_rules(doc).get("flashinfer-jit-cc-host") == "unknown", doc.get("warnings")
    # the PATH's gcc (good here) is not what FlashInfer's nvcc runs: its rules do not apply
    assert "flashinfer-jit-nvcc-host" not in _jit_rules(doc), doc.get("warnings")
