"""triage for round fourteen's causes (issue 16): NVSHMEM's IBGDA transport failing to allocate a DEVX UAR (a
line with none of the usual needles) names DeepEP's feature and the container's missing RDMA access; nvidia-smi's
'Driver/library version mismatch' (and pynvml's NVMLError_LibRmVersionMismatch) names the kernel module and the
user-space driver of different releases; docker's 'unknown or invalid runtime name: nvidia' names the runtime the
daemon does not have. Messages that only look alike keep their own verdicts."""

from __future__ import annotations

import io

from stackcheck.launch.triage import TriageResult, load_signatures, triage_stream


def _triage(log: str) -> TriageResult:
    return triage_stream(io.BytesIO(log.encode()), signatures=load_signatures())


def _text(result: TriageResult) -> str:
    rc = result.root_cause
    assert rc is not None and rc.signature is not None
    return " ".join((rc.signature.title, rc.signature.explanation, rc.signature.fix))


# written for this test in the shape of an SGLang DeepEP launch: ranks' INFO lines, then NVSHMEM's error lines
IBGDA_LOG = """\
[2026-01-12 08:40:02 DP0 TP0 EP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16
[2026-01-12 08:40:03 DP1 TP1 EP1] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16
/opt/nvshmem/src/modules/transport/ibgda/ibgda.cpp:1811: NULL value cannot allocate mlx5dv_devx_uar
/opt/nvshmem/src/modules/transport/ibgda/ibgda.cpp:1811: NULL value cannot allocate mlx5dv_devx_uar
"""


def test_an_ibgda_devx_uar_failure_names_deepeps_transport_and_the_container() -> None:
    result = _triage(IBGDA_LOG)
    rc = result.root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "nvshmem-ibgda-devx-unavailable"
    assert rc.line == 3
    assert result.feature == "moe-a2a-deepep"
    text = _text(result)
    assert "DEVX" in text and "privileged" in text and "/dev/infiniband" in text


def test_another_nvshmem_allocation_failure_is_not_read_as_devx_access() -> None:
    log = "/opt/nvshmem/src/modules/transport/ibgda/ibgda.cpp:1502: NULL value cannot allocate wq buf for qpair.\n"
    rc = _triage(log).root_cause
    assert rc is None or rc.signature is None or rc.signature.id != "nvshmem-ibgda-devx-unavailable"


# written for this test in the shapes nvidia-smi and pynvml print the NVML_ERROR_LIB_RM_VERSION_MISMATCH
SMI_LOG = "$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.126\n"
PYNVML_LOG = """\
Traceback (most recent call last):
  File "/srv/tools/gpu_report.py", line 12, in <module>
    pynvml.nvmlInit()
  File "/usr/lib/python3/dist-packages/pynvml.py", line 2248, in nvmlInit
    _nvmlCheckReturn(ret)
pynvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.
"""


def test_an_nvml_version_mismatch_names_the_kernel_module_and_the_user_space_driver() -> None:
    for log in (SMI_LOG, PYNVML_LOG):
        result = _triage(log)
        rc = result.root_cause
        assert rc is not None and rc.signature is not None, log
        assert rc.signature.id == "nvml-driver-library-mismatch", log
        text = _text(result)
        assert "kernel module" in text and "user-space" in text and "/proc/driver/nvidia/version" in text


def test_another_library_version_mismatch_is_not_the_drivers() -> None:
    log = "ERROR: NVSHMEM device library version (3.3.24) does not match with NVSHMEM host library version (3.2.5)\n"
    rc = _triage(log).root_cause
    assert rc is not None
    assert rc.signature is None or rc.signature.id != "nvml-driver-library-mismatch"


# written for this test in the shape of docker's output
RUNTIME_LOG = (
    "$ sudo docker run -d --gpus all --runtime nvidia --ipc host lmsysorg/sglang:latest python3 -m sglang.launch_server"
    " --model-path /models/qwen\n"
    "docker: Error response from daemon: unknown or invalid runtime name: nvidia\n"
    "Run 'docker run --help' for more information\n"
)


def test_docker_without_an_nvidia_runtime_names_the_runtime_configuration() -> None:
    result = _triage(RUNTIME_LOG)
    rc = result.root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "docker-nvidia-runtime-not-registered"
    assert rc.kind != "stall"
    text = _text(result)
    assert "nvidia-ctk runtime configure --runtime=docker" in text and "daemon.json" in text


def test_another_unknown_runtime_is_not_read_as_nvidias() -> None:
    log = "docker: Error response from daemon: unknown or invalid runtime name: runsc\n"
    rc = _triage(log).root_cause
    assert rc is None or rc.signature is None or rc.signature.id != "docker-nvidia-runtime-not-registered"
