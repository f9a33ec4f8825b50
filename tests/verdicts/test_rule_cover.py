"""Issue 16, the truth of a check's reasons when a release sweep concludes: Triton's check triton-ptxas on SM 12.x.

Read in the wheels (pip download --no-deps, 2026-12-03): Triton 3.0.0-3.2.0's libtriton.so holds no AsyncTMAGatherOp
and no `tile::gather4` PTX at all, 3.3.0-3.5.1 lower it to `.tile::gather4.shared::cluster` (what ptxas rejects on
sm_120a), 3.6.0 to `.shared::cta`. So rule sm12x-tma-gather applies from 3.3.0 on; 3.0.0-3.2.0 fail SM 12.x only
because their bundled ptxas (CUDA 12.4) does not know sm_120a (rule ptxas-knows-gpu).

With Triton's version not known, the sweep over the releases a box can hold concludes when every release fails
SOME rule, each naming its own releases; a rule with a narrower scope (sm12x-tma-gather: MXFP4 MoE launches)
counts only for launches in that scope, so for other launches the gate finds the check not concluded (unknown,
never ok). Several of these assertions fail on main 5466f23, where sm12x-tma-gather failed every release < 3.6.0."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from stackcheck.cli import main
from stackcheck.facts.model import facts_from_document
from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.rule_cover import LATER, cover, level, rescope, runs

if TYPE_CHECKING:
    from stackcheck.verdicts.types import CheckVerdict, Reason

ROOT = Path(__file__).resolve().parent.parent.parent
REAL = ROOT / "tests" / "realworld"
MANIFESTS = load([], env={})
CHECK = next(c for c in MANIFESTS.checks if c["id"] == "triton-ptxas")
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]
SM120_CASES = ("sglang-8879-gptoss-tma-gather4-sm120a", "vllm-27542-tma-gather4-rtx6000")


def _box(cc: str, triton: dict[str, Any], day: str | None = None) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "gpus": [{"index": 0, "name": "GPU", "compute_capability": cc}],
        "packages": {"triton": {"installed": True, **triton}},
    }
    if day is not None:
        facts["collected_at"] = day
    return facts


def _judge(facts: dict[str, Any]) -> CheckVerdict:
    return evaluate_check(CHECK, Context(facts=cast("Any", copy.deepcopy(facts)), manifests=MANIFESTS))


def _real(case: str) -> CheckVerdict:
    path = REAL / case / "facts.json"
    facts = facts_from_document(json.loads(path.read_text(encoding="utf-8")), str(path))
    return evaluate_check(CHECK, Context(facts=facts, manifests=MANIFESTS))


def _fails(v: CheckVerdict) -> dict[str, Reason]:
    return {str(r.get("rule")): r for r in v["reasons"] if r.get("result") == "fail"}


@pytest.mark.parametrize("version", ["3.0.0", "3.1.0", "3.2.0"])
def test_triton_before_3_3_fails_sm120_for_its_ptxas_only(version: str) -> None:
    """No gather4 in these wheels: the reason is the bundled ptxas (main also said 'Triton X emits TMA gather4')."""
    v = _judge(_box("12.0", {"version": version}))
    assert v["status"] == "failed"
    assert list(_fails(v)) == ["ptxas-knows-gpu"]
    assert "sm_120a" in str(_fails(v)["ptxas-knows-gpu"]["message"])


@pytest.mark.parametrize("version", ["3.3.0", "3.3.1", "3.4.0", "3.5.0", "3.5.1"])
def test_triton_3_3_to_3_5_fails_sm120_for_gather4_only(version: str) -> None:
    v = _judge(_box("12.0", {"version": version}))
    assert list(_fails(v)) == ["sm12x-tma-gather"]
    assert f"Triton {version} emits TMA gather4" in str(_fails(v)["sm12x-tma-gather"]["message"])
    assert _judge(_box("12.0", {"version": "3.6.0"}))["status"] == "ok"


def test_the_rule_names_the_wheels_it_was_read_in() -> None:
    rule = next(r for r in CHECK["rules"] if r["id"] == "sm12x-tma-gather")
    assert {"fact": "triton.version", "op": "version", "value": ">=3.3.0"} in rule["when"]["all"]
    titles = " ".join(str(s.get("title")) for s in rule["source"] if isinstance(s, dict))
    assert "libtriton.so" in titles and "3.2.0" in titles and "3.3.0" in titles


@pytest.mark.parametrize("case", SM120_CASES)
def test_the_realworld_gather4_cases_stay_caught_each_release_with_its_reason(case: str) -> None:
    """Triton's version is not known, the day admits 3.0.0 up to 3.4.0 (sglang #8879) or 3.5.1 (vLLM #27542):
    failed, 3.0.0-3.2.0 for their ptxas, 3.3.0 on for gather4, and the gather4 reason says its scope."""
    v = _real(case)
    assert v["status"] == "failed"
    fails = _fails(v)
    assert set(fails) == {"ptxas-knows-gpu", "sm12x-tma-gather"}
    ptxas, gather = str(fails["ptxas-knows-gpu"]["message"]), str(fails["sm12x-tma-gather"]["message"])
    # Triton 3.2.0 asks ptxas for sm_120 (the 'a' only for SM 9.0 before 3.3.0; read in its compiler.py)
    assert "this rule fails with 3.0.0-3.2.0; with 3.2.0:" in ptxas and "'sm_120' is not defined" in ptxas
    newest = "3.4.0" if "8879" in case else "3.5.1"
    assert f"this rule fails with 3.3.0-{newest}; with {newest}: Triton {newest} emits TMA gather4" in gather
    assert "counts only for launches that use mxfp4-moe" in gather
    assert f"for other launches no other rule of this check fails with 3.3.0-{newest}" in gather
    assert "gather4" not in ptxas.split("Triton runs the ptxas", maxsplit=1)[0]
    assert all(r["effect"] == "crash" and r.get("source") for r in fails.values())


@pytest.mark.parametrize("case", SM120_CASES)
def test_the_gate_counts_the_gather4_rule_only_for_an_mxfp4_launch(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An MXFP4 launch is refused for triton-ptxas (every release fails a rule it needs); any other launch finds
    the check unknown: 3.3.0 on pass every rule it needs. Never ok, and --allow-unknown lets only that through."""
    facts = str(REAL / case / "facts.json")

    def triton(extra: list[str], *opts: str) -> dict[str, Any]:
        main(["gate", "--dry-run", "--format", "json", "--facts", facts, *opts, "--", *LAUNCH, *extra])
        out = json.loads(capsys.readouterr().out)
        return next(x for x in out["features"] if x["feature"] == "triton-ptxas")

    mxfp4 = triton(["--quantization", "mxfp4"])
    assert (mxfp4["status"], mxfp4["effect"]) == ("blocked", "crash")
    assert triton([])["status"] == "unknown"
    assert triton(["--quantization", "mxfp4"], "--allow-unknown")["status"] == "blocked"


def test_scoped_verdict_works_the_sweep_out_again() -> None:
    v = dict(_real(SM120_CASES[0]))
    both = gate.scoped_verdict(v, {"ptxas-knows-gpu": "launch", "sm12x-tma-gather": "launch"})
    assert both["status"] == "failed"
    plain = gate.scoped_verdict(v, {"ptxas-knows-gpu": "launch", "sm12x-tma-gather": None})
    assert plain["status"] == "unknown"
    swept = [r for r in plain["reasons"] if "sweep" in r]
    assert swept and all(r["result"] == "unknown" for r in swept)
    assert "not concluded for this launch: with 3.3.0-3.4.0 no rule" in swept[0]["message"]


def test_a_release_not_judged_keeps_the_check_unknown() -> None:
    """Fail closed: candidates the facts narrow Triton to, one of them not known to the manifests (or ok)."""
    assert _judge(_box("12.0", {"candidates": ["3.2.0", "3.4.0"]}))["status"] == "failed"
    assert _judge(_box("12.0", {"candidates": ["3.2.0", "3.2.1"]}))["status"] == "unknown", "3.2.1 not read"
    assert _judge(_box("12.0", {"candidates": ["3.4.0", "3.6.0"]}))["status"] == "unknown"
    assert _judge(_box("12.0", {}))["status"] == "unknown", "no day: 3.6.0 and later can be installed"


def test_a_rule_failing_with_every_release_keeps_its_old_reason() -> None:
    """GB10 (12.1) on 2025-10-01: every release's ptxas lacks sm_121a, one rule for all (no `sweep` field, the
    text as before); gather4 fails 3.3.0 on and says so."""
    v = _judge(_box("12.1", {}, "2025-10-01"))
    fails = _fails(v)
    assert "sweep" not in fails["ptxas-knows-gpu"] or len(fails["ptxas-knows-gpu"]["sweep"]["fails_with"]) == len(
        fails["ptxas-knows-gpu"]["sweep"]["releases"]
    )
    assert "each of them by some rule" not in str(fails["ptxas-knows-gpu"]["message"])
    assert "this rule fails with 3.3.0-3.4.0" in str(fails["sm12x-tma-gather"]["message"])
    plain = gate.scoped_verdict(dict(v), {"ptxas-knows-gpu": "launch", "sm12x-tma-gather": None})
    assert plain["status"] == "failed", "ptxas-knows-gpu alone fails every release"


def _fail(rule: str, effect: str = "crash") -> Reason:
    return {"rule": rule, "result": "fail", "effect": effect, "message": rule}


def test_cover_unbounded_needs_a_named_rule_for_later_releases() -> None:
    releases = ["1", "2"]
    fails = [[_fail("a")], [_fail("b")]]
    assert cover(releases, fails, set(), bounded=True) is not None
    assert cover(releases, fails, set(), bounded=False) is None, "a later release may pass b"
    got = cover(releases, fails, {"b"}, bounded=False)
    assert got is not None and got[0] == ["1", "2", LATER] and got[1]["b"] == {"2": "crash", LATER: "crash"}
    assert cover(releases, [[_fail("a")], []], set(), bounded=True) is None, "release 2 fails nothing"


def test_effect_is_what_holds_whatever_the_release() -> None:
    slots = ["1", "2", "3"]
    assert level(slots, {"a": {"1": "crash", "2": "crash"}, "b": {"3": "degraded"}}) == "degraded"
    assert level(slots, {"a": {"1": "crash", "2": "crash", "3": "crash"}, "b": {"3": "degraded"}}) == "crash"
    assert runs(["1", "3"], slots) == "1, 3" and runs(["1", "2"], slots) == "1-2"
    sweep = {"releases": slots}
    a: Reason = {**_fail("a"), "sweep": {**sweep, "fails_with": {"1": "crash", "2": "crash"}}}
    b: Reason = {**_fail("b", "degraded"), "sweep": {**sweep, "fails_with": {"3": "degraded"}}}
    out = rescope([a, b])
    assert [r["effect"] for r in out] == ["degraded", "degraded"] and all(r["result"] == "fail" for r in out)
    assert [r["result"] for r in rescope([a])] == ["unknown"]


def test_rescope_ignores_a_sweep_it_did_not_write() -> None:
    odd: list[Reason] = [{**_fail("a"), "sweep": {"releases": "1", "fails_with": []}}]
    assert rescope(odd) == odd
