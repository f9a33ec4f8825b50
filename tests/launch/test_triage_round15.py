"""triage for round fifteen's cause (issue 16): the kernel log's 'NVRM: API mismatch' line (the NVIDIA kernel module
refusing a user-space driver client of another release, RmPerformVersionCheck) names the kernel module and the
user-space driver of different releases, in the line's current form (client name and pid, 2026) and its older
one; the module's other NVRM lines, and other programs' 'API mismatch' words, keep their own verdicts."""

from __future__ import annotations

import io

from stackcheck.launch.triage import TriageResult, load_signatures, triage_stream


def _triage(log: str) -> TriageResult:
    return triage_stream(io.BytesIO(log.encode()), signatures=load_signatures())


# written for this test in the shape of a dmesg excerpt after a driver upgrade: an unrelated line, then the
# kernel module's message over its continuation lines (the current form names the client and its pid)
DMESG_NEW = """\
[    6.310087] igb 0000:07:00.0 eno1: link up, 1000 Mbps full duplex
[    9.002114] NVRM: API mismatch: the client 'python3' (pid 4121)
               NVRM: has the version 590.48.01, but this kernel module has
               NVRM: the version 580.95.05.
"""
# the older form (one line per sentence, no client name), as journald prefixes it
DMESG_OLD = """\
Mar 02 10:11:12 gpu3 kernel: NVRM: API mismatch: the client has the version 550.127.05, but
Mar 02 10:11:12 gpu3 kernel: NVRM: this kernel module has the version 550.90.07.
"""


def test_the_kernels_api_mismatch_line_names_the_module_and_the_user_space_driver() -> None:
    for log, line in ((DMESG_NEW, 2), (DMESG_OLD, 1)):
        result = _triage(log)
        rc = result.root_cause
        assert rc is not None and rc.signature is not None, log
        assert rc.signature.id == "nvrm-api-version-mismatch", log
        assert rc.line == line, log
        assert result.check == "driver-userspace-match", log
        text = " ".join((rc.signature.title, rc.signature.explanation, rc.signature.fix))
        assert "kernel module" in text and "user-space" in text and "different driver releases" in text
        assert "RmPerformVersionCheck" in text and "dkms" in text


def test_the_modules_other_nvrm_lines_are_not_a_version_mismatch() -> None:
    for log in (
        "[    4.118203] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.80  Release Build\n",
        "[ 3311.920114] NVRM: Xid (PCI:0000:41:00): 79, pid=3310, name=python3, GPU has fallen off the bus.\n",
    ):
        rc = _triage(log).root_cause
        assert rc is None or rc.signature is None or rc.signature.id != "nvrm-api-version-mismatch", log


def test_another_programs_api_mismatch_is_not_the_drivers() -> None:
    log = "RuntimeError: plugin API mismatch: the client expects 3, the server offers 2\n"
    rc = _triage(log).root_cause
    assert rc is not None
    assert rc.signature is None or rc.signature.id != "nvrm-api-version-mismatch"
