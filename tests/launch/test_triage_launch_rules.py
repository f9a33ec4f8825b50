"""triage --facts judges the box's verdicts on no launch (a log and a facts file hold no command line): a check
or a cause that is ok there, but has rules that read the launch's options (`launch.*`: --enable-symm-mem, tp, the
model's quantization), is not judged for the launch that crashed. It is shown as unknown with those rules named,
never as ok (issue 16, igap22)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main
from stackcheck.launch.triage import (
    Cause,
    TriageResult,
    launch_rules,
    load_signatures,
    name_causes,
    plan_answer,
    triage_stream,
)
from stackcheck.render.triage import render_cause, render_fix

REPO = Path(__file__).resolve().parent.parent.parent
LOGS = REPO / "tests" / "data" / "logs"
FACTS = REPO / "examples" / "facts" / "h200-cu130.json"


def _triage_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["triage", *args, "--format", "json"]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def test_a_check_whose_symm_mem_rules_were_not_judged_is_not_ok(capsys: pytest.CaptureFixture[str]) -> None:
    """undefined_symbols.log names check nccl; on the H200 facts its wheel rule passes, and its allocator rules
    (`when`: launch.symm_mem exists) were left out because no launch was given: not ok for the launch that crashed."""
    doc = _triage_json(capsys, str(LOGS / "undefined_symbols.log"), "--facts", str(FACTS))
    fix = doc["fix"]
    assert fix["check"] == "nccl" and fix["status"] == "unknown"
    assert "symm-mem-allocator-link" in fix["not_judged"] and "one-nccl-wheel" not in fix["not_judged"]
    assert main(["triage", str(LOGS / "undefined_symbols.log"), "--facts", str(FACTS)]) == 0
    text = capsys.readouterr().out
    assert "check nccl on this box: unknown: ok on the facts given, but not judged for the launch" in text
    assert "on this box: ok" not in text


def test_launch_rules_are_those_that_read_a_launch_fact() -> None:
    from stackcheck.knowledge.loader import load

    manifests = load([])
    found = launch_rules(manifests)
    assert "symm-mem-allocator-link" in found["check nccl"] and "one-nccl-wheel" not in found["check nccl"]
    items = {f"feature {i['id']}": i for i in manifests.features} | {f"check {i['id']}": i for i in manifests.checks}
    for key, rules in found.items():
        by_id = {r.get("id"): r for r in items[key].get("rules") or []}
        for rule in rules:
            text = json.dumps([by_id[rule].get("when"), by_id[rule].get("require")])
            assert '"launch.' in text, (key, rule)
    # and none is missed: every rule whose condition or requirement names a launch fact is listed
    for key, item in items.items():
        for r in item.get("rules") or []:
            if '"fact": "launch.' in json.dumps([r.get("when"), r.get("require")]):
                assert r.get("id") in found.get(key, ()), (key, r.get("id"))


def _check(ident: str, status: str) -> dict[str, Any]:
    result = {"ok": "pass", "failed": "fail", "unknown": "unknown"}.get(status, "pass")
    return {"id": ident, "status": status, "reasons": [{"rule": "box-rule", "result": result, "message": "m"}]}


@pytest.mark.parametrize(("status", "shown"), [("ok", "unknown"), ("failed", "failed"), ("unknown", "unknown"),
                                                ("skipped", "skipped")])  # fmt: skip
def test_only_an_ok_check_becomes_unknown(status: str, shown: str) -> None:
    launch_only = {"check c": ("launch-rule",)}
    out = plan_answer(None, "c", None, {}, [_check("c", status)], launch_only)
    assert out is not None and out["status"] == shown
    assert ("not_judged" in out) == (status == "ok")
    # without launch rules, the verdict is shown as it is
    plain = plan_answer(None, "c", None, {}, [_check("c", status)], {"check other": ("launch-rule",)})
    assert plain is not None and plain["status"] == status
    if status == "ok":
        assert render_fix(out, None, "c").startswith("check c on this box: unknown: ok on the facts given, but not")


# a generic error of this test: its causes are given below, not read from signatures.json
_LOG = "[2026-05-04 11:00:09 TP0] RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


def _result() -> TriageResult:
    return triage_stream(io.BytesIO(_LOG.encode()), "<t>", load_signatures())


def test_a_cause_that_passes_only_on_no_launch_is_not_ruled_out() -> None:
    import dataclasses

    result = _result()
    assert result.root_cause is not None and result.root_cause.signature is not None
    causes = (
        Cause(feature=None, check="failing", source="s"),
        Cause(feature=None, check="by-launch", source="s"),
        Cause(feature=None, check="by-launch", rules=("box-rule",), source="s"),
        Cause(feature=None, check="plain", source="s"),
    )
    sig = dataclasses.replace(result.root_cause.signature, caused_by=causes)
    rc = dataclasses.replace(result.root_cause, signature=sig)
    result = dataclasses.replace(result, root_cause=rc)
    report = {"checks": [_check("failing", "failed"), _check("by-launch", "ok"), _check("plain", "ok")]}
    launch_only = {"check by-launch": ("launch-rule",)}
    cause = name_causes(result, report, launch_only)
    assert cause is not None
    assert cause["not_ruled_out"] == ["check by-launch"]  # its ok is on no launch
    # a cause narrowed to the box's own rules is judged on the box: ruled out; so is a check with no launch rule
    assert cause["ruled_out"] == ["check by-launch", "check plain"]
    assert cause["launch_rules"] == {"check by-launch": ["launch-rule"]}
    text = render_cause(cause)
    assert "check by-launch: rule(s) launch-rule read the launch's options" in text
    # before: the same cause was ruled out ("they pass on these facts")
    assert name_causes(result, report)["ruled_out"] == ["check by-launch", "check by-launch", "check plain"]  # type: ignore[index]
