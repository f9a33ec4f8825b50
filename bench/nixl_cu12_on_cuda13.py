"""GPU reading for igap48 task 4 (not run here: the lead owns the device). nixl-cu12 0.7.1's bundled UCX module
ucx/libucm_cuda.so NEEDs libcudart.so.12 (readelf -dW of the cp312 x86_64 wheel; libuct_cuda.so needs only
libcuda.so.1 and libnvidia-ml.so.1, and nixl/libplugin_UCX_MO.so NEEDs libcudart.so.12 directly). `pip install nixl`
0.7.1 brings nixl-cu12 whatever torch's CUDA is (METADATA Requires-Dist: nixl-cu12>=0.7.1), and nixl/__init__.py
takes nixl_cu13 first, else nixl_cu12. On a CUDA 13 box whose loader finds no libcudart.so.12, the reading says which
step of SGLang's NIXL path fails, if any: the import, nixl_agent, create_backend("UCX") (SGLang's default,
SGLANG_DISAGGREGATION_NIXL_BACKEND), register_memory of a CUDA tensor ("VRAM"), a WRITE between two agents, and
whether the data arrived; and what UCX logs about libucm_cuda (UCX_LOG_LEVEL=debug in a child).

    python bench/nixl_cu12_on_cuda13.py        # in the serving environment (torch cu13, nixl 0.7.1 + nixl-cu12)

Run on the lent H100 (2026-12-06, driver 580.159.04, torch 2.11.0+cu130, nixl 0.7.1 + nixl-cu12 0.7.1 cp312 from
PyPI installed with --no-deps, `--child` for the child's own stderr): without libcudart.so.12 on the loader's path the
import, both agents, create_backend("UCX") and register_memory of CUDA tensors succeed (plugins GUSLI, OBJ, POSIX,
UCX: no UCX_MO), then add_remote_agent aborts the process (exit 134) after UCX's "memory is detected as host, check
that UCX is configured with CUDA support" and `Assertion mem_info.type == alloc_mem_type failed` (ucp_mm.c:1761,
from nixlUcxEngine::loadRemoteConnInfo -> ucp_ep_create); with nvidia-cuda-runtime-cu12 12.8.90's libcudart.so.12 on
LD_LIBRARY_PATH the same run's WRITE is DONE with equal data (plugins include UCX_MO, GDS, GDS_MT, GPUNETIO).

Run again on the lent H100 (2026-12-06, fifteenth session) with nixl 0.6.1 and then nixl 0.7.0 in place of the pair
(each a CUDA 12 build with its own bundled UCX; cp312 wheels from PyPI, --no-deps, `--child`): the same abort at
add_remote_agent without libcudart.so.12 (exit 134, the same assertion), and a WRITE DONE with equal data with
nvidia-cuda-runtime-cu12 12.8.90's nvidia/cuda_runtime/lib on LD_LIBRARY_PATH.

Prints one JSON object per step, then the UCX debug lines naming ucm_cuda / libcudart.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def _step(name: str, **got: object) -> None:
    print(json.dumps({"step": name, **got}), flush=True)


def child() -> int:
    import ctypes

    try:
        ctypes.CDLL("libcudart.so.12")
        _step("libcudart.so.12", found=True)
    except OSError as exc:
        _step("libcudart.so.12", found=False, error=str(exc)[:200])
    import torch

    _step("torch", version=torch.__version__, cuda=torch.version.cuda)
    try:
        import nixl._api as api
    except Exception as exc:
        _step("import nixl._api", ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
        return 1
    _step("import nixl._api", ok=True, file=getattr(api, "__file__", None))
    try:
        conf = api.nixl_agent_config(backends=[])
        a, b = api.nixl_agent("igap48-a", conf), api.nixl_agent("igap48-b", conf)
        _step("nixl_agent", ok=True, plugins=a.get_plugin_list())
    except Exception as exc:
        _step("nixl_agent", ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
        return 1
    try:
        a.create_backend("UCX", {})
        b.create_backend("UCX", {})
        _step("create_backend UCX", ok=True)
    except Exception as exc:
        _step("create_backend UCX", ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
        return 1
    src = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    dst = torch.zeros_like(src)
    try:
        a.register_memory(src)
        b.register_memory(dst)
        _step("register_memory VRAM", ok=True)
    except Exception as exc:
        _step("register_memory VRAM", ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
        return 1
    try:
        remote = a.add_remote_agent(b.get_agent_metadata())
        handle = a.initialize_xfer("WRITE", a.get_xfer_descs(src), b.get_xfer_descs(dst), remote)
        state = a.transfer(handle)
        deadline = time.monotonic() + 30
        while state == "PROC" and time.monotonic() < deadline:
            state = a.check_xfer_state(handle)
        torch.cuda.synchronize()
        _step("WRITE", state=state, equal=bool(torch.equal(src, dst)))
    except Exception as exc:
        _step("WRITE", ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
        return 1
    return 0


def main() -> int:
    if sys.argv[1:] == ["--child"]:
        return child()
    env = {**os.environ, "UCX_LOG_LEVEL": "debug"}
    cmd = [sys.executable, __file__, "--child"]
    done = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, timeout=300)
    lines = (done.stdout + done.stderr).splitlines()
    for line in lines:
        if line.startswith("{"):
            print(line)
    print(json.dumps({"child_rc": done.returncode}))
    for line in lines:
        if "ucm_cuda" in line or "libcudart" in line or "UCX_MO" in line:
            print(line[:300])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
