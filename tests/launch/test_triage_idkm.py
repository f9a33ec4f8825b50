"""triage of a GPU the NVIDIA kernel module could not bring up: 'RmInitAdapter failed! (initStatus:rmStatus:line)'
(open-gpu-kernel-modules osinit.c RmInitAdapter) names signature driver-rm-init-failed-blackwell-proprietary, which
does not claim the flavour from the log: it points at the check driver-kernel-modules, and with the box's facts
triage shows that check's verdict (failed for a Blackwell GPU under the proprietary flavour, unknown for a GB10)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch.triage import TriageResult, load_signatures, triage_stream, triage_with_plan
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

ROOT = Path(__file__).resolve().parent.parent.parent
SIG = "driver-rm-init-failed-blackwell-proprietary"

# written for this test in the shape of a kernel log where a GPU does not come up: the module's load line, the
# GPU's line, the failure with its three codes (made up here), the follow-up line, then nvidia-smi
DMESG = (
    "[    4.100212] nvidia: loading out-of-tree module taints kernel.\n"
    "[    5.300118] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  595.71.05  Tue Apr 21 09:00:00 UTC 2026\n"
    "[   61.220931] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x25:0x65:1547)\n"
    "[   61.221377] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0\n"
    "No devices were found\n"
)
JOURNAL = "Jun 04 10:01:02 box kernel: NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x22:0x56:762)\n"


def _triage(log: str) -> TriageResult:
    return triage_stream(io.BytesIO(log.encode()), signatures=load_signatures())


def test_rm_init_adapter_failure_is_named_and_points_at_the_check() -> None:
    for log, line in ((DMESG, 3), (JOURNAL, 1)):
        result = _triage(log)
        rc = result.root_cause
        assert rc is not None and rc.signature is not None, log
        assert rc.signature.id == SIG and rc.line == line, log
        assert rc.signature.check == "driver-kernel-modules" and result.check == "driver-kernel-modules"
        text = " ".join((rc.signature.title, rc.signature.explanation, rc.signature.fix))
        assert "open kernel module" in text and "proprietary" in text and "Blackwell" in text
        assert "several causes" in text  # the log alone does not name the flavour
        assert any(s.get("path", "").endswith("osinit.c") for s in rc.signature.source)


def test_other_nvrm_lines_are_not_it() -> None:
    for log in (
        "[   61.2] NVRM: GPU 0000:01:00.0: RmInitAdapter succeeded!\n",
        "[   61.2] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build\n",
        "No devices were found\n",
    ):
        rc = _triage(log).root_cause
        assert rc is None or rc.signature is None or rc.signature.id != SIG, log


@pytest.mark.parametrize(
    ("case", "status"),
    [
        ("prathamesh-blog-proprietary-kmod-gb202-rtxpro6000", "failed"),
        ("start9-3465-proprietary-kmod-gb10", "unknown"),
    ],
)
def test_with_facts_the_check_decides(case: str, status: str) -> None:
    """The same log line, two boxes: the check's verdict on each box's facts is what triage shows."""
    manifests = load([])
    facts = json.loads((ROOT / "tests" / "realworld" / case / "facts.json").read_text("utf-8"))["facts"]
    spec = next(c for c in manifests.checks if c["id"] == "driver-kernel-modules")
    verdict = evaluate_check(spec, Context(facts=facts, manifests=manifests, launch={}))
    fix = triage_with_plan(_triage(DMESG), {"steps": []}, [verdict])
    assert fix is not None and fix["check"] == "driver-kernel-modules" and fix["status"] == status
