"""irev69: an item of preflight.json `system_libraries` with a not_probed_note (liblzma.so.5, which the libunwind
bundled in mooncake-transfer-engine 0.3.5-0.3.11.post1 NEEDs) is judged on the sonames read, and a report whose
cuda_libs did not look for it keeps its verdict with the note (igap44, igap46). But the cuda_libs probe looks for it
now, and a soname it looked for whose loader copy is not known (`cuda_libs.unreadable`: a copy this process cannot
read, LD_LIBRARY_PATH's relative or empty element from a directory not known, or gate --facts with a launch that sets
its own LD_LIBRARY_PATH: facts_loader_path) was taken as 'not looked for' too, so the check passed with a note where
the loader may find none (the server fails at the import: a false pass). Now such a soname is unknown, as for the
items without a note; only one the report never listed keeps the note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from launch.test_gate_igap44_mooncake_liblzma import FOUND, LZMA, OLD_REPORT, _check, _gate

WHY = "LD_LIBRARY_PATH's element '', searched before the directories after it, is read from a directory not known"


def test_a_liblzma_looked_for_but_not_known_is_unknown(tmp_path: Path) -> None:
    # fails before: ok (with the note), and the gate allowed the launch
    libs: dict[str, Any] = {**FOUND, LZMA: None, "unreadable": {LZMA: WHY}}
    doc = _gate(tmp_path, {"version": "0.3.10"}, libs)
    check = _check(doc)
    assert check["status"] == "unknown", check
    assert LZMA in check["message"], check["message"]
    assert doc["decision"] == "refuse"


def test_a_report_that_did_not_look_still_keeps_its_verdict_with_the_note(tmp_path: Path) -> None:
    check = _check(_gate(tmp_path, {"version": "0.3.10"}, OLD_REPORT))
    assert check["status"] == "ok" and "not probed" in check["message"], check


def test_a_release_that_does_not_link_it_is_not_judged_on_it(tmp_path: Path) -> None:
    libs: dict[str, Any] = {**FOUND, LZMA: None, "unreadable": {LZMA: WHY}}
    assert _check(_gate(tmp_path, {"version": "0.3.12"}, libs))["status"] == "ok"
