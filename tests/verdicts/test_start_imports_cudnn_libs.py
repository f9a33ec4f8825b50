"""Checks sglang-start-imports and cudnn-libs (round two of the real-world corpus, ROUND2-icorpB.md).

sglang-start-imports: the modules SGLang imports when its server starts are installed (pybase64 from 0.4.10 on;
gguf / partial_json_parser in 0.4.4-0.4.4.post2 and compressed_tensors in 0.4.4.post2, which those releases
import without declaring them). cudnn-libs: nvidia-cudnn-cu13 9.20.0.48 lacks libcudnn_engines_tensor_ir.so.9,
so a copy the loader finds elsewhere is another cuDNN's. Boxes are written by hand; no test needs a GPU."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

MANIFESTS = load_manifests([])


def _judge(check_id: str, facts: dict[str, Any]) -> dict[str, Any]:
    check = next(c for c in MANIFESTS.checks if c["id"] == check_id)
    return dict(evaluate_check(check, Context(facts=cast("Facts", facts), manifests=MANIFESTS)))


def _results(verdict: dict[str, Any]) -> dict[str, str]:
    return {str(r["rule"]): str(r["result"]) for r in verdict["reasons"]}


def test_one_failing_rule_fails_the_check_although_another_is_unknown() -> None:
    # 0.4.4.post2 without gguf; whether partial-json-parser and compressed-tensors are installed is not said
    verdict = _judge(
        "sglang-start-imports",
        {
            "packages": {"sglang": {"installed": True, "version": "0.4.4.post2"}, "gguf": {"installed": False}},
            "packages_complete": False,  # hand-written: a package it leaves out is unknown
        },
    )
    assert verdict["status"] == "failed"
    results = _results(verdict)
    assert results["gguf-undeclared-044"] == "fail"
    assert results["partial-json-parser-undeclared-044"] == "unknown"  # not listed: not looked for
    failing = next(r for r in verdict["reasons"] if r["result"] == "fail")
    assert "gguf" in failing["message"] and "0.4.4" in failing["message"]


def test_the_undeclared_imports_are_only_those_releases() -> None:
    missing = {name: {"installed": False} for name in ("gguf", "partial-json-parser", "compressed-tensors")}
    post1 = _judge(
        "sglang-start-imports", {"packages": {"sglang": {"installed": True, "version": "0.4.4.post1"}, **missing}}
    )
    assert "compressed-tensors-undeclared-044post2" not in _results(post1)  # post2 only
    assert post1["status"] == "failed"  # gguf and partial_json_parser
    post3 = _judge(
        "sglang-start-imports", {"packages": {"sglang": {"installed": True, "version": "0.4.4.post3"}, **missing}}
    )
    assert post3["status"] != "failed", post3


def test_pybase64_from_0_4_10() -> None:
    def box(version: str, installed: bool) -> dict[str, Any]:
        return {"packages": {"sglang": {"installed": True, "version": version}, "pybase64": {"installed": installed}}}

    assert _judge("sglang-start-imports", box("0.5.5", False))["status"] == "failed"
    assert _judge("sglang-start-imports", box("0.4.10", False))["status"] == "failed"
    assert _judge("sglang-start-imports", box("0.5.5", True))["status"] == "ok"
    assert _judge("sglang-start-imports", box("0.4.9", False))["status"] != "failed"


def test_pybase64_missing_with_sglang_of_unknown_release_is_swept() -> None:
    facts = {
        "packages": {"sglang": {"installed": True}, "pybase64": {"installed": False}},
        "collected_at": "2025-11-14",
    }
    assert _judge("sglang-start-imports", facts)["status"] == "failed"
    facts["packages"]["pybase64"] = {"installed": True}  # type: ignore[index]
    assert _judge("sglang-start-imports", facts)["status"] != "failed"


def test_a_list_that_does_not_name_the_package_is_never_failed() -> None:
    # a probed list saved by a stackcheck that did not look for pybase64 (complete, without the entry): not applied
    saved = _judge("sglang-start-imports", {"packages": {"sglang": {"installed": True, "version": "0.5.5"}}})
    assert saved["status"] == "skipped"
    # a hand-written list that does not name it: unknown
    written = {"packages": {"sglang": {"installed": True, "version": "0.5.5"}}, "packages_complete": False}
    verdict = _judge("sglang-start-imports", written)
    assert verdict["status"] == "unknown"
    assert "pybase64: not known whether" in verdict["reasons"][0]["message"]


def test_without_sglang_the_check_does_not_apply() -> None:
    verdict = _judge(
        "sglang-start-imports", {"packages": {"sglang": {"installed": False}, "pybase64": {"installed": False}}}
    )
    assert verdict["status"] == "skipped"


def _cudnn_box(version: str, found: str | None, probed: bool = True) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "packages": {"torch": {"installed": True}, "nvidia-cudnn-cu13": {"installed": True, "version": version}}
    }
    if probed:
        facts["cuda_libs"] = {"libcudnn_engines_tensor_ir.so.9": found}
    return facts


def test_cudnn_920_with_a_system_tensor_ir_copy_fails() -> None:
    verdict = _judge("cudnn-libs", _cudnn_box("9.20.0.48", "/usr/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9"))
    assert verdict["status"] == "failed"
    message = verdict["reasons"][0]["message"]
    assert "9.20.0.48" in message and "tensor_ir" in message


def test_cudnn_920_alone_or_a_complete_wheel_passes_and_unprobed_is_unknown() -> None:
    assert _judge("cudnn-libs", _cudnn_box("9.20.0.48", None))["status"] == "ok"
    assert _judge("cudnn-libs", _cudnn_box("9.21.1.3", "/usr/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9"))[
        "status"
    ] in ("ok", "skipped")
    assert _judge("cudnn-libs", _cudnn_box("9.20.0.48", None, probed=False))["status"] == "unknown"
    without = _judge(
        "cudnn-libs", {"packages": {"torch": {"installed": True}, "nvidia-cudnn-cu13": {"installed": False}}}
    )
    assert without["status"] == "skipped"
