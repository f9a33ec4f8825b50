"""A fake pynvml module built from a facts document (driver, gpus, topology with pairs), for tests only.

It implements the calls the NVML probe makes, raises error classes named like pynvml's (all subclasses of
a fake NVMLError), and lets a test inject a fault per function (optionally only for one GPU index) or lose
a GPU. Optional test-only hints live under the document's top-level "fake" key:
  {"nvswitch_links": 18}   every GPU has that many active NVLinks to an NVSwitch (HGX / NVL72 style)
"""

from __future__ import annotations

import ctypes
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

DATA = Path(__file__).parent / "data" / "nvml"


class NVMLError(Exception):
    value = 999

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.__class__.__name__.removeprefix("NVMLError_"))


def _error(name: str, code: int) -> type[NVMLError]:
    return type(f"NVMLError_{name}", (NVMLError,), {"value": code})


NVMLError_Uninitialized = _error("Uninitialized", 1)
NVMLError_InvalidArgument = _error("InvalidArgument", 2)
NVMLError_NotSupported = _error("NotSupported", 3)
NVMLError_NoPermission = _error("NoPermission", 4)
NVMLError_NotFound = _error("NotFound", 6)
NVMLError_DriverNotLoaded = _error("DriverNotLoaded", 9)
NVMLError_LibraryNotFound = _error("LibraryNotFound", 12)
NVMLError_FunctionNotFound = _error("FunctionNotFound", 13)
NVMLError_GpuIsLost = _error("GpuIsLost", 15)
NVMLError_LibRmVersionMismatch = _error("LibRmVersionMismatch", 18)
NVMLError_Unknown = _error("Unknown", 999)

ERRORS: dict[str, type[NVMLError]] = {
    cls.__name__: cls
    for cls in (
        NVMLError_Uninitialized,
        NVMLError_InvalidArgument,
        NVMLError_NotSupported,
        NVMLError_NoPermission,
        NVMLError_NotFound,
        NVMLError_DriverNotLoaded,
        NVMLError_LibraryNotFound,
        NVMLError_FunctionNotFound,
        NVMLError_GpuIsLost,
        NVMLError_LibRmVersionMismatch,
        NVMLError_Unknown,
    )
}
ANCESTOR_CODES = {"internal": 0, "single": 10, "multiple": 20, "hostbridge": 30, "node": 40, "system": 50}
P2P_CODES = {
    "ok": 0,
    "chipset-not-supported": 1,
    "gpu-not-supported": 2,
    "ioh-topology-not-supported": 3,
    "disabled-by-regkey": 4,
    "not-supported": 5,
    "unknown": 6,
}
SWITCH_BUS_ID = b"00000000:FE:00.0"
FABRIC_STATE_CODES = {"not-supported": 0, "not-started": 1, "in-progress": 2, "completed": 3}
FABRIC_STATUS_CODES = {"success": 0, "not-supported": 3, "unknown": 999, None: 0}


class FabricInfo(ctypes.Structure):
    """The fields of nvidia-ml-py's c_nvmlGpuFabricInfo_t that the probe reads (written here, same shape)."""

    _fields_ = [
        ("clusterUuid", ctypes.c_uint8 * 16),
        ("status", ctypes.c_uint),
        ("cliqueId", ctypes.c_uint32),
        ("state", ctypes.c_uint),
    ]


@dataclass(frozen=True)
class Handle:
    index: int


@dataclass
class Fault:
    error: str
    index: int | None = None  # only calls on this GPU (either GPU of a pair) fail


def load_doc(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return data


def facts_of(doc: dict[str, Any]) -> dict[str, Any]:
    facts = doc.get("facts", doc)
    assert isinstance(facts, dict)
    return facts


class FakeNVML:
    """pynvml-shaped: module-level names of pynvml are attributes of an instance."""

    NVML_NVLINK_MAX_LINKS = 18
    # nvmlBrandType_t codes (NVML's enum, as nvidia-ml-py 13.615.71 names them)
    NVML_BRAND_UNKNOWN = 0
    NVML_BRAND_QUADRO = 1
    NVML_BRAND_TESLA = 2
    NVML_BRAND_GEFORCE = 5
    NVML_BRAND_NVIDIA_CLOUD_GAMING = 11
    NVML_BRAND_NVIDIA_VGAMING = 11
    NVML_BRAND_QUADRO_RTX = 12
    NVML_BRAND_NVIDIA = 14
    NVML_BRAND_COUNT = 20
    NVMLError = NVMLError
    c_nvmlGpuFabricInfo_t = FabricInfo

    def __init__(self, doc: dict[str, Any]) -> None:
        for name, cls in ERRORS.items():
            setattr(self, name, cls)
        facts = facts_of(doc)
        hints = doc.get("fake", {})
        self.driver: dict[str, Any] = facts.get("driver", {})
        self.gpus: list[dict[str, Any]] = facts.get("gpus", [])
        self.pairs: dict[tuple[int, int], dict[str, Any]] = {}
        for pair in facts.get("topology", {}).get("pairs", []):
            self.pairs[(pair["a"], pair["b"])] = pair
        self.faults: dict[str, Fault] = {}
        # what runs on each GPU now (read by stackcheck/probes/gpu_usage.py): free bytes, processes, mode
        self.free: dict[int, int] = {}
        self.procs: dict[int, list[tuple[int, str | None, int | None, str]]] = {}
        self.modes: dict[int, int] = {}
        self.lost: set[int] = set()
        self.calls: Counter[str] = Counter()
        self.initialised = False
        self.shutdowns = 0
        # NVLink table: per GPU, list of (remote bus id, remote is a switch) for its active links.
        self.links: dict[int, list[tuple[bytes, bool]]] = {g["index"]: [] for g in self.gpus}
        switch_links = int(hints.get("nvswitch_links", 0))
        for index in self.links:
            self.links[index].extend([(SWITCH_BUS_ID, True)] * switch_links)
        if not switch_links:
            for (a, b), pair in self.pairs.items():
                n = pair.get("nvlink_count") or 0
                if pair.get("link") == "nvlink" and n:
                    self.links[a].extend([(self._bus(b), False)] * n)
                    self.links[b].extend([(self._bus(a), False)] * n)

    # -- test controls ---------------------------------------------------------------------------------
    def fail(self, function: str, error: str, index: int | None = None) -> FakeNVML:
        """Make `function` raise NVMLError_<error> (for every call, or only calls on GPU `index`)."""
        name = error if error.startswith("NVMLError_") else f"NVMLError_{error}"
        assert name in ERRORS, name
        self.faults[function] = Fault(name, index)
        return self

    def run_process(self, index: int, pid: int, name: str | None, used: int | None, kind: str = "compute") -> FakeNVML:
        """A process holding `used` bytes on GPU `index` (None: NVML does not report it); free shrinks."""
        self.procs.setdefault(index, []).append((pid, name, used, kind))
        total = int(self.gpus[index]["memory_bytes"])
        self.free[index] = self.free.get(index, total) - (used or 0)
        return self

    def set_free(self, index: int, free: int) -> FakeNVML:
        self.free[index] = free
        return self

    def set_compute_mode(self, index: int, mode: int) -> FakeNVML:
        self.modes[index] = mode
        return self

    def lose_gpu(self, index: int) -> FakeNVML:
        """Every call on GPU `index` (after getting its handle) raises NVMLError_GpuIsLost."""
        self.lost.add(index)
        return self

    # -- helpers -------------------------------------------------------------------------------------
    def _bus(self, index: int) -> bytes:
        return str(self.gpus[index].get("pci_bus_id") or f"00000000:{index:02X}:00.0").encode()

    def _enter(self, function: str, *handles: Handle) -> None:
        self.calls[function] += 1
        if function not in ("nvmlInit", "nvmlShutdown") and not self.initialised:
            raise NVMLError_Uninitialized()
        fault = self.faults.get(function)
        if fault is not None and (fault.index is None or any(h.index == fault.index for h in handles)):
            raise ERRORS[fault.error]()
        if any(h.index in self.lost for h in handles):
            raise NVMLError_GpuIsLost()

    def _gpu(self, handle: Handle) -> dict[str, Any]:
        return self.gpus[handle.index]

    # -- pynvml API ------------------------------------------------------------------------------------
    def nvmlInit(self) -> None:
        self._enter("nvmlInit")
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self._enter("nvmlShutdown")
        self.initialised = False
        self.shutdowns += 1

    def nvmlSystemGetDriverVersion(self) -> str:
        self._enter("nvmlSystemGetDriverVersion")
        return str(self.driver.get("version"))

    def _cuda_int(self) -> int:
        major, minor = str(self.driver.get("cuda", "0.0")).split(".")
        return int(major) * 1000 + int(minor) * 10

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        self._enter("nvmlSystemGetCudaDriverVersion")
        return self._cuda_int()

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        self._enter("nvmlSystemGetCudaDriverVersion_v2")
        return self._cuda_int()

    def nvmlSystemGetNVMLVersion(self) -> str:
        self._enter("nvmlSystemGetNVMLVersion")
        return str(self.driver.get("nvml_version") or f"13.{self.driver.get('version')}")

    def nvmlDeviceGetCount(self) -> int:
        self._enter("nvmlDeviceGetCount")
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Handle:
        self.calls["nvmlDeviceGetHandleByIndex"] += 1
        fault = self.faults.get("nvmlDeviceGetHandleByIndex")
        if fault is not None and fault.index in (None, index):
            raise ERRORS[fault.error]()
        if not 0 <= index < len(self.gpus):
            raise NVMLError_InvalidArgument()
        return Handle(index)

    def nvmlDeviceGetName(self, h: Handle) -> str:
        self._enter("nvmlDeviceGetName", h)
        return str(self._gpu(h)["name"])

    def nvmlDeviceGetUUID(self, h: Handle) -> str:
        self._enter("nvmlDeviceGetUUID", h)
        return str(self._gpu(h).get("uuid") or f"GPU-{h.index:08x}-0000-0000-0000-000000000000")

    def nvmlDeviceGetPciInfo(self, h: Handle) -> SimpleNamespace:
        self._enter("nvmlDeviceGetPciInfo", h)
        return SimpleNamespace(busId=self._bus(h.index))  # bytes, as in real nvidia-ml-py

    def nvmlDeviceGetCudaComputeCapability(self, h: Handle) -> tuple[int, int]:
        self._enter("nvmlDeviceGetCudaComputeCapability", h)
        major, minor = str(self._gpu(h)["compute_capability"]).split(".")
        return int(major), int(minor)

    def nvmlDeviceGetMemoryInfo(self, h: Handle) -> SimpleNamespace:
        self._enter("nvmlDeviceGetMemoryInfo", h)
        total = int(self._gpu(h)["memory_bytes"])
        free = self.free.get(h.index, total)
        return SimpleNamespace(total=total, free=free, used=total - free)

    def _running(self, h: Handle, kind: str) -> list[SimpleNamespace]:
        return [
            SimpleNamespace(pid=pid, usedGpuMemory=used)
            for pid, _name, used, k in self.procs.get(h.index, [])
            if k == kind
        ]

    def nvmlDeviceGetComputeRunningProcesses(self, h: Handle) -> list[SimpleNamespace]:
        self._enter("nvmlDeviceGetComputeRunningProcesses", h)
        return self._running(h, "compute")

    def nvmlDeviceGetGraphicsRunningProcesses(self, h: Handle) -> list[SimpleNamespace]:
        self._enter("nvmlDeviceGetGraphicsRunningProcesses", h)
        return self._running(h, "graphics")

    def nvmlSystemGetProcessName(self, pid: int) -> bytes:
        self._enter("nvmlSystemGetProcessName")
        for procs in self.procs.values():
            for p, name, _used, _kind in procs:
                if p == pid and name is not None:
                    return name.encode()  # bytes, as older nvidia-ml-py returns
        raise NVMLError_NotFound()

    def nvmlDeviceGetComputeMode(self, h: Handle) -> int:
        self._enter("nvmlDeviceGetComputeMode", h)
        return self.modes.get(h.index, 0)

    def nvmlDeviceGetPersistenceMode(self, h: Handle) -> int:
        self._enter("nvmlDeviceGetPersistenceMode", h)
        value = self._gpu(h).get("persistence_mode")
        if value is None:
            raise NVMLError_NotSupported()
        return 1 if value else 0

    def nvmlDeviceGetBrand(self, h: Handle) -> int:
        """The GPU's `brand_code` (nvmlBrandType_t); NotSupported where the document gives none."""
        self._enter("nvmlDeviceGetBrand", h)
        value = self._gpu(h).get("brand_code")
        if not isinstance(value, int):
            raise NVMLError_NotSupported()
        return value

    def nvmlDeviceGetMigMode(self, h: Handle) -> list[int]:
        self._enter("nvmlDeviceGetMigMode", h)
        value = self._gpu(h).get("mig_mode")
        if value is None:
            raise NVMLError_NotSupported()
        return [1, 1] if value else [0, 0]

    def nvmlDeviceGetGpuFabricInfo(self, h: Handle, ref: Any) -> int:
        """Fills the struct behind `ref` (ctypes.byref) from the GPU's `fabric` {state, status}; no `fabric` in the
        document: NOT_SUPPORTED, as NVML answers on a PCIe GPU."""
        self._enter("nvmlDeviceGetGpuFabricInfo", h)
        fabric = self._gpu(h).get("fabric")
        if not isinstance(fabric, dict):
            raise NVMLError_NotSupported()
        info = ref._obj
        info.state = FABRIC_STATE_CODES[str(fabric["state"])]
        info.status = FABRIC_STATUS_CODES[fabric.get("status")]
        return 0

    def _link(self, h: Handle, link: int) -> tuple[bytes, bool]:
        links = self.links[h.index]
        if not links:
            raise NVMLError_NotSupported()
        if link >= len(links):
            raise NVMLError_InvalidArgument()
        return links[link]

    def nvmlDeviceGetNvLinkState(self, h: Handle, link: int) -> int:
        self._enter("nvmlDeviceGetNvLinkState", h)
        self._link(h, link)
        return 1

    def nvmlDeviceGetNvLinkRemoteDeviceType(self, h: Handle, link: int) -> int:
        self._enter("nvmlDeviceGetNvLinkRemoteDeviceType", h)
        return 2 if self._link(h, link)[1] else 0

    def nvmlDeviceGetNvLinkRemotePciInfo(self, h: Handle, link: int) -> SimpleNamespace:
        self._enter("nvmlDeviceGetNvLinkRemotePciInfo", h)
        return SimpleNamespace(busId=self._link(h, link)[0])

    def _pair(self, h1: Handle, h2: Handle) -> dict[str, Any]:
        key = (min(h1.index, h2.index), max(h1.index, h2.index))
        return self.pairs.get(key, {})

    def nvmlDeviceGetTopologyCommonAncestor(self, h1: Handle, h2: Handle) -> int:
        self._enter("nvmlDeviceGetTopologyCommonAncestor", h1, h2)
        return ANCESTOR_CODES[self._pair(h1, h2).get("common_ancestor") or "system"]

    def nvmlDeviceGetP2PStatus(self, h1: Handle, h2: Handle, index: int) -> int:
        self._enter("nvmlDeviceGetP2PStatus", h1, h2)
        if not isinstance(index, int):  # the real binding needs an int (its READ constant is a tuple)
            raise TypeError(f"p2pIndex must be an int, got {index!r}")
        return P2P_CODES[self._pair(h1, h2).get("p2p_read") or "unknown"]


# The functions the GPU-usage probe (gate only) calls and the NVML probe does not.
USAGE_FUNCTIONS = (
    "nvmlDeviceGetComputeRunningProcesses",
    "nvmlDeviceGetGraphicsRunningProcesses",
    "nvmlSystemGetProcessName",
    "nvmlDeviceGetComputeMode",
)
# The functions the NVML probe may call, for "every error from every call" tests.
FUNCTIONS = sorted(
    name
    for name in vars(FakeNVML)
    if name.startswith("nvml") and name not in ("nvmlInit", "nvmlShutdown", *USAGE_FUNCTIONS)
)


def synthetic_doc(count: int, *, nvswitch: bool = True, name: str = "NVIDIA GB200", cc: str = "10.0") -> dict[str, Any]:
    """A facts document with `count` identical GPUs (NVSwitch-connected, or all cross-socket PCIe)."""
    gpus = [
        {
            "index": i,
            "name": name,
            "uuid": f"GPU-{i:08x}-1111-2222-3333-444444444444",
            "pci_bus_id": f"{i // 256:08X}:{i % 256:02X}:00.0",
            "compute_capability": cc,
            "memory_bytes": 199_715_979_264,
            "persistence_mode": True,
            "mig_mode": False,
        }
        for i in range(count)
    ]
    pairs = [
        {
            "a": a,
            "b": b,
            "link": "nvlink" if nvswitch else "cross-socket",
            "nvlink_count": 18 if nvswitch else 0,
            "common_ancestor": "system",
            "p2p_read": "ok",
        }
        for a in range(count)
        for b in range(a + 1, count)
    ]
    return {
        "note": "synthetic, generated by tests/fake_nvml.py",
        "fake": {"nvswitch_links": 18 if nvswitch else 0},
        "facts": {
            "driver": {"version": "580.95.05", "cuda": "13.0", "nvml_version": "13.580.95.05", "source": "nvml"},
            "gpus": gpus,
            "topology": {
                "interconnect": "nvlink" if nvswitch else "cross-socket",
                "same_model": True,
                "gpu_count": count,
                "p2p": "all",
                **({"nvswitch": nvswitch} if count > 1 else {}),
                "pairs": pairs,
            },
        },
    }
