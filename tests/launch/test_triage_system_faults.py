"""stackcheck triage: the box faults of round twelve of the real-world corpus (issue 16).

DeepEP's intranode buffer on GPUs without peer access between every pair (deepseek-ai/DeepEP#584) and CUDA's
error 802 on an NVSwitch box whose fabric is not up (huggingface/huggingface_hub#4134). The logs below are
written for these tests in the shape of those reports, not copied from them.
"""

from __future__ import annotations

import io

from stackcheck.launch.triage import TriageResult, triage_stream


def tri_text(text: str) -> TriageResult:
    return triage_stream(io.BytesIO(text.encode()), "<mem>")


def root_signature(text: str) -> str | None:
    rc = tri_text(text).root_cause
    assert rc is not None, text
    return rc.signature.id if rc.signature is not None else None


DEEPEP_LOG = """\
[2026-03-02 09:14:05 TP0 EP0] DeepEP communication limited to 24 SMs.
[2026-03-02 09:14:05 TP1 EP1] DeepEP communication limited to 24 SMs.
[2026-03-02 09:14:07 TP1 EP1] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/venv/lib/python3.12/site-packages/deep_ep/buffers/legacy.py", line 135, in __init__
    self.runtime.sync(device_ids, ipc_handles, root_unique_id)
RuntimeError: Failed: CUDA error /opt/src/DeepEP/csrc/deep_ep.cpp:213 'peer access is not supported between \
these two devices'

[2026-03-02 09:14:07] Received sigquit from a child process. It usually means the child failed.
"""


def test_deepep_peer_access_is_named_as_deepeps_topology_need() -> None:
    rc = tri_text(DEEPEP_LOG).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "deepep-peer-access-unsupported"
    text = " ".join([rc.signature.title, rc.signature.explanation, rc.signature.fix])
    assert "DeepEP" in text and "peer access" in text
    assert "--moe-a2a-backend deepep" in text


def test_custom_allreduce_peer_access_keeps_its_own_signature() -> None:
    # the same CUDA error string from SGLang's custom all-reduce is not DeepEP's
    log = (
        "[2025-03-30 11:02:41 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        "RuntimeError: Failed: Cuda error /workspace/csrc/allreduce/custom_all_reduce.cuh:307 "
        "'peer access is not supported between these two devices'\n"
    )
    assert root_signature(log) == "custom-allreduce-no-p2p-cuda-error"


FABRIC_LOG = """\
[setup] GPUs listed by nvidia-smi:
GPU 0: NVIDIA H100 80GB HBM3
/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:182: UserWarning: CUDA initialization: \
Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() \
that might have already set an error? Error 802: system not yet initialized (Triggered internally at \
/pytorch/c10/cuda/CUDAFunctions.cpp:109.)
  return torch._C._cuda_getDeviceCount() > 0
Traceback (most recent call last):
  File "/srv/serve.py", line 12, in <module>
    torch.cuda.set_device(0)
RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling \
NumCudaDevices() that might have already set an error? Error 802: system not yet initialized
"""


def test_cuda_802_names_the_fabric_manager() -> None:
    rc = tri_text(FABRIC_LOG).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "cuda-system-not-ready-fabric"
    text = " ".join([rc.signature.title, rc.signature.explanation, rc.signature.fix])
    assert "Fabric Manager" in text and "802" in text


def test_cuda_802_in_the_cuda_samples_form() -> None:
    log = (
        "[CUDA Bandwidth Test] - Starting...\n"
        "cudaGetDeviceProperties returned 802\n"
        "-> system not yet initialized\n"
        'CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) "cudaSetDevice(currentDevice)"\n'
    )
    assert root_signature(log) == "cuda-system-not-ready-fabric"


def test_other_cuda_init_errors_are_not_taken_for_802() -> None:
    # 804 (forward compatibility on a card that does not support it) is another fault
    log = (
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
        "calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility "
        "was attempted on non supported HW\n"
    )
    assert root_signature(log) != "cuda-system-not-ready-fabric"
