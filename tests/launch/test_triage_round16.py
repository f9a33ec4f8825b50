"""triage for round sixteen's cause (issue 16): a vGPU guest's kernel log 'Xid 78 ... Guest driver is incompatible
with host driver' (the NVIDIA driver's VGPU_START_ERROR when the host's vGPU manager answers with an RM version
mismatch, gpu.c gpuPostConstruct) names the guest driver's branch against the host's vGPU release; Xid 78's other
message ('vGPU type is not supported'), other Xids and other programs' host/guest words keep their own verdicts."""

from __future__ import annotations

import io

from stackcheck.launch.triage import TriageResult, load_signatures, triage_stream


def _triage(log: str) -> TriageResult:
    return triage_stream(io.BytesIO(log.encode()), signatures=load_signatures())


# written for this test in the shape of a guest VM's dmesg: an unrelated line, the module's load line, then the Xid
# in the driver's current form (pid and name fields), then nvidia-smi finding nothing
DMESG_GUEST = (
    "[    3.402771] hv_vmbus: registering driver hv_pci\n"
    "[   41.118020] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.08  Release Build\n"
    "[   47.203118] NVRM: Xid (PCI:0002:00:00): 78, pid='<unknown>', name=<unknown>, "
    "Guest driver is incompatible with host driver\n"
    "No devices were found\n"
)
# journald's prefix over the same message
JOURNAL_GUEST = (
    "Aug 14 09:12:55 a10vm kernel: NVRM: Xid (PCI:0001:00:00): 78, pid='<unknown>', name=<unknown>, "
    "Guest driver is incompatible with host driver\n"
)


def test_xid_78_guest_driver_incompatible_names_the_guest_and_host_drivers() -> None:
    for log, line in ((DMESG_GUEST, 3), (JOURNAL_GUEST, 1)):
        rc = _triage(log).root_cause
        assert rc is not None and rc.signature is not None, log
        assert rc.signature.id == "vgpu-guest-driver-incompatible", log
        assert rc.line == line, log
        text = " ".join((rc.signature.title, rc.signature.explanation, rc.signature.fix))
        assert "guest" in text and "host" in text and "Xid 78" in text and "branch" in text
        assert any("gpu.c" in s["title"] for s in rc.signature.source)


def test_other_vgpu_and_xid_lines_are_not_a_guest_host_mismatch() -> None:
    for log in (
        # Xid 78's other message: a vGPU type the guest OS or GPU cannot use, not a driver branch
        "[   47.2] NVRM: Xid (PCI:0002:00:00): 78, pid='<unknown>', name=<unknown>, vGPU type is not supported\n",
        "[ 3311.920114] NVRM: Xid (PCI:0000:41:00): 79, pid=3310, name=python3, GPU has fallen off the bus.\n",
        "RuntimeError: guest additions are incompatible with the host version of the hypervisor\n",
    ):
        rc = _triage(log).root_cause
        assert rc is None or rc.signature is None or rc.signature.id != "vgpu-guest-driver-incompatible", log
