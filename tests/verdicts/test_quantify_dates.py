"""The day a facts document was collected bounds the releases a `quantify` sweep considers.

A box described on day D cannot hold a release uploaded to PyPI after D (components.json `uploaded`), so a
sweep of an unknown version judges only the releases up to D; a release without a date always counts (the
sweep stays as wide as without the day). The bound only narrows what is swept: it never makes a verdict ok.

Tested on generated boxes: every facts file of the repository with each quantified package's version removed,
each judged without a day and on the upload day of every known release of that package (and the day before).
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from unittest import mock

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.errors import BadInputError
from stackcheck.facts.model import facts_from_document
from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts import engine
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import collected_day, evaluate_check, evaluate_feature

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

REPO = Path(__file__).resolve().parent.parent.parent
MANIFESTS = load_manifests([])
BAD = {"blocked", "failed", "warning"}


def _items() -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = [("feature", f) for f in MANIFESTS.features if "quantify" in f]
    return out + [("check", c) for c in MANIFESTS.checks if "quantify" in c]


def _judge(kind: str, item: Any, facts: Facts, manifests: Manifests = MANIFESTS) -> dict[str, Any]:
    ctx = Context(facts=facts, manifests=manifests)
    return dict(evaluate_feature(item, ctx) if kind == "feature" else evaluate_check(item, ctx))


def _day_before(day: str) -> str:
    import datetime

    return (datetime.date.fromisoformat(day) - datetime.timedelta(days=1)).isoformat()


def _inputs() -> list[tuple[str, str, Facts]]:
    """(name, package, facts without that package's version and without a day) for every repository facts file."""
    out: list[tuple[str, str, Facts]] = []
    quantified = sorted({str(i["quantify"]["package"]) for _, i in _items()})
    for path in sorted(
        [*(REPO / "tests").glob("realworld/*/facts.json"), *(REPO / "tests").glob("cases/*/facts.json")]
    ):
        doc = json.loads(path.read_text(encoding="utf-8"))
        facts = doc.get("facts") if isinstance(doc, dict) else None
        if not isinstance(facts, dict) or not isinstance(facts.get("packages"), dict):
            continue
        for pkg in quantified:
            entry = facts["packages"].get(pkg)
            if isinstance(entry, dict) and entry.get("installed") is not False:
                f: dict[str, Any] = copy.deepcopy(facts)
                f["packages"][pkg] = {"installed": True}
                f.pop("collected_at", None)
                out.append((str(path.parent.name), pkg, cast("Facts", f)))
    return out


@functools.cache
def _judged() -> tuple[int, list[tuple[str, str, str, str, dict[str, Any], dict[str, Any], dict[str, Any]]]]:
    """(verdicts judged, [(input, kind, id, day, stripped, no day, with the day)]) over every input and day."""
    judged = 0
    rows = []
    for name, pkg, facts in _inputs():
        days = sorted({str(r["uploaded"]) for r in MANIFESTS.releases(pkg) if "uploaded" in r})
        days += [_day_before(d) for d in days]
        for kind, item in _items():
            if item["quantify"]["package"] != pkg:
                continue
            # the item's own sweep alone (the sweep by the day for every item: tests/verdicts/test_release_sweep)
            with mock.patch.object(engine, "_swept_by_day", lambda *a, **k: None):
                stripped = _judge(kind, {k: v for k, v in item.items() if k != "quantify"}, facts)
                wide = _judge(kind, item, facts)
                for day in days:
                    dated = _judge(kind, item, cast("Facts", {**facts, "collected_at": day}))
                    judged += 1
                    rows.append((name, kind, str(item["id"]), day, stripped, wide, dated))
    return judged, rows


def test_the_day_never_makes_a_verdict_ok_and_moves_only_unknowns() -> None:
    judged, rows = _judged()
    assert judged >= 1000, "too few verdicts judged: the test would pass vacuously"
    moved = 0
    for name, kind, item_id, day, stripped, wide, dated in rows:
        where = f"{name}: {kind} {item_id} on {day}"
        if dated["status"] == "ok":
            assert stripped["status"] == "ok", where  # only the stated facts make it ok, never the sweep
        if (wide["status"], dated["status"]) == ("ok", "unknown"):
            # a day before the upload of every release the data knows: what is installed is older, its path not
            # read (irev38), as a stated older version is
            first = dated["reasons"][0]
            assert first["rule"] == "known-release" and day in first["message"], where
            assert all(str(r.get("uploaded", "")) > day for r in MANIFESTS.releases(first["message"].split()[0])), where
            continue
        if dated["status"] != wide["status"]:
            # the day moves an unknown to bad (fewer releases, all bad), or a swept bad back to unknown (the box
            # can only hold a release older than every one the data knows): nothing else
            assert (wide["status"], dated["status"]) in {("unknown", s) for s in BAD} | {(s, "unknown") for s in BAD}, (
                where
            )
            assert stripped["status"] == "unknown", where
            if dated["status"] in BAD:
                moved += 1
                first = dated["reasons"][0]
                assert f"uploaded by {day}" in first["message"], where
                assert (
                    "came later and cannot be installed here" in first["message"]
                    or "the first after it, for a development build of that day" in first["message"]
                ), where
                assert first["source"], where
    assert moved >= 40, f"the day moved only {moved} verdicts: the test would pass vacuously"


def test_a_bad_verdict_holds_release_by_release_up_to_the_day() -> None:
    """Each verdict the day made bad is bad with every release uploaded by that day, stated as the version."""
    _, rows = _judged()
    checked = 0
    for name, kind, item_id, day, _, wide, dated in rows:
        if wide["status"] != "unknown" or dated["status"] not in BAD or checked >= 60:
            continue
        item = next(i for k, i in _items() if k == kind and i["id"] == item_id)
        pkg = item["quantify"]["package"]
        facts = next(f for n, p, f in _inputs() if n == name and p == pkg)
        for release in MANIFESTS.releases(pkg):
            if str(release.get("uploaded", "")) <= day:
                f: dict[str, Any] = copy.deepcopy(dict(facts))
                f["packages"][pkg] = {"installed": True, "version": str(release["version"])}
                got = _judge(kind, item, cast("Facts", f))["status"]
                assert got in BAD, f"{name}: {item_id} with {release['version']} ({day}): {got}"
        checked += 1
    assert checked >= 20


def _gb300(day: str | None) -> Facts:
    facts: dict[str, Any] = {
        "gpus": [{"index": 0, "name": "GPU", "compute_capability": "10.3"}],
        "packages": {"triton": {"installed": True}},
    }
    if day is not None:
        facts["collected_at"] = day
    return cast("Facts", facts)


def test_triton_ptxas_on_sm103_by_day() -> None:
    """Triton's bundled ptxas before 3.6.0 is CUDA 12.8 (no sm_103a); 3.6.0 (uploaded 2026-01-20) ships a
    12.9 ptxas-blackwell. With Triton's release not known: unknown without a day; failed on a day before 3.6.0,
    naming ptxas and the releases; unknown again from 3.6.0's day on."""
    check = next(c for c in MANIFESTS.checks if c["id"] == "triton-ptxas")
    assert _judge("check", check, _gb300(None))["status"] == "unknown"
    v = _judge("check", check, _gb300("2025-11-28"))
    assert v["status"] == "failed"
    first = v["reasons"][0]
    assert first["rule"] == "ptxas-knows-gpu"
    assert "(3.0.0-3.5.1;" in first["message"] and "sm_103a" in first["message"]
    assert "3.6.0" in first["message"].split("came later")[0]
    assert _judge("check", check, _gb300("2026-01-19"))["status"] == "failed"
    assert _judge("check", check, _gb300("2026-01-20"))["status"] == "unknown", "3.6.0 is out that day"
    # a date-time is read as its UTC day; an unreadable value bounds nothing
    assert _judge("check", check, _gb300("2025-11-28T23:59:59Z"))["status"] == "failed"
    assert _judge("check", check, _gb300("last week"))["status"] == "unknown"
    # older than every release the data knows: the box holds a release not read, unknown
    assert _judge("check", check, _gb300("2024-01-01"))["status"] == "unknown"


def test_a_release_without_a_date_is_never_left_out() -> None:
    """Without 3.6.0's upload day the release counts whatever the facts' day: the sweep reaches it, it passes,
    and the verdict stays unknown (as wide as without a day)."""
    check = next(c for c in MANIFESTS.checks if c["id"] == "triton-ptxas")
    undated = copy.deepcopy(MANIFESTS)
    for release in undated.releases("triton"):
        if release["version"] == "3.6.0":
            del release["uploaded"]
    assert _judge("check", check, _gb300("2025-11-28"))["status"] == "failed"
    assert _judge("check", check, _gb300("2025-11-28"), undated)["status"] == "unknown"


def test_per_rule_scope_survives_the_sweep() -> None:
    """GB10 (12.1) on 2025-10-01: both rules fail with every release up to then (12.8 ptxas, and gather4 before
    3.6.0); each keeps its own id, so the gate scopes the gather4 one to MXFP4 MoE launches. Its effect is a
    crash: SGLang's MXFP4 MoE calls triton_kernels' matmul_ogs with no fallback (sglang #8879, #9707)."""
    check = next(c for c in MANIFESTS.checks if c["id"] == "triton-ptxas")
    facts = cast(
        "Facts", {**_gb300("2025-10-01"), "gpus": [{"index": 0, "name": "GB10", "compute_capability": "12.1"}]}
    )
    v = _judge("check", check, facts)
    fails = {r["rule"]: r for r in v["reasons"] if r["result"] == "fail"}
    assert set(fails) == {"ptxas-knows-gpu", "sm12x-tma-gather"}
    assert fails["sm12x-tma-gather"]["effect"] == "crash"
    assert "gather4" in fails["sm12x-tma-gather"]["message"]
    gather = next(r for r in check["rules"] if r["id"] == "sm12x-tma-gather")
    assert gather["required_by"]["features"] == ["mxfp4-moe"]


def test_collected_at_is_read_from_the_host_and_checked(tmp_path: Path) -> None:
    doc = {"schema_version": 1, "host": {"collected_at": "2025-11-28T01:50:38Z"}, "facts": {"gpus": []}}
    facts = facts_from_document(copy.deepcopy(doc), "box.json")
    assert facts.get("collected_at") == "2025-11-28T01:50:38Z"
    assert collected_day(Context(facts=facts, manifests=MANIFESTS)) == "2025-11-28"
    own = {**doc, "facts": {"gpus": [], "collected_at": "2025-10-01"}}
    assert facts_from_document(copy.deepcopy(own), "box.json").get("collected_at") == "2025-10-01"
    bad = {**doc, "facts": {"gpus": [], "collected_at": "yesterday"}}
    with pytest.raises(BadInputError) as err:
        facts_from_document(bad, "box.json")
    assert "box.json" in str(err.value) and "collected_at" in str(err.value)


def test_audit_of_a_dated_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI on a hand-written GB300 report dated before Triton 3.6.0: exit 1, triton-ptxas failed."""
    from stackcheck.cli import main

    path = tmp_path / "box.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": dict(_gb300("2025-11-28"))}), encoding="utf-8")
    rc = main(["audit", "--facts", str(path), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    check = next(c for c in out["checks"] if c["id"] == "triton-ptxas")
    assert (rc, check["status"]) == (1, "failed")
    assert "uploaded by 2025-11-28" in check["reasons"][0]["message"]


def _sm(cc: str, day: str | None) -> Facts:
    facts: dict[str, Any] = {
        "gpus": [{"index": 0, "name": "GPU", "compute_capability": cc}],
        "packages": {"sglang": {"installed": True}},
    }
    if day is not None:
        facts["collected_at"] = day
    return cast("Facts", facts)


def _feature(item_id: str) -> Any:
    return next(f for f in MANIFESTS.features if f["id"] == item_id)


def test_a_day_before_every_known_release_concludes_only_through_earlier() -> None:
    """An RTX 5090 described on 2025-08-13 (sglang #9140), ten days before SGLang 0.5.1, the oldest release the
    data knows: nothing can be swept, and only `quantify.earlier` (0.4.x has no trtllm_mha choice, 0.5.0rc0-rc2
    refuse every major but 10, read in their wheels) decides; where its condition does not hold (a B200), or
    without it, the verdict stays unknown."""
    mha = _feature("attention-trtllm-mha")
    v = _judge("feature", mha, _sm("12.0", "2025-08-13"))
    assert (v["status"], v["effect"]) == ("blocked", "crash")
    first = v["reasons"][0]
    assert first["rule"] == "every-release" and first["result"] == "fail"
    assert "no release of it the manifests know was uploaded by 2025-08-13" in first["message"]
    assert "(0.5.1-0.5.23 came later and cannot be installed here)" in first["message"]
    assert "Earlier releases: " in first["message"] and "SM100" in first["message"]
    assert first["source"]
    assert _judge("feature", mha, _sm("10.0", "2025-08-13"))["status"] == "unknown", "older releases admit SM100"
    assert _judge("feature", mha, _sm("12.0", None))["status"] == "unknown", "0.5.19+ admit SM120"
    without = {**mha, "quantify": {k: v for k, v in mha["quantify"].items() if k != "earlier"}}
    assert _judge("feature", without, _sm("12.0", "2025-08-13"))["status"] == "unknown"
    no_gpu = cast("Facts", {"packages": {"sglang": {"installed": True}}, "collected_at": "2025-08-13"})
    assert _judge("feature", mha, no_gpu)["status"] == "unknown", "the condition reads a GPU that is not known"


def test_deepgemm_before_0_5_1_is_off_at_best_on_sm120() -> None:
    """sglang #7227 (2025-06-19, RTX 5090): no DeepGEMM of the time has SM120 kernels and SGLang either keeps it
    off or selects it and crashes: blocked with the mildest of the two. On an H100 every rule's requirement holds
    (a rule whose `when` is not known holds where its requirement does), but the day precedes every SGLang release the
    manifests know (0.5.1, 2025-08-23): what ran was an older release, whose path was not read, so unknown, as for a
    box that states 0.4.7 (irev38: a849cee had made it ok)."""
    dg = _feature("deepgemm")
    v = _judge("feature", dg, _sm("12.0", "2025-06-19"))
    assert (v["status"], v["effect"]) == ("blocked", "disabled")
    assert "DeepGEMM" in v["reasons"][0]["message"] and "SM120" in v["reasons"][0]["message"]
    h100 = _judge("feature", dg, _sm("9.0", "2025-06-19"))
    assert h100["status"] == "unknown"
    first = h100["reasons"][0]
    assert first["rule"] == "known-release" and "2025-06-19" in first["message"] and "0.5.1" in first["message"]
    stated = {**_sm("9.0", None), "packages": {"sglang": {"installed": True, "version": "0.4.7"}}}
    assert _judge("feature", dg, stated)["status"] == "unknown"  # type: ignore[arg-type]


@pytest.mark.parametrize("feature", ["deepgemm", "fp8-block-gemm", "cuda-graph", "custom-allreduce", "nccl-nvls"])
def test_a_version_not_known_on_a_day_before_every_release_is_older_not_ok(feature: str) -> None:
    """irev38: an installed SGLang whose version is not known, on a day before the upload of every release the
    manifests know, is an older release (or a development build of that day): its path was not read, as for a stated
    0.4.7 ("older than every release the manifests know"), so unknown, never ok. Before, the stated version was
    unknown and the unstated one ok (cuda-graph, custom-allreduce and nccl-nvls, whose rules do not read the version;
    deepgemm and fp8-block-gemm since a849cee). A day on or after a known release's upload, or no day, is unchanged."""
    spec = _feature(feature)
    v = _judge("feature", spec, _sm("9.0", "2025-06-19"))
    assert v["status"] == "unknown", v["reasons"][:2]
    assert v["reasons"][0]["rule"] == "known-release"
    for day in ("2025-08-23", "2025-09-19", None):  # 0.5.1's upload day on: a known release may be installed
        assert _judge("feature", spec, _sm("9.0", day))["status"] == "ok", day


def test_a_known_release_on_the_day_is_swept_not_argued() -> None:
    """On 0.5.1's upload day the box can hold 0.5.1, or SGLang's code of that day (a git checkout, up to
    0.5.1.post3, the first release after it): the sweep judges both (SM100-only admission), and the older
    releases' argument is not used (the sweep, as before, covers the releases the data knows)."""
    v = _judge("feature", _feature("attention-trtllm-mha"), _sm("12.0", "2025-08-23"))
    assert v["status"] == "blocked"
    first = v["reasons"][0]["message"]
    assert "(0.5.1-0.5.1.post3; effect at least crash; " in first and "Earlier releases" not in first
    assert "0.5.1.post3, the first after it, for a development build of that day" in first


def test_a_development_build_of_the_day_is_judged_as_the_next_release() -> None:
    """sglang #17668's CUDA 13 image (2026-01-24) runs SGLang from a git checkout. Every release uploaded by
    then (0.5.1-0.5.8) lacks the trtllm DSA choice, but 0.5.9 (2026-02-23) has it, and the code of that day
    may too: with the GPU not stated, the DSA trtllm backend stays unknown. A package without `dev_builds`
    (as Triton) is swept up to the day only: here, taking SGLang's away makes the same facts blocked."""
    dsa = _feature("attention-dsa-trtllm")
    facts = cast("Facts", {"packages": {"sglang": {"installed": True}}, "collected_at": "2026-01-24"})
    v = _judge("feature", dsa, facts)
    assert v["status"] == "unknown"
    plain = copy.deepcopy(MANIFESTS)
    del (plain.components.get("packages") or {})["sglang"]["dev_builds"]
    assert _judge("feature", dsa, facts, plain)["status"] == "blocked"

    # with FlashInfer stated: on a B200 the first release after the day runs it, unknown; on an RTX PRO 6000
    # every one fails (no choice up to 0.5.8, trtllm-gen's SM100-only runner in 0.5.9): blocked
    def on(cc: str) -> Facts:
        packages = {"sglang": {"installed": True}, "flashinfer-python": {"installed": True, "version": "0.6.1"}}
        gpus = [{"index": 0, "name": "GPU", "compute_capability": cc}]
        return cast("Facts", {**facts, "packages": packages, "gpus": gpus})

    assert _judge("feature", dsa, on("10.0"))["status"] == "unknown"
    v = _judge("feature", dsa, on("12.0"))
    assert v["status"] == "blocked"
    assert "0.5.9, the first after it, for a development build of that day" in v["reasons"][0]["message"]


def test_a_check_concluded_by_earlier_keeps_the_named_rule() -> None:
    check: dict[str, Any] = {
        "id": "test-earlier",
        "title": "a check made by this test",
        "needs": ["sglang"],
        "rules": [
            {
                "id": "newer-than",
                "require": {"fact": "pkg.sglang.version", "op": "version", "value": ">=99"},
                "effect": "crash",
                "message": "needs SGLang {required}, this is {observed}",
                "source": "TEST",
            }
        ],
        "quantify": {
            "package": "sglang",
            "rules": ["newer-than"],
            "why": "test only",
            "earlier": {"when": {"fact": "gpu.cc_major", "op": "==", "value": 12}, "effect": "crash",
                        "rule": "newer-than", "why": "test only", "source": "TEST"},
        },
    }  # fmt: skip
    v = _judge("check", check, _sm("12.0", "2024-01-01"))
    assert v["status"] == "failed"
    assert v["reasons"][0]["rule"] == "newer-than", "the gate's per-rule scopes read the rule id"
    assert _judge("check", check, _sm("9.0", "2024-01-01"))["status"] == "unknown"


def test_validation_names_an_earlier_rule_that_is_not_there() -> None:
    from stackcheck.knowledge.validate import validate_documents

    doc = copy.deepcopy(json.loads((REPO / "manifests" / "features.json").read_text(encoding="utf-8")))
    feature = next(f for f in doc["features"] if f["id"] == "deepgemm")
    feature["quantify"]["earlier"]["rule"] = "no-such-rule"
    problems = validate_documents({"features.json": ("features.json", doc)}, partial=True)
    i = doc["features"].index(feature)
    assert f"features.json: $.features[{i}].quantify.earlier.rule: no rule 'no-such-rule' in this feature" in problems
    del feature["quantify"]["earlier"]["why"]
    problems = validate_documents({"features.json": ("features.json", doc)}, partial=True)
    assert any("earlier" in p and "why" in p for p in problems), problems
