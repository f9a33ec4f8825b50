"""Reading NVML: the driver, the GPUs and the GPU-to-GPU topology from an initialised NVML module.

Shared by the NVML probe (stackcheck.probes.nvml) and the early NVML start (stackcheck.probes.nvml_early), which
reads NVML in its own thread before the probes run; neither is imported here, so the two sit in no import
cycle. NVML errors are recognised by class *name* (pynvml generates `NVMLError_<Name>` classes), so an
injected NVML-shaped module works the same as the real one.
"""

from __future__ import annotations

from collections import Counter
from types import ModuleType

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.result import ProbeResult, ProbeStatus, one_line

if TYPE_CHECKING:
    from typing import Any

# nvmlDeviceGetTopologyCommonAncestor levels (NVML_TOPOLOGY_*).
ANCESTORS = {0: "internal", 10: "single", 20: "multiple", 30: "hostbridge", 40: "node", 50: "system"}
ANCESTOR_LINK = {
    "internal": "pcie-switch",
    "single": "pcie-switch",
    "multiple": "pcie-switch",
    "hostbridge": "pcie-host-bridge",
    "node": "pcie-host-bridge",  # same CPU, different root complexes
    "system": "cross-socket",
}
# nvmlDeviceGetP2PStatus results (NVML_P2P_STATUS_*).
P2P_STATUS = {
    0: "ok",
    1: "chipset-not-supported",
    2: "gpu-not-supported",
    3: "ioh-topology-not-supported",
    4: "disabled-by-regkey",
    5: "not-supported",
    6: "unknown",
}
# Box-level interconnect is the worst pair: lower rank is worse.
LINK_RANK = {"cross-socket": 0, "pcie-host-bridge": 1, "pcie-switch": 2, "nvlink": 3}
NVLINK_DEVICE_TYPE_SWITCH = 2  # NVML_NVLINK_DEVICE_TYPE_SWITCH
P2P_CAPS_INDEX_READ = 0  # the literal: nvidia-ml-py's NVML_P2P_CAPS_INDEX_READ is the tuple (0,)
# nvmlGpuFabricState_t (NVML_GPU_FABRIC_STATE_*: nvidia-ml-py 13.615.71 pynvml.py:7193-7196; NVML API reference,
# "Fabric definitions"): where the Fabric Manager is in registering the GPU with the NVSwitch fabric.
FABRIC_STATES = {0: "not-supported", 1: "not-started", 2: "in-progress", 3: "completed"}
# nvmlReturn_t values a fabric probe's `status` may hold (NVML_SUCCESS = 0, NVML_ERROR_*: pynvml.py)
FABRIC_STATUS = {0: "success", 2: "invalid-argument", 3: "not-supported", 4: "no-permission", 999: "unknown"}
#: the fabric info is for Hopper or newer (the NVML API reference, nvmlDeviceGetGpuFabricInfoV): older GPUs are
#: not asked (one NVML call fewer per GPU on PCIe boxes of older cards)
FABRIC_MIN_CC_MAJOR = 9
#: the prefix of NVML's nvmlBrandType_t names in nvidia-ml-py (NVML_BRAND_UNKNOWN = 0 ... NVML_BRAND_NVIDIA_NPU = 19 in
#: 13.615.71, pynvml.py:47-68); a GPU's `brand` is the name after it ("TESLA", "GEFORCE", "NVIDIA"), read from the
#: module's own constants, so the enum is nvidia-ml-py's and no table of it lives here
BRAND_PREFIX = "NVML_BRAND_"

REASONS = {
    "NVMLError_LibraryNotFound": "NVML library not found (libnvidia-ml.so.1 cannot be loaded)",
    "NVMLError_DriverNotLoaded": "NVIDIA kernel driver not loaded",
    "NVMLError_NoPermission": "no permission to query NVML",
    "NVMLError_LibRmVersionMismatch": "driver/library version mismatch: reboot after the driver upgrade",
    "NVMLError_GpuIsLost": "GPU is lost (fell off the bus or hung)",
    "NVMLError_FunctionNotFound": "function not found in this driver's NVML (driver too old)",
    "NVMLError_NotSupported": "not supported",
    "NVMLError_Uninitialized": "NVML not initialised",
    "NVMLError_Unknown": "NVML unknown error",
}


def unknown_topology(reason: str) -> dict[str, Any]:
    """The topology section when the GPUs could not be enumerated: every value unknown, with the reason."""
    return {"interconnect": None, "same_model": None, "gpu_count": None, "p2p": None, "pairs": [], "error": reason}


def _ename(exc: BaseException) -> str:
    return type(exc).__name__


def describe(exc: BaseException) -> str:
    """One line for an NVML error (or anything else raised by an NVML call)."""
    known = REASONS.get(_ename(exc))
    return known if known is not None else one_line(exc)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace").rstrip("\x00")
    return str(value)


def decode_cuda_version(value: int) -> str:
    """13000 -> "13.0", 12080 -> "12.8" (NVML_CUDA_DRIVER_VERSION_MAJOR/MINOR)."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def normalise_bus_id(bus_id: str | None) -> str | None:
    """PCI bus ids as "0000:18:00.0" (lower case, 4-digit domain) so that NVML and nvidia-smi compare."""
    if not bus_id:
        return None
    text = bus_id.strip().lower()
    domain, sep, rest = text.partition(":")
    if sep and len(domain) > 4:
        domain = domain[-4:]
    return f"{domain}{sep}{rest}"


class _GpuLost(Exception):
    def __init__(self, exc: BaseException) -> None:
        super().__init__(describe(exc))


class _Reader:
    """Calls NVML functions, turning errors into None plus notes; GpuIsLost is re-raised as _GpuLost."""

    def __init__(self, nv: Any) -> None:
        self.nv = nv
        self.error_base: type[BaseException] = getattr(nv, "NVMLError", Exception)
        self.notes: list[str] = []
        self._brands: dict[int, str] | None = None

    def brand_name(self, code: int) -> str:
        """NVML's name of a brand code ("TESLA" for 2) from the module's NVML_BRAND_* constants; of two names
        for one code (NVML_BRAND_NVIDIA_CLOUD_GAMING and its deprecated alias NVML_BRAND_NVIDIA_VGAMING, defined
        after it) the first; "CODE-<n>" for a code this nvidia-ml-py does not name."""
        if self._brands is None:
            self._brands = {}
            # a module's own names (in order of definition, no sort: ~10x cheaper than dir()); else its attributes
            names = vars(self.nv) if isinstance(self.nv, ModuleType) else dir(self.nv)
            for key in names:
                value = getattr(self.nv, key, None) if key.startswith(BRAND_PREFIX) else None
                if key != "NVML_BRAND_COUNT" and isinstance(value, int):
                    self._brands.setdefault(value, key[len(BRAND_PREFIX) :])
        return self._brands.get(code, f"CODE-{code}")

    def call(self, label: str, fn_name: str, *args: Any, quiet: tuple[str, ...] = ()) -> Any:
        fn = getattr(self.nv, fn_name, None)
        if fn is None:
            self.notes.append(f"{label}: {fn_name} missing from this nvidia-ml-py")
            return None
        try:
            return fn(*args)
        except self.error_base as exc:
            name = _ename(exc)
            if name == "NVMLError_GpuIsLost":
                raise _GpuLost(exc) from None
            if name not in quiet:
                self.notes.append(f"{label}: {describe(exc)}")
            return None


def read_nvml(nv: Any) -> ProbeResult:
    """Driver, GPUs and topology from an initialised NVML module."""
    r = _Reader(nv)
    driver: dict[str, Any] = {"source": "nvml"}
    try:
        driver["version"] = _text(r.call("driver version", "nvmlSystemGetDriverVersion"))
        cuda = r.call(
            "driver cuda",
            "nvmlSystemGetCudaDriverVersion_v2",
            quiet=("NVMLError_FunctionNotFound", "NVMLError_LibraryNotFound"),
        )
        if cuda is None:
            cuda = r.call("driver cuda", "nvmlSystemGetCudaDriverVersion")
        driver["cuda"] = decode_cuda_version(int(cuda)) if isinstance(cuda, int) else None
        driver["nvml_version"] = _text(r.call("nvml version", "nvmlSystemGetNVMLVersion"))
    except _GpuLost as exc:  # not expected from system calls, but never a crash
        r.notes.append(f"driver: {exc}")
        driver.setdefault("version", None)
        driver.setdefault("cuda", None)
        driver.setdefault("nvml_version", None)
    driver_notes = list(r.notes)
    if driver_notes:
        driver["error"] = "; ".join(driver_notes)

    gpus: list[dict[str, Any]] = []
    handles: dict[int, Any] = {}
    count_raw = None
    try:
        count_raw = r.call("gpu count", "nvmlDeviceGetCount")
    except _GpuLost as exc:
        r.notes.append(f"gpu count: {exc}")
    if not isinstance(count_raw, int):
        reason = "; ".join(n for n in r.notes if n.startswith("gpu count")) or "GPU count unknown"
        return ProbeResult({"driver": driver, "gpus": [], "topology": unknown_topology(reason)}, "partial", reason)

    for index in range(count_raw):
        gpu, handle = _read_gpu(r, index)
        gpus.append(gpu)
        if handle is not None:
            handles[index] = handle

    topology = _read_topology(r, gpus, handles)
    status: ProbeStatus = "partial" if r.notes else "ok"
    summary = _summarise(r.notes) if r.notes else None
    return ProbeResult({"driver": driver, "gpus": gpus, "topology": topology}, status, summary)


def _summarise(notes: list[str]) -> str:
    head = notes[0]
    return head if len(notes) == 1 else f"{head} (and {len(notes) - 1} more)"


_GPU_FIELDS = (
    "name",
    "uuid",
    "pci_bus_id",
    "compute_capability",
    "memory_bytes",
    "persistence_mode",
    "mig_mode",
)


def _read_gpu(r: _Reader, index: int) -> tuple[dict[str, Any], Any]:
    gpu: dict[str, Any] = {"index": index}
    for key in _GPU_FIELDS:
        gpu[key] = None
    before = len(r.notes)
    label = f"gpu {index}"
    handle = None
    try:
        handle = r.call(label, "nvmlDeviceGetHandleByIndex", index)
        if handle is None:
            gpu["error"] = "; ".join(r.notes[before:]) or "no handle"
            return gpu, None
        gpu["name"] = _text(r.call(f"{label} name", "nvmlDeviceGetName", handle))
        gpu["uuid"] = _text(r.call(f"{label} uuid", "nvmlDeviceGetUUID", handle))
        brand = getattr(r.nv, "nvmlDeviceGetBrand", None) and r.call(
            f"{label} brand",
            "nvmlDeviceGetBrand",
            handle,
            quiet=("NVMLError_NotSupported", "NVMLError_FunctionNotFound"),
        )
        if isinstance(brand, int):  # absent where not read: the image check then says unknown
            gpu["brand"] = r.brand_name(brand)
            gpu["brand_code"] = brand
        pci = r.call(f"{label} pci", "nvmlDeviceGetPciInfo", handle)
        gpu["pci_bus_id"] = _text(getattr(pci, "busId", None)) if pci is not None else None
        cc = r.call(f"{label} compute capability", "nvmlDeviceGetCudaComputeCapability", handle)
        if isinstance(cc, tuple | list) and len(cc) == 2:
            gpu["compute_capability"] = f"{int(cc[0])}.{int(cc[1])}"
        mem = r.call(f"{label} memory", "nvmlDeviceGetMemoryInfo", handle)
        total = getattr(mem, "total", None) if mem is not None else None
        gpu["memory_bytes"] = int(total) if isinstance(total, int) else None
        quiet = ("NVMLError_NotSupported",)
        pm = r.call(f"{label} persistence mode", "nvmlDeviceGetPersistenceMode", handle, quiet=quiet)
        gpu["persistence_mode"] = bool(pm == 1) if isinstance(pm, int) else None
        mig = r.call(f"{label} mig mode", "nvmlDeviceGetMigMode", handle, quiet=("NVMLError_NotSupported",))
        if isinstance(mig, tuple | list) and mig:
            gpu["mig_mode"] = bool(mig[0] == 1)
        if isinstance(cc, tuple | list) and len(cc) == 2 and int(cc[0]) >= FABRIC_MIN_CC_MAJOR:
            gpu["fabric"] = _read_fabric(r, label, handle)
    except _GpuLost as exc:
        r.notes.append(f"{label}: {exc}")
        gpu["error"] = str(exc)
        return gpu, None
    if len(r.notes) > before:
        gpu["error"] = "; ".join(r.notes[before:])
    return gpu, handle


def _read_fabric(r: _Reader, label: str, handle: Any) -> dict[str, Any] | None:
    """The GPU's NVSwitch fabric registration (nvmlDeviceGetGpuFabricInfo, one call): {state, status}; state
    not-supported where NVML answers NOT_SUPPORTED (a PCIe GPU, no fabric); None where it was not read (the call
    missing from this driver or nvidia-ml-py: nothing was asked); {state: None, status: None, error} where the
    read failed (another NVML error, a state this reader does not know: noted too), which the gate refuses as
    unknown, unlike a state not read (context.gpu_fabric). `status` counts only once the state is completed (NVML
    API reference, nvmlGpuFabricInfo_t: checked only when the state is complete)."""
    struct = getattr(r.nv, "c_nvmlGpuFabricInfo_t", None)
    fn = getattr(r.nv, "nvmlDeviceGetGpuFabricInfo", None)
    if struct is None or fn is None:
        return None  # an nvidia-ml-py older than the call: not read
    import ctypes  # (pynvml imported it already)

    info = struct()
    try:
        fn(handle, ctypes.byref(info))
    except r.error_base as exc:
        name = _ename(exc)
        if name == "NVMLError_GpuIsLost":
            raise _GpuLost(exc) from None
        if name == "NVMLError_NotSupported":
            return {"state": "not-supported", "status": None}
        if name == "NVMLError_FunctionNotFound":  # a driver older than the call: not read, quietly
            return None
        r.notes.append(f"{label} fabric: {describe(exc)}")
        return {"state": None, "status": None, "error": describe(exc)}
    state_code = int(getattr(info, "state", -1))
    state = FABRIC_STATES.get(state_code)
    if state is None:
        r.notes.append(f"{label} fabric: unknown state {state_code}")
        return {"state": None, "status": None, "error": f"unknown state {state_code}"}
    status_code = int(getattr(info, "status", -1))
    status = FABRIC_STATUS.get(status_code, f"nvml-error-{status_code}") if state == "completed" else None
    return {"state": state, "status": status}


def _nvlinks(r: _Reader, index: int, handle: Any) -> tuple[Counter[str], int]:
    """Active NVLinks of one GPU: remote PCI bus id -> link count, and the number of links to NVSwitches."""
    direct: Counter[str] = Counter()
    switch_links = 0
    max_links = getattr(r.nv, "NVML_NVLINK_MAX_LINKS", 18)
    base = r.error_base
    state_fn = getattr(r.nv, "nvmlDeviceGetNvLinkState", None)
    if state_fn is None:
        return direct, 0
    for link in range(int(max_links)):
        try:
            active = state_fn(handle, link)
        except base as exc:
            name = _ename(exc)
            if name == "NVMLError_GpuIsLost":
                raise _GpuLost(exc) from None
            if name in ("NVMLError_NotSupported", "NVMLError_FunctionNotFound"):
                break  # no NVLink on this GPU (PCIe card) or driver too old
            if name == "NVMLError_InvalidArgument":
                continue  # this link index does not exist on this GPU
            r.notes.append(f"gpu {index} nvlink {link}: {describe(exc)}")
            break
        if active != 1:
            continue
        dev_type = r.call(
            f"gpu {index} nvlink {link}",
            "nvmlDeviceGetNvLinkRemoteDeviceType",
            handle,
            link,
            quiet=("NVMLError_FunctionNotFound", "NVMLError_NotSupported"),
        )
        if dev_type == NVLINK_DEVICE_TYPE_SWITCH:
            switch_links += 1
            continue
        remote = r.call(f"gpu {index} nvlink {link}", "nvmlDeviceGetNvLinkRemotePciInfo", handle, link)
        bus = normalise_bus_id(_text(getattr(remote, "busId", None))) if remote is not None else None
        if bus:
            direct[bus] += 1
    return direct, switch_links


def _read_topology(r: _Reader, gpus: list[dict[str, Any]], handles: dict[int, Any]) -> dict[str, Any]:
    count = len(gpus)
    names = {g.get("name") for g in gpus if g.get("name") is not None}
    topology: dict[str, Any] = {
        "interconnect": None,
        "same_model": (len(names) == 1 and all(g.get("name") for g in gpus)) if count else None,
        "gpu_count": count,
        "p2p": None,
        "pairs": [],
    }
    if count == 0:
        return topology
    if count == 1:
        topology["interconnect"] = "single-gpu"
        return topology

    before = len(r.notes)
    links: dict[int, tuple[Counter[str], int]] = {}
    for index, handle in list(handles.items()):
        try:
            links[index] = _nvlinks(r, index, handle)
        except _GpuLost as exc:
            r.notes.append(f"gpu {index} nvlink: {exc}")
            handles.pop(index)

    pairs: list[dict[str, Any]] = []
    for a in range(count):
        for b in range(a + 1, count):
            pairs.append(_read_pair(r, (a, b), gpus, handles, links))
    topology["pairs"] = pairs

    # NVLink multicast (NVLink SHARP: torch symmetric memory's multimem, NCCL NVLS) needs every GPU on an
    # NVSwitch; direct NVLink meshes and bridges have none. Unknown when a GPU's links could not be read.
    on_switch = len(links) == count and all(switch_links > 0 for _, switch_links in links.values())
    link_errors = len(r.notes) > before
    topology["nvswitch"] = True if on_switch else (None if link_errors or len(links) != count else False)
    known = [p["link"] for p in pairs if p.get("link") is not None]
    if known and len(known) == len(pairs):
        topology["interconnect"] = min(known, key=lambda link: LINK_RANK.get(link, -1))
    reads = [p.get("p2p_read") for p in pairs]
    if reads and all(x is not None for x in reads):
        ok = sum(1 for x in reads if x == "ok")
        topology["p2p"] = "all" if ok == len(reads) else ("none" if ok == 0 else "some")
    if len(r.notes) > before:
        topology["error"] = _summarise(r.notes[before:])
    return topology


def _read_pair(
    r: _Reader,
    pair_ids: tuple[int, int],
    gpus: list[dict[str, Any]],
    handles: dict[int, Any],
    links: dict[int, tuple[Counter[str], int]],
) -> dict[str, Any]:
    a, b = pair_ids
    pair: dict[str, Any] = {
        "a": a,
        "b": b,
        "link": None,
        "nvlink_count": None,
        "common_ancestor": None,
        "p2p_read": None,
    }
    ha, hb = handles.get(a), handles.get(b)
    if ha is None or hb is None:
        lost = a if ha is None else b
        pair["error"] = f"gpu {lost} could not be read"
        return pair
    label = f"pair {a}-{b}"
    try:
        nvlink_count: int | None = None
        if a in links and b in links:
            direct_a, switch_a = links[a]
            direct_b, switch_b = links[b]
            bus_b = normalise_bus_id(gpus[b].get("pci_bus_id"))
            bus_a = normalise_bus_id(gpus[a].get("pci_bus_id"))
            nvlink_count = max(direct_a.get(bus_b or "", 0), direct_b.get(bus_a or "", 0))
            if nvlink_count == 0 and switch_a and switch_b:
                nvlink_count = min(switch_a, switch_b)
        pair["nvlink_count"] = nvlink_count
        anc = r.call(f"{label} common ancestor", "nvmlDeviceGetTopologyCommonAncestor", ha, hb)
        pair["common_ancestor"] = ANCESTORS.get(int(anc), f"level-{anc}") if isinstance(anc, int) else None
        if nvlink_count:
            pair["link"] = "nvlink"
        elif pair["common_ancestor"] is not None:
            pair["link"] = ANCESTOR_LINK.get(pair["common_ancestor"])
        status = r.call(f"{label} p2p", "nvmlDeviceGetP2PStatus", ha, hb, P2P_CAPS_INDEX_READ)
        pair["p2p_read"] = P2P_STATUS.get(int(status), "unknown") if isinstance(status, int) else None
    except _GpuLost as exc:
        r.notes.append(f"{label}: {exc}")
        pair["error"] = str(exc)
    return pair
