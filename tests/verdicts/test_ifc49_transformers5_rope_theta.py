"""ifc49 (the forty-ninth fact-check sample, rows h2 and h3): SGLang 0.5.1-0.5.9 beside transformers 5.x (check
sglang-start-imports, rule transformers-5-rope-theta).

SGLang 0.5.9 with transformers 5.0.0 and 0.5.1.post3 with 5.4.0, serving Llama 3, were allowed with only the pin
warning (sglang-pins): no name their start imports is missing there. But transformers 5 moves rope_theta into
config.rope_parameters (measured: AutoConfig of a Llama 3 config.json has no rope_theta attribute under 5.0.0 and
5.4.0), and those releases' llama.py read `getattr(config, "rope_theta", 10000)`: the server runs Llama 3 with a
rotary base of 10000 instead of 500000, wrong output and no error. SGLang 0.5.10 reads rope_parameters first."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

MANIFESTS = load_manifests([])
CHECK = "sglang-start-imports"
RULE = "transformers-5-rope-theta"


def _result(sglang: str, transformers: dict[str, Any] | None) -> str | None:
    packages: dict[str, Any] = {"sglang": {"installed": True, "version": sglang}, "kernels": {"installed": False}}
    if transformers is not None:
        packages["transformers"] = transformers
    facts: dict[str, Any] = {"packages": packages, "packages_complete": True}
    check = next(c for c in MANIFESTS.checks if c["id"] == CHECK)
    verdict: dict[str, Any] = dict(evaluate_check(check, Context(facts=copy.deepcopy(facts), manifests=MANIFESTS)))  # type: ignore[arg-type]
    got = [str(r["result"]) for r in verdict["reasons"] if r.get("rule") == RULE]
    return got[0] if got else None


def _tf(version: str) -> dict[str, Any]:
    return {"installed": True, "version": version}


@pytest.mark.parametrize(
    ("sglang", "transformers"),
    [("0.5.9", "5.0.0"), ("0.5.1.post3", "5.4.0"), ("0.5.1", "5.19.0"), ("0.5.5", "5.3.0"), ("0.5.8", "5.12.1")],
)
def test_sglang_before_0_5_10_beside_transformers_5_fails(sglang: str, transformers: str) -> None:
    # fails on the parent: no such rule (the check passed; rows h2 and h3 were allowed)
    assert _result(sglang, _tf(transformers)) == "fail"


@pytest.mark.parametrize(
    ("sglang", "transformers"),
    [("0.5.9", "4.57.1"), ("0.5.1.post3", "4.51.3"), ("0.5.2", "4.56.1"), ("0.5.4", "4.57.6")],
)
def test_sglang_before_0_5_10_beside_transformers_4_passes(sglang: str, transformers: str) -> None:
    assert _result(sglang, _tf(transformers)) == "pass"


@pytest.mark.parametrize("sglang", ["0.5.10", "0.5.13", "0.5.23"])
def test_sglang_0_5_10_on_is_not_judged(sglang: str) -> None:
    # 0.5.10 reads rope_parameters first (llama.py:255-260)
    assert _result(sglang, _tf("5.4.0")) is None


def test_a_list_without_transformers_leaves_the_rule_out() -> None:
    assert _result("0.5.9", None) is None


def test_the_message_names_the_cause() -> None:
    check = next(c for c in MANIFESTS.checks if c["id"] == CHECK)
    rule = next(r for r in check["rules"] if r["id"] == RULE)
    assert "rope_theta" in rule["message"] and "0.5.10" in rule["message"]
    assert rule["effect"] == "wrong-output" and rule["source"]  # ieffect: the server starts and serves wrong output
