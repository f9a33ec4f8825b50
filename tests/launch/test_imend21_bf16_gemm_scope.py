"""imend21: ifc68's bf16-gemm-cutedsl-dsl-installed (check sglang-start-imports) read no launch flag, so a B200 launch
without nvidia-cutlass-dsl was refused even where SGLang never imports the CuTe DSL BF16 GEMM: --bf16-gemm-backend
torch, or (0.5.18+) auto with --enable-deterministic-inference / --rl-on-policy-target, which SGLang resolves to
torch (layers/quantization/unquant.py initialize_bf16_gemm_config, 0.5.17-0.5.23 wheels). The rule is now scoped by
launch.bf16_gemm_backend / launch.deterministic_inference / launch.rl_on_policy_target; the default (auto) and
cutedsl stay refused, and the audit (no launch) still judges the default launch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.cli import main
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

MANIFESTS = load_manifests([])
RULE = "bf16-gemm-cutedsl-dsl-installed"
CASES = Path(__file__).resolve().parents[1] / "cases"


def _rule(sglang: str, launch: dict[str, Any]) -> str | None:
    """The rule's result on an 8x B200 box without the DSL, for these launch facts ({}: the audit)."""
    packages = {"sglang": {"installed": True, "version": sglang}, "nvidia-cutlass-dsl": {"installed": False}}
    facts = {"packages": packages, "gpus": [{"name": "GPU", "compute_capability": "10.0"}] * 8}
    check = next(c for c in MANIFESTS.checks if c["id"] == "sglang-start-imports")
    ctx = Context(facts=cast("Facts", facts), manifests=MANIFESTS, launch=launch)
    verdict = evaluate_check(check, ctx)
    return next((str(r["result"]) for r in verdict["reasons"] if r.get("rule") == RULE), None)


@pytest.mark.parametrize(
    ("sglang", "launch"),
    [
        ("0.5.23", {"bf16_gemm_backend": "torch"}),
        ("0.5.20", {"bf16_gemm_backend": "gemv"}),
        ("0.5.18", {"deterministic_inference": True}),
        ("0.5.23", {"bf16_gemm_backend": "auto", "rl_on_policy_target": "fsdp"}),
    ],
)
def test_launches_that_never_import_the_dsl_gemm_are_not_judged(sglang: str, launch: dict[str, Any]) -> None:
    # failed before: "fail" whatever the launch said
    assert _rule(sglang, launch) is None


@pytest.mark.parametrize(
    ("sglang", "launch"),
    [
        ("0.5.23", {}),  # the audit: the default launch
        ("0.5.23", {"bf16_gemm_backend": "auto"}),
        ("0.5.23", {"bf16_gemm_backend": "cutedsl", "deterministic_inference": True}),
        ("0.5.19", {"bf16_gemm_backend": "flashinfer_pr4266"}),
        ("0.5.17", {"deterministic_inference": True}),  # 0.5.17 picks cutedsl whatever deterministic says
    ],
)
def test_launches_that_reach_it_still_fail(sglang: str, launch: dict[str, Any]) -> None:
    assert _rule(sglang, launch) == "fail"


def _b200_without_dsl(tmp_path: Path) -> str:
    doc = json.loads((CASES / "h200-newest" / "facts.json").read_text(encoding="utf-8"))  # SGLang 0.5.23
    facts = doc.get("facts", doc)
    for gpu in facts["gpus"]:
        gpu["name"], gpu["compute_capability"] = "NVIDIA B200", "10.0"
    facts["packages"]["nvidia-cutlass-dsl"] = {"installed": False}
    path = tmp_path / "b200.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def test_the_gate_scopes_the_refusal_by_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    facts = _b200_without_dsl(tmp_path)

    def refused(*flags: str) -> bool:
        line = ["python", "-m", "sglang.launch_server", "--model-path", "m", *flags]
        main(["gate", "--facts", facts, "--dry-run", "--format", "json", "--", *line])
        doc = json.loads(capsys.readouterr().out)
        return any(
            r.get("feature") == "sglang-start-imports" and any(x.get("rule") == RULE for x in r.get("reasons") or [])
            for r in doc.get("reasons") or []
        )

    assert not refused("--bf16-gemm-backend", "torch")  # failed before: refused
    assert not refused("--enable-deterministic-inference")  # auto resolves to torch (0.5.23)
    assert refused("--bf16-gemm-backend=cutedsl")  # (no flag: ifc68's gate test)
