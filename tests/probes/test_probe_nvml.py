"""The NVML probe against the fake NVML (tests/fake_nvml.py), the real no-driver path, and its fallbacks."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import ERRORS, FUNCTIONS, FakeNVML, facts_of, load_doc, synthetic_doc

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.nvml import NvmlProbe
from stackcheck.probes.nvml_read import decode_cuda_version


def bare_ctx(tmp_path: Path, nvml: Any = None, path: str = "", timeout: float = 3.0) -> ProbeContext:
    """No nvidia-smi on PATH, an empty fake root (no /proc/driver/nvidia/version)."""
    return ProbeContext(env={"PATH": path}, root=tmp_path, path_dirs=[], subprocess_timeout_s=timeout, nvml=nvml)


@pytest.mark.parametrize("name", ["sm120-8x-pcie.json", "h200-1x.json"])
def test_round_trip(tmp_path: Path, name: str) -> None:
    doc = load_doc(name)
    fake = FakeNVML(doc)
    result = NvmlProbe().run(bare_ctx(tmp_path, fake))
    assert result.status == "ok", result.reason
    assert result.reason is None
    expected = facts_of(doc)
    driver = dict(result.facts["driver"])
    # the user-space driver's files (stackcheck/probes/driver_libs.py): none in the empty fake root
    userspace = {k: driver.pop(k) for k in ("userspace_version", "userspace_file", "libcuda_version", "libcuda_file")}
    assert userspace == dict.fromkeys(userspace) and "not found" in driver.pop("userspace_reason")
    assert driver == expected["driver"]
    assert result.facts["gpus"] == expected["gpus"]
    assert result.facts["topology"] == expected["topology"]
    assert fake.shutdowns == 1


def test_sm120_topology_details(tmp_path: Path) -> None:
    topo = NvmlProbe().run(bare_ctx(tmp_path, FakeNVML(load_doc("sm120-8x-pcie.json")))).facts["topology"]
    assert topo["interconnect"] == "cross-socket"
    assert topo["p2p"] == "some"
    pair = {(p["a"], p["b"]): p for p in topo["pairs"]}
    assert pair[(0, 3)]["link"] == "pcie-host-bridge"
    assert pair[(3, 4)]["link"] == "cross-socket"
    assert len(topo["pairs"]) == 28


def test_nvlink_direct_and_worst_pair(tmp_path: Path) -> None:
    doc = synthetic_doc(4, nvswitch=False)
    for p in facts_of(doc)["topology"]["pairs"]:
        p.update(link="nvlink", nvlink_count=4, common_ancestor="system") if (p["a"], p["b"]) == (0, 1) else None
    doc["fake"] = {}
    topo = NvmlProbe().run(bare_ctx(tmp_path, FakeNVML(doc))).facts["topology"]
    pair = {(p["a"], p["b"]): p for p in topo["pairs"]}
    assert pair[(0, 1)]["link"] == "nvlink"
    assert pair[(0, 1)]["nvlink_count"] == 4
    assert pair[(0, 2)]["link"] == "cross-socket"
    assert topo["interconnect"] == "cross-socket"


def test_nvswitch_72_gpus(tmp_path: Path) -> None:
    fake = FakeNVML(synthetic_doc(72))
    start = (
        time.process_time()
    )  # CPU time of this process (its threads too): the work done, which a loaded box does not inflate
    result = NvmlProbe().run(bare_ctx(tmp_path, fake))
    assert time.process_time() - start < 5
    assert result.status == "ok", result.reason
    topo = result.facts["topology"]
    assert topo["gpu_count"] == 72
    assert len(topo["pairs"]) == 72 * 71 // 2
    assert topo["interconnect"] == "nvlink"
    assert all(p["nvlink_count"] == 18 for p in topo["pairs"])


def test_p2p_index_is_a_plain_int(tmp_path: Path) -> None:
    # The fake raises TypeError for a non-int index (pynvml's READ constant is the tuple (0,)).
    result = NvmlProbe().run(bare_ctx(tmp_path, FakeNVML(load_doc("sm120-8x-pcie.json"))))
    assert all(p["p2p_read"] is not None for p in result.facts["topology"]["pairs"])


@pytest.mark.parametrize("error", sorted(ERRORS))
@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_error_from_every_call_is_data(tmp_path: Path, function: str, error: str) -> None:
    fake = FakeNVML(load_doc("sm120-8x-pcie.json")).fail(function, error)
    result = NvmlProbe().run(bare_ctx(tmp_path, fake))
    assert result.status in ("ok", "partial", "failed")
    facts = result.facts
    assert set(facts) == {"driver", "gpus", "topology"}
    assert isinstance(facts["gpus"], list)
    if function != "nvmlDeviceGetCount":
        assert len(facts["gpus"]) == 8
    assert fake.shutdowns == 1
    quiet = {
        ("nvmlDeviceGetMigMode", "NVMLError_NotSupported"),
        ("nvmlDeviceGetPersistenceMode", "NVMLError_NotSupported"),
        ("nvmlDeviceGetBrand", "NVMLError_NotSupported"),  # brand absent: the image check's brand terms unknown
        ("nvmlDeviceGetBrand", "NVMLError_FunctionNotFound"),
        ("nvmlDeviceGetGpuFabricInfo", "NVMLError_NotSupported"),  # no fabric: state not-supported
        ("nvmlDeviceGetGpuFabricInfo", "NVMLError_FunctionNotFound"),  # a driver older than the call: not read
        ("nvmlSystemGetCudaDriverVersion_v2", "NVMLError_FunctionNotFound"),
        ("nvmlSystemGetCudaDriverVersion_v2", "NVMLError_LibraryNotFound"),
        ("nvmlSystemGetCudaDriverVersion", "NVMLError_FunctionNotFound"),  # v2 answered, v1 not called
        ("nvmlSystemGetCudaDriverVersion", "NVMLError_LibraryNotFound"),
    }
    nvlink_calls = (
        "nvmlDeviceGetNvLinkState",
        "nvmlDeviceGetNvLinkRemoteDeviceType",
        "nvmlDeviceGetNvLinkRemotePciInfo",
    )
    if function.startswith("nvmlSystemGetCudaDriverVersion") or function in nvlink_calls:
        return  # not called on this PCIe box, or covered by the fallback chain
    if (function, error) not in quiet:
        assert result.status != "ok", (function, error)
        assert result.reason


def test_cuda_version_falls_back_to_v1(tmp_path: Path) -> None:
    fake = FakeNVML(load_doc("h200-1x.json")).fail("nvmlSystemGetCudaDriverVersion_v2", "FunctionNotFound")
    result = NvmlProbe().run(bare_ctx(tmp_path, fake))
    assert result.status == "ok"
    assert result.facts["driver"]["cuda"] == "13.0"
    assert fake.calls["nvmlSystemGetCudaDriverVersion"] == 1


def test_function_not_found_leaves_field_none(tmp_path: Path) -> None:
    fake = FakeNVML(load_doc("h200-1x.json")).fail("nvmlDeviceGetMigMode", "FunctionNotFound")
    result = NvmlProbe().run(bare_ctx(tmp_path, fake))
    gpu = result.facts["gpus"][0]
    assert gpu["mig_mode"] is None
    assert gpu["compute_capability"] == "9.0"
    assert result.status == "partial"
    assert "function not found" in gpu["error"]


def test_mig_not_supported_is_none_without_error(tmp_path: Path) -> None:
    result = NvmlProbe().run(bare_ctx(tmp_path, FakeNVML(load_doc("sm120-8x-pcie.json"))))
    assert all(g["mig_mode"] is None and "error" not in g for g in result.facts["gpus"])


def test_gpu_lost_mid_enumeration(tmp_path: Path) -> None:
    fake = FakeNVML(load_doc("sm120-8x-pcie.json")).lose_gpu(5)
    result = NvmlProbe().run(bare_ctx(tmp_path, fake))
    gpus = result.facts["gpus"]
    assert len(gpus) == 8
    assert "GPU is lost" in gpus[5]["error"]
    assert gpus[5]["name"] is None
    assert all("error" not in g for i, g in enumerate(gpus) if i != 5)
    assert gpus[6]["compute_capability"] == "12.0"
    assert result.status == "partial"
    pairs = result.facts["topology"]["pairs"]
    assert all("error" in p for p in pairs if 5 in (p["a"], p["b"]))
    assert all("error" not in p for p in pairs if 5 not in (p["a"], p["b"]))
    assert result.facts["topology"]["interconnect"] is None  # unknown while a pair is unknown


def test_gpu_lost_on_one_call_only(tmp_path: Path) -> None:
    fake = FakeNVML(load_doc("sm120-8x-pcie.json")).fail("nvmlDeviceGetUUID", "GpuIsLost", index=2)
    gpus = NvmlProbe().run(bare_ctx(tmp_path, fake)).facts["gpus"]
    assert gpus[2]["name"] == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert gpus[2]["uuid"] is None and "lost" in gpus[2]["error"]
    assert gpus[3]["uuid"]


@pytest.mark.parametrize(
    ("error", "text"),
    [
        ("LibraryNotFound", "NVML library not found"),
        ("DriverNotLoaded", "driver not loaded"),
        ("NoPermission", "no permission"),
        ("LibRmVersionMismatch", "driver/library version mismatch: reboot after the driver upgrade"),
        ("Unknown", "unknown error"),
    ],
)
def test_init_failure_is_recorded(tmp_path: Path, error: str, text: str) -> None:
    fake = FakeNVML(load_doc("h200-1x.json")).fail("nvmlInit", error)
    result = NvmlProbe().run(bare_ctx(tmp_path, fake))
    assert result.status == "failed"
    assert result.reason is not None and text in result.reason
    assert result.facts["driver"]["version"] is None
    assert result.facts["driver"]["source"] == "none"
    assert text in result.facts["driver"]["error"]
    assert text in result.facts["topology"]["error"]
    assert result.facts["gpus"] == []
    assert result.facts["topology"]["gpu_count"] is None


def test_device_count_failure(tmp_path: Path) -> None:
    fake = FakeNVML(load_doc("h200-1x.json")).fail("nvmlDeviceGetCount", "LibRmVersionMismatch")
    result = NvmlProbe().run(bare_ctx(tmp_path, fake))
    assert result.status == "partial"
    assert result.facts["driver"]["version"] == "580.159.04"
    assert "reboot" in result.facts["topology"]["error"]


def test_real_nvml_library_not_found(tmp_path: Path) -> None:
    pynvml = pytest.importorskip("pynvml")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        pass
    else:
        pynvml.nvmlShutdown()
        pytest.skip("a real NVIDIA driver is present on this machine")
    result = NvmlProbe().run(bare_ctx(tmp_path))  # no injected module: the real pynvml
    assert result.status == "failed"
    assert result.reason is not None
    assert "NVML library not found" in result.reason
    assert "nvidia-smi: not found on PATH" in result.reason
    assert result.facts["driver"]["source"] == "none"


def test_pynvml_not_importable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    result = NvmlProbe().run(bare_ctx(tmp_path))
    assert result.status == "failed"
    assert result.reason is not None and "cannot be imported" in result.reason


# -- fallbacks ----------------------------------------------------------------------------------------------


def fake_smi(tmp_path: Path, body: str) -> str:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    script = bindir / "nvidia-smi"
    script.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return f"{bindir}{os.pathsep}/usr/bin{os.pathsep}/bin"


SMI_OK = (
    "0, NVIDIA H200, GPU-aaaa, 00000000:18:00.0, 9.0, 143771, Enabled, 580.159.04\n"
    "1, NVIDIA H200, GPU-bbbb, 00000000:2A:00.0, 9.0, 143771, Disabled, 580.159.04\n"
)


def test_nvidia_smi_fallback_ok(tmp_path: Path) -> None:
    bindir = fake_smi(tmp_path, f"cat <<'X'\n{SMI_OK}X")
    fake = FakeNVML(load_doc("h200-1x.json")).fail("nvmlInit", "DriverNotLoaded")
    result = NvmlProbe().run(bare_ctx(tmp_path, fake, path=bindir))
    assert result.status == "partial"
    assert result.facts["driver"]["source"] == "nvidia-smi"
    assert result.facts["driver"]["version"] == "580.159.04"
    gpus = result.facts["gpus"]
    assert [g["index"] for g in gpus] == [0, 1]
    assert gpus[0]["memory_bytes"] == 143771 * 1024 * 1024
    assert gpus[0]["persistence_mode"] is True and gpus[1]["persistence_mode"] is False
    assert gpus[1]["compute_capability"] == "9.0"
    assert result.facts["topology"]["gpu_count"] == 2
    assert "topology needs NVML" in result.facts["topology"]["error"]


def test_nvidia_smi_garbage_then_proc(tmp_path: Path) -> None:
    bindir = fake_smi(tmp_path, "echo 'NVIDIA-SMI has failed because it could not communicate'")
    proc = tmp_path / "proc/driver/nvidia"
    proc.mkdir(parents=True)
    (proc / "version").write_text(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U16)\n"
        "GCC version:  gcc version 12.3.0\n",
        encoding="utf-8",
    )
    fake = FakeNVML(load_doc("h200-1x.json")).fail("nvmlInit", "LibRmVersionMismatch")
    result = NvmlProbe().run(bare_ctx(tmp_path, fake, path=bindir))
    assert result.status == "partial"
    assert result.facts["driver"]["source"] == "proc"
    assert result.facts["driver"]["version"] == "580.95.05"
    assert result.reason is not None
    assert "not understood" in result.reason
    assert "reboot after the driver upgrade" in result.reason


def test_nvidia_smi_nonzero_exit(tmp_path: Path) -> None:
    bindir = fake_smi(tmp_path, "echo 'Failed to initialize NVML: Driver/library version mismatch' >&2; exit 18")
    fake = FakeNVML(load_doc("h200-1x.json")).fail("nvmlInit", "LibRmVersionMismatch")
    result = NvmlProbe().run(bare_ctx(tmp_path, fake, path=bindir))
    assert result.reason is not None and "exited 18: Failed to initialize NVML" in result.reason


def test_nvidia_smi_hang_is_bounded(tmp_path: Path) -> None:
    bindir = fake_smi(tmp_path, "sleep 30; echo late")
    fake = FakeNVML(load_doc("h200-1x.json")).fail("nvmlInit", "Unknown")
    start = time.monotonic()
    result = NvmlProbe().run(bare_ctx(tmp_path, fake, path=bindir, timeout=0.5))
    assert time.monotonic() - start < 5
    assert result.reason is not None and "timed out after 0.5s" in result.reason


def test_decode_cuda_version() -> None:
    assert decode_cuda_version(13000) == "13.0"
    assert decode_cuda_version(12080) == "12.8"
    assert decode_cuda_version(12090) == "12.9"


def test_no_probed_package_imported() -> None:
    import sys

    for mod in ("torch", "sglang", "flashinfer", "sgl_kernel"):
        assert mod not in sys.modules


def test_nvlink_state_error_is_noted(tmp_path: Path) -> None:
    fake = FakeNVML(synthetic_doc(4)).fail("nvmlDeviceGetNvLinkState", "NoPermission", index=1)
    result = NvmlProbe().run(bare_ctx(tmp_path, fake))
    assert result.status == "partial"
    assert "gpu 1 nvlink 0: no permission" in result.facts["topology"]["error"]
    pair = {(p["a"], p["b"]): p for p in result.facts["topology"]["pairs"]}
    assert pair[(0, 2)]["link"] == "nvlink"
    assert pair[(0, 1)]["nvlink_count"] == 0  # gpu 1's links could not be read


def test_nvswitch_fact(tmp_path: Path) -> None:
    """topology.nvswitch: true on an NVSwitch box, false on PCIe and on a direct NVLink mesh (no multicast)."""
    switched = NvmlProbe().run(bare_ctx(tmp_path, FakeNVML(synthetic_doc(8)))).facts["topology"]
    assert (switched["interconnect"], switched["nvswitch"]) == ("nvlink", True)
    pcie = NvmlProbe().run(bare_ctx(tmp_path, FakeNVML(load_doc("sm120-8x-pcie.json")))).facts["topology"]
    assert pcie["nvswitch"] is False
    direct = synthetic_doc(2, nvswitch=False)
    for p in facts_of(direct)["topology"]["pairs"]:
        p.update(link="nvlink", nvlink_count=4, common_ancestor="system")
    direct["fake"] = {}
    mesh = NvmlProbe().run(bare_ctx(tmp_path, FakeNVML(direct))).facts["topology"]
    assert (mesh["interconnect"], mesh["nvswitch"]) == ("nvlink", False)
    lost = FakeNVML(synthetic_doc(8)).fail("nvmlDeviceGetNvLinkRemoteDeviceType", "NVMLError_Unknown")
    assert NvmlProbe().run(bare_ctx(tmp_path, lost)).facts["topology"]["nvswitch"] is None
