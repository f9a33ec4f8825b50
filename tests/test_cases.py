"""Scenario case folders: tests/cases/<name>/facts.json + expected.json (+ optional options.json).

Each folder is discovered automatically. expected.json lists every feature's status (with its effect when
blocked), every stack check's status and the audit's exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report
from stackcheck.documents.types import Report
from stackcheck.verdicts.types import FeatureVerdict

CASES = Path(__file__).parent / "cases"
ROOT = CASES.parent.parent
CASE_DIRS = sorted(p for p in CASES.iterdir() if (p / "expected.json").is_file())


def run_case(case: Path) -> Report:
    """options.json may name the facts file (relative to the repository root), e.g. a real recording
    under examples/facts/, and any other pipeline option (assume_gpu, launch, ...)."""
    opts_file = case / "options.json"
    extra = json.loads(opts_file.read_text()) if opts_file.is_file() else {}
    facts = ROOT / extra.pop("facts_file") if "facts_file" in extra else case / "facts.json"
    report, _ = build_report(Options(facts_file=str(facts), **extra))
    return report


@pytest.mark.parametrize("case", CASE_DIRS, ids=[p.name for p in CASE_DIRS])
def test_case_matches_expected(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    report = run_case(case)
    got_features = {f["id"]: f["status"] + (f"/{f['effect']}" if f.get("effect") else "") for f in report["features"]}
    got_checks = {c["id"]: c["status"] for c in report["checks"]}
    assert got_features == expected["features"]
    assert got_checks == expected["checks"]
    assert (0 if report["summary"]["consistent"] else 1) == expected["exit_code"]


def feature(report: Report, fid: str) -> FeatureVerdict:
    return next(f for f in report["features"] if f["id"] == fid)


def test_writeup_symm_mem_crash_names_table_observed_required_and_source() -> None:
    report = run_case(CASES / "writeup-after")
    f = feature(report, "torch-symm-mem")
    assert (f["status"], f["effect"]) == ("blocked", "crash")
    fail = next(r for r in f["reasons"] if r["result"] == "fail")
    assert fail["observed"] == 12
    assert "9" in str(fail["required"]) and "10" in str(fail["required"])
    assert "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES" in fail["message"]
    assert fail["source"]


def test_patched_table_passes_the_lookup_names_the_file_and_stays_off_on_pcie() -> None:
    report = run_case(CASES / "writeup-patched-symm-mem")
    f = feature(report, "torch-symm-mem")
    patched = [r for r in f["reasons"] if r.get("patched")]
    assert patched and patched[0]["patched"].endswith("all_reduce_utils.py")
    assert patched[0]["result"] == "pass"  # key 12 is in the installed table: no KeyError any more ...
    # ... but SGLang checks multicast_ptr after the lookup, and a PCIe box has no NVLink multicast
    assert (f["status"], f["effect"]) == ("blocked", "disabled")
    fail = next(r for r in f["reasons"] if r["result"] == "fail")
    assert fail["rule"] == "multicast"
    assert "multicast_ptr" in fail["message"] and fail["observed"] == "cross-socket"


def test_newer_release_is_unknown_with_the_data_date() -> None:
    report = run_case(CASES / "sglang-newer-than-manifests")
    f = feature(report, "torch-symm-mem")
    assert f["status"] == "unknown"
    assert "newer than the manifests" in f["reasons"][0]["message"]
    assert report["manifests"]["date"] in f["reasons"][0]["message"]


def test_pins_mismatch_is_a_failed_check_with_observed_and_required() -> None:
    report = run_case(CASES / "writeup-after")
    pins = next(c for c in report["checks"] if c["id"] == "sglang-pins")
    fails = [r for r in pins["reasons"] if r["result"] == "fail"]
    assert {r["observed"] for r in fails} == {"0.6.4"}
    assert all(r["required"] == "==0.6.3" for r in fails)


def test_no_driver_unknowns_name_the_missing_fact() -> None:
    report = run_case(CASES / "no-driver")
    f = feature(report, "attention-fa3")
    assert f["status"] == "unknown"
    assert "NVML library not found" in f["reasons"][0]["message"]


def test_assume_gpu_checks_an_image_against_absent_hardware() -> None:
    report, _ = build_report(
        Options(
            facts_file=str(CASES / "no-driver" / "facts.json"),
            assume_gpu="12.0x8",
            assume_driver="580.95.05",
            assume_interconnect="pcie",
        )
    )
    assert feature(report, "torch-symm-mem")["status"] == "blocked"
    assert feature(report, "attention-fa3")["status"] == "blocked"
    assert report["facts"]["driver"]["cuda"] == "13.0"
    assert "gpus=12.0x8" in report["facts"]["assumed"]


def test_every_feature_is_decided_by_some_scenario() -> None:
    """Every feature in the manifests is ok or blocked (not only unknown/not-applicable) in some case."""
    decided: set[str] = set()
    all_ids: set[str] = set()
    for case in CASE_DIRS:
        for f in run_case(case)["features"]:
            all_ids.add(f["id"])
            if f["status"] in ("ok", "blocked"):
                decided.add(f["id"])
    assert all_ids - decided == set()


def test_every_check_is_exercised_by_some_scenario() -> None:
    ran: set[str] = set()
    all_ids: set[str] = set()
    for case in CASE_DIRS:
        for c in run_case(case)["checks"]:
            all_ids.add(c["id"])
            if c["status"] in ("ok", "failed", "warning"):
                ran.add(c["id"])
    assert all_ids - ran == set()
