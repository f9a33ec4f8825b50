"""extension-torch-abi-lmcache from versions alone (ilmc): where facts.kernel_symbols did not look for extensions,
the check's release_symbols table (manifests/checks.json, read in the PyPI wheels) fails an LMCache release whose
c_ops needs the c10::cuda::SetDevice form the installed torch does not export; a live reading always decides."""

from __future__ import annotations

import copy
from typing import Any

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict

CID = "extension-torch-abi-lmcache"
EA, EAB = "_ZN3c104cuda9SetDeviceEa", "_ZN3c104cuda9SetDeviceEab"
SKIPPED = ("not-applicable", "pass", "None")  # the probe did not look: the check says so, no verdict


def facts(lmcache: str, torch: str, **extra: Any) -> dict[str, Any]:
    packages = {
        "torch": {"installed": True, "version": torch},
        "lmcache": {"installed": True, "version": lmcache},
    }
    return {"packages": packages, **extra}


def check(manifests: Manifests, doc: dict[str, Any], launch: dict[str, Any] | None = None) -> CheckVerdict:
    spec = next(c for c in manifests.checks if c["id"] == CID)
    return evaluate_check(spec, Context(facts=copy.deepcopy(doc), manifests=manifests, launch=launch or {}))  # type: ignore[arg-type]


def rules(v: CheckVerdict) -> list[tuple[str, str, str]]:
    return [(str(r.get("rule")), str(r.get("result")), str(r.get("effect"))) for r in v["reasons"]]


def test_the_ray_56695_pair_fails_inferred_and_names_the_symbol(manifests: Manifests) -> None:
    v = check(manifests, facts("0.3.3", "2.8.0"), {"enable_lmcache": True})
    assert v["status"] == "failed" and rules(v) == [("release-symbols", "fail", "crash")]
    reason = v["reasons"][0]
    assert reason.get("inferred") is True
    message = str(reason["message"])
    assert EA in message and EAB in message and "torch 2.8.0" in message
    assert "local build" in message and "built against another torch" in message


def test_an_audit_without_the_flag_states_it_as_information(manifests: Manifests) -> None:
    v = check(manifests, facts("0.3.3", "2.8.0+cu128"))
    assert rules(v) == [("release-symbols", "fail", "degraded")] and v["status"] == "warning"
    assert "information only" in str(v["reasons"][0]["message"])


def test_each_release_against_each_side_of_torch_28(manifests: Manifests) -> None:
    old = ("0.3.1", "0.3.2", "0.3.3", "0.3.5")  # SetDevice(signed char): torch before 2.8
    new = ("0.3.4", "0.3.6", "0.3.7", "0.3.9")  # SetDevice(signed char, bool): torch 2.8 on
    launch = {"enable_lmcache": True}
    for lm in old:
        assert rules(check(manifests, facts(lm, "2.9.1"), launch)) == [("release-symbols", "fail", "crash")], lm
        assert rules(check(manifests, facts(lm, "2.7.1"), launch)) == [SKIPPED], lm
    for lm in new:
        assert rules(check(manifests, facts(lm, "2.7.0"), launch)) == [("release-symbols", "fail", "crash")], lm
        assert rules(check(manifests, facts(lm, "2.11.0"), launch)) == [SKIPPED], lm


def test_a_pair_the_table_does_not_list_is_not_judged(manifests: Manifests) -> None:
    launch = {"enable_lmcache": True}
    for lm, torch in (
        ("0.3.12", "2.4.1"),
        ("0.3.3", "2.4.1"),
        ("0.4.3", "2.8.0"),
        ("0.3.3", "2.15.0"),
        ("0.3.3", "x"),
        ("0.3.3", "2.8.0.dev20250601+cu128"),
        ("0.3.3", "2.8.0rc3"),
    ):
        v = check(manifests, facts(lm, torch), launch)
        assert not any(r.get("result") == "fail" for r in v["reasons"]), (lm, torch)


def test_a_live_reading_is_never_overridden_by_the_table(manifests: Manifests) -> None:
    path = "/srv/venv/lib/python3.11/site-packages/lmcache/c_ops.cpython-311-x86_64-linux-gnu.so"
    entry = {"extension": "lmcache", "path": path, "torch_symbols": 40, "torch_missing_count": 0}
    ks = {"files": [], "extension_dirs": ["/srv/venv/lib/python3.11/site-packages"], "extensions": [entry]}
    doc = facts("0.3.3", "2.8.0", kernel_symbols=ks)  # a local build of 0.3.3 against torch 2.8: it resolves
    v = check(manifests, doc, {"enable_lmcache": True})
    assert [r.get("rule") for r in v["reasons"]] == ["torch-symbols"] and v["status"] == "ok"
    # a reading that looked and found no LMCache library is not overridden either
    ks = {"files": [], "extension_dirs": ["/srv/venv/lib/python3.11/site-packages"], "extensions": []}
    v = check(manifests, facts("0.3.3", "2.8.0", kernel_symbols=ks), {"enable_lmcache": True})
    assert "release-symbols" not in [r.get("rule") for r in v["reasons"]]


# ---- irev61: the section found LMCache's c_ops and read none of it --------------------------------------------------
# (a file over 1 GiB, one not read as ELF, an error): the check said unknown only, and a gate with --allow-unknown let
# the ray-56695 pair through; the release table now says what the versions alone say beside the unknown.

UNREAD = {
    "extension": "lmcache",
    "path": "/srv/venv/lib/python3.11/site-packages/lmcache/c_ops.cpython-311-x86_64-linux-gnu.so",
    "error": "over 1 GiB: not opened",
}


def _unread(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"files": [], "extension_dirs": ["/srv/venv/lib/python3.11/site-packages"], "extensions": entries}


def test_files_found_and_not_read_are_judged_by_the_table(manifests: Manifests) -> None:
    launch = {"enable_lmcache": True}
    v = check(manifests, facts("0.3.3", "2.8.0", kernel_symbols=_unread([UNREAD])), launch)
    assert rules(v) == [("release-symbols", "fail", "crash"), ("torch-symbols", "unknown", "None")], rules(v)
    assert v["status"] == "failed" and "read none of them" in str(v["reasons"][0]["message"])
    # a pair the table does not refuse: unknown only, as before
    v = check(manifests, facts("0.3.4", "2.8.0", kernel_symbols=_unread([UNREAD])), launch)
    assert rules(v) == [("torch-symbols", "unknown", "None")], rules(v)
    # one file of the module read (it resolves): the reading decides, the table is not used
    read = {**UNREAD, "path": "/other/lmcache/c_ops.so", "torch_symbols": 40, "torch_missing_count": 0}
    read.pop("error")
    v = check(manifests, facts("0.3.3", "2.8.0", kernel_symbols=_unread([UNREAD, read])), launch)
    assert "release-symbols" not in [r.get("rule") for r in v["reasons"]], rules(v)
