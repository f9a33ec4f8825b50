"""Check sglang-start-imports, rule sentencepiece-undeclared-0463 (real-world corpus round ten, sglang-7942).

SGLang 0.4.6.post3-0.4.9.post1 import sentencepiece when the server starts (configs/internvl.py, through
hf_transformers_utils) without declaring it in any extra; the lmsysorg/sglang:v0.4.9.post1-cu126 image's
launch failed on it (sgl-project/sglang#7942). Boxes are written by hand; no test needs a GPU. The registry
test reads the real wheels."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, cast

import pytest
from registry_wheels import fetch_wheel, read_texts

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.probes.packages import WANTED
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

MANIFESTS = load_manifests([])
RULE = "sentencepiece-undeclared-0463"


def _judge(facts: dict[str, Any]) -> dict[str, Any]:
    check = next(c for c in MANIFESTS.checks if c["id"] == "sglang-start-imports")
    return dict(evaluate_check(check, Context(facts=cast("Facts", facts), manifests=MANIFESTS)))


def _box(version: str, sentencepiece: dict[str, Any] | None) -> dict[str, Any]:
    packages: dict[str, Any] = {"sglang": {"installed": True, "version": version}}
    if sentencepiece is not None:
        packages["sentencepiece"] = sentencepiece
    return {"packages": packages, "packages_complete": False}


def _result(verdict: dict[str, Any]) -> str | None:
    return next((str(r["result"]) for r in verdict["reasons"] if r.get("rule") == RULE), None)


def test_the_image_of_0_4_9_post1_without_sentencepiece_fails() -> None:
    verdict = _judge(_box("0.4.9.post1", {"installed": False}))
    assert verdict["status"] == "failed"
    assert _result(verdict) == "fail"
    failing = next(r for r in verdict["reasons"] if r.get("rule") == RULE)
    assert "sentencepiece" in failing["message"] and "0.4.9.post2" in failing["message"]
    assert failing["effect"] == "crash"


@pytest.mark.parametrize(
    ("version", "fails"),
    [("0.4.6.post2", False), ("0.4.6.post3", True), ("0.4.8", True), ("0.4.9.post1", True), ("0.4.9.post2", False)],
)
def test_only_the_releases_that_import_it_without_declaring_it(version: str, fails: bool) -> None:
    verdict = _judge(_box(version, {"installed": False}))
    assert (_result(verdict) == "fail") is fails, verdict


def test_installed_or_not_named_is_not_a_failure() -> None:
    assert _result(_judge(_box("0.4.9.post1", {"installed": True}))) == "pass"
    # a hand-written list that does not name sentencepiece: not looked for, so not failed
    assert _judge(_box("0.4.9.post1", None))["status"] != "failed"


def test_the_packages_probe_looks_for_it() -> None:
    # a probed box names sentencepiece (installed or not), so the rule decides there
    assert "sentencepiece" in WANTED


def test_triage_names_the_missing_module() -> None:
    signature = next(s for s in MANIFESTS.signatures if s["id"] == "sglang-start-module-missing")
    assert re.search(str(signature["pattern"]), "ModuleNotFoundError: No module named 'sentencepiece'")
    assert signature["check"] == "sglang-start-imports"
    assert "sentencepiece" in str(signature["fix"])


@pytest.mark.registry
@pytest.mark.parametrize(
    ("version", "imports", "declares"),
    [
        ("0.4.6.post2", False, False),
        ("0.4.6.post3", True, False),
        ("0.4.9.post1", True, False),
        ("0.4.9.post2", True, True),
    ],
)
def test_the_wheels_import_and_declare_it_as_the_rule_says(version: str, imports: bool, declares: bool) -> None:
    texts = read_texts(
        fetch_wheel("sglang", version),
        lambda n: (
            n.endswith(".dist-info/METADATA")
            or n in ("sglang/srt/configs/internvl.py", "sglang/srt/hf_transformers_utils.py")
        ),
    )
    internvl = texts.get("sglang/srt/configs/internvl.py", "")
    utils = texts.get("sglang/srt/hf_transformers_utils.py", "")
    at_start = bool(re.search(r"^import sentencepiece", internvl, re.M)) and "configs.internvl import" in utils
    assert at_start is imports
    metadata = next(t for n, t in texts.items() if n.endswith("METADATA"))
    assert bool(re.search(r"^Requires-Dist: sentencepiece", metadata, re.M | re.I)) is declares
