"""A hand-written facts file's package list is partial: a package it does not name is unknown, never "not
installed" (a check that said "skipped (torch not installed)" there was a hidden pass). A probed list names
every package the packages probe looked for, so there one it leaves out is not installed, as before.

Tested on every facts file of the repository: read as partial, no verdict is better than read as complete,
and each verdict that differs is unknown and names a package that the file does not mention."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.errors import BadInputError
from stackcheck.facts.model import facts_from_document, packages_probed
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

REPO = Path(__file__).resolve().parent.parent.parent
MANIFESTS = load_manifests([])

_PARTIAL_DOC = {
    "schema_version": 1,
    "facts": {
        "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0"}],
        "packages": {"sglang": {"version": "0.5.9"}, "flashinfer-python": {"installed": False}},
        "system": {"machine": "x86_64", "python": "3.12"},
    },
}


def _doc(**extra: Any) -> dict[str, Any]:
    doc = copy.deepcopy(_PARTIAL_DOC)
    doc.update(extra)
    return doc


def _verdicts(facts: Facts) -> dict[str, dict[str, Any]]:
    features, checks = evaluate_all(Context(facts=facts, manifests=MANIFESTS))
    return {**{f"feature {v['id']}": dict(v) for v in features}, **{f"check {v['id']}": dict(v) for v in checks}}


def test_a_hand_written_list_is_partial_and_an_unnamed_package_is_unknown() -> None:
    facts = facts_from_document(_doc(), "partial.json")
    assert facts.get("packages_complete") is False
    ctx = Context(facts=facts, manifests=MANIFESTS)
    assert ctx.package_state("torch") == "unknown"
    assert ctx.package_state("flashinfer-python") == "absent", "installed: false is stated: not installed"
    assert ctx.package_state("sglang") == "installed"
    assert "not in the facts file" in ctx.package_unknown_reason("torch")
    v = _verdicts(facts)
    # sgl-deep-gemm is not named: the DeepGEMM check cannot be skipped as "not installed"
    assert v["check deepgemm-arch"]["status"] == "unknown"
    assert "sgl-deep-gemm: not known whether" in v["check deepgemm-arch"]["reasons"][0]["message"]
    # FlashInfer is stated as not installed: its features stay not-applicable
    assert v["feature attention-flashinfer"]["status"] == "not-applicable"


def test_a_hand_written_list_may_say_it_is_complete() -> None:
    doc = _doc()
    doc["facts"]["packages_complete"] = True
    facts = facts_from_document(doc, "complete.json")
    ctx = Context(facts=facts, manifests=MANIFESTS)
    assert ctx.package_state("torch") == "absent"
    assert _verdicts(facts)["check deepgemm-arch"]["status"] == "skipped"


@pytest.mark.parametrize(
    ("probes", "complete"),
    [
        ([{"name": "packages", "status": "ok", "reason": None, "duration_ms": 1.0}], True),
        ([{"name": "packages", "status": "partial", "reason": "torch: bad METADATA", "duration_ms": 1.0}], True),
        ([{"name": "packages", "status": "failed", "reason": "no sys.path", "duration_ms": 1.0}], False),
        ([{"name": "packages", "status": "timeout", "reason": None, "duration_ms": 1.0}], False),
        ([{"name": "facts-file", "status": "ok", "reason": "x.json", "duration_ms": 0.0}], False),
        ("not a list", False),
        (None, False),
    ],
)
def test_a_saved_report_is_complete_where_the_packages_probe_ran(probes: Any, complete: bool) -> None:
    assert packages_probed(probes) is complete
    doc = _doc() if probes is None else _doc(probes=probes)
    assert facts_from_document(doc, "saved.json").get("packages_complete") is complete


def test_a_stated_marker_is_kept_and_a_bad_one_is_refused() -> None:
    doc = _doc(probes=[{"name": "packages", "status": "ok"}])
    doc["facts"]["packages_complete"] = False  # the document's own word wins
    assert facts_from_document(doc, "saved.json").get("packages_complete") is False
    doc["facts"]["packages_complete"] = "yes"
    with pytest.raises(BadInputError, match=r"saved\.json: \$\.facts\.packages_complete"):
        facts_from_document(doc, "saved.json")


def test_facts_built_in_process_keep_the_probed_meaning() -> None:
    # the live pipeline hands the packages probe's facts straight to the context: no marker, complete
    facts = cast("Facts", copy.deepcopy(_PARTIAL_DOC["facts"]))
    assert Context(facts=facts, manifests=MANIFESTS).package_state("torch") == "absent"


def test_the_real_h200_recording_reads_as_probed() -> None:
    doc = json.loads((REPO / "examples/facts/h200-cu130.json").read_text())
    assert facts_from_document(doc, "h200-cu130.json").get("packages_complete") is True


def _facts_files() -> list[Path]:
    roots = [REPO / "tests/realworld", REPO / "tests/cases", REPO / "examples"]
    return sorted(p for root in roots for p in root.rglob("*.json") if p.name == "facts.json" or "facts" in p.parts)


_ORDER = {"ok": 0, "not-applicable": 0, "skipped": 0, "degraded": 1, "warning": 1, "unknown": 2}


def test_partial_lists_never_read_better_than_complete_ones() -> None:
    """For every facts file: read partial, each verdict is the complete reading's or unknown, and an unknown
    that only the partial reading gives names a package the file does not mention."""
    files = _facts_files()
    assert len(files) >= 60, files
    changed = 0
    for path in files:
        doc = json.loads(path.read_text())
        if not isinstance(doc, dict) or not isinstance(doc.get("facts"), dict):
            continue
        raw = doc["facts"]
        raw.pop("packages_complete", None)
        partial = cast("Facts", {**copy.deepcopy(raw), "packages_complete": False})
        complete = cast("Facts", {**copy.deepcopy(raw), "packages_complete": True})
        named = set((raw.get("packages") or {}).keys())
        a, b = _verdicts(partial), _verdicts(complete)
        assert a.keys() == b.keys()
        for key, v in a.items():
            if v["status"] == b[key]["status"]:
                continue
            changed += 1
            where = f"{path.relative_to(REPO)}: {key}: {b[key]['status']} -> {v['status']}"
            if b[key]["status"] == "unknown" and v["status"] in ("blocked", "failed"):
                # the release sweep fills a package whose presence is not known with the release's own pin (a
                # partial list's silence), which a complete list rules out: it may only conclude the worse way
                assert v["reasons"][0].get("rule") == "release-sweep", where
                assert v["reasons"][0].get("inferred") is True, where
                continue
            if (b[key]["status"], v["status"]) == ("skipped", "ok"):
                # no rule of the check applies on the complete list; on the partial one a rule may apply (its `when`
                # reads a package the file does not mention) and holds whichever way that turns out (a849cee): met,
                # never failed or left unknown, so neither reading refuses anything the other allows
                assert v["reasons"] and all(r.get("result") == "pass" for r in v["reasons"]), where
                continue
            assert v["status"] == "unknown", where
            assert b[key]["status"] != "unknown", where
            text = " ".join(str(r.get("message")) for r in v["reasons"] if r.get("result") == "unknown")
            assert "not in the facts file" in text, where
            assert any(f"{p}: not known whether" in text for p in _unnamed(text) - named), where
    assert changed >= 50, f"only {changed} verdicts differ: the test would pass vacuously"


def _unnamed(text: str) -> set[str]:
    """The package names in "NAME: not known whether ... (not in the facts file)" phrases."""
    names = set()
    for part in text.replace(";", "\n").splitlines():
        part = part.strip()
        if ": not known whether" in part:
            names.add(part.split(": not known whether")[0].strip().split(" ")[-1])
    return names


# ---- sglang-startup-versions says what it saw (issue 16d, item 5) ----------------------------------------------


def _startup(packages: dict[str, Any]) -> list[dict[str, Any]]:
    facts = cast(
        "Facts",
        {
            "gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}],
            "packages": packages,
            "packages_complete": True,
            "system": {"machine": "x86_64", "python": "3.12"},
        },
    )
    v = _verdicts(facts)["check sglang-startup-versions"]
    return [dict(r) for r in v["reasons"] if r.get("result") == "fail"]


def test_startup_check_names_a_missing_kernel_package_without_booleans() -> None:
    fails = _startup({"sglang": {"installed": True, "version": "0.5.9"}, "sgl-kernel": {"installed": False}})
    assert [r["rule"] for r in fails] == ["sgl-kernel-installed-at-start"]
    message = fails[0]["message"]
    assert "is not installed" in message and "True" not in message and "False" not in message


def test_startup_check_names_an_old_kernel_package_and_the_minimum() -> None:
    fails = _startup(
        {"sglang": {"installed": True, "version": "0.5.9"}, "sgl-kernel": {"installed": True, "version": "0.3.20"}}
    )
    assert [r["rule"] for r in fails] == ["sgl-kernel-at-start"]
    assert "sgl-kernel >= 0.3.21" in fails[0]["message"] and "sgl-kernel is 0.3.20" in fails[0]["message"]
    fails = _startup(
        {"sglang": {"installed": True, "version": "0.5.23"}, "sglang-kernel": {"installed": True, "version": "0.4.1"}}
    )
    assert [r["rule"] for r in fails] == ["sglang-kernel-at-start"]
    assert "sglang-kernel >= 0.4.9" in fails[0]["message"] and "sglang-kernel is 0.4.1" in fails[0]["message"]
