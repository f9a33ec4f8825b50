"""A skipped stack check says why it is skipped: the report's reasons name what the facts lack or that no rule's
condition holds, instead of an empty list (the corpus bench printed 'skipped ()' for sglang-5100 and
pytorch-144244, and a reader of the JSON could not tell 'does not apply' from 'not read')."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report

ROOT = Path(__file__).resolve().parent.parent.parent


def _checks(tmp_path: Path, facts: dict[str, Any]) -> dict[str, Any]:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    report, _ = build_report(Options(facts_file=str(path)))
    return {c["id"]: c for c in report["checks"]}


# a hand-built kernel package next to a torch of no stated release, one GPU: the facts of a small report
HAND_BUILT: dict[str, Any] = {
    "gpus": [{"index": 0, "name": None, "compute_capability": "12.0"}],
    "packages": {
        "sgl-kernel": {"installed": True},
        "sglang": {"installed": True, "editable": True},
        "torch": {"installed": True},
    },
}


def _messages(check: dict[str, Any]) -> str:
    return " | ".join(str(r.get("message", "")) for r in check["reasons"])


def test_kernel_torch_abi_skip_names_the_missing_symbol_facts_and_the_pins(tmp_path: Path) -> None:
    check = _checks(tmp_path, HAND_BUILT)["sgl-kernel-torch-abi"]
    assert check["status"] == "skipped"  # still skipped: sgl-kernel-torch-pair decides (unknown here)
    text = _messages(check)
    assert "kernel_symbols" in text and "sgl-kernel-torch-pair" in text, check
    assert all(r.get("result") == "pass" for r in check["reasons"])  # never a failure nor an unknown


def test_shared_libs_skip_says_the_resolution_was_not_read(tmp_path: Path) -> None:
    check = _checks(tmp_path, HAND_BUILT)["shared-libs"]
    assert check["status"] == "skipped"
    assert "facts.libs" in _messages(check) and "--deep" in _messages(check), check


def test_a_rule_check_whose_rules_do_not_apply_names_them(tmp_path: Path) -> None:
    check = _checks(tmp_path, HAND_BUILT)["mixed-gpus"]  # one GPU: no rule of mixed-gpus applies
    assert check["status"] == "skipped"
    assert "no rule applies" in _messages(check), check


def test_every_skipped_check_of_corpus_facts_says_why() -> None:
    for case in ("sglang-5100-sgl-kernel-torch-abi-sm120", "pytorch-144244-cusparse-nvjitlink-cuda122-a6000"):
        report, _ = build_report(Options(facts_file=str(ROOT / "tests" / "realworld" / case / "facts.json")))
        skipped = [c for c in report["checks"] if c["status"] == "skipped"]
        assert skipped, case
        for c in skipped:
            assert c["reasons"] and all(str(r.get("message", "")).strip() for r in c["reasons"]), (case, c["id"])


def test_kernel_coverage_skip_without_a_packages_section_does_not_claim_none_is_installed(tmp_path: Path) -> None:
    check = _checks(tmp_path, {"gpus": HAND_BUILT["gpus"]})["kernel-arch"]
    assert check["status"] == "skipped"
    text = _messages(check)
    assert "packages section" in text and "is installed:" not in text, check
    absent = {n: {"installed": False} for n in ("sgl-kernel", "sglang-kernel", "flashinfer-jit-cache", "vllm")}
    check = _checks(tmp_path, {"gpus": HAND_BUILT["gpus"], "packages": absent})["kernel-arch"]
    assert check["status"] == "skipped"
    assert "no kernel package" in _messages(check), check
