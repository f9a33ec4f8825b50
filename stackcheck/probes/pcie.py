"""PCIe probe: the IOMMU mode and the ACS redirect bits on the bridges above each NVIDIA GPU, from /sys.

GPU peer-to-peer traffic (NCCL's P2P transport, SGLang's custom all-reduce) goes straight through a PCIe
switch only when neither the IOMMU nor ACS sends it up to the root complex; otherwise NCCL's troubleshooting
guide warns of a large slowdown or a hang. What is read, all without privileges except the ACS bits:

- the GPUs: the PCI addresses bound to the `nvidia` driver (/sys/bus/pci/drivers/nvidia/);
- the IOMMU: each GPU's group (/sys/bus/pci/devices/<bdf>/iommu_group) and that group's `type`
  (`identity` is passthrough, `DMA`/`DMA-FQ` is translation); no groups at all means the IOMMU is off;
- ACS: the bridges on the path from the root complex to each GPU (the resolved /sys/devices path), and in
  each bridge's config space the ACS extended capability (ID 0x000D), whose control register's P2P Request
  Redirect (bit 2) and Completion Redirect (bit 3) send peer traffic up. The extended config space (offset
  0x100 and up) is readable by root only: for other users the kernel returns the first 64 bytes, and ACS is
  recorded as unknown with that reason.

Facts: `pcie: {"gpus": [bdf...], "iommu": "off"|"passthrough"|"translated"|"mixed"|null, "iommu_groups":
{bdf: {"group", "type"}}, "acs": "enabled"|"disabled"|"unknown"|null, "acs_redirect": [bridge bdf...],
"acs_reason": str|null}`.
"""

from __future__ import annotations

from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult
from stackcheck.readers.fsview import FileView, HostView

if TYPE_CHECKING:
    from typing import Any, ClassVar

NVIDIA_DRIVER_DIR = "/sys/bus/pci/drivers/nvidia"
PCI_DEVICES = "/sys/bus/pci/devices"
IOMMU_GROUPS = "/sys/kernel/iommu_groups"
_BDF = _lazy(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
CONFIG_SIZE = 4096
EXT_CAP_START = 0x100
ACS_CAP_ID = 0x000D
ACS_REDIRECT_BITS = 0x0004 | 0x0008  # P2P Request Redirect, P2P Completion Redirect
MAX_BRIDGES = 64


def acs_control(config: bytes) -> int | None:
    """The ACS control register from a device's config space, None when the device has no ACS capability.

    Raises ValueError when the config space read is too short to hold extended capabilities (not root)."""
    if len(config) <= EXT_CAP_START:
        raise ValueError(f"got {len(config)} of {CONFIG_SIZE} bytes of config space")
    offset = EXT_CAP_START
    seen: set[int] = set()
    while offset and offset not in seen and offset + 8 <= len(config):
        seen.add(offset)
        header = int.from_bytes(config[offset : offset + 4], "little")  # (struct.unpack_from("<I"), without struct)
        if header in (0, 0xFFFFFFFF):
            return None
        if header & 0xFFFF == ACS_CAP_ID:
            return int.from_bytes(config[offset + 6 : offset + 8], "little")
        offset = (header >> 20) & 0xFFC
    return None


def _gpus(view: FileView) -> list[str]:
    try:
        names = view.listdir(NVIDIA_DRIVER_DIR)
    except OSError:
        return []
    return sorted(n for n in names if _BDF.match(n))


def _bridges(view: FileView, bdf: str) -> list[str]:
    """The PCI bridges above a device, from the root port down (its resolved /sys/devices path)."""
    try:
        real = view.realpath(f"{PCI_DEVICES}/{bdf}")
    except OSError:
        return []
    parts = [p for p in real.split("/") if _BDF.match(p)]
    return parts[:-1][-MAX_BRIDGES:]


def _group(view: FileView, bdf: str) -> dict[str, Any] | None:
    try:
        target = view.readlink(f"{PCI_DEVICES}/{bdf}/iommu_group")
    except OSError:
        return None
    group = target.rstrip("/").rsplit("/", 1)[-1]
    kind: str | None = None
    try:
        kind = view.read_bytes(f"{IOMMU_GROUPS}/{group}/type", 64).decode("ascii", "replace").strip() or None
    except OSError:
        kind = None
    return {"group": group, "type": kind}


def probe_pcie(view: FileView) -> dict[str, Any]:
    """The `pcie` facts section (see the module docstring)."""
    gpus = _gpus(view)
    out: dict[str, Any] = {
        "gpus": gpus,
        "iommu": None,
        "iommu_groups": {},
        "acs": None,
        "acs_redirect": [],
        "acs_reason": None,
    }
    if not gpus:
        out["error"] = f"no device bound to the nvidia driver in {NVIDIA_DRIVER_DIR}"
        return out
    modes: set[str] = set()
    for bdf in gpus:
        g = _group(view, bdf)
        if g is None:
            continue
        out["iommu_groups"][bdf] = g
        kind = str(g.get("type") or "")
        modes.add("passthrough" if kind == "identity" else "translated" if kind.startswith("DMA") else "unknown")
    if not out["iommu_groups"]:
        try:
            has_groups = bool(view.listdir(IOMMU_GROUPS))
        except OSError:
            has_groups = False
        out["iommu"] = "unknown" if has_groups else "off"
    elif modes == {"passthrough"}:
        out["iommu"] = "passthrough"
    elif modes == {"translated"}:
        out["iommu"] = "translated"
    else:
        out["iommu"] = "mixed" if "translated" in modes else "unknown"

    bridges = sorted({b for bdf in gpus for b in _bridges(view, bdf)})
    if not bridges:
        return out
    states: list[str] = []
    for b in bridges:
        try:
            control = acs_control(view.read_bytes(f"{PCI_DEVICES}/{b}/config", CONFIG_SIZE))
        except ValueError as exc:
            out["acs"] = "unknown"
            out["acs_reason"] = f"{b}: {exc}: reading the PCIe extended config space needs root"
            return out
        except OSError as exc:
            out["acs"] = "unknown"
            out["acs_reason"] = f"{b}: config space: {exc.strerror or exc}"
            return out
        if control is not None and control & ACS_REDIRECT_BITS:
            out["acs_redirect"].append(b)
            states.append("enabled")
        else:
            states.append("disabled")
    out["acs"] = "enabled" if "enabled" in states else "disabled"
    return out


class PcieProbe(Probe):
    name: ClassVar[str] = "pcie"
    timeout_s: ClassVar[float] = 3.0
    sections: ClassVar[tuple[str, ...]] = ("pcie",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        # the host's own /sys, whatever the view: an image or a root directory has no GPUs of its own
        pcie = probe_pcie(HostView(str(ctx.root)))
        if not pcie["gpus"]:  # no NVIDIA GPU bound to the driver: nothing to look at
            return ProbeResult({"pcie": pcie}, "skipped", str(pcie.get("error")))
        return ProbeResult({"pcie": pcie})
