"""The release sweep by the facts' day (stackcheck.verdicts.sweep): a feature or check left unknown because a
package is installed with its version not known is judged for every release the facts' day admits, and
concludes only when they all agree; never ok where an unjudged release may be on the box.

A synthetic package `toypkg` (releases 1.0, 1.1, 1.2 uploaded 2026-01-10, 2026-02-10, 2026-03-10) and items
that read its version are added to the shipped manifests; the real corpus cases follow at the end."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check, evaluate_feature

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

REPO = Path(__file__).resolve().parent.parent.parent
SHIPPED = load_manifests([])
SOURCE = [{"title": "test data", "url": "https://example.invalid/toypkg"}]
RELEASES = [("1.0", "2026-01-10"), ("1.1", "2026-02-10"), ("1.2", "2026-03-10")]


def _manifests(package: dict[str, Any] | None = None) -> Manifests:
    docs = copy.deepcopy(SHIPPED.docs)
    docs["components.json"]["packages"]["toypkg"] = {
        "names": ["toypkg"],
        "import_name": "toypkg",
        "releases": [{"version": v, "uploaded": d, "source": SOURCE} for v, d in RELEASES],
        **(package or {}),
    }
    return Manifests(docs=docs, origins=SHIPPED.origins)


def _feature(spec: str, effect: str = "crash") -> Any:
    """A feature ok where toypkg's version is in `spec`, blocked elsewhere."""
    return {
        "id": "toy-feature",
        "title": "toy",
        "needs": ["toypkg"],
        "rules": [
            {
                "id": "toy-version",
                "require": {"fact": "pkg.toypkg.version", "op": "version", "value": spec},
                "effect": effect,
                "message": "toypkg {observed} does not run this (needs {required})",
                "source": SOURCE,
            }
        ],
    }


def _check(spec: str) -> Any:
    return {**_feature(spec), "id": "toy-check"}


def _facts(day: str | None, **entry: Any) -> Facts:
    # one GPU: a feature is never ok on a box with none seen (engine.evaluate_feature)
    facts: dict[str, Any] = {
        "packages": {"toypkg": {"installed": True, **entry}},
        "gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}],
    }
    if day is not None:
        facts["collected_at"] = day
    return cast("Facts", facts)


def _judge(item: Any, facts: Facts, manifests: Manifests | None = None, check: bool = False) -> dict[str, Any]:
    ctx = Context(facts=facts, manifests=manifests or _manifests())
    return dict(evaluate_check(item, ctx) if check else evaluate_feature(item, ctx))


def test_every_admitted_release_blocked_concludes_blocked_naming_the_range_and_the_date() -> None:
    """Facts of 2026-02-20 admit 1.0 and 1.1 (1.2 came later); both are blocked: blocked, inferred, naming
    the range swept, the day and what came later."""
    v = _judge(_feature(">=1.2"), _facts("2026-02-20"))
    assert (v["status"], v["effect"]) == ("blocked", "crash")
    first = v["reasons"][0]
    assert first["rule"] == "release-sweep" and first["result"] == "fail" and first["inferred"] is True
    assert first["message"].startswith("inferred from the facts' date: ")
    assert "for every toypkg release the manifests know up to 2026-02-20 (1.0-1.1)" in first["message"]
    assert "1.2 came later and cannot be installed here" in first["message"]
    assert "releases older than 1.0 or not recorded were not judged" in first["message"]
    assert "with 1.1: toypkg 1.1 does not run this" in first["message"]
    assert first["source"] == SOURCE
    assert first["required"] == "toypkg 1.0-1.1"


def test_the_mildest_effect_among_the_releases() -> None:
    item = _feature(">=1.2", effect="degraded")
    item["rules"].append({**item["rules"][0], "id": "toy-old", "effect": "crash", "require": {
        "fact": "pkg.toypkg.version", "op": "version", "value": ">=1.1"}})  # fmt: skip
    v = _judge(item, _facts("2026-02-20"))
    assert (v["status"], v["effect"]) == ("blocked", "degraded"), "1.1 is only degraded"


def test_disagreement_across_releases_stays_unknown() -> None:
    """1.0 blocked, 1.1 ok: unknown, as without the sweep."""
    v = _judge(_feature(">=1.1"), _facts("2026-02-20"))
    assert v["status"] == "unknown"
    assert not any(r.get("rule") == "release-sweep" for r in v["reasons"])


def test_no_date_stays_unknown() -> None:
    assert _judge(_feature(">=1.2"), _facts(None))["status"] == "unknown"
    assert _judge(_feature(">=0"), _facts(None))["status"] == "unknown"


@pytest.mark.parametrize("day", ["2026-03-10", "2026-03-11", "2027-01-01"])
def test_a_day_from_the_newest_known_release_on_never_concludes(day: str) -> None:
    """A release newer than the manifests know may be on the box: never ok (nor blocked without an item's own
    `quantify` argument), even with every release recorded from the first."""
    every = {"every_release": {"from": "1.0", "through": "1.2", "source": SOURCE}}
    for manifests in (_manifests(), _manifests(every)):
        assert _judge(_feature(">=0"), _facts(day), manifests)["status"] == "unknown"
        assert _judge(_feature(">=9"), _facts(day), manifests)["status"] == "unknown"


def test_a_day_before_every_known_release_stays_unknown() -> None:
    assert _judge(_feature(">=9"), _facts("2025-12-01"))["status"] == "unknown"


def test_ok_only_when_every_release_is_recorded_from_the_first() -> None:
    """Every admitted release ok: still unknown when the records may skip a release or start after the first
    (an older release may be on the box); ok when components.json `every_release` covers the first through
    a release after the day."""
    facts = _facts("2026-02-20")
    assert _judge(_feature(">=1.0"), facts)["status"] == "unknown"
    complete = _manifests({"every_release": {"from": "1.0", "through": "1.2", "source": SOURCE}})
    v = _judge(_feature(">=1.0"), facts, complete)
    assert v["status"] == "ok"
    (reason,) = v["reasons"]
    assert reason["rule"] == "release-sweep" and reason["result"] == "pass" and reason["inferred"] is True
    assert "inferred from the facts' date" in reason["message"] and "(1.0-1.1)" in reason["message"]
    assert "not judged" not in reason["message"]
    later_first = _manifests({"every_release": {"from": "0.9", "through": "1.2", "source": SOURCE}})
    assert _judge(_feature(">=1.0"), facts, later_first)["status"] == "unknown", "0.9 was not recorded"
    short = _manifests({"every_release": {"from": "1.0", "through": "1.0", "source": SOURCE}})
    assert _judge(_feature(">=1.0"), facts, short)["status"] == "unknown", "a release before 1.1 may be skipped"


def test_a_development_build_of_the_day_is_judged_as_the_next_release() -> None:
    """A package boxes run from a git checkout (`dev_builds`): the first release after the day stands for the
    code of that day, so a change in it leaves the verdict unknown."""
    dev = _manifests({"dev_builds": {"why": "test", "source": SOURCE}})
    assert _judge(_feature(">=1.2"), _facts("2026-02-20"), dev)["status"] == "unknown", "1.2 runs it"
    v = _judge(_feature(">=1.3"), _facts("2026-02-20"), dev)
    assert v["status"] == "blocked"
    assert "(1.0-1.2, 1.2 standing for a development build of that day)" in v["reasons"][0]["message"]


def test_candidates_bound_the_sweep_both_ways() -> None:
    """The facts narrow the release (packages.NAME.candidates): exactly those are judged, with or without a
    day; all ok is ok."""
    facts = _facts(None, candidates=["1.1", "1.2"])
    ok = _judge(_feature(">=1.1"), facts)
    assert ok["status"] == "ok" and "inferred from the releases the facts allow" in ok["reasons"][0]["message"]
    assert _judge(_feature(">=1.2"), facts)["status"] == "unknown"
    assert _judge(_feature(">=1.3"), facts)["status"] == "blocked"


def test_a_stated_version_or_a_package_not_known_installed_is_not_swept() -> None:
    assert _judge(_feature(">=1.2"), _facts("2026-02-20", version="1.0"))["status"] == "blocked"
    assert _judge(_feature(">=1.2"), _facts("2026-02-20", version="1.2"))["status"] == "ok"
    unknown = cast("Facts", {"packages": {"toypkg": {}}, "collected_at": "2026-02-20"})
    assert _judge(_feature(">=1.2"), unknown)["status"] == "unknown"


def test_a_check_fails_per_rule_keeping_the_rule_id() -> None:
    v = _judge(_check(">=1.2"), _facts("2026-02-20"), check=True)
    assert v["status"] == "failed"
    first = v["reasons"][0]
    assert first["rule"] == "toy-version" and first["inferred"] is True
    assert "failed with every one of them" in first["message"]
    assert _judge(_check(">=1.1"), _facts("2026-02-20"), check=True)["status"] == "unknown"
    assert _judge(_check(">=1.0"), _facts("2027-01-01"), check=True)["status"] == "unknown"


def test_a_package_with_builds_on_its_own_index_is_swept_only_by_its_quantify() -> None:
    """torch, sgl-kernel: the version does not say which CUDA build is there."""
    indexed = _manifests({"index_url": "https://example.invalid/whl"})
    assert _judge(_feature(">=1.2"), _facts("2026-02-20"), indexed)["status"] == "unknown"


def test_range_pins_fill_an_unmentioned_dependency_and_can_only_block() -> None:
    """toyapp 2.0 requires toypkg>=1.0 and the facts do not mention toypkg: judged with toypkg narrowed to
    the known releases in the range uploaded by the day; a blocked answer counts, an ok one never does."""
    docs = copy.deepcopy(_manifests().docs)
    docs["components.json"]["packages"]["toyapp"] = {
        "names": ["toyapp"],
        "import_name": "toyapp",
        "releases": [
            {"version": "2.0", "uploaded": "2026-01-01", "requires": {"toypkg": ">=1.0"}, "source": SOURCE},
            {"version": "2.1", "uploaded": "2026-06-01", "requires": {"toypkg": ">=1.0"}, "source": SOURCE},
        ],
    }
    manifests = Manifests(docs=docs, origins=SHIPPED.origins)
    facts = cast("Facts", {"packages": {"toyapp": {"installed": True}}, "collected_at": "2026-02-20",
                           "packages_complete": False})  # fmt: skip
    item = {**_feature(">=1.2"), "needs": ["toyapp"]}
    v = _judge(item, facts, manifests)
    assert v["status"] == "blocked"
    assert "judged with the packages it pins filled in" in v["reasons"][0]["message"]
    assert _judge({**_feature(">=1.0"), "needs": ["toyapp"]}, facts, manifests)["status"] == "unknown"


# ---- the real corpus ----------------------------------------------------------------------------------------


def _audit(case: str) -> dict[str, Any]:
    facts = load_facts_file(REPO / "tests" / "realworld" / case / "facts.json")
    ctx = Context(facts=facts, manifests=SHIPPED)
    return {f["id"]: f for f in (evaluate_feature(x, ctx) for x in SHIPPED.features)}


def test_sglang_23985_fa4_on_an_rtx_5090_of_april_2026_is_blocked_for_every_release() -> None:
    """Image tag `latest`, SGLang's release not given, facts of 2026-04-29: every SGLang release up to that
    day (0.5.1-0.5.10, and 0.5.11 for the image's code of that day) blocks FA4 on SM120."""
    v = _audit("sglang-23985-fa4-fp8-kv-sm120-5090")["attention-fa4"]
    assert (v["status"], v["effect"]) == ("blocked", "crash")
    text = v["reasons"][0]["message"]
    assert "inferred from the facts' date" in text and "up to 2026-04-29 (0.5.1-0.5.11" in text
    assert "0.5.12-0.5.23 came later" in text
    case = json.loads((REPO / "tests/realworld/sglang-23985-fa4-fp8-kv-sm120-5090/case.json").read_text())
    assert any("packages/sglang" in e.get("paths", []) for e in case["inferred"]), "the swept fact is inferred"


def _generated() -> list[tuple[str, Facts]]:
    """Every sixth repository facts file that holds SGLang, its version removed, on three days."""
    out: list[tuple[str, Facts]] = []
    paths = sorted([*(REPO / "tests").glob("realworld/*/facts.json"), *(REPO / "tests").glob("cases/*/facts.json")])
    holding: list[tuple[str, dict[str, Any]]] = []
    for path in paths:
        doc = json.loads(path.read_text(encoding="utf-8"))
        facts = doc.get("facts") if isinstance(doc, dict) else None
        entry = (facts or {}).get("packages", {}).get("sglang") if isinstance(facts, dict) else None
        if isinstance(entry, dict) and entry.get("installed") is not False:
            holding.append((path.parent.name, cast("dict[str, Any]", facts)))
    for name, facts in holding[::6]:
        for day in ("2025-10-01", "2026-03-01", "2026-08-01"):
            f: dict[str, Any] = copy.deepcopy(facts)
            f["packages"]["sglang"] = {"installed": True}
            f["collected_at"] = day
            out.append((f"{name} on {day}", cast("Facts", f)))
    return out


def test_on_generated_boxes_the_sweep_never_makes_ok_and_moves_only_unknowns() -> None:
    """No package the manifests know has `every_release`, so on real data the day's sweep concludes only blocked /
    failed, and only where the verdict was unknown without it; each such verdict names what it swept. Only a
    sweep over the facts' own `candidates` may pass, and it says so."""
    from unittest import mock

    from stackcheck.verdicts import engine

    moved = judged = 0
    for name, facts in _generated():
        ctx = Context(facts=facts, manifests=SHIPPED)
        items: list[tuple[str, Any]] = [("feature", x) for x in SHIPPED.features]
        items += [("check", x) for x in SHIPPED.checks]
        with mock.patch.object(engine, "_swept_by_day", lambda *a, **k: None):
            before = [dict(evaluate_feature(x, ctx) if k == "feature" else evaluate_check(x, ctx)) for k, x in items]
        after = [dict(evaluate_feature(x, ctx) if k == "feature" else evaluate_check(x, ctx)) for k, x in items]
        for (kind, item), b, a in zip(items, before, after, strict=True):
            judged += 1
            where = f"{name}: {kind} {item['id']}"
            if a["status"] == b["status"]:
                continue
            moved += 1
            assert b["status"] == "unknown", where
            first = cast("list[dict[str, Any]]", a["reasons"])[0]
            if a["status"] == "ok":
                # a sweep over the releases a traceback's lines match (the facts' `candidates`, sgl-kernel's in
                # sglang-29646) may pass: every candidate is judged, none by the day alone
                assert first["inferred"] is True and first["result"] == "pass", where
                assert ".candidates (" in first["message"] and "ok with every one of them" in first["message"], where
                continue
            assert a["status"] in {"blocked", "failed", "warning"}, where
            assert first["inferred"] is True and first["result"] == "fail", where
            assert "inferred from the facts' date: sglang's version is not known" in first["message"], where
            assert f"up to {facts.get('collected_at')} (0.5.1-" in first["message"], where
    assert judged > 1000 and moved > 20, (judged, moved)


def test_a_saved_report_re_audited_is_swept_by_its_own_collection_day(tmp_path: Path, capsys: Any) -> None:
    """A saved report whose packages probe could not read SGLang's version (installed, no version), collected
    on 2026-04-29 (host.collected_at), audited again with `--facts`: its day bounds the sweep, and the JSON
    report carries the inferred reason."""
    from stackcheck.cli import main

    host = {"hostname": "box", "collected_at": "2026-04-29T10:00:00Z"}
    doc = {
        "schema_version": 1,
        "host": host,
        "facts": {
            "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0"}],
            "packages": {"sglang": {"installed": True, "version": None}},
        },
    }
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["audit", "--facts", str(path), "--format", "json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    fa4 = next(f for f in report["features"] if f["id"] == "attention-fa4")
    assert fa4["status"] == "blocked"
    first = fa4["reasons"][0]
    assert first["inferred"] is True and "up to 2026-04-29 (0.5.1-0.5.11" in first["message"]
    host["collected_at"] = "2026-11-30T10:00:00Z"  # after SGLang 0.5.23: a newer release may be there
    path.write_text(json.dumps(doc), encoding="utf-8")
    main(["audit", "--facts", str(path), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert next(f for f in report["features"] if f["id"] == "attention-fa4")["status"] != "ok"
    assert not any(r.get("rule") == "release-sweep" for f in report["features"] for r in f.get("reasons") or []), (
        "no sweep concludes after the newest known release"
    )
