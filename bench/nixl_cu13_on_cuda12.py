"""GPU reading for the open direction of manifests/preflight.json's NIXL runtime-library rule (ifc52's nixl-cu13
entry, "this direction was not run"): nixl-cu13 0.7.1 in a process of CUDA 12 whose loader finds no libcudart.so.13.
nixl-cu13's bundled UCX CUDA module (nixl_cu13.libs/ucx/libucm_cuda.so) and its UCX_MO plugin NEED libcudart.so.13.

A CUDA 12 torch is too large to carry to the device, so the child stands in for one: it loads libcudart.so.12 (from
nvidia-cuda-runtime-cu12's wheel, on LD_LIBRARY_PATH) and allocates the two GPU buffers with its cudaMalloc, and puts a
module named torch on sys.path that defines only Tensor, because nixl_cu13._api imports torch at module level and the
system torch (a CUDA 13 build) would load libcudart.so.13 itself. The buffers are registered as "VRAM" regions by
address (the 4-tuple / 3-tuple forms of nixl_agent.register_memory / get_xfer_descs). The steps are those of
bench/nixl_cu12_on_cuda13.py: import, two agents, create_backend("UCX"), register_memory, add_remote_agent and a WRITE,
then whether the data arrived (cudaMemcpy back to the host).

    # PYTHONPATH naming nixl + nixl-cu13, LD_LIBRARY_PATH the cu12 runtime's directory:
    python bench/nixl_cu13_on_cuda12.py --child

Prints one JSON object per step.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import tempfile
import time


def _step(name: str, **got: object) -> None:
    print(json.dumps({"step": name, **got}), flush=True)


def _stand_in_torch() -> None:
    folder = tempfile.mkdtemp(prefix="nixl-cu12-proc-")
    with open(os.path.join(folder, "torch.py"), "w", encoding="utf-8") as handle:
        handle.write("class Tensor:\n    pass\n")
    sys.path.insert(0, folder)


def child() -> int:
    try:
        ctypes.CDLL("libcudart.so.13", mode=os.RTLD_NOLOAD)
        _step("libcudart.so.13 loaded before nixl", loaded=True)
    except OSError:
        _step("libcudart.so.13 loaded before nixl", loaded=False)
    try:
        rt = ctypes.CDLL("libcudart.so.12")
    except OSError as exc:
        _step("libcudart.so.12", found=False, error=str(exc)[:200])
        return 1
    version = ctypes.c_int()
    rt.cudaRuntimeGetVersion(ctypes.byref(version))
    _step("libcudart.so.12", found=True, runtime=version.value)
    size = 4 << 20
    src, dst = ctypes.c_void_p(), ctypes.c_void_p()
    rc = (rt.cudaMalloc(ctypes.byref(src), size), rt.cudaMalloc(ctypes.byref(dst), size))
    rc += (rt.cudaMemset(src, 0x5A, size), rt.cudaMemset(dst, 0, size), rt.cudaDeviceSynchronize())
    _step("cudaMalloc / cudaMemset (CUDA 12 runtime)", rc=list(rc))
    if any(rc):
        return 1
    _stand_in_torch()
    try:
        import nixl._api as api
    except Exception as exc:
        _step("import nixl._api", ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
        return 1
    _step("import nixl._api", ok=True, file=getattr(api, "__file__", None))
    try:
        ctypes.CDLL("libcudart.so.13", mode=os.RTLD_NOLOAD)
        _step("libcudart.so.13 loaded after import", loaded=True)
    except OSError:
        _step("libcudart.so.13 loaded after import", loaded=False)
    try:
        conf = api.nixl_agent_config(backends=[])
        a, b = api.nixl_agent("lead-a", conf), api.nixl_agent("lead-b", conf)
        _step("nixl_agent", ok=True, plugins=a.get_plugin_list())
        a.create_backend("UCX", {})
        b.create_backend("UCX", {})
        _step("create_backend UCX", ok=True)
        a.register_memory([(src.value, size, 0, "")], "VRAM")
        b.register_memory([(dst.value, size, 0, "")], "VRAM")
        _step("register_memory VRAM", ok=True)
        remote = a.add_remote_agent(b.get_agent_metadata())
        _step("add_remote_agent", ok=True)
        mine = a.get_xfer_descs([(src.value, size, 0)], "VRAM")
        theirs = b.get_xfer_descs([(dst.value, size, 0)], "VRAM")
        handle = a.initialize_xfer("WRITE", mine, theirs, remote)
        state = a.transfer(handle)
        deadline = time.monotonic() + 30
        while state == "PROC" and time.monotonic() < deadline:
            state = a.check_xfer_state(handle)
        rt.cudaDeviceSynchronize()
        host = (ctypes.c_ubyte * size)()
        rt.cudaMemcpy(host, dst, size, 2)
        _step("WRITE", state=state, equal=all(byte == 0x5A for byte in bytes(host)[::4096]))
    except Exception as exc:
        _step("nixl step", ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
        return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--child"]:
        raise SystemExit("usage: python bench/nixl_cu13_on_cuda12.py --child")
    raise SystemExit(child())
