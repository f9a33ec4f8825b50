"""igap30: the installed transformers (and torchao) against the SGLang release (issue 16, class "other": a missing or
mismatched pinned package).

SGLang does not test its transformers pin at start (0.5.9 configs/model_config.py:997-1029 only refuses a GLM-4.6V
model under transformers 4.x; 0.5.10 hf_transformers_utils.py:746 compares with 5.3.0 only in SGLang's CI), so a pin
that is not met is check sglang-pins' warning (components.json `requires`, read from each wheel's METADATA). What
crashes is a transformers without a name SGLang's start imports at module level (check sglang-start-imports: 0.5.2+
GptOssConfig, 0.5.10+ Lfm2VlConfig, 0.5.18/0.5.22/0.5.23 configuration_utils.PreTrainedConfig), or none at all. On the
parent every pair below passed: no rule read transformers against SGLang. Boxes are written by hand."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

MANIFESTS = load_manifests([])


def _judge(check_id: str, packages: dict[str, Any]) -> dict[str, Any]:
    check = next(c for c in MANIFESTS.checks if c["id"] == check_id)
    facts = {"packages": packages, "packages_complete": False}
    return dict(evaluate_check(check, Context(facts=cast("Facts", facts), manifests=MANIFESTS)))


def _box(sglang: str, transformers: str | None, torchao: str | None = None) -> dict[str, Any]:
    pkgs: dict[str, Any] = {"sglang": {"installed": True, "version": sglang}}
    tf: dict[str, Any] = {"installed": True, "version": transformers} if transformers else {"installed": False}
    pkgs["transformers"] = tf
    if torchao is not None:
        pkgs["torchao"] = {"installed": True, "version": torchao}
    return pkgs


def _reason(verdict: dict[str, Any], rule: str) -> dict[str, Any] | None:
    return next((r for r in verdict["reasons"] if r.get("rule") == rule), None)


@pytest.mark.parametrize(
    ("sglang", "transformers", "rule"),
    [
        ("0.5.2", "4.54.1", "transformers-gptoss-config"),
        ("0.5.9", "4.53.0", "transformers-gptoss-config"),
        ("0.5.10", "4.56.2", "transformers-lfm2-vl-config"),
        ("0.5.14", "4.56.1", "transformers-lfm2-vl-config"),
        ("0.5.23", "4.57.1", "transformers-pretrained-config-5"),
        ("0.5.18", "4.57.6", "transformers-pretrained-config-5"),
        ("0.5.13", "4.57.1", "transformers-pretrained-config-5"),
    ],
)
def test_a_transformers_without_a_name_the_start_imports_is_a_crash(sglang: str, transformers: str, rule: str) -> None:
    verdict = _judge("sglang-start-imports", _box(sglang, transformers))
    failing = _reason(verdict, rule)
    assert failing is not None and failing["result"] == "fail", verdict["reasons"]
    assert failing["effect"] == "crash" and verdict["status"] == "failed"
    assert failing.get("observed") == transformers and failing.get("required"), failing
    assert failing["source"] and "cannot import name" in failing["message"]


@pytest.mark.parametrize(
    ("sglang", "transformers"),
    [
        ("0.5.1", "4.51.1"),  # 0.5.1 imports no GptOssConfig
        ("0.5.2", "4.55.0"),
        ("0.5.9", "5.19.0"),  # a transformers 5.x under 0.5.9: nothing its start imports is missing (a pin warning)
        ("0.5.4", "5.0.0"),
        ("0.5.10", "4.57.0"),
        ("0.5.11", "4.57.1"),
        ("0.5.12", "4.57.1"),  # read: no cohere2_moe.py yet
        ("0.5.17", "5.0.0"),
        ("0.5.23", "5.4.0"),  # (5.0.0-5.3.0 lack image_processing_backends: test_irev62_transformers_floor.py)
    ],
)
def test_pairs_whose_start_finds_every_name_pass(sglang: str, transformers: str) -> None:
    verdict = _judge("sglang-start-imports", _box(sglang, transformers))
    fails = [r["rule"] for r in verdict["reasons"] if r.get("result") == "fail"]
    assert fails == [], fails


def test_transformers_not_installed_is_a_crash() -> None:
    failing = _reason(_judge("sglang-start-imports", _box("0.5.9", None)), "transformers-installed")
    assert failing is not None and failing["result"] == "fail" and failing["effect"] == "crash"
    assert "No module named 'transformers'" in failing["message"]


def test_a_version_not_read_is_unknown_not_a_pass() -> None:
    pkgs = _box("0.5.10", "4.57.1")
    pkgs["transformers"] = {"installed": True, "version": None}
    verdict = _judge("sglang-start-imports", pkgs)
    assert _reason(verdict, "transformers-lfm2-vl-config") is not None
    assert _reason(verdict, "transformers-lfm2-vl-config")["result"] == "unknown"  # type: ignore[index]


@pytest.mark.parametrize(
    ("sglang", "transformers", "torchao", "dep", "pin"),
    [
        ("0.5.9", "5.3.0", None, "transformers", "==4.57.1"),
        ("0.5.23", "5.12.1", None, "transformers", "==5.19.0"),
        ("0.5.4", "4.57.1", "0.12.0", "torchao", "==0.9.0"),
        ("0.5.14", "5.8.1", "0.15.0", "torchao", "==0.17.0"),
    ],
)
def test_a_pin_not_met_is_a_warning(sglang: str, transformers: str, torchao: str | None, dep: str, pin: str) -> None:
    verdict = _judge("sglang-pins", _box(sglang, transformers, torchao))
    failing = _reason(verdict, f"sglang-pins:{dep}")
    assert failing is not None and failing["result"] == "fail", verdict["reasons"]
    assert failing["effect"] == "degraded" and failing["required"] == pin
    assert failing["observed"] == (transformers if dep == "transformers" else torchao)
    assert verdict["status"] == "warning"


def test_the_pins_read_from_the_wheels() -> None:
    pins = {
        str(r["version"]): (r["requires"].get("transformers"), r["requires"].get("torchao"))
        for r in MANIFESTS.releases("sglang")
    }
    assert pins["0.5.1"] == ("==4.55.2", "==0.9.0") and pins["0.5.2"] == ("==4.56.1", "==0.9.0")
    assert pins["0.5.3"] == ("==4.57.0", "==0.9.0") and pins["0.5.9"] == ("==4.57.1", "==0.9.0")
    assert pins["0.5.10"] == ("==5.3.0", "==0.9.0") and pins["0.5.11"] == ("==5.6.0", "==0.17.0")
    assert pins["0.5.17"] == ("==5.12.1", "==0.17.0") and pins["0.5.18"] == ("==5.12.1", None)
    assert pins["0.5.23"] == ("==5.19.0", None)
