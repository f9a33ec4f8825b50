"""Check kernel-arch with a kernel package of unknown version that the facts narrow to a few releases
(`packages.NAME.candidates`; real-world corpus round ten, sglang-38515: an RTX 2080 Ti with the sglang-kernel
wheel that pairs with torch 2.13). The GPUs that no candidate's PyPI build has code for fail (inferred); the
check never passes on candidates. Boxes are written by hand; no test needs a GPU."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

MANIFESTS = load_manifests([])
TORCH_213 = ["0.4.6.post1", "0.4.7", "0.4.8"]  # the sglang-kernel wheels that require torch==2.13.0


def _judge(cc: str, candidates: list[str], name: str = "NVIDIA GeForce RTX 2080 Ti") -> dict[str, Any]:
    facts = {
        "gpus": [{"index": 0, "name": name, "compute_capability": cc}],
        "packages": {
            "torch": {"installed": True, "version": "2.13.0+cu130", "variant": "cu130", "cuda": "13.0"},
            "sglang-kernel": {"installed": True, "candidates": candidates},
        },
    }
    check = next(c for c in MANIFESTS.checks if c["id"] == "kernel-arch")
    return dict(evaluate_check(check, Context(facts=cast("Facts", facts), manifests=MANIFESTS)))


def _kernel_reasons(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in verdict["reasons"] if r.get("rule") == "sglang-kernel-coverage"]


def test_no_candidate_has_code_for_a_turing_gpu() -> None:
    verdict = _judge("7.5", TORCH_213)
    assert verdict["status"] == "failed"
    (reason,) = _kernel_reasons(verdict)
    assert reason["result"] == "fail" and reason["effect"] == "crash"
    assert reason.get("inferred") is True
    assert "0.4.6.post1, 0.4.7, 0.4.8" in reason["message"] and "cc 7.5" in reason["message"]
    assert "PyPI build" in reason["message"]


def test_a_gpu_some_candidate_covers_is_not_passed_on_candidates() -> None:
    # cc 8.0 runs every candidate's sm_80 code, but which release is installed is not known: unknown, not ok
    verdict = _judge("8.0", TORCH_213, "NVIDIA A100-SXM4-80GB")
    assert verdict["status"] != "failed"
    (reason,) = _kernel_reasons(verdict)
    assert reason["result"] == "unknown"


def test_a_candidate_the_manifests_do_not_know_leaves_it_unknown() -> None:
    verdict = _judge("7.5", [*TORCH_213, "0.4.99"])
    (reason,) = _kernel_reasons(verdict)
    assert reason["result"] == "unknown"
    assert verdict["status"] != "failed"


def test_without_candidates_nothing_changes() -> None:
    facts = {
        "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 2080 Ti", "compute_capability": "7.5"}],
        "packages": {"sglang-kernel": {"installed": True}},
    }
    check = next(c for c in MANIFESTS.checks if c["id"] == "kernel-arch")
    verdict = dict(evaluate_check(check, Context(facts=cast("Facts", facts), manifests=MANIFESTS)))
    assert _kernel_reasons(verdict)[0]["result"] == "unknown"
