"""The gate fails closed (issue 14, items 1 and 2).

1. Every feature and stack check with effect crash in the shipped manifests is walked: facts that block it
   are found (the case folders, or a mutation of one), and the gate refuses a launch that needs it. What
   crashes every launch on the box (`required_by: {"launches": "every"}`) is refused for a plain launch
   with no flag at all; a check scoped to features is refused with them; and every check that can crash
   is scoped somehow, so nothing with a crash effect is invisible to the gate.
2. A probe that failed or timed out, or a package entry that could not be read, is unknown: the gate
   refuses (unless --allow-unknown), never "not installed" -> not applicable -> allow.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from cli_process import run_stackcheck

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report
from stackcheck.cli import main
from stackcheck.documents.types import Report
from stackcheck.knowledge.loader import load
from stackcheck.knowledge.types import Check, Feature
from stackcheck.launch import gate
from stackcheck.verdicts.engine import BUILTIN_EFFECTS

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = ROOT / "tests" / "cases"
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]
MANIFESTS = load([], env={})


def _doc(case: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((CASES / case / "facts.json").read_text())
    return doc


def _sm120(doc: dict[str, Any], count: int) -> None:
    doc["facts"]["gpus"] = [
        {"index": i, "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "compute_capability": "12.0",
         "uuid": None, "pci_bus_id": None, "memory_bytes": None}
        for i in range(count)
    ]  # fmt: skip
    doc["facts"]["topology"] = {"interconnect": "pcie-host-bridge", "same_model": True, "gpu_count": count,
                                "p2p": "none", "pairs": []}  # fmt: skip


def _old_driver(doc: dict[str, Any]) -> None:
    doc["facts"]["driver"] = {"version": "570.86.10", "cuda": "12.8", "source": "nvml"}


def _kernel_for_other_torch(doc: dict[str, Any]) -> None:
    doc["facts"]["packages"]["sglang-kernel"]["version"] = (
        "0.4.8"  # built against torch 2.13.0; SGLang 0.5.23 wants >= 0.4.9
    )


def _stale_cubin(doc: dict[str, Any]) -> None:
    # (imend7: on the b200 case's flashinfer-python 0.6.18, which raises at import with a flashinfer-cubin of another
    # version; 0.7.2 on, h200-newest's, only warns and downloads on demand: unknown there)
    doc["facts"]["packages"]["flashinfer-cubin"] = {"installed": True, "version": "0.6.17", "location": "/x"}


def _sm120_old_toolkit(doc: dict[str, Any]) -> None:
    _sm120(doc, 2)
    doc["facts"]["cuda_toolkits"][0]["version"] = "12.8.93"


def _jit(**values: Any) -> Callable[[dict[str, Any]], None]:
    """The toolkit a JIT build picks (the jit probe's section), changed."""

    def mutate(doc: dict[str, Any]) -> None:
        doc["facts"]["jit"] = {**doc["facts"]["jit"], **values}

    return mutate


def _jit_section(**values: Any) -> Callable[[dict[str, Any]], None]:
    """Values of the jit probe's section, for a case without one."""

    def mutate(doc: dict[str, Any]) -> None:
        doc["facts"]["jit"] = {**(doc["facts"].get("jit") or {}), **values}

    return mutate


def _no_ninja(doc: dict[str, Any]) -> None:
    """No `ninja` on the PATH the server runs with (fak-923): the jit probe records ninja_found false, no path."""
    doc["facts"]["jit"] = {k: v for k, v in doc["facts"]["jit"].items() if k != "ninja"} | {"ninja_found": False}


def _packages(**versions: str | None) -> Callable[[dict[str, Any]], None]:
    """Packages installed at a version (None: not installed); `_` in a name stands for `-`."""

    def mutate(doc: dict[str, Any]) -> None:
        for name, version in versions.items():
            entry = {"installed": True, "version": version, "location": "/x"} if version else {"installed": False}
            doc["facts"]["packages"][name.replace("_", "-")] = entry

    return mutate


def _both(*steps: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        for step in steps:
            step(doc)

    return mutate


def _env(**values: str) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        doc["facts"]["system"]["env"] = {**(doc["facts"]["system"].get("env") or {}), **values}

    return mutate


_NO_NCCL = {"nvidia_nccl_cu12": None, "nvidia_nccl_cu13": None}


def _no_cudnn(doc: dict[str, Any]) -> None:
    """Neither cuDNN wheel, and no libcudnn.so.9 on the loader's path (the cudalibs probe looked for it)."""
    _packages(nvidia_cudnn_cu12=None, nvidia_cudnn_cu13=None)(doc)
    doc["facts"]["cuda_libs"] = {**(doc["facts"].get("cuda_libs") or {}), "libcudnn.so.9": None}


def _two_sm120(doc: dict[str, Any]) -> None:
    _sm120(doc, 2)


def _v100(doc: dict[str, Any]) -> None:
    """One V100 (cc 7.0), which SGLang refuses when it loads the model (sglang-gpu-min-cc)."""
    doc["facts"]["gpus"] = [{"index": 0, "name": "Tesla V100-SXM2-32GB", "compute_capability": "7.0",
                             "uuid": None, "pci_bus_id": None, "memory_bytes": None}]  # fmt: skip
    doc["facts"]["topology"] = {"interconnect": "single-gpu", "same_model": True, "gpu_count": 1, "p2p": "none",
                                "pairs": []}  # fmt: skip


def _system_python(version: str) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        doc["facts"]["system"]["python"] = version

    return mutate


def _old_cudart(doc: dict[str, Any]) -> None:
    """audit --deep found a libcudart.so.12 for torch that lacks the version node torch needs from it."""
    doc["facts"]["libs"] = {
        "ld_cache": "test",
        "packages": {},
        "warnings": [],
        "version_failures": [
            {"package": "torch", "object": "torch/lib/libtorch_cuda.so", "needed": "libcudart.so.12",
             "winner": "/usr/local/cuda-11.8/lib64/libcudart.so.12", "via": "LD_LIBRARY_PATH",
             "missing": ["libcudart.so.12"], "defined": ["libcudart.so.11.0"]}
        ],
        "version_errors": [],
    }  # fmt: skip


# facts beyond the case folders, for items (and rules of checks whose rules have scopes of their own) that no
# case blocks: (case, mutation)
def _fabric_in_progress(doc: dict[str, Any]) -> None:
    for g in doc["facts"]["gpus"]:
        g["fabric"] = {"state": "completed", "status": "success"}
    doc["facts"]["gpus"][0]["fabric"] = {"state": "in-progress", "status": None}


def _nvml_refused_files_unread(doc: dict[str, Any]) -> None:
    """driver-userspace-match's nvml-init-version-mismatch: NVML's init refused with LibRmVersionMismatch and the
    user-space release not read from the files (the /proc fallback's driver section)."""
    doc["facts"]["driver"].update(source="proc", userspace_version=None, nvml_init_error="LibRmVersionMismatch")


def _volta_under_open(doc: dict[str, Any]) -> None:
    """driver-kernel-modules' open-runs-turing-or-newer: a hand-written V100 (cc 7.0) under the open flavour (the
    open kernel modules need the GSP, Turing and newer)."""
    doc["facts"]["driver"] = {"version": "580.95.05", "cuda": "13.0", "kernel_modules": "open"}
    doc["facts"]["gpus"] = [{"index": 0, "name": "Tesla V100-SXM2-32GB", "compute_capability": "7.0"}]


def _started_by(how: str) -> Callable[[dict[str, Any]], None]:
    """container-engine-gpu-path's other rules on the image case whose daemon was read: started by Docker's device
    request with neither GPU hook on dockerd's PATH (read from its environ), or with CDI devices no spec names."""

    def mutate(doc: dict[str, Any]) -> None:
        doc["facts"]["image"]["started_by"] = how
        doc["facts"]["docker_daemon"].update(
            gpu_hooks={"nvidia-container-runtime-hook": None, "nvidia-cdi-hook": None},
            gpu_hooks_path="/proc/1234/environ",
        )

    return mutate


def _extension_other_torch(extension: str) -> Callable[[dict[str, Any]], None]:
    """The kernel symbol probe's section with one compiled extension of another package (facts.kernel_symbols.
    extensions) that needs a c10 symbol the installed torch lacks (LMCache#1294's shape)."""

    def mutate(doc: dict[str, Any]) -> None:
        ext = {"extension": extension, "path": f"{extension}/_C.abi3.so", "torch_symbols": 40,
               "torch_missing_count": 1, "torch_missing": ["_ZN3c105ErrorC2ENS_14SourceLocationESs"]}  # fmt: skip
        doc["facts"]["kernel_symbols"] = {
            "package": "sglang-kernel", "files": [], "extension_dirs": ["/x"], "extensions": [ext],
        }  # fmt: skip

    return mutate


MUTATIONS: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    # extension-torch-abi-lmcache / -deepep: LMCache's c_ops, DeepEP's library built against another torch
    "lmcache-c-ops-other-torch": ("h200-newest", _extension_other_torch("lmcache")),
    "deep-ep-other-torch": ("h200-newest", _extension_other_torch("deep_ep")),
    # lmcache-sglang-adapter: SGLang 0.5.23 imports lmcache_mp_metadata / unified_lmcache_mp_connector, first in
    # LMCache 0.5.6 (ifc37)
    "lmcache-0.5.5-sglang-0.5.23": ("h200-newest", _packages(lmcache="0.5.5")),
    # torchao-import (igap23): SGLang 0.5.4 imports torchao's function-style configs on every model load, which
    # torchao 0.16+ no longer exports
    "torchao-0.17-sglang-0.5.4": ("h200-extension-built-other-torch", _packages(torchao="0.17.0")),
    "docker-gpus-no-hook": ("image-docker-no-nvidia-runtime", _started_by("docker-gpus")),
    "cdi-device-no-spec": ("image-docker-no-nvidia-runtime", _started_by("cdi-device")),
    "nvml-refused-files-unread": ("h200-newest", _nvml_refused_files_unread),
    "volta-under-open": ("h200-newest", _volta_under_open),
    # gpu-fabric-state: an HGX H200 whose Fabric Manager has not registered GPU 0 (CUDA error 802)
    "fabric-in-progress": ("h200-newest", _fabric_in_progress),
    "old-driver": ("h200-newest", _old_driver),
    "lib-version-too-old": ("h200-newest", _old_cudart),
    "kernel-for-other-torch": ("h200-newest", _kernel_for_other_torch),
    "stale-cubin": ("b200", _stale_cubin),
    "sm120-old-toolkit": ("h200-newest", _sm120_old_toolkit),
    # sgl-kernel-torch-pair-old: sgl-kernel 0.0.9.post2 (older than the manifests' releases; SGLang pins it with
    # torch 2.6.0) under torch 2.7.1 (0.1.0 on are releases with their torch pin: sgl-kernel-torch-pair)
    "old-kernel-other-torch": ("a800-driver535-sglang049", _packages(sgl_kernel="0.0.9.post2")),
    # sglang-startup-versions: SGLang 0.5.9 checks sgl-kernel >= 0.3.21, SGLang 0.5.23 flashinfer-python >= 0.7.2
    "sgl-kernel-below-start-check": ("writeup-after", _packages(sgl_kernel="0.3.20+cu130")),
    "flashinfer-below-start-check": ("h200-newest", _packages(flashinfer_python="0.7.1")),
    # ... and that the kernel package is installed at all (sgl-kernel to 0.5.9, sglang-kernel from 0.5.10)
    "sgl-kernel-missing-at-start": ("writeup-after", _packages(sgl_kernel=None)),
    "sglang-kernel-missing-at-start": ("h200-newest", _packages(sglang_kernel=None)),
    # jit-toolchain's rules
    "no-nvcc": ("h200-newest", _jit(nvcc=None, nvcc_found=False, cuda=None, fp8_header=None, fp4_header=None)),
    "hopper-nvcc-11.8": ("h200-newest", _jit(cuda="11.8")),
    "no-fp4-header": ("h200-newest", _jit(fp4_header=False)),
    "no-curand-header": ("h200-newest", _jit(curand_header=False)),
    # ninja-found and sglang-jit-ninja: FlashInfer 0.7.2 without its jit-cache and SGLang 0.5.23, no ninja on PATH
    "no-ninja-on-path": ("h200-newest", _no_ninja),
    # nvcc-headers-match: a pip nvcc 13.3 compiling against CUDA 13.0 runtime headers (FlashInfer 0.7.2's CCCL)
    "nvcc-13.3-headers-13.0": ("h200-newest", _jit(cuda="13.3", headers_cuda="13.0")),
    "deepgemm-from-source-nvcc-12.8": ("b200-deepgemm-nvcc128", _packages(deep_gemm="2.1.1")),
    # tvm-ffi-rocm-home: SGLang 0.5.9 with apache-tvm-ffi 0.1.9 and a stray /opt/rocm (sglang#30120)
    "sglang-059-tvm-ffi-0.1.9-opt-rocm": ("writeup-after", _both(_packages(apache_tvm_ffi="0.1.9"),
                                                                _jit_section(rocm_home="/opt/rocm"))),
    # flashinfer-trtllm-fmha-cuda133: FlashInfer 0.6.17's trtllm-gen FMHA with a CUDA 13.3 JIT toolkit on B200
    # sglang-requires-python: SGLang 0.5.23 (Requires-Python >=3.11) run by a Python 3.10
    "sglang-0523-python-3.10": ("h200-newest", _system_python("3.10.12")),
    "b200-flashinfer-0617-cuda133": ("b200-deepgemm-nvcc128",
                                     _both(_packages(flashinfer_python="0.6.17"), _jit(cuda="13.3"))),
    # nccl's rules for old releases (each with one NCCL wheel, or the container's NCCL_VERSION)
    "b200-nccl-cu12-2.21": ("b200-deepgemm-nvcc128", _packages(nvidia_nccl_cu13=None, nvidia_nccl_cu12="2.21.5")),
    "b200-nccl-cu13-2.24": ("b200-deepgemm-nvcc128", _packages(nvidia_nccl_cu12=None, nvidia_nccl_cu13="2.24.3")),
    "b200-system-nccl-2.21": ("b200-deepgemm-nvcc128", _both(_packages(**_NO_NCCL), _env(NCCL_VERSION="2.21.5"))),
    # nccl-in-use-unread: neither NCCL wheel and no NCCL_VERSION on eight B200s: the NCCL torch loads is unknown
    "b200-nccl-unread": ("b200", _packages(**_NO_NCCL)),
    "sm120-nccl-cu12-2.26": ("h200-newest",
                             _both(_two_sm120, _packages(nvidia_nccl_cu13=None, nvidia_nccl_cu12="2.26.2"))),
    "sm120-nccl-cu13-2.26": ("h200-newest", _both(_two_sm120, _packages(nvidia_nccl_cu13="2.26.2"))),
    "sm120-system-nccl-2.26": ("h200-newest", _both(_two_sm120, _packages(**_NO_NCCL), _env(NCCL_VERSION="2.26.2"))),
    # sglang-gpu-min-cc: a GPU below sm75
    "v100-sm70": ("h200-newest", _v100),
    # dsv4-flashmla-sparse-prefill: SGLang 0.5.15 (FlashMLA sparse prefill on by default) on an RTX PRO 6000 (SM120)
    "sm120-sglang-0515": ("rtxpro6000-pcie-iommu-translated", _packages(sglang="0.5.15", sglang_kernel="0.4.4")),
    # torch-cudnn-present: PyTorch's cu130 wheel without a cuDNN wheel or a libcudnn.so.9 the loader finds
    "no-cudnn": ("h200-newest", _no_cudnn),
    # one-nccl-wheel-cu11: an old nvidia-nccl-cu11 wheel beside the CUDA 13 torch's nvidia-nccl-cu13 (returnn#1802)
    "nccl-cu11-beside-cu13": ("h200-newest", _packages(nvidia_nccl_cu11="2.14.3")),
    # nccl-cu11-wheel-alone: the cu11 wheel left alone, the CUDA 13 torch's nvidia-nccl-cu13 uninstalled (irev38)
    "nccl-cu11-alone": ("h200-newest", _packages(nvidia_nccl_cu11="2.14.3", nvidia_nccl_cu13=None)),
    # torch-nccl-wheel-pin-cu12 / -cu13 (ifc46): torch's NCCL wheel of an earlier major.minor than torch's pin (torch
    # 2.8.0+cu128 pins nvidia-nccl-cu12 2.27.3, 2.14.1+cu130 nvidia-nccl-cu13 2.30.7): `import torch` fails
    "torch-nccl-cu12-below-pin": ("h200-newest", _packages(torch="2.8.0+cu128", nvidia_nccl_cu13=None,
                                                           nvidia_nccl_cu12="2.26.2")),
    "torch-nccl-cu13-below-pin": ("h200-newest", _packages(nvidia_nccl_cu13="2.27.7")),
    # torch-nccl-wheel-other-major (igap47): a CUDA 12 torch with only the cu13 NCCL wheel, whose libnccl.so.2 (the
    # path both wheels install) torch loads, under a driver of CUDA 12 that the NCCL's CUDA 13 runtime refuses
    "torch-cu12-nccl-cu13-only": ("h200-newest", _both(_packages(torch="2.8.0+cu128"), _old_driver)),
    # kernels-huggingface-hub-transformers4 (ifc46): kernels 0.14.1's huggingface-hub>=1.10 beside transformers 4.56.1,
    # whose import-time check takes huggingface-hub <1.0 only
    "kernels-hub-transformers4": ("h200-newest", _packages(kernels="0.14.1", transformers="4.56.1",
                                                           huggingface_hub="1.10.0")),
    # symm-mem-allocator-link (isymm): no libnccl.so where a -lnccl link looks (the pip NCCL wheel's libnccl.so.2 only)
    "no-libnccl-so": ("h200-newest", _jit(libnccl_so_found=False)),
    # symm-mem-allocator-cudart-link (igap24): no libcudart.so for torch's -lcudart (a CUDA home of pip wheels)
    "no-libcudart-so": ("h200-newest", _jit(libcudart_so_found=False)),
    # symm-mem-allocator-cudart-major (igap29): that -lcudart takes a CUDA 12 runtime beside the CUDA 13 torch (unknown)
    "libcudart-so-12-for-cu130": ("h200-newest", _jit(libcudart_so_soname="libcudart.so.12")),
    # symm-mem-allocator-cxx / -cuda-home (isymm2): no C++ compiler on the server's PATH; no CUDA home for torch
    "no-cxx": ("h200-newest", _jit(cxx_found=False)),
    # symm-mem-nccl-so-path (igap23): SGLANG_NCCL_SO_PATH names a file that is not there (pynccl disabled)
    "nccl-so-path-missing": ("h200-newest", _jit(nccl_so_path="/opt/nccl/lib/libnccl.so.2", nccl_so_path_found=False)),
    # symm-mem-nccl-so-path-init-config (ifc41): that file has no ncclCommInitRankConfig, which 0.5.17+ bind
    "nccl-so-path-no-init-config": ("h200-newest", _jit(nccl_so_path="/opt/nccl/lib/libnccl.so.2",
                                                        nccl_so_path_found=True, nccl_so_path_init_config=False)),
    # symm-mem-nccl-so-path-window (igap29): 0.5.1-0.5.4 with that file an NCCL without ncclCommWindowRegister (the
    # version assertion); -window-comm: 0.5.5-0.5.7 hand its communicator to torch's NCCL (unknown); -window-register
    # (ifc42): 0.5.8+ act on that NCCL's refusal of it (crash, inferred); -mem-alloc: 0.5.23
    # binds ncclMemAlloc / ncclMemFree with the window functions, and that file lacks them
    "nccl-so-path-no-window-054": ("h200-newest", _both(_packages(sglang="0.5.4"), _jit(
        nccl_so_path="/opt/nccl/lib/libnccl.so.2", nccl_so_path_found=True, nccl_so_path_window=False))),
    # symm-mem-nccl-so-path-version (igap38): 0.5.1-0.5.4 assert that file's NCCL version, read as 2.27.1
    "nccl-so-path-old-version-054": ("h200-newest", _both(_packages(sglang="0.5.4"), _jit(
        nccl_so_path="/opt/nccl/lib/libnccl.so.2", nccl_so_path_found=True, nccl_so_path_window=True,
        nccl_so_path_version="2.27.1"))),
    "nccl-so-path-no-window": ("h200-newest", _jit(nccl_so_path="/opt/nccl/lib/libnccl.so.2", nccl_so_path_found=True,
                                                   nccl_so_path_init_config=True, nccl_so_path_window=False)),
    "nccl-so-path-no-mem-alloc": ("h200-newest", _jit(nccl_so_path="/opt/nccl/lib/libnccl.so.2",
                                                      nccl_so_path_found=True, nccl_so_path_init_config=True,
                                                      nccl_so_path_window=True, nccl_so_path_mem_alloc=False)),
    # symm-mem-nccl-so-path-same-nccl (igap36): that file is NCCL 2.32.6, torch's wheel 2.30.7 (unknown)
    "nccl-so-path-other-version": ("h200-newest", _jit(nccl_so_path="/opt/nccl/lib/libnccl.so.2",
                                                       nccl_so_path_found=True, nccl_so_path_init_config=True,
                                                       nccl_so_path_window=True, nccl_so_path_mem_alloc=True,
                                                       nccl_so_path_version="2.32.6")),
    # nccl-so-path-cuda-driver (igap40): that file's NCCL is built with CUDA 13 (its runtime linked in) under a CUDA
    # 12.8 driver: pynccl's ncclCommInitRank fails at tp > 1 with or without --enable-symm-mem
    "nccl-so-path-cuda13-old-driver": ("h200-newest", _both(_old_driver, _jit(
        nccl_so_path="/opt/nccl/lib/libnccl.so.2", nccl_so_path_found=True, nccl_so_path_init_config=True,
        nccl_so_path_window=True, nccl_so_path_mem_alloc=True, nccl_so_path_version="2.30.7",
        nccl_so_path_cuda="13.0", nccl_so_path_cuda_major=13))),
    # symm-mem-nccl-so-path-same-nccl (igap40): torch's wheel's 2.30.7, of another CUDA major (unknown)
    "nccl-so-path-other-cuda": ("h200-newest", _jit(nccl_so_path="/opt/nccl/lib/libnccl.so.2", nccl_so_path_found=True,
                                                    nccl_so_path_init_config=True, nccl_so_path_window=True,
                                                    nccl_so_path_mem_alloc=True, nccl_so_path_version="2.30.7",
                                                    nccl_so_path_cuda="12.9", nccl_so_path_cuda_major=12)),
    # sglang-jit-nvcc-host (irev54): c++ there, no gcc for nvcc's host compile; sglang-jit-cxx-args: CXX='ccache g++'
    "no-gcc-for-nvcc": ("h200-newest", _jit(nvcc_host_found=False)),
    # sglang-jit-nvcc-host-version (irev55): gcc 15 beside a toolkit whose host_config.h takes gcc 14 at most
    "gcc-too-new-for-nvcc": ("h200-newest", _jit(nvcc_host_gnu_major=15, nvcc_host_gnu_supported=False)),
    # sglang-jit-nvcc-host-cxx20 (ifc38): gcc 9 as nvcc's host compiler, which drops -std=c++20
    "gcc-too-old-for-cxx20": ("h200-newest", _jit(nvcc_host_gnu_major=9)),
    # sglang-jit-nvcc-host-clang-cxx20 (igap31): a clang 9 NVCC_CCBIN names, which has no -std=c++20
    "clang-too-old-for-cxx20": ("h200-newest", _jit(nvcc_host_found=True, nvcc_host_clang_major=9)),
    "cxx-with-args": ("h200-newest", _jit(cxx_found=None, cxx_quoted_found=False)),
    # symm-mem-allocator-cxx-split (igap31): torch 2.8-2.12 split an unquoted CXX, and its program is not there
    "cxx-split-missing-torch-2.12": ("h200-newest", _both(_packages(torch="2.12.0+cu130"),
                                                          _jit(cxx_found=None, cxx_quoted_found=False,
                                                               cxx_split_found=False))),
    # flashinfer-jit-* (iccjit): FlashInfer's own JIT build, CC unset (nvcc's default gcc) or CC set (-ccbin $CC)
    "flashinfer-gcc-without-cc1plus": ("h200-newest", _jit(flashinfer_host="nvcc-default",
                                                           flashinfer_allow_unsupported=False, nvcc_host_found=False)),
    "flashinfer-gcc-too-new": ("h200-newest", _jit(flashinfer_host="nvcc-default", flashinfer_allow_unsupported=False,
                                                   nvcc_host_gnu_major=15, nvcc_host_gnu_supported=False)),
    "flashinfer-cc-absent": ("h200-newest", _jit(flashinfer_host="cc", flashinfer_allow_unsupported=False,
                                                 cc_host_found=False)),
    "flashinfer-cc-too-new": ("h200-newest", _jit(flashinfer_host="cc", flashinfer_allow_unsupported=False,
                                                  cc_host_found=True, cc_host_gnu_major=15,
                                                  cc_host_gnu_supported=False)),
    # flashinfer-jit-cc-args (igap24): CC='ccache gcc', split by the shell of FlashInfer's ninja command
    "flashinfer-cc-two-words": ("h200-newest", _jit(flashinfer_host="cc", flashinfer_allow_unsupported=False,
                                                    cc_host_found=None, cc_host_one_program=False)),
    # flashinfer-jit-cc-host-clang, flashinfer-jit-nvcc-host-clang, sglang-jit-nvcc-host-clang (igap28): a clang 20
    # beside a toolkit whose host_config.h takes clang 19 at most, named by CC or NVCC_CCBIN
    "flashinfer-cc-clang-too-new": ("h200-newest", _jit(flashinfer_host="cc", flashinfer_allow_unsupported=False,
                                                        cc_host_found=True, cc_host_clang_major=20,
                                                        cc_host_clang_supported=False)),
    "ccbin-clang-too-new": ("h200-newest", _jit(flashinfer_host="nvcc-default", flashinfer_allow_unsupported=False,
                                                nvcc_host_found=True, nvcc_host_clang_major=20,
                                                nvcc_host_clang_supported=False)),
    # flashinfer-jit-asan-header / -cc-asan-header (icov1, flashinfer#4470): the gcc of FlashInfer's JIT build has no
    # sanitizer/asan_interface.h, which 0.5.0-0.7.2's memoryUtils.cu includes (the fused MoE modules)
    "flashinfer-gcc-no-asan-header": ("h200-newest", _jit(flashinfer_host="nvcc-default", nvcc_host_found=True,
                                                          nvcc_host_gnu_major=13, nvcc_host_asan_header_found=False)),
    "flashinfer-cc-no-asan-header": ("h200-newest", _jit(flashinfer_host="cc", cc_host_found=True,
                                                         cc_host_gnu_major=15, cc_host_asan_header_found=False)),
    # flashinfer-jit-pytorch-nvcc / -toolkit (igap28): FlashInfer before 0.4.0rc4 (igap31, read in the sdists)
    # compiles with PYTORCH_NVCC's nvcc
    "flashinfer-pytorch-nvcc-missing": ("h200-newest", _both(_packages(flashinfer_python="0.3.1"),
                                                             _jit(pytorch_nvcc="/opt/x/nvcc",
                                                                  pytorch_nvcc_found=False))),
    "flashinfer-pytorch-nvcc-other": ("h200-newest", _both(_packages(flashinfer_python="0.3.1"),
                                                           _jit(pytorch_nvcc="/opt/x/nvcc", pytorch_nvcc_found=True,
                                                                pytorch_nvcc_same=False))),
    "no-cuda-home": ("h200-newest", _jit(chosen_by="none")),
    # symm-mem-allocator-cuda-header / -nccl-header: the compile finds no cuda_runtime.h; 0.5.4 and no nccl.h
    "no-cuda-runtime-h": ("h200-newest", _jit(cxx_cuda_runtime_h_found=False)),
    "no-nccl-h-0.5.4": ("h200-newest", _both(_packages(sglang="0.5.4"), _jit(cxx_nccl_h_found=False))),
    # symm-mem-nccl-wheel-cu12 / -cu13 / -system (ifc36): 0.5.4's symmetric memory asserts NCCL 2.27.3 or newer
    "symm-nccl-cu12-2.26-0.5.4": ("h200-newest",
                                  _packages(sglang="0.5.4", nvidia_nccl_cu13=None, nvidia_nccl_cu12="2.26.2")),
    "symm-nccl-cu13-2.26-0.5.4": ("h200-newest", _packages(sglang="0.5.4", nvidia_nccl_cu13="2.26.2")),
    "symm-system-nccl-2.26-0.5.4": ("h200-newest",
                                    _both(_packages(sglang="0.5.4", **_NO_NCCL), _env(NCCL_VERSION="2.26.2"))),
}  # fmt: skip


def crash_items() -> list[tuple[str, str]]:
    """(kind, id) of every feature and check that can crash: a rule with effect crash, or a builtin check
    whose reasons carry effect crash (verdicts.BUILTIN_EFFECTS)."""
    out = []
    for f in MANIFESTS.features:
        if any(r.get("effect", "crash") == "crash" for r in f.get("rules") or []):
            out.append(("feature", str(f["id"])))
    for c in MANIFESTS.checks:
        effects = [r.get("effect", "crash") for r in c.get("rules") or []]
        if c.get("builtin") == "extension-torch-abi":  # one builtin, each check's effect its own (checks.json data)
            effects.append(str((c.get("extension") or {}).get("effect")))
        else:
            effects += BUILTIN_EFFECTS.get(str(c.get("builtin")), [])
        if "crash" in effects:
            out.append(("check", str(c["id"])))
    return out


def scoped_crash_rules() -> list[tuple[str, str]]:
    """(check id, rule id) of every crash rule of a check whose rules have scopes of their own (a rule's
    `required_by`): each is walked on its own, so a rule's scope never hides it from the gate. A rule that can only
    say unknown (its requirement a bare {"unknown": ...}: gpu-fabric-state's fabric-not-read) never fails, so no
    facts can block it."""
    out = []
    for c in MANIFESTS.checks:
        rules = c.get("rules") or []
        if any("required_by" in r for r in rules):
            out += [(str(c["id"]), str(r["id"])) for r in rules
                    if r.get("effect", "crash") == "crash" and set(r.get("require") or {}) != {"unknown"}]  # fmt: skip
    return out


def _spec(kind: str, item: str) -> Feature | Check:
    return next(x for x in (MANIFESTS.features if kind == "feature" else MANIFESTS.checks) if x["id"] == item)


def _scope(kind: str, item: str, rule: str | None) -> dict[str, Any]:
    """The required_by that applies: the rule's own, else the item's."""
    spec = _spec(kind, item)
    own = next((r.get("required_by") for r in spec.get("rules") or [] if r["id"] == rule), None) if rule else None
    return dict(own or spec.get("required_by") or {})


def _failing_rules(report: Report, kind: str, item: str) -> list[str | None]:
    """The rules of the item that fail with effect crash on these facts (None for a feature: it is needed whole)."""
    if kind == "feature":
        v = next(f for f in report["features"] if f["id"] == item)
        return [None] if v["status"] == "blocked" and v["effect"] == "crash" else []
    c = next(x for x in report["checks"] if x["id"] == item)
    rules = [r.get("rule") for r in c["reasons"] if r.get("result") == "fail" and r.get("effect", "crash") == "crash"]
    # a rule whose require is a stated unknown (nccl-in-use-unread) never fails: where it applies the check is
    # unknown, which the gate refuses without --allow-unknown (fail closed); where another rule of the check fails, the
    # gate names that one (igap36: a mutation that fails symm-mem-nccl-so-path-init-config leaves -same-nccl unknown)
    if not rules:
        unknown = [r for r in c["reasons"] if r.get("result") == "unknown"]
        rules = [r.get("rule") for r in unknown if r.get("rule") in _UNKNOWN_RULES]
    return list(dict.fromkeys(rules))


def _stated_unknown(require: dict[str, Any]) -> bool:
    """A require that is a stated unknown, or an `any` that ends in one (symm-mem-nccl-so-path-same-nccl, igap36: ok
    where one alternative holds, else unknown; it never fails)."""
    return "unknown" in require or any(isinstance(p, dict) and "unknown" in p for p in require.get("any") or [])


_UNKNOWN_RULES = frozenset(
    str(r["id"]) for c in MANIFESTS.checks for r in c.get("rules") or [] if _stated_unknown(r.get("require") or {})
)


@pytest.fixture(scope="module")
def facts_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    d = tmp_path_factory.mktemp("facts")
    files = sorted(CASES.glob("*/facts.json"))
    for name, (case, mutate) in MUTATIONS.items():
        doc = copy.deepcopy(_doc(case))
        mutate(doc)
        path = d / f"{name}.json"
        path.write_text(json.dumps(doc))
        files.append(path)
    return files


#: The report of each (facts file, tp), built once for the module: every walked item searched the same files from
#: the first, rebuilding the same reports (3,471 builds in the module, now 240); a report is a function of its facts and
#: launch, and the walk only reads it. The gate itself still runs once per item.
_REPORTS: dict[tuple[Path, int, tuple[tuple[str, Any], ...]], Report] = {}


def _report(path: Path, tp: int, extra: tuple[tuple[str, Any], ...] = ()) -> Report:
    """The audit report of these facts for a launch of this tp (and the launch facts `extra` a flag gives)."""
    key = (path, tp, extra)
    if key not in _REPORTS:
        launch = {"tp": tp, **dict(extra)}
        _REPORTS[key] = build_report(Options(facts_file=str(path), launch=launch), want_plan=False)[0]
    return _REPORTS[key]


def _conjuncts(when: Any) -> list[dict[str, Any]]:
    """The conditions a `when` holds in every case: itself, or its `all` parts (nested `all` too); `any` / `not`
    say nothing a launch must give."""
    if not isinstance(when, dict):
        return []
    if "all" in when:
        return [c for part in when["all"] or [] for c in _conjuncts(part)]
    return [when] if "fact" in when else []


def _value_flags(rule: Any) -> tuple[list[str], tuple[tuple[str, Any], ...]] | None:
    """The flags and values a rule's own conditions read (imend12): each `launch.F == V` it needs, where F is the fact
    of a launch.json option (a choice or typed value: `FLAG V`; a bool: `FLAG` alone), with the launch facts they
    give; None where the rule reads no such value. So the walk reaches a check whose rules read a value flag
    (moe-trtllm-gen-cubins: `--moe-runner-backend flashinfer_trtllm`, icubin3) from its data, with no hand edit."""
    options = {str(o["fact"]): o for o in MANIFESTS.launch["options"] if o.get("fact") and o.get("flag")}
    flags: list[str] = []
    facts: list[tuple[str, Any]] = []
    for cond in _conjuncts(rule.get("when") if isinstance(rule, dict) else None):
        fact, value = str(cond.get("fact")), cond.get("value")
        option = options.get(fact.removeprefix("launch.")) if fact.startswith("launch.") else None
        if option is None or cond.get("op") != "==" or value is None:
            continue
        if option.get("value") == "bool":
            if value is not True:
                continue
            flags.append(str(option["flag"]))
        elif option.get("value") == "choice" and str(value) not in (option.get("choices") or {}):
            continue
        else:
            flags += [str(option["flag"]), str(value)]
        facts.append((str(option["fact"]), value))
    return (flags, tuple(facts)) if flags else None


def _flag_launches(kind: str, item: str, rule: str | None) -> list[tuple[list[str], tuple[tuple[str, Any], ...]]]:
    """The launches the walk tries for an item (or one rule of it): the flags its scope asks for (_flag_launch), then
    those with each crash rule's own value flags (_value_flags), in the rules' order."""
    flags, facts = _flag_launch(kind, item, rule)
    out = [(flags, facts)]
    for r in _spec(kind, item).get("rules") or []:
        if (rule is not None and r["id"] != rule) or r.get("effect", "crash") != "crash":
            continue
        read = _value_flags(r)
        if read is not None and (flags + read[0], facts + read[1]) not in out:
            out.append((flags + read[0], facts + read[1]))
    return out


def _flag_launch(kind: str, item: str, rule: str | None) -> tuple[list[str], tuple[tuple[str, Any], ...]]:
    """The flags a rule's own scope (or the item's) asks for ({"flag": F, "present": true}: --enable-symm-mem) and
    the launch facts they give (launch.json options' `fact`), so the walk reads the rule where such a launch would."""
    rb = _scope(kind, item, rule)  # rule None: the item's own scope (extension-torch-abi-lmcache: --enable-lmcache)
    flags = [str(c["flag"]) for c in rb.get("when") or [] if isinstance(c, dict) and "flag" in c and c.get("present")]
    facts = tuple((str(o["fact"]), True) for o in MANIFESTS.launch["options"]
                  if o.get("flag") in flags and o.get("value") == "bool" and o.get("fact"))  # fmt: skip
    return flags, facts


def _blocking_launch(facts_files: list[Path], kind: str, item: str, rule: str | None = None) -> tuple[Path, list[str]]:
    """Facts that block the item (or that one rule of it) with effect crash, and a launch that needs what
    blocks it (the scope of the failing rule, and the values its conditions read)."""
    for flags, extra in _flag_launches(kind, item, rule):
        for path in facts_files:
            for tp in (1, 2, 8):  # the gate reads tp from the command (default 1)
                report = _report(path, tp, extra)
                for failing in _failing_rules(report, kind, item):
                    if rule is not None and failing != rule:
                        continue
                    command = _launch_for(kind, item, tp, failing, flags)
                    if command is not None:
                        return path, command
    what = f"{kind} {item}" + (f" (rule {rule})" if rule else "")
    raise AssertionError(f"no case or mutation blocks {what} with effect crash: add one to MUTATIONS")


def _launch_for(kind: str, item: str, tp: int, rule: str | None, flags: Sequence[str] = ()) -> list[str] | None:
    """A launch that needs the item's failing rule: the bare launch for what every launch needs; the flags of
    a feature of its scope (or --require); a launch that meets its conditions (None when this tp cannot), with the
    flags its rule's scope asks for (`flags`: _flag_launch)."""
    argv = [*LAUNCH, "--tp", str(tp), *flags]
    rb = _scope(kind, item, rule)
    if rb.get("launches") == "every":
        return argv
    if rb.get("launches") == "none":  # a rule no launch needs (a fact not read): the audit says it, the gate not
        return None
    if "when" in rb:
        derived = gate.derive(argv, MANIFESTS.launch, {}, [])
        met = [gate._cond3(c, derived, derived.defaults) for c in rb["when"]]
        # a fact the gate does not know (the model is not read: --model-path m) counts as met: fail closed
        return argv if all(m is not False for m in met) else None
    fid = item if kind == "feature" else rb["features"][0]
    feature = next(f for f in MANIFESTS.features if f["id"] == fid)
    flags = list((feature.get("enable") or {}).get("flags") or [])
    derived = gate.derive(argv + flags, MANIFESTS.launch, {}, [])
    if any(r.feature == feature["id"] and r.kind in ("explicit", "default") for r in derived.required):
        return argv + flags
    # a feature the command line cannot show (deepgemm and mxfp4-moe crash only with some models, whose
    # quantization is in the checkpoint, not in the flags) is demanded the documented way: --require
    return ["--require", str(feature["id"]), "--", *argv]


def gate_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    rc = main(["gate", "--dry-run", "--format", "json", *args])
    out = capsys.readouterr().out
    return rc, json.loads(out)


def _refuses(
    path: Path, command: list[str], kind: str, item: str, capsys: pytest.CaptureFixture[str]
) -> list[dict[str, Any]]:
    """The gate refuses the launch naming the item; the item's reasons."""
    if "--require" in command:
        rc, doc = gate_json(["--facts", str(path), *command], capsys)
    else:
        rc, doc = gate_json(["--facts", str(path), "--", *command], capsys)
    assert rc == 1 and doc["decision"] == "refuse", (item, doc["reasons"])
    refused = {(b["feature"], bool(b.get("check"))) for b in doc["reasons"]}
    assert (item, kind == "check") in refused, (item, sorted(refused))
    return [x for b in doc["reasons"] if b["feature"] == item for x in b["reasons"]]


@pytest.mark.parametrize(("kind", "item"), crash_items(), ids=[f"{k}:{i}" for k, i in crash_items()])
def test_the_gate_refuses_every_crash(
    facts_files: list[Path], kind: str, item: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path, command = _blocking_launch(facts_files, kind, item)
    _refuses(path, command, kind, item, capsys)


@pytest.mark.parametrize(("check", "rule"), scoped_crash_rules(), ids=[f"{c}:{r}" for c, r in scoped_crash_rules()])
def test_the_gate_refuses_every_crash_rule_within_its_scope(
    facts_files: list[Path], check: str, rule: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path, command = _blocking_launch(facts_files, "check", check, rule)
    reasons = _refuses(path, command, "check", check, capsys)
    assert rule in {x.get("rule") for x in reasons}, (rule, path.name, command, reasons)


def test_every_check_that_can_crash_is_required_by_some_launch() -> None:
    for kind, item in crash_items():
        if kind != "check":
            continue
        spec = next(c for c in MANIFESTS.checks if c["id"] == item)
        assert spec.get("required_by"), f"check {item} can crash but no launch requires it (required_by)"
        for rule in spec.get("rules") or []:  # a rule's own scope must say how its failure reaches a launch too
            if "required_by" in rule:
                assert rule["required_by"].get("why") and rule["required_by"].get("source"), (item, rule["id"])


def test_every_launch_items_are_data_not_code() -> None:
    every = sorted(x["id"] for x in [*MANIFESTS.features, *MANIFESTS.checks]
                   if (x.get("required_by") or {}).get("launches") == "every")  # fmt: skip
    assert every == sorted(
        [
            "torch-cuda-arch",
            "torch-arch",
            "driver-vs-torch-cuda",
            "kernel-arch",
            "sgl-kernel-torch-pair",
            "sglang-pins",
            "sglang-startup-versions",
            "flashinfer-cubin-match",
            "image-nvidia-require",  # skipped outside an image audit: never refuses a host launch
            # idock: the container engine has no runtime / CDI device / --gpus driver of the name --started-by gives
            # (skipped where the facts do not say how the container starts)
            "container-engine-gpu-path",
            # issue 16's checks: what an import or every prefill batch runs into
            "triton-ptxas",
            "kernel-runtime-libs",
            "kernel-release-known",
            "sgl-kernel-torch-pair-old",
            "driver-api",
            "torch-cuda-build",
            # i16m: SGLang's ModelRunner refuses a GPU below sm75 for every model it loads
            "sglang-gpu-min-cc",
            # ikabi: a common_ops symbol torch's libraries do not export fails sgl_kernel's import
            "sgl-kernel-torch-abi",
            # iextsym: DeepGEMM's / vLLM's compiled library SGLang tries at start misses a torch symbol (degraded:
            # the ImportError is swallowed, the feature silently lost)
            "extension-torch-abi-start",
            # icorpB: a module SGLang imports at start (pybase64; gguf etc. in 0.4.4-0.4.4.post2) is not installed
            "sglang-start-imports",
            # icorpG: a FlashInfer AOT wheel (+cuXXXtorchX.Y) under another torch fails import flashinfer
            "flashinfer-torch-pair",
            # icorpJ: PyTorch's CUDA wheel without its cuDNN wheel (and no libcudnn.so.9 on the loader's path)
            # fails import torch
            "torch-cudnn-present",
            # igap5: the Python that runs SGLang below the release's Requires-Python
            "sglang-requires-python",
            # ilibs: a CUDA library found for torch's or the kernel package's objects without a version they need
            # ("version `X' not found") fails their import (audit --deep)
            "shared-libs",
            # ifabric: on an NVSwitch system CUDA refuses every call (error 802) until the Fabric Manager has
            # registered every GPU (its rule fabric-not-read, a state not read, is scoped to no launch)
            "gpu-fabric-state",
            # idrvmatch: the kernel module refuses a user-space driver of another release (NVML and CUDA fail to
            # start; its rule userspace-not-read, a release not read, is scoped to no launch)
            "driver-userspace-match",
            # idkm: a GPU the loaded kernel-module flavour cannot initialise (Blackwell under the proprietary
            # flavour) is no device to CUDA (its rule flavour-not-read, a flavour not read, is scoped to no launch)
            "driver-kernel-modules",
            # icubin3: the trtllm-gen fused MoE an unquantized MoE model runs on SM100 (the MoE runner SGLang picks
            # itself, or --moe-runner-backend flashinfer_trtllm) loads the TRTLLM_GEN_BMM cubins
            "moe-trtllm-gen-cubins",
        ]
    )
    rules = sorted(f"{c['id']}:{r['id']}" for c in MANIFESTS.checks for r in c.get("rules") or []
                   if (r.get("required_by") or {}).get("launches") == "every")  # fmt: skip
    assert rules == [
        "jit-toolchain:sglang-jit-arch",
        # ifc35: SGLang 0.5.9+ link their JIT kernels with $CXX / c++ (tvm-ffi's and their own ninja files)
        "jit-toolchain:sglang-jit-cxx",
        # irev54: a CXX with arguments is one shell-quoted word in SGLang 0.5.18+'s ninja file
        "jit-toolchain:sglang-jit-cxx-args",
        "jit-toolchain:sglang-jit-cxx20",
        # ininja: SGLang 0.5.9+ build their JIT kernels by running ninja from PATH (fak-923)
        "jit-toolchain:sglang-jit-ninja",
        "jit-toolchain:sglang-jit-nvcc",
        # irev54: nvcc gets no -ccbin from SGLang's JIT builds and runs its default host compiler, gcc on PATH
        "jit-toolchain:sglang-jit-nvcc-host",
        # ifc38: nvcc drops -std=c++20 for a host gcc older than 10, and SGLang's JIT sources need C++20
        "jit-toolchain:sglang-jit-nvcc-host-clang",  # igap28: a clang NVCC_CCBIN names, host_config.h's limit
        "jit-toolchain:sglang-jit-nvcc-host-clang-cxx20",  # igap31: a clang before 10 has no -std=c++20
        "jit-toolchain:sglang-jit-nvcc-host-cxx20",
        # irev55: the toolkit's host_config.h refuses a gcc newer than it names
        "jit-toolchain:sglang-jit-nvcc-host-version",
        # icorpI: SGLang 0.5.9-0.5.17 JIT-build through tvm-ffi 0.1.9-0.1.12, which takes a stray ROCm home for ROCm
        "jit-toolchain:tvm-ffi-rocm-home",
        # irev38: the cu11 wheel alone under a CUDA 12 / 13 torch, whose RPATH takes libnccl.so.2 from nvidia/nccl/lib
        "nccl:nccl-cu11-wheel-alone",
        "nccl:one-nccl-wheel",
        # icorpM: an nvidia-nccl-cu11 wheel beside the cu12 / cu13 one writes the same libnccl.so.2 (returnn#1802)
        "nccl:one-nccl-wheel-cu11",
        # igap47: torch's own NCCL wheel missing, the other CUDA major's or none in nvidia/nccl/lib
        "nccl:torch-nccl-wheel-none",
        "nccl:torch-nccl-wheel-other-major",
        # ifc46: torch's NCCL wheel of an earlier major.minor than torch pins lacks functions libtorch_cuda.so imports
        "nccl:torch-nccl-wheel-pin-cu12",
        "nccl:torch-nccl-wheel-pin-cu13",
    ]


def test_builtin_effects_match_what_the_builtins_emit() -> None:
    """BUILTIN_EFFECTS (used above to find the builtins that can crash) says what the code does."""
    seen: dict[str, set[str]] = {}
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import BUILTINS

    for path in sorted(CASES.glob("*/facts.json")):
        from stackcheck.facts.model import load_facts_file

        ctx = Context(facts=load_facts_file(path), manifests=MANIFESTS)
        for name, fn in BUILTINS.items():
            for r in fn(ctx):
                if r.get("result") == "fail":
                    seen.setdefault(name, set()).add(str(r.get("effect", "crash")))
    for name, effects in seen.items():
        assert effects <= set(BUILTIN_EFFECTS[name]), (name, effects)


def test_a_launch_is_allowed_on_a_good_box(capsys: pytest.CaptureFixture[str]) -> None:
    # a model the gate reads: with "m" (not read) SGLang's MiniCPM override may apply, blocked on this Python 3.12 box
    llama = str(ROOT / "tests" / "data" / "models" / "llama3-8b")
    launch = ["python", "-m", "sglang.launch_server", "--model-path", llama]
    rc, doc = gate_json(["--facts", str(CASES / "h200-newest" / "facts.json"), "--", *launch], capsys)
    assert rc == 0, doc["reasons"]
    every = {r["feature"] for r in doc["derived"]["required"] if r["kind"] == "launch"}
    assert {"torch-cuda-arch", "torch-arch", "kernel-arch", "sglang-pins"} <= every


# ---- item 2: failed probes and unreadable packages are unknown -----------------------------------------


def _failed_packages(tmp_path: Path) -> Path:
    doc = _doc("h200-newest")
    from stackcheck.probes.packages import WANTED

    doc["facts"]["packages"] = {name: {"error": "probe timed out after 5s"} for name in WANTED}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_failed_packages_probe_makes_features_unknown_not_not_applicable(tmp_path: Path) -> None:
    report, _ = build_report(Options(facts_file=str(_failed_packages(tmp_path))), want_plan=False)
    statuses = {f["id"]: f["status"] for f in report["features"]}
    assert "not-applicable" not in statuses.values()
    assert statuses["torch-cuda-arch"] == "unknown"
    checks = {c["id"]: c["status"] for c in report["checks"]}
    assert checks["torch-arch"] == checks["sglang-pins"] == checks["kernel-arch"] == "unknown"


def test_the_gate_refuses_when_packages_are_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    facts = str(_failed_packages(tmp_path))
    rc, doc = gate_json(["--facts", facts, "--", *LAUNCH, "--tp", "2"], capsys)
    assert rc == 1 and doc["decision"] == "refuse"
    # custom all-reduce too: SGLang before 0.4.4.post4 crashes without peer access, and the version is unknown
    assert {"torch-cuda-arch", "custom-allreduce"} <= {b["feature"] for b in doc["reasons"]}
    rc, doc = gate_json(["--facts", facts, "--allow-unknown", "--", *LAUNCH], capsys)
    assert rc == 0 and doc["warnings"]  # fail open only when asked, and loudly


def test_one_unreadable_package_entry_is_unknown(tmp_path: Path) -> None:
    doc = _doc("h200-newest")
    doc["facts"]["packages"]["sglang-kernel"] = {"installed": True, "version": None, "error": "METADATA: missing"}
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    report, _ = build_report(Options(facts_file=str(path)), want_plan=False)
    checks = {c["id"]: c["status"] for c in report["checks"]}
    assert checks["kernel-arch"] == "unknown" and checks["sgl-kernel-torch-pair"] == "unknown"


@pytest.mark.parametrize("package", ["torch", "sglang", "sglang-kernel", "flashinfer-python"])
@pytest.mark.parametrize(
    "entry",
    [{"installed": True, "version": None, "error": "METADATA: missing"}, {"error": "probe timed out after 5s"}],
    ids=["version-unreadable", "entry-unreadable"],
)
def test_an_unreadable_serving_package_refuses_a_launch(
    tmp_path: Path, package: str, entry: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """The package-state semantics of the merge (installed without a readable version is installed, and what
    reads the version is unknown; an entry without `installed` is unknown): each serving package unreadable on
    a good box makes the decision unknown, so the gate refuses a plain launch, naming only unknowns."""
    doc = _doc("h200-newest")
    doc["facts"]["packages"]["flashinfer-cubin"] = {"installed": True, "version": "0.7.2", "location": "/x"}
    doc["facts"]["packages"][package] = entry
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    rc, out = gate_json(["--facts", str(path), "--", *LAUNCH], capsys)
    assert rc == 1 and out["reasons"] and {b["status"] for b in out["reasons"]} == {"unknown"}, out["reasons"]
    rc, out = gate_json(["--facts", str(path), "--allow-unknown", "--", *LAUNCH], capsys)
    assert rc == 0, out["reasons"]  # nothing failed: only what could not be read held it


def test_an_unreadable_flashinfer_version_leaves_the_package_match_unknown(tmp_path: Path) -> None:
    doc = _doc("h200-newest")
    doc["facts"]["packages"]["flashinfer-cubin"] = {"installed": True, "version": "0.7.2", "location": "/x"}
    doc["facts"]["packages"]["flashinfer-python"] = {"installed": True, "version": None, "error": "METADATA: missing"}
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    report, _ = build_report(Options(facts_file=str(path)), want_plan=False)
    checks = {c["id"]: c["status"] for c in report["checks"]}
    assert checks["flashinfer-cubin-match"] == checks["sglang-startup-versions"] == "unknown"


def test_a_timed_out_probe_refuses_a_real_launch() -> None:
    """Live probes with a budget nothing can meet: every probe times out, the gate refuses (exit 1) naming
    them, and runs nothing."""
    proc = run_stackcheck("gate", "--timeout", "0.0001", "--format", "json", "--",
                          sys.executable, "-m", "sglang.launch_server", "--model-path", "m")  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    probes = [b for b in doc["reasons"] if b["feature"].startswith("probe ")]
    assert probes and all(b["status"] == "unknown" for b in probes)
    assert any("timed out" in b["reasons"][0]["message"] for b in probes), probes


@pytest.mark.parametrize(
    "command",
    [
        ["uv", "run", "python", "-m", "sglang.launch_server", "--model-path", "m"],
        ["srun", "-n1", "python3", "-m", "sglang.launch_server", "--model-path", "m"],
        ["docker", "exec", "c", "sglang", "serve", "--model-path", "m"],
        ["bash", "-c", "python -m sglang.launch_server --model-path m"],
        ["./serve.sh", "--entry", "sglang.launch_server"],
    ],
    ids=["uv-run", "srun", "docker-exec", "bash-c", "script-argument"],
)
def test_a_launcher_never_hides_the_launch(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Found in the adversarial pass: behind `uv run` or `srun`, with no flag launch.json lists, the launch
    needed nothing, so torch without the GPU's architecture was allowed."""
    rc, doc = gate_json(["--facts", str(CASES / "rtx5090-torch-cu126" / "facts.json"), "--", *command], capsys)
    assert rc == 1 and "torch-cuda-arch" in {b["feature"] for b in doc["reasons"]}, doc


def test_a_command_that_is_no_launch_still_needs_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = gate_json(["--facts", str(CASES / "rtx5090-torch-cu126" / "facts.json"), "--", "./serve.sh"], capsys)
    assert rc == 0 and "nothing to check" in doc["note"]


def test_an_sglang_launch_without_sglang_in_its_environment_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seen on the real H200: SGLang not installed, every feature not-applicable, and the gate allowed a launch
    that dies at its first import. Absent: blocked (crash); a wrapper whose interpreter is unseen: unknown."""
    doc = _doc("h200-newest")
    doc["facts"]["packages"]["sglang"] = {"installed": False}
    path = tmp_path / "no-sglang.json"
    path.write_text(json.dumps(doc))
    rc, out = gate_json(["--facts", str(path), "--", *LAUNCH], capsys)
    assert rc == 1 and out["decision"] == "refuse"
    reason = next(b for b in out["reasons"] if b["feature"] == "sglang")
    assert reason["status"] == "blocked" and reason["effect"] == "crash"
    assert "No module named sglang" in reason["reasons"][0]["message"]
    rc, out = gate_json(["--facts", str(path), "--", "./serve.sh", "--tp", "1"], capsys)
    assert rc == 1 and {b["feature"]: b["status"] for b in out["reasons"]}.get("sglang") == "unknown"
    rc, out = gate_json(["--facts", str(_write(tmp_path, _doc("h200-newest"))), "--", *LAUNCH], capsys)
    assert "sglang" not in {b["feature"] for b in out["reasons"]}  # installed there: no such reason


def _write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "with-sglang.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_walk_reads_a_value_flag_from_the_rules_own_conditions() -> None:
    # imend12: moe-trtllm-gen-cubins was reached through a hand-kept table (_VALUE_FLAGS); its rules' conditions say it
    launches = _flag_launches("check", "moe-trtllm-gen-cubins", None)
    assert (["--moe-runner-backend", "flashinfer_trtllm"], (("moe_runner_backend", "flashinfer_trtllm"),)) in launches
    backend = {"fact": "launch.moe_runner_backend", "op": "=="}
    assert _value_flags({"when": {"all": [{**backend, "value": "nope"}]}}) is None  # (no such choice)
    assert _value_flags({"when": {"any": [{**backend, "value": "triton"}]}}) is None  # (one of several: not needed)
