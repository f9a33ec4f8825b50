"""irev63: SGLang 0.5.24 and later (0.5.24rc0, 0.5.24.dev0 included) beside a transformers older than 5.4.0.

The two transformers floors of SGLang's start judge the releases read (>=0.5.13,<0.5.24 and >=0.5.18,<0.5.24). An
SGLang past them met neither rule, so check sglang-start-imports said ok for 0.5.24 under transformers 4.57.1 (a
pre-release of 0.5.24 too, which PEP 440's <0.5.24 leaves out, although the rules' notes called it unknown), where
the newest code read (0.5.23) crashes at import. Now unknown: not read, not passed. Boxes are written by hand; the
check and the gate are the real ones."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.cli import main
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

if TYPE_CHECKING:
    from pathlib import Path

    from stackcheck.facts.model import Facts

MANIFESTS = load_manifests([])
RULE = "transformers-floor-not-read"


def _packages(sglang: str, transformers: str) -> dict[str, Any]:
    return {
        "sglang": {"installed": True, "version": sglang},
        "transformers": {"installed": True, "version": transformers},
        "pybase64": {"installed": True, "version": "1.4.0"},
        # (igap33's kernels-needs-version-transformers reads transformers 4.56.0-5.12.x beside the kernels package:
        # not installed here, so the check's status is the floors' alone)
        "kernels": {"installed": False},
        # (igap46's transformers-huggingface-hub-range-* read huggingface-hub where the list names it: a hand-written
        # list that does not is unknown there, so it is named, not installed, to leave the floors' status alone)
        "huggingface-hub": {"installed": False},
        # (ifc68's bf16-gemm-cutedsl-dsl-installed reads nvidia-cutlass-dsl from SGLang 0.5.17 on a major-10 GPU:
        # installed here, so the check's status is the floors' alone)
        "nvidia-cutlass-dsl": {"installed": True, "version": "4.8.0"},
    }


def _check(sglang: str, transformers: str) -> dict[str, Any]:
    check = next(c for c in MANIFESTS.checks if c["id"] == "sglang-start-imports")
    facts = {"packages": _packages(sglang, transformers), "packages_complete": False}
    return dict(evaluate_check(check, Context(facts=cast("Facts", facts), manifests=MANIFESTS)))


@pytest.mark.parametrize("sglang", ["0.5.24", "0.5.24rc0", "0.5.24.dev0", "0.5.25", "0.6.0"])
@pytest.mark.parametrize("transformers", ["4.57.1", "4.57.1+local", "5.0.0", "5.3.0", "5.4.0.dev0", "5.4.0rc1"])
def test_an_sglang_not_read_under_a_transformers_below_the_newest_floor_is_not_ok(
    sglang: str, transformers: str
) -> None:
    verdict = _check(sglang, transformers)
    assert verdict["status"] == "unknown", verdict
    reason = next(r for r in verdict["reasons"] if r.get("rule") == RULE)
    assert reason["result"] == "unknown"


@pytest.mark.parametrize(
    ("sglang", "transformers"), [("0.5.24", "5.4.0"), ("0.5.24rc0", "5.19.0"), ("0.5.12", "4.57.1")]
)
def test_a_transformers_at_the_floor_or_a_release_read_is_left_to_the_read_rules(
    sglang: str, transformers: str
) -> None:
    verdict = _check(sglang, transformers)
    assert verdict["status"] == "ok", verdict
    assert not any(r.get("rule") == RULE and r.get("result") != "pass" for r in verdict["reasons"])


@pytest.mark.parametrize(("sglang", "result"), [("0.5.23", "fail"), ("0.5.23+local", "fail"), ("0.5.23.post1", "fail")])
def test_the_releases_read_keep_their_failing_floor(sglang: str, result: str) -> None:
    rules = {str(r.get("rule")): r.get("result") for r in _check(sglang, "5.3.0")["reasons"]}
    assert rules.get("transformers-image-processing-backends") == result and RULE not in rules, rules


def test_the_gate_names_the_unread_release_in_its_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = {"schema_version": 1, "facts": {"packages": _packages("0.5.24", "4.57.1")}}
    path = tmp_path / "box.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    capsys.readouterr()
    argv = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--"]
    code = main([*argv, "python", "-m", "sglang.launch_server", "--model-path", "m"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["decision"] == "refuse", out
    found = [r for r in out["reasons"] if r.get("feature") == "sglang-start-imports"]
    rules = {str(x.get("rule")): str(x.get("result")) for r in found for x in r.get("reasons") or []}
    assert rules.get(RULE) == "unknown", out["reasons"]
