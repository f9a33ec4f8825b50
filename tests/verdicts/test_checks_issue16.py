"""The stack checks of issue 16 (JIT toolchain, Triton's ptxas, DeepGEMM, kernel load, NCCL, driver API,
cuDNN, CPU torch, peer access, old releases) on facts built by hand, one cause at a time."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict

#: libnuma.so.1 as the loader finds it: the kernel-runtime-libs tests here are about the CUDA runtime libraries
NUMA = "/usr/lib/x86_64-linux-gnu/libnuma.so.1"


def pkg(version: str, **kw: Any) -> dict[str, Any]:
    return {"installed": True, "version": version, **kw}


def box(cc: str = "12.0", n: int = 1, **packages: Any) -> dict[str, Any]:
    return {
        "driver": {"version": "580.95.05", "cuda": "13.0"},
        "gpus": [{"index": i, "name": "GPU", "compute_capability": cc} for i in range(n)],
        "topology": {"interconnect": "single-gpu" if n == 1 else "pcie-switch", "gpu_count": n, "p2p": "all"},
        "packages": {k.replace("_", "-"): v for k, v in packages.items()},
        "system": {"env": {}},
    }


def check(manifests: Manifests, facts: dict[str, Any], cid: str, launch: dict[str, Any] | None = None) -> CheckVerdict:
    spec = next(c for c in manifests.checks if c["id"] == cid)
    return evaluate_check(spec, Context(facts=copy.deepcopy(facts), manifests=manifests, launch=launch or {}))  # type: ignore[arg-type]


def failed(v: CheckVerdict) -> list[str]:
    return [str(r.get("rule")) for r in v["reasons"] if r.get("result") == "fail"]


def jit(cuda: str, nvcc: bool = True, fp8: bool = True, fp4: bool = True, **kw: Any) -> dict[str, Any]:
    return {"toolkit": "/tk", "chosen_by": "CUDA_HOME", "nvcc": "/tk/bin/nvcc" if nvcc else None, "nvcc_found": nvcc,
            "cuda": cuda, "fp8_header": fp8, "fp4_header": fp4, "triton_ptxas": kw.get("ptxas", {}),
            "ninja_found": True, "ninja": "/usr/bin/ninja"}  # fmt: skip


# ---- JIT toolchain --------------------------------------------------------------------------------------


def test_old_nvcc_on_sm120_names_the_toolkit_not_the_gpu(manifests: Manifests) -> None:
    facts = box("12.0", sglang=pkg("0.5.11"), flashinfer_python=pkg("0.6.8.post1"))
    facts["jit"] = jit("12.8")
    v = check(manifests, facts, "jit-toolchain")
    assert v["status"] == "failed" and failed(v) == ["flashinfer-sm12x-cuda129"]
    assert "sm75 or higher" in str(v["reasons"][0]["message"]) and "old nvcc" in str(v["reasons"][0]["message"])
    facts["jit"] = jit("12.9")
    assert check(manifests, facts, "jit-toolchain")["status"] == "ok"
    facts["packages"]["flashinfer-python"] = pkg("0.6.3")  # before the SM 12.x normalisation: 12.8 compiles
    facts["jit"] = jit("12.8")
    assert check(manifests, facts, "jit-toolchain")["status"] == "ok"


def test_no_nvcc_fails_unless_the_jit_cache_is_installed(manifests: Manifests) -> None:
    facts = box("9.0", sglang=pkg("0.5.9"), flashinfer_python=pkg("0.6.3"))
    facts["jit"] = jit("13.0", nvcc=False)
    assert failed(check(manifests, facts, "jit-toolchain")) == ["nvcc-found", "sglang-jit-nvcc"]
    facts["packages"]["flashinfer-jit-cache"] = pkg("0.6.3")
    # FlashInfer's kernels are prebuilt now, but SGLang 0.5.9+ still compiles its own RoPE kernel with nvcc
    assert failed(check(manifests, facts, "jit-toolchain")) == ["sglang-jit-nvcc"]
    facts["packages"]["sglang"] = pkg("0.5.8")  # whose RoPE is sgl_kernel's (compiled ahead of time)
    assert check(manifests, facts, "jit-toolchain")["status"] == "skipped"  # no rule applies without nvcc


def test_no_nvcc_fails_before_flashinfer_0_4_whatever_the_jit_cache(manifests: Manifests) -> None:
    """FlashInfer 0.3.x never looks for flashinfer-jit-cache (has_flashinfer_jit_cache appears in 0.4.0): with
    no nvcc its JIT modules cannot build whether the cache is installed, absent or not known (flashinfer#1781)."""
    for cache in (None, {"installed": False}, pkg("0.4.0")):
        facts = box("9.0", flashinfer_python=pkg("0.3.0"))
        if cache is not None:
            facts["packages"]["flashinfer-jit-cache"] = cache
        facts["packages_complete"] = cache is not None
        facts["jit"] = jit("12.8", nvcc=False)
        assert failed(check(manifests, facts, "jit-toolchain")) == ["nvcc-found"], cache
    # from 0.4.0 an installed cache answers FlashInfer's modules, and one not known leaves the rule unknown
    facts = box("9.0", flashinfer_python=pkg("0.4.0"), flashinfer_jit_cache=pkg("0.4.0"))
    facts["jit"] = jit("12.8", nvcc=False)
    assert "nvcc-found" not in failed(check(manifests, facts, "jit-toolchain"))
    del facts["packages"]["flashinfer-jit-cache"]
    facts["packages_complete"] = False
    v = check(manifests, facts, "jit-toolchain")
    assert v["status"] == "unknown" and any(r.get("rule") == "nvcc-found" for r in v["reasons"])


def test_headers_and_deepgemm_nvcc(manifests: Manifests) -> None:
    facts = box("10.0", sglang=pkg("0.5.20"), flashinfer_python=pkg("0.6.18"), sgl_deep_gemm=pkg("0.2.0"))
    facts["jit"] = jit("12.8", fp4=False)
    assert sorted(failed(check(manifests, facts, "jit-toolchain"))) == ["deepgemm-nvcc", "fp4-header"]
    facts["jit"] = jit("12.6", fp4=False)  # fp4 is needed only from 12.8 on; 12.6 is too old for SM100 anyway
    assert sorted(failed(check(manifests, facts, "jit-toolchain"))) == [
        "deepgemm-nvcc",
        "nvcc-knows-gpu",
        "sglang-jit-arch",
    ]
    facts["packages"]["sgl-deep-gemm"] = pkg("0.1.4")  # 0.1.x accepts nvcc >= 12.3
    facts["jit"] = jit("12.8")
    assert check(manifests, facts, "jit-toolchain")["status"] == "ok"


def test_curand_header_of_the_jit_toolkit(manifests: Manifests) -> None:
    # flashinfer-4410: a conda-forge nvcc whose include directory has no curand_kernel.h (FlashInfer's sampling.cuh
    # and CUTLASS's tensor_fill.h include it); the rule is judged only where the probe recorded the header
    facts = box("12.0", sglang=pkg("0.5.20"), torch=pkg("2.11.0+cu130", cuda="13.0"), flashinfer_python=pkg("0.6.14"))
    facts["jit"] = dict(jit("13.1"), curand_header=False)
    v = check(manifests, facts, "jit-toolchain")
    assert v["status"] == "failed" and failed(v) == ["curand-header"]
    assert "curand_kernel.h" in str(next(r["message"] for r in v["reasons"] if r.get("rule") == "curand-header"))
    facts["jit"]["curand_header"] = True
    assert check(manifests, facts, "jit-toolchain")["status"] == "ok"
    del facts["jit"]["curand_header"]  # a facts file from before the probe recorded it: the rule is left out
    assert check(manifests, facts, "jit-toolchain")["status"] == "ok"
    facts["jit"] = dict(jit("13.1", nvcc=False), curand_header=False)  # no nvcc: nvcc-found fails, not the header
    assert "curand-header" not in failed(check(manifests, facts, "jit-toolchain"))


def test_nvcc_against_runtime_headers_of_another_release(manifests: Manifests) -> None:
    # flashinfer-3493: pip nvcc 13.3 compiling against the CUDA 13.0 runtime headers torch cu130 brought; FlashInfer
    # 0.6.10+ vendors CCCL, whose cuda_toolkit.h #error stops such a compile (read in the 0.6.10/0.6.12 wheels)
    facts = box("12.0", sglang=pkg("0.5.20"), torch=pkg("2.11.0+cu130", cuda="13.0"), flashinfer_python=pkg("0.6.12"))
    facts["jit"] = dict(jit("13.3"), headers_cuda="13.0")
    v = check(manifests, facts, "jit-toolchain")
    assert v["status"] == "failed" and failed(v) == ["nvcc-headers-match"]
    msg = str(next(r["message"] for r in v["reasons"] if r.get("rule") == "nvcc-headers-match"))
    assert "13.3" in msg and "13.0" in msg and "headers are incompatible" in msg
    facts["jit"]["headers_cuda"] = "13.3"  # nvcc and headers of one release
    assert check(manifests, facts, "jit-toolchain")["status"] == "ok"
    facts["jit"]["headers_cuda"] = "13.0"
    facts["packages"]["flashinfer-python"] = pkg("0.6.9")  # no vendored CCCL: the toolkit's own, not read here
    assert "nvcc-headers-match" not in failed(check(manifests, facts, "jit-toolchain"))
    facts["packages"]["flashinfer-python"] = pkg("0.6.12")
    del facts["jit"]["headers_cuda"]  # a facts file from before the probe recorded it: the rule is left out
    assert check(manifests, facts, "jit-toolchain")["status"] == "ok"


def test_tvm_ffi_takes_a_stray_rocm_home_for_rocm(manifests: Manifests) -> None:
    """sglang#30120: SGLang 0.5.14 builds its JIT kernels through apache-tvm-ffi 0.1.9, which picks HIP whenever
    it finds a ROCm home (/opt/rocm merely existing is one) and runs /opt/rocm/bin/hipcc on an NVIDIA box."""
    facts = box("12.0", sglang=pkg("0.5.14"), apache_tvm_ffi=pkg("0.1.9"), flashinfer_python=pkg("0.6.3"))
    facts["jit"] = {**jit("13.0"), "curand_header": True, "rocm_home": "/opt/rocm"}
    v = check(manifests, facts, "jit-toolchain")
    assert v["status"] == "failed" and "tvm-ffi-rocm-home" in failed(v)
    message = str(next(r for r in v["reasons"] if r.get("rule") == "tvm-ffi-rocm-home")["message"])
    assert "hipcc" in message and "TVM_FFI_GPU_BACKEND=cuda" in message
    for env in ({"TVM_FFI_GPU_BACKEND": "cuda"}, {"TVM_FFI_GPU_BACKEND": "CUDA"}):  # tvm-ffi lower-cases it
        fixed = copy.deepcopy(facts)
        fixed["system"]["env"] = env
        assert "tvm-ffi-rocm-home" not in failed(check(manifests, fixed, "jit-toolchain"))
    facts["system"]["env"] = {"TVM_FFI_GPU_BACKEND": "hip"}
    assert "tvm-ffi-rocm-home" in failed(check(manifests, facts, "jit-toolchain"))
    facts["system"]["env"] = {}
    for sglang, tvm in (("0.5.14", "0.1.13"), ("0.5.17", "0.1.8"), ("0.5.18", "0.1.11"), ("0.5.8", "0.1.9")):
        other = copy.deepcopy(facts)
        other["packages"]["sglang"], other["packages"]["apache-tvm-ffi"] = pkg(sglang), pkg(tvm)
        assert "tvm-ffi-rocm-home" not in failed(check(manifests, other, "jit-toolchain")), (sglang, tvm)
    facts["packages"]["sglang"], facts["packages"]["apache-tvm-ffi"] = pkg("0.5.17"), pkg("0.1.11")
    assert "tvm-ffi-rocm-home" in failed(check(manifests, facts, "jit-toolchain"))
    # no ROCm home on the box: the rule does not apply, the check is as before
    del facts["jit"]["rocm_home"]
    assert check(manifests, facts, "jit-toolchain")["status"] == "ok"
    # a ROCm home and no tvm-ffi version: not a pass
    facts["jit"]["rocm_home"] = "/opt/rocm"
    del facts["packages"]["apache-tvm-ffi"]
    v = check(manifests, facts, "jit-toolchain")
    assert v["status"] == "unknown" and [r["rule"] for r in v["reasons"] if r.get("result") == "unknown"] == [
        "tvm-ffi-rocm-home"
    ]


def test_no_ninja_on_path_fails_flashinfers_and_sglangs_jit(manifests: Manifests) -> None:
    """fak-923: FlashInfer's run_ninja (and SGLang 0.5.9+'s own JIT build) runs 'ninja' from PATH; without one on
    the serving environment's PATH the first JIT build fails with FileNotFoundError: 'ninja'."""
    facts = box("9.0", sglang=pkg("0.5.8"), flashinfer_python=pkg("0.6.3"), flashinfer_jit_cache={"installed": False})
    facts["jit"] = {**jit("12.8"), "curand_header": True}
    assert check(manifests, facts, "jit-toolchain")["status"] == "ok"
    facts["jit"]["ninja_found"] = False
    del facts["jit"]["ninja"]
    v = check(manifests, facts, "jit-toolchain")
    assert v["status"] == "failed" and failed(v) == ["ninja-found"]
    message = str(next(r for r in v["reasons"] if r.get("rule") == "ninja-found")["message"])
    assert "ninja" in message and "pip install ninja" in message and "flashinfer-jit-cache" in message
    # FlashInfer with its jit-cache loads prebuilt modules: the rule does not apply (0.4.0 and later)
    facts["packages"]["flashinfer-jit-cache"] = pkg("0.6.3")
    assert check(manifests, facts, "jit-toolchain")["status"] == "ok"
    facts["packages"]["flashinfer-python"] = pkg("0.3.1")  # before 0.4.0 the cache is never looked for
    assert failed(check(manifests, facts, "jit-toolchain")) == ["ninja-found"]
    # SGLang 0.5.9 and later build their own JIT kernels with ninja, whatever FlashInfer has prebuilt
    facts["packages"]["flashinfer-python"] = pkg("0.6.3")
    facts["packages"]["sglang"] = pkg("0.5.9")
    v = check(manifests, facts, "jit-toolchain")
    assert failed(v) == ["sglang-jit-ninja"]
    assert "pip install ninja" in str(next(r for r in v["reasons"] if r.get("rule") == "sglang-jit-ninja")["message"])
    facts["packages"]["sglang"] = pkg("0.5.23")
    assert failed(check(manifests, facts, "jit-toolchain")) == ["sglang-jit-ninja"]


def test_a_facts_file_without_the_ninja_fact_leaves_the_rules_unknown(manifests: Manifests) -> None:
    """An older facts file (no jit.ninja_found): the ninja rules are unknown, never a pass or a fail."""
    facts = box("9.0", sglang=pkg("0.5.9"), flashinfer_python=pkg("0.6.3"), flashinfer_jit_cache={"installed": False})
    facts["jit"] = {**jit("12.8"), "curand_header": True}
    del facts["jit"]["ninja_found"], facts["jit"]["ninja"]
    v = check(manifests, facts, "jit-toolchain")
    assert v["status"] == "unknown" and failed(v) == []
    unknown = [r["rule"] for r in v["reasons"] if r.get("result") == "unknown"]
    assert unknown == ["ninja-found", "sglang-jit-ninja"]


def test_triton_3_1_bundles_a_ptxas_too_old_for_sm120(manifests: Manifests) -> None:
    # rlinf-92: the traceback's compiler.py lines narrow Triton to 3.0.0 / 3.1.0, whose bundled ptxas is CUDA 12.4
    facts = box("12.0", sglang=pkg("0.5.9"), triton={"installed": True, "candidates": ["3.0.0", "3.1.0"]})
    v = check(manifests, facts, "triton-ptxas")
    assert v["status"] == "failed" and "ptxas-knows-gpu" in failed(v)
    msg = str(next(r["message"] for r in v["reasons"] if r.get("rule") == "ptxas-knows-gpu"))
    assert "12.4" in msg and "12.8" in msg
    facts["gpus"][0]["compute_capability"] = "9.0"  # Hopper: CUDA 12.4's ptxas knows sm_90a
    assert "ptxas-knows-gpu" not in failed(check(manifests, facts, "triton-ptxas"))


def test_triton_ptxas_message_quotes_the_target_triton_asks_for(manifests: Manifests) -> None:
    # lmdeploy-3410 / fish-speech-907: Triton 3.0.0-3.2.0 pass --gpu-name=sm_120 (the 'a' only for SM 9.0; read in
    # the wheels' compiler.py), so their ptxas says "Value 'sm_120' is not defined"; 3.3.0 on ask for sm_120a.
    # Before, the message quoted 'sm_120a' for every release, a line such a box never prints
    for version, asked in (("3.2.0", "'sm_120'"), ("3.0.0", "'sm_120'")):
        v = check(manifests, box("12.0", triton=pkg(version)), "triton-ptxas")
        msg = str(next(r["message"] for r in v["reasons"] if r.get("rule") == "ptxas-knows-gpu"))
        assert f"Value {asked} is not defined" in msg
        assert "'sm_120a'" in msg and "3.3" in msg  # the later releases' spelling is named, as theirs


def test_kernels_015_with_a_transformers_that_passes_no_version(manifests: Manifests) -> None:
    # sglang-27654: kernels 0.15.1+ require a revision or version on LayerRepository; transformers 5.6.0 / 5.8.1
    # build their hub-kernel table without one at import (wheels read), so importing SGLang fails
    # (igap33: every release 4.56.0-5.12.1)
    facts = box("9.0", sglang=pkg("0.5.12"), transformers=pkg("5.6.0"), kernels=pkg("0.15.2"))
    v = check(manifests, facts, "sglang-start-imports")
    assert "kernels-needs-version-transformers" in failed(v)
    msg = str(next(r["message"] for r in v["reasons"] if r.get("rule") == "kernels-needs-version-transformers"))
    assert "0.15.2" in msg and "transformers" in msg and "kernels<0.15" in msg
    facts["packages"]["kernels"] = pkg("0.14.1")
    assert "kernels-needs-version-transformers" not in failed(check(manifests, facts, "sglang-start-imports"))
    facts["packages"]["kernels"] = pkg("0.15.2")
    facts["packages"]["transformers"] = pkg("5.13.0")  # igap33: from 5.13.0 every entry has a version (read)
    assert "kernels-needs-version-transformers" not in failed(check(manifests, facts, "sglang-start-imports"))


def test_curand_header_the_probe_could_not_make_out_is_unknown(manifests: Manifests) -> None:
    # a wrapper nvcc: the probe finds cuda_fp8.h in CUDA_HOME but cannot say the real toolkit lacks curand_kernel.h
    # (null, headers_reason). Before, `exists` read the null as absent and left the rule out: jit-toolchain ok
    facts = box("12.0", sglang=pkg("0.5.20"), torch=pkg("2.11.0+cu130", cuda="13.0"), flashinfer_python=pkg("0.6.14"))
    facts["jit"] = dict(jit("13.1"), curand_header=None, headers_reason="/opt/cuda/bin/nvcc is not the compiler itself")
    v = check(manifests, facts, "jit-toolchain")
    assert v["status"] == "unknown"
    (r,) = [r for r in v["reasons"] if r.get("rule") == "curand-header"]
    assert r["result"] == "unknown" and "not the compiler itself" in str(r["message"])


def test_jit_unknown_without_facts_is_not_a_pass(manifests: Manifests) -> None:
    v = check(manifests, box("9.0", sglang=pkg("0.5.9")), "jit-toolchain")
    assert v["status"] == "unknown" and "not probed" in str(v["reasons"][0]["message"])


# ---- Triton's ptxas --------------------------------------------------------------------------------------


def test_triton_bundled_ptxas_per_gpu(manifests: Manifests) -> None:
    gb10 = box("12.1", triton=pkg("3.5.1"))
    v = check(manifests, gb10, "triton-ptxas")
    assert failed(v) == ["ptxas-knows-gpu", "sm12x-tma-gather"] and v["status"] == "failed"
    assert v["reasons"][0]["observed"] == "12.8" and v["reasons"][0]["required"] == ">= 12.9"
    gb10["packages"]["triton"] = pkg("3.6.0")  # ptxas-blackwell 12.9.86 is used for SM >= 100
    assert check(manifests, gb10, "triton-ptxas")["status"] == "ok"
    h100 = box("9.0", triton=pkg("3.2.0"))
    assert check(manifests, h100, "triton-ptxas")["status"] == "ok"
    b300 = box("10.3", triton=pkg("3.4.0"))  # sm_103 needs 12.9; 3.4.0 has one ptxas, 12.8
    assert failed(check(manifests, b300, "triton-ptxas")) == ["ptxas-knows-gpu"]


def test_which_bundled_ptxas_is_data(manifests: Manifests) -> None:
    """components.json `tool_min_sm` says from which SM a release runs ptxas-blackwell (100 for the package;
    Triton 3.9.0's get_ptxas takes it from SM 90): an H100 with 3.9.0 reads ptxas-blackwell's CUDA release, with
    3.6.0 the plain ptxas's; a data change moves it, no code names the threshold."""
    spec = manifests.package("triton")
    assert spec.get("tool_min_sm") == {"ptxas-blackwell": 100}
    rel = next(r for r in spec["releases"] if r["version"] == "3.9.0")
    assert rel.get("tool_min_sm") == {"ptxas-blackwell": 90}

    def observed(version: str) -> object:
        return check(manifests, box("9.0", triton=pkg(version)), "triton-ptxas")["reasons"][0].get("observed")

    r36 = next(r for r in spec["releases"] if r["version"] == "3.6.0")
    assert observed("3.9.0") == ".".join(rel["tools"]["ptxas-blackwell"].split(".")[:2])
    assert observed("3.6.0") == ".".join(r36["tools"]["ptxas"].split(".")[:2])


def test_triton_override_reads_the_variable_triton_reads(manifests: Manifests) -> None:
    override = {"path": "/usr/local/cuda/bin/ptxas", "version": "13.0.88"}
    facts = box("12.1", triton=pkg("3.5.1"))
    facts["jit"] = jit("13.0", ptxas={"TRITON_PTXAS_PATH": override})
    assert failed(check(manifests, facts, "triton-ptxas")) == ["sm12x-tma-gather"]  # 3.5 reads TRITON_PTXAS_PATH
    facts["packages"]["triton"] = pkg("3.6.0")
    facts["jit"] = jit("13.0", ptxas={"TRITON_PTXAS_PATH": {"path": "/old/ptxas", "version": "12.4.99"}})
    assert check(manifests, facts, "triton-ptxas")["status"] == "ok"  # 3.6 reads TRITON_PTXAS_BLACKWELL_PATH here
    facts["jit"] = jit("13.0", ptxas={"TRITON_PTXAS_BLACKWELL_PATH": {"path": "/old/ptxas", "version": "12.8.93"}})
    assert failed(check(manifests, facts, "triton-ptxas")) == ["ptxas-knows-gpu"]
    facts["jit"] = jit("13.0", ptxas={"TRITON_PTXAS_BLACKWELL_PATH": {"path": "/x", "version": None, "error": "gone"}})
    v = check(manifests, facts, "triton-ptxas")
    assert v["status"] == "unknown" and "gone" in str(v["reasons"][0]["message"])


# ---- DeepGEMM, kernel load, old releases ----------------------------------------------------------------


def test_deepgemm_arch_majors(manifests: Manifests) -> None:
    facts = box("12.0", sgl_deep_gemm=pkg("0.1.4"))
    v = check(manifests, facts, "deepgemm-arch")
    assert v["status"] == "warning" and "Unsupported architecture" in str(v["reasons"][0]["message"])
    facts["packages"]["sgl-deep-gemm"] = pkg("0.1.5")
    assert check(manifests, facts, "deepgemm-arch")["status"] == "ok"


def test_cuda12_kernel_on_cuda13_torch_needs_the_cuda12_runtime(manifests: Manifests) -> None:
    facts = box("12.1", torch=pkg("2.9.1+cu130", cuda="13.0", variant="cu130"), sgl_kernel=pkg("0.3.21"))
    facts["packages"]["nvidia-cuda-runtime-cu12"] = {"installed": False}
    facts["packages"]["nvidia-cuda-nvrtc-cu12"] = {"installed": False}
    facts["cuda_libs"] = {"libcudart.so.12": None, "libnvrtc.so.12": None, "libnuma.so.1": NUMA}
    v = check(manifests, facts, "kernel-runtime-libs")
    assert failed(v) == ["cudart-12", "nvrtc-12"] and "libnvrtc.so.12: cannot open" in str(v["reasons"][1]["message"])
    facts["packages"]["nvidia-cuda-runtime-cu12"] = pkg("12.9.79")  # not on the loader's path next to a cu13 torch
    facts["cuda_libs"]["libnvrtc.so.12"] = "/usr/local/cuda-12.9/lib64/libnvrtc.so.12"
    assert failed(check(manifests, facts, "kernel-runtime-libs")) == ["cudart-12"]
    facts["cuda_libs"]["libcudart.so.12"] = "/usr/local/cuda-12.9/lib64/libcudart.so.12"
    assert check(manifests, facts, "kernel-runtime-libs")["status"] == "ok"
    cu12_torch = box("9.0", torch=pkg("2.9.1+cu128", cuda="12.8", variant="cu128"), sgl_kernel=pkg("0.3.21"))
    cu12_torch["cuda_libs"] = {"libnuma.so.1": NUMA}
    v = check(manifests, cu12_torch, "kernel-runtime-libs")  # a CUDA 12 torch: the cu12 runtime rules do not apply
    assert v["status"] == "ok" and [r.get("rule") for r in v["reasons"]] == ["libnuma"]


def test_sgl_kernel_0_3_11_to_0_3_18_needs_a_cuda_lib_directory(manifests: Manifests) -> None:
    """sgl-kernel 0.3.11-0.3.18.post2 raise 'Could not find CUDA lib directory.' at import with a CUDA torch
    when no toolkit is chosen (no CUDA_HOME/CUDA_PATH, no nvcc on PATH, no /usr/local/cuda), read from the
    toolkits probe's facts (toolkit.found); 0.3.10 and 0.3.19+ do not, nor does a CPU torch."""
    facts = box("9.0", torch=pkg("2.8.0+cu128", cuda="12.8", variant="cu128"), sgl_kernel=pkg("0.3.14.post1"))
    facts["cuda_toolkits"] = []  # probed: nothing a build could pick
    facts["cuda_libs"] = {"libcudart.so.12": None, "libnvrtc.so.12": None, "libnuma.so.1": NUMA}
    v = check(manifests, facts, "kernel-runtime-libs")
    assert v["status"] == "failed" and failed(v) == ["cuda-lib-dir"]
    assert "Could not find CUDA lib directory" in str(v["reasons"][0]["message"])
    for fine in ("0.3.10", "0.3.19", "0.3.21"):
        facts["packages"]["sgl-kernel"] = pkg(fine)
        assert "cuda-lib-dir" not in failed(check(manifests, facts, "kernel-runtime-libs")), fine
    facts["packages"]["sgl-kernel"] = pkg("0.3.18.post2")
    assert failed(check(manifests, facts, "kernel-runtime-libs")) == ["cuda-lib-dir"]
    # a toolkit the build would pick (a runtime image's /usr/local/cuda has lib64/): the rule passes
    facts["cuda_toolkits"] = [{"path": "/usr/local/cuda", "version": "12.8", "source": "/usr/local/cuda",
                               "nvcc": None, "active_for_build": True}]  # fmt: skip
    assert check(manifests, facts, "kernel-runtime-libs")["status"] == "ok"
    # $CUDA_HOME names a directory that is not there: sgl-kernel searches it and finds nothing
    facts["cuda_toolkits"] = [{"path": "/opt/cuda", "version": None, "source": "CUDA_HOME", "nvcc": None,
                               "error": "/opt/cuda does not exist", "active_for_build": True}]  # fmt: skip
    assert failed(check(manifests, facts, "kernel-runtime-libs")) == ["cuda-lib-dir"]
    # toolkits not probed: unknown, never a pass
    del facts["cuda_toolkits"]
    v = check(manifests, facts, "kernel-runtime-libs")
    assert v["status"] == "unknown" and "toolkits were not probed" in str(v["reasons"][0]["message"])
    # a CPU build of torch never looks for the directory
    facts["cuda_toolkits"] = []
    facts["packages"]["torch"] = pkg("2.8.0+cpu", variant="cpu")
    assert "cuda-lib-dir" not in failed(check(manifests, facts, "kernel-runtime-libs"))


def test_older_than_the_manifests_is_a_failure_not_an_unknown(manifests: Manifests) -> None:
    facts = box("8.0", torch=pkg("2.6.0+cu124"), sglang=pkg("0.4.6"), sgl_kernel=pkg("0.0.9.post2"))
    v = check(manifests, facts, "kernel-release-known")
    assert v["status"] == "failed" and failed(v) == ["sgl-kernel-known", "sglang-known"]
    # every sgl-kernel PyPI serves (0.1.0 on) is a release the manifests know: only SGLang 0.4.x is older
    facts["packages"].update({"sglang": pkg("0.4.9.post4"), "sgl-kernel": pkg("0.2.7")})
    assert failed(check(manifests, facts, "kernel-release-known")) == ["sglang-known"]
    facts["packages"]["sgl-kernel"] = pkg("0.1.0")
    assert failed(check(manifests, facts, "kernel-release-known")) == ["sglang-known"]
    facts["packages"].update({"sglang": pkg("0.5.9"), "sgl-kernel": pkg("0.3.21")})
    assert check(manifests, facts, "kernel-release-known")["status"] == "ok"
    facts["packages"]["sgl-kernel"] = pkg("0.3.15")  # between known releases: not "older"
    assert check(manifests, facts, "kernel-release-known")["status"] == "ok"


@pytest.mark.parametrize(
    ("kernel", "torch", "status"),
    [("0.0.5", "2.5.1+cu124", "ok"), ("0.0.9.post2", "2.7.0+cu128", "failed"), ("0.0.9.post2", "2.6.0", "ok"),
     ("0.1.2", "2.7.0+cu128", "skipped"), ("0.2.7", "2.8.0+cu128", "skipped"), ("0.3.21", "2.9.1", "skipped")],
)  # fmt: skip
def test_old_kernel_torch_pairs(manifests: Manifests, kernel: str, torch: str, status: str) -> None:
    """sgl-kernel-torch-pair-old judges only the releases older than components.json's (0.0.x, gone from PyPI);
    0.1.0 on carry their torch pin as releases (sgl-kernel-torch-pair)."""
    facts = box("9.0", torch=pkg(torch), sgl_kernel=pkg(kernel))
    v = check(manifests, facts, "sgl-kernel-torch-pair-old")
    assert v["status"] == status
    if status == "failed":
        assert "undefined symbol: _ZN3c10" in str(v["reasons"][0]["message"])


@pytest.mark.parametrize(
    ("kernel", "torch", "status"),
    [("0.1.2", "2.7.0+cu128", "failed"), ("0.1.4", "2.6.0", "ok"), ("0.1.5", "2.6.0+cu124", "ok"),
     ("0.1.6.post1", "2.7.1+cu126", "failed"), ("0.1.7", "2.7.1", "ok"), ("0.2.7", "2.7.1+cu126", "ok"),
     ("0.2.9", "2.8.0", "failed"), ("0.3.0", "2.8.0+cu128", "ok"), ("0.3.0", "2.7.1", "failed"),
     ("0.3.4.post1", "2.8.0", "ok")],
)  # fmt: skip
def test_kernel_torch_pairs_read_from_the_old_wheels(
    manifests: Manifests, kernel: str, torch: str, status: str
) -> None:
    """sgl-kernel 0.1.0-0.3.4.post1 are releases with the torch their libraries' symbols resolve against
    (0.1.5-0.1.6.post1 and 0.2.9, which no SGLang pins, were unknown before: 0.1.5-0.1.6.post1 fell between
    the old check's ranges)."""
    facts = box("9.0", torch=pkg(torch), sgl_kernel=pkg(kernel))
    v = check(manifests, facts, "sgl-kernel-torch-pair")
    assert v["status"] == status, v
    if status == "failed":
        (fail,) = [r for r in v["reasons"] if r.get("result") == "fail"]
        assert fail["rule"] == "sgl-kernel-pins:torch" and fail["effect"] == "crash"
        assert f"sgl-kernel {kernel} pins torch==" in str(fail["message"])


# ---- NCCL, PCIe, driver API, cuDNN, CPU torch, peer access ----------------------------------------------


def test_nccl_two_wheels_and_old_nccl_on_blackwell(manifests: Manifests) -> None:
    facts = box("12.0", 4, nvidia_nccl_cu12=pkg("2.29.3"), nvidia_nccl_cu13=pkg("2.29.7"))
    v = check(manifests, facts, "nccl")
    assert failed(v) == ["one-nccl-wheel"] and "ncclCommResume" in str(v["reasons"][0]["message"])
    old = box("12.0", 4, nvidia_nccl_cu12=pkg("2.21.5"))
    assert failed(check(manifests, old, "nccl")) == ["nvidia-nccl-cu12-blackwell-code", "nvidia-nccl-cu12-sm120-fixes"]
    hopper = box("9.0", 4, nvidia_nccl_cu12=pkg("2.21.5"))
    assert check(manifests, hopper, "nccl")["status"] == "ok"


def test_nccl_cu11_wheel_beside_a_newer_one(manifests: Manifests) -> None:
    """icorpM (returnn#1802): nvidia-nccl-cu11 2.14.3 beside nvidia-nccl-cu12 2.27.3; the three NCCL wheels
    (cu11 2.14.3, cu12 2.27.3, cu13 2.28.9 read) each carry nvidia/nccl/lib/libnccl.so.2, and the cu11 copy has
    no ncclMemFree, which torch 2.8.0 imports."""
    no = {"installed": False}
    returnn = box("9.0", 1, nvidia_nccl_cu11=pkg("2.14.3"), nvidia_nccl_cu12=pkg("2.27.3"), nvidia_nccl_cu13=no)
    v = check(manifests, returnn, "nccl")
    assert failed(v) == ["one-nccl-wheel-cu11"]
    (fail,) = [r for r in v["reasons"] if r.get("result") == "fail"]
    assert fail["effect"] == "crash" and "nvidia-nccl-cu11" in str(fail["message"])
    with_cu13 = box("9.0", 1, nvidia_nccl_cu11=pkg("2.14.3"), nvidia_nccl_cu12=no, nvidia_nccl_cu13=pkg("2.28.9"))
    assert failed(check(manifests, with_cu13, "nccl")) == ["one-nccl-wheel-cu11"]
    alone = box("9.0", 1, nvidia_nccl_cu11=pkg("2.14.3"), nvidia_nccl_cu12=no, nvidia_nccl_cu13=no)
    assert check(manifests, alone, "nccl")["status"] == "ok"
    # a hand-written list that does not say whether the cu11 wheel is there: not known, never ok
    unsaid = {**box("9.0", 1, nvidia_nccl_cu12=pkg("2.27.3"), nvidia_nccl_cu13=no), "packages_complete": False}
    v = check(manifests, unsaid, "nccl")
    assert v["status"] == "unknown"
    assert {str(r.get("rule")): r.get("result") for r in v["reasons"]}["one-nccl-wheel-cu11"] == "unknown"
    # a probed list saved by a stackcheck that did not look for the cu11 wheel: the rule is left out, not passed
    saved = box("9.0", 1, nvidia_nccl_cu12=pkg("2.27.3"), nvidia_nccl_cu13=no)
    v = check(manifests, saved, "nccl")
    assert v["status"] == "ok" and "one-nccl-wheel-cu11" not in {str(r.get("rule")) for r in v["reasons"]}


def test_pcie_path_fails_where_nccl_would_use_p2p(manifests: Manifests) -> None:
    facts = box("12.0", 2)
    facts["pcie"] = {"iommu": "translated", "acs": "unknown", "acs_reason": "got 64 of 4096 bytes: needs root"}
    v = check(manifests, facts, "pcie-p2p-path")
    assert v["status"] == "failed" and failed(v) == ["iommu-not-translating"]
    unknown = [r for r in v["reasons"] if r.get("result") == "unknown"]
    assert unknown and "needs root" in str(unknown[0]["message"])  # ACS: unknown with the reason, not ok
    facts["pcie"] = {"iommu": "passthrough", "acs": "enabled"}
    assert failed(check(manifests, facts, "pcie-p2p-path")) == ["acs-off"]
    facts["topology"]["p2p"] = "none"  # NVML reports no P2P: NCCL does not use it, nothing to redirect
    assert check(manifests, facts, "pcie-p2p-path")["status"] == "skipped"
    facts["topology"]["p2p"] = "all"
    facts["topology"]["interconnect"] = "nvlink"
    assert check(manifests, facts, "pcie-p2p-path")["status"] == "skipped"


def test_green_context_symbols_need_a_cuda_124_driver(manifests: Manifests) -> None:
    facts = box("8.0", sgl_kernel=pkg("0.2.7"))
    facts["driver"] = {"version": "535.86.10", "cuda": "12.2"}
    v = check(manifests, facts, "driver-api")
    assert v["status"] == "failed" and "cuGreenCtxDestroy" in str(v["reasons"][0]["message"])
    facts["driver"] = {"version": "550.54.15", "cuda": "12.4"}
    assert check(manifests, facts, "driver-api")["status"] == "ok"
    facts["driver"] = {"version": "535.86.10", "cuda": "12.2"}
    facts["packages"]["sgl-kernel"] = pkg("0.3.6.post1")  # loads the green-context library lazily instead
    assert check(manifests, facts, "driver-api")["status"] == "skipped"
    # read in the wheels: 0.2.6's common_ops is the first to link the green-context API, 0.3.5's the last
    for version, status in (("0.2.5", "skipped"), ("0.2.6", "failed"), ("0.3.5", "failed")):
        facts["packages"]["sgl-kernel"] = pkg(version)
        assert check(manifests, facts, "driver-api")["status"] == status, version


def test_cudnn_for_torch_291(manifests: Manifests) -> None:
    facts = box("12.0", torch=pkg("2.9.1+cu128", cuda="12.8"), sglang=pkg("0.5.9"), nvidia_cudnn_cu12=pkg("9.10.2.21"))
    v = check(manifests, facts, "cudnn-torch")
    assert v["status"] == "failed" and "9.16.0.29" in str(v["reasons"][0]["message"])
    facts["system"]["env"]["SGLANG_DISABLE_CUDNN_CHECK"] = "1"
    assert check(manifests, facts, "cudnn-torch")["status"] == "skipped"
    del facts["system"]["env"]["SGLANG_DISABLE_CUDNN_CHECK"]
    facts["packages"]["nvidia-cudnn-cu12"] = pkg("9.16.0.29")
    assert check(manifests, facts, "cudnn-torch")["status"] == "ok"
    facts["packages"]["sglang"] = pkg("0.5.10")  # the check was removed
    assert check(manifests, facts, "cudnn-torch")["status"] == "skipped"


def test_cpu_torch(manifests: Manifests) -> None:
    v = check(manifests, box("9.0", torch=pkg("2.9.1+cpu", variant="cpu"), sglang=pkg("0.5.9")), "torch-cuda-build")
    assert v["status"] == "failed" and "Torch not compiled with CUDA enabled" in str(v["reasons"][0]["message"])
    assert (
        check(manifests, box("9.0", torch=pkg("2.9.1+cu128"), sglang=pkg("0.5.9")), "torch-cuda-build")["status"]
        == "ok"
    )


def test_peer_access_crashes_only_releases_without_the_fallback(manifests: Manifests) -> None:
    facts = box("8.9", 2, sglang=pkg("0.4.4"))
    facts["topology"]["p2p"] = "none"
    v = check(manifests, facts, "gpu-peer-access")
    assert v["status"] == "failed" and "peer access is not supported" in str(v["reasons"][0]["message"])
    assert check(manifests, facts, "gpu-peer-access", {"tp": 1})["status"] == "skipped"
    facts["packages"]["sglang"] = pkg("0.4.4.post4")
    assert check(manifests, facts, "gpu-peer-access")["status"] == "skipped"


# ---- NCCL of an NGC container ----------------------------------------------------------------------------


def test_ngc_torch_reads_the_containers_nccl_whatever_the_wheels(manifests: Manifests) -> None:
    # two RTX 5090s in an NGC 25.02 container, a hand-written report: nothing said about nvidia-nccl wheels
    facts = box("12.0", n=2, torch=pkg("2.7.0a0+ecf3bae40a.nv25.02"))
    facts["packages_complete"] = False
    facts["system"]["env"] = {"NCCL_VERSION": "2.25.1"}
    v = check(manifests, facts, "nccl")
    assert v["status"] == "failed" and failed(v) == ["system-nccl-sm120-fixes"]
    assert "NGC torch" in str(v["reasons"][0]["message"])
    # a later container's NCCL passes that rule
    facts["system"]["env"] = {"NCCL_VERSION": "2.28.3"}
    assert "system-nccl-sm120-fixes" not in failed(check(manifests, facts, "nccl"))
    # a PyPI torch with the wheels unknown: the system NCCL may not be the one loaded
    facts = box("12.0", n=2, torch=pkg("2.7.0+cu128"))
    facts["packages_complete"] = False
    facts["system"]["env"] = {"NCCL_VERSION": "2.25.1"}
    assert check(manifests, facts, "nccl")["status"] == "unknown"
    # an NGC torch with a newer nvidia-nccl-cu12 wheel beside it: the container's NCCL is still the one read
    facts = box("12.0", n=2, torch=pkg("2.7.0a0+ecf3bae40a.nv25.02"), nvidia_nccl_cu12=pkg("2.28.3"))
    facts["system"]["env"] = {"NCCL_VERSION": "2.25.1"}
    assert "system-nccl-sm120-fixes" in failed(check(manifests, facts, "nccl"))


def test_torch_ngc_fact_reads_the_local_tag(manifests: Manifests) -> None:
    from stackcheck.verdicts.context import Missing

    def ngc(version: str | None) -> Any:
        packages = {"torch": pkg(version) if version else {"installed": True}}
        ctx = Context(facts={"packages": packages}, manifests=manifests, launch={})  # type: ignore[typeddict-item]
        return ctx.lookup("torch.ngc", None)

    assert ngc("2.7.0a0+ecf3bae40a.nv25.02") is True
    assert ngc("2.8.0a0+5228986c39.nv25.06") is True
    assert ngc("2.9.1+cu128") is False and ngc("2.11.0") is False
    with pytest.raises(Missing):
        ngc(None)


def test_nccl_cu11_wheel_alone_beside_a_cuda12_or_13_torch(manifests: Manifests) -> None:
    """irev38: the nvidia-nccl-cu11 wheel with neither the cu12 nor the cu13 one (torch's own uninstalled, as the
    advice for the duplicate wheels can leave it). libtorch_cuda.so of torch 2.7.1, 2.8.0 and 2.11.0 (read) takes
    libnccl.so.2 from nvidia/nccl/lib through its RPATH and imports ncclMemFree, ncclCommSplit and more that the cu11
    wheel's 2.14.3 library lacks: `import torch` fails. one-nccl-wheel-cu11 passed it (no newer wheel beside) and the
    check said ok."""
    no = {"installed": False}

    def alone(torch: str, **more: Any) -> dict[str, Any]:
        wheels = {"nvidia_nccl_cu11": pkg("2.14.3"), "nvidia_nccl_cu12": no, "nvidia_nccl_cu13": no, **more}
        facts = box("9.0", 2, torch=pkg(torch), **wheels)
        facts["system"]["machine"] = "x86_64"
        return facts

    for torch in ("2.8.0+cu128", "2.11.0+cu130", "2.14.1+cu130"):
        v = check(manifests, alone(torch), "nccl")
        assert failed(v) == ["nccl-cu11-wheel-alone"], torch
        (fail,) = [r for r in v["reasons"] if r.get("result") == "fail"]
        assert fail["effect"] == "crash" and "nvidia-nccl-cu11" in str(fail["message"]) and torch in fail["message"]
    # a torch before 2.7 was not read: not known, never ok
    v = check(manifests, alone("2.6.0+cu124"), "nccl")
    assert v["status"] == "unknown"
    assert {str(r.get("rule")): r.get("result") for r in v["reasons"]}["nccl-cu11-wheel-alone"] == "unknown"
    # what the cu11 wheel serves: a CUDA 11 torch; an NVIDIA container's torch links the container's NCCL; with
    # torch's own wheel beside it, one-nccl-wheel-cu11 judges the pair
    assert check(manifests, alone("2.6.0+cu118"), "nccl")["status"] == "ok"
    assert "nccl-cu11-wheel-alone" not in failed(check(manifests, alone("2.7.0a0+ecf3bae40a.nv25.02"), "nccl"))
    pair = alone("2.8.0+cu128", nvidia_nccl_cu12=pkg("2.27.3"))
    assert failed(check(manifests, pair, "nccl")) == ["one-nccl-wheel-cu11"]
