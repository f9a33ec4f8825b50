"""Verdicts that hold for every known release (`quantify` in features.json / checks.json).

A report says a package is installed but not which release (a hand-written facts file, a reporter who gave no
version). An item that opts in by data judges itself again with that package at every release components.json
knows: blocked (a feature) or failed (a check) with every one, and the newest failing a rule the data argues a
later release fails too, makes it blocked/failed; anything else leaves it unknown. Never ok.

Tested on generated boxes: every facts file of the repository with each package's version removed, and SGLang
without a version on every architecture the manifests know. Each verdict the sweep changes was unknown without it,
is blocked/failed with it, names the releases considered, and is confirmed release by release."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from unittest import mock

import pytest

import stackcheck.verdicts.engine as verdicts
from stackcheck.assembly.pipeline import load_manifests
from stackcheck.facts.versions import parse_version
from stackcheck.knowledge.validate import validate_documents
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check, evaluate_feature

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

REPO = Path(__file__).resolve().parent.parent.parent
MANIFESTS = load_manifests([])
BAD = {"blocked", "failed", "warning"}


def _item(kind: str, item_id: str) -> Any:
    items: list[Any] = MANIFESTS.features if kind == "feature" else MANIFESTS.checks
    return next(i for i in items if i["id"] == item_id)


def _judge(kind: str, item: Any, facts: Facts, launch: dict[str, Any] | None = None) -> dict[str, Any]:
    ctx = Context(facts=facts, manifests=MANIFESTS, launch=launch)
    return dict(evaluate_feature(item, ctx) if kind == "feature" else evaluate_check(item, ctx))


def _facts(packages: dict[str, Any], cc: str = "12.0", count: int = 1) -> Facts:
    gpus = [{"index": i, "name": "GPU", "compute_capability": cc} for i in range(count)]
    return cast("Facts", {"gpus": gpus, "packages": packages})


def _repo_facts() -> list[tuple[str, Facts]]:
    out: list[tuple[str, Facts]] = []
    for path in [
        *sorted((REPO / "tests" / "realworld").glob("*/facts.json")),
        *sorted((REPO / "tests" / "cases").glob("*/facts.json")),
        *sorted((REPO / "tests" / "plan_cases").glob("*/facts.json")),
    ]:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and isinstance(doc.get("facts"), dict):
            out.append((str(path.relative_to(REPO)), cast("Facts", doc["facts"])))
    return out


def _inputs() -> list[tuple[str, Facts]]:
    """Every repository facts file with each quantified package's version removed (installed, release not
    known), and SGLang without a version on every architecture the manifests know."""
    quantified = sorted({str(i["quantify"]["package"]) for i in [*MANIFESTS.features, *MANIFESTS.checks]
                         if isinstance(i.get("quantify"), dict)})  # fmt: skip
    out: list[tuple[str, Facts]] = []
    for name, facts in _repo_facts():
        packages = facts.get("packages")
        if not isinstance(packages, dict):
            continue
        for pkg in quantified:
            if isinstance(packages.get(pkg), dict) and packages[pkg].get("installed") is not False:
                f: dict[str, Any] = copy.deepcopy(dict(facts))
                f["packages"][pkg] = {"installed": True}
                out.append((f"{name} -{pkg}", cast("Facts", f)))
    for cc in sorted({str(a["compute_capability"]) for a in MANIFESTS.architectures}):
        out.append((f"sglang on {cc}", _facts({"sglang": {"installed": True}}, cc)))
    return out


@functools.cache
def _changes() -> tuple[int, list[tuple[str, str, str, dict[str, Any], dict[str, Any], Facts]]]:
    """(items judged, [(input, kind, id, without the sweep, with it, facts)]) for every opted-in item."""
    items: list[tuple[str, Any]] = [("feature", f) for f in MANIFESTS.features if "quantify" in f]
    items += [("check", c) for c in MANIFESTS.checks if "quantify" in c]
    judged = 0
    changed = []
    for name, facts in _inputs():
        for kind, item in items:
            stripped = {k: v for k, v in item.items() if k != "quantify"}
            # the item's own sweep alone: the sweep by the day for every item is tests/verdicts/test_release_sweep
            with mock.patch.object(verdicts, "_swept_by_day", lambda *a, **k: None):
                before = _judge(kind, stripped, facts)
                after = _judge(kind, item, facts)
            judged += 1
            if (before["status"], before.get("reasons")) != (after["status"], after.get("reasons")):
                changed.append((name, kind, str(item["id"]), before, after, facts))
    return judged, changed


def _swept(pkg: str, facts: Facts) -> list[str]:
    """The releases a box described by `facts` can hold, computed here from the data: every known release less
    those uploaded after facts.collected_at (one without `uploaded` always counts), and for a package run from
    git checkouts (`dev_builds`) the first release after the day; none when no release is as old as the day. Where
    the facts narrow the package to a few releases (`packages.NAME.candidates`), exactly those."""
    candidates = dict((facts.get("packages") or {}).get(pkg) or {}).get("candidates")
    if isinstance(candidates, list) and candidates:
        return sorted({str(v) for v in candidates}, key=lambda v: cast(Any, parse_version(v)))
    day = str(facts.get("collected_at") or "9999-12-31")[:10]
    kept = [r for r in MANIFESTS.releases(pkg) if str(r.get("uploaded") or "0000-00-00") <= day]
    later = [r for r in MANIFESTS.releases(pkg) if r not in kept]
    if later and "dev_builds" in MANIFESTS.package(pkg):
        kept.append(min(later, key=lambda r: str(r["uploaded"])))  # stands for a development build of the day
    if not [r for r in kept if str(r.get("uploaded") or "0000-00-00") <= day]:
        return []  # older than every known release: nothing is swept
    return [str(r["version"]) for r in sorted(kept, key=lambda r: cast(Any, parse_version(str(r["version"]))))]


def test_data_opts_in_and_says_why() -> None:
    opted = [i for i in [*MANIFESTS.features, *MANIFESTS.checks] if "quantify" in i]
    assert len(opted) >= 4
    for item in opted:
        q = item["quantify"]
        own = {r["id"] for r in item["rules"]}
        assert set(q["rules"]) <= own, item["id"]
        assert len(q["why"]) > 40, item["id"]
        # the package is one the item needs, or the item is a check without `needs` (kernel-arch: it judges each
        # kernel package installed, sgl-kernel among them, on every box), or a feature reaches it as a hop of its
        # path (attention-fa4: flash-attn-4, from SGLang 0.5.10-0.5.15 only)
        runs_everywhere = item in MANIFESTS.checks and not item["needs"]
        hops = cast(list[dict[str, Any]], item.get("path") or [])
        on_path = any(h.get("package") == q["package"] for h in hops)
        assert runs_everywhere or on_path or any(q["package"] in n.split("|") for n in item["needs"]), item["id"]


def test_a_quantified_verdict_is_only_ever_blocked_and_names_the_releases() -> None:
    judged, changed = _changes()
    assert judged >= 200
    assert len(changed) >= 30, "the sweep changed too few verdicts: the test would pass vacuously"
    for name, kind, item_id, before, after, facts in changed:
        where = f"{name}: {kind} {item_id}"
        assert before["status"] == "unknown", where
        assert after["status"] in BAD, where
        assert after["status"] != "ok", where
        first = after["reasons"][0]
        pkg = _item(kind, item_id)["quantify"]["package"]
        releases = _swept(pkg, facts)
        assert first["result"] == "fail", where
        assert f"{pkg}'s version is not known" in first["message"], where
        assert first["source"], where
        if not releases:
            # the facts' day precedes every known release: nothing is swept, `quantify.earlier` concluded alone
            assert _item(kind, item_id)["quantify"].get("earlier"), where
            assert "no release of it the manifests know was uploaded by" in first["message"], where
            assert "Earlier releases: " in first["message"], where
            continue
        span = releases[0] if len(releases) == 1 else f"{releases[0]}-{releases[-1]}"  # one release: no range
        assert f"({span};" in first["message"], where
        assert "Later releases: " in first["message"] or kind == "check", where
        assert first["source"], where
        # confirmed release by release: every release swept is bad on its own
        for version in releases:
            f: dict[str, Any] = copy.deepcopy(dict(facts))
            f["packages"][pkg] = {**f["packages"][pkg], "version": version}
            assert _judge(kind, _item(kind, item_id), cast("Facts", f))["status"] in BAD, f"{where} with {version}"


def test_every_opted_in_feature_is_exercised() -> None:
    _, changed = _changes()
    seen = {item_id for _, _, item_id, *_ in changed}
    assert {"attention-dsa-trtllm", "attention-trtllm-mla", "attention-fa3", "deepgemm"} <= seen


def test_the_newest_release_must_fail_a_named_rule() -> None:
    """trtllm_mla on an RTX 4090 with FlashInfer's release not known: every SGLang release refuses at its
    admission (majors 10/11/12), but a later release may admit more majors, and only the trtllm-gen rule is
    quantified (unknown here without FlashInfer's release): unknown, not blocked."""
    mla = _item("feature", "attention-trtllm-mla")
    assert _judge("feature", mla, _facts({"sglang": {"installed": True}}, "8.9"))["status"] == "unknown"
    # with FlashInfer stated the newest release fails the trtllm-gen prefill rule: blocked, naming the runner
    packages = {"sglang": {"installed": True}, "flashinfer-python": {"installed": True, "version": "0.6.18"}}
    assert _judge("feature", mla, _facts(packages, "8.9"))["status"] == "blocked"
    v = _judge("feature", mla, _facts(packages, "12.0"))
    assert v["status"] == "blocked"
    assert "TllmGenFmhaRunner" in v["reasons"][0]["message"]


@pytest.mark.parametrize(
    ("item_id", "cc"),
    [("attention-trtllm-mha", "12.0"), ("deepgemm", "12.0"), ("attention-dsa-trtllm", "10.0")],
)
def test_a_release_that_is_not_blocked_keeps_it_unknown(item_id: str, cc: str) -> None:
    """trtllm_mha on SM120 (SGLang 0.5.19+ admit it), DeepGEMM on SM120 (0.5.20+ use an SM120 deep_gemm), the
    DSA trtllm path on a B200 (it runs there): some known release is not blocked, so the verdict stays unknown."""
    v = _judge("feature", _item("feature", item_id), _facts({"sglang": {"installed": True}}, cc))
    assert v["status"] == "unknown"
    assert all(r.get("rule") != "every-release" for r in v["reasons"])


def test_mildest_effect_holds_whatever_the_release() -> None:
    """torch-symm-mem on SM120 at TP 8 on PCIe: KeyError (crash) up to 0.5.13, off (disabled) after, no flag
    before 0.5.3 (crash). The data does not quantify it (a later release may add major 12 to the size table),
    so it is unknown; quantified in this test, 'disabled' is what holds for every release."""
    feature = _item("feature", "torch-symm-mem")
    facts = cast("Facts", {
        "gpus": [{"index": i, "name": "GPU", "compute_capability": "12.0"} for i in range(8)],
        "topology": {"interconnect": "pcie-switch", "nvswitch": False, "p2p": "all", "gpu_count": 8},
        "packages": {"sglang": {"installed": True}, "torch": {"installed": True}},
    })  # fmt: skip
    assert _judge("feature", feature, facts, {"tp": 8})["status"] == "unknown"
    opted = {**feature, "quantify": {"package": "sglang", "rules": ["size-table-get"], "why": "test only"}}
    v = _judge("feature", opted, facts, {"tp": 8})
    assert (v["status"], v["effect"]) == ("blocked", "disabled")


def _test_check(rule_value: str) -> dict[str, Any]:
    return {
        "id": "test-quantified",
        "title": "a check made by this test",
        "needs": ["sglang"],
        "rules": [
            {
                "id": "newer-than",
                "require": {"fact": "pkg.sglang.version", "op": "version", "value": rule_value},
                "effect": "crash",
                "message": "needs SGLang {required}, this is {observed}",
                "source": "TEST",
            }
        ],
        "quantify": {"package": "sglang", "rules": ["newer-than"], "why": "test only"},
    }


def test_a_check_fails_only_when_every_release_fails() -> None:
    facts = _facts({"sglang": {"installed": True}})
    failed = _judge("check", _test_check(">=99"), facts)
    assert failed["status"] == "failed"
    assert failed["reasons"][0]["rule"] == "newer-than", "a check's reason keeps its rule id, for the gate's scopes"
    assert "every release of it the manifests know" in failed["reasons"][0]["message"]
    assert _judge("check", _test_check(">=0.5.10"), facts)["status"] == "unknown", "0.5.10+ pass"
    without = {k: v for k, v in _test_check(">=99").items() if k != "quantify"}
    assert _judge("check", without, facts)["status"] == "unknown", "no opt-in, no sweep"
    # a stated version is judged as stated: nothing to sweep
    assert _judge("check", _test_check(">=0.5.10"), _facts({"sglang": {"version": "0.5.9"}}))["status"] == "failed"
    assert _judge("check", _test_check(">=0.5.9"), _facts({"sglang": {"version": "0.5.9"}}))["status"] == "ok"


def test_validation_names_a_rule_that_is_not_there() -> None:
    doc = copy.deepcopy(json.loads((REPO / "manifests" / "features.json").read_text(encoding="utf-8")))
    feature = next(f for f in doc["features"] if f["id"] == "attention-fa3")
    feature["quantify"]["rules"] = ["no-such-rule"]
    problems = validate_documents({"features.json": ("features.json", doc)}, partial=True)
    i = doc["features"].index(feature)
    assert f"features.json: $.features[{i}].quantify.rules[0]: no rule 'no-such-rule' in this feature" in problems
    del feature["quantify"]["why"]
    problems = validate_documents({"features.json": ("features.json", doc)}, partial=True)
    assert any("quantify" in p and "why" in p for p in problems), problems


def test_the_sweep_never_runs_without_the_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = verdicts._blocked_in_every_release

    def spy(item: Any, *a: Any, **k: Any) -> Any:
        calls.append(str(item.get("id")))
        return real(item, *a, **k)

    monkeypatch.setattr(verdicts, "_blocked_in_every_release", spy)
    facts = _facts({"sglang": {"installed": True}}, "8.9")
    for f in MANIFESTS.features:
        stripped = {k: v for k, v in f.items() if k != "quantify"}
        v = _judge("feature", stripped, facts)
        assert all(r.get("rule") != "every-release" for r in v.get("reasons") or [])
    assert calls, "the sweep was asked (and declined: no quantify)"


def test_the_gate_refuses_a_quantified_block_as_any_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The gate reads the same verdicts: the DSA trtllm backend on SM120 with SGLang's release not known is
    refused as blocked (crash), naming every known release; trtllm_mha there stays unknown (0.5.19+ admit it)."""
    from stackcheck.cli import main

    doc = {"schema_version": 1, "facts": {
        "gpus": [{"index": 0, "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "compute_capability": "12.0"}],
        "packages": {"sglang": {"installed": True}, "flashinfer-python": {"installed": True, "version": "0.6.18"}},
    }}  # fmt: skip
    path = tmp_path / "box.json"
    path.write_text(json.dumps(doc), encoding="utf-8")

    def gate(*flags: str) -> tuple[int, dict[str, Any]]:
        argv = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--"]
        code = main([*argv, "python", "-m", "sglang.launch_server", "--model-path", "m", *flags])
        return code, json.loads(capsys.readouterr().out)

    code, out = gate("--dsa-decode-backend", "trtllm")
    assert code == 1 and out["decision"] == "refuse"
    dsa = next(r for r in out["reasons"] if r.get("feature") == "attention-dsa-trtllm")
    assert (dsa["status"], dsa["effect"]) == ("blocked", "crash")
    assert "every release of it the manifests know" in json.dumps(dsa)
    _, out = gate("--attention-backend", "trtllm_mha")
    mha = next(r for r in out["reasons"] if r.get("feature") == "attention-trtllm-mha")
    assert mha["status"] == "unknown"
