"""--moe-a2a-backend deepep_v2 (SGLang 0.5.19-0.5.23): the checks of the deepep_v2 branch of SGLang's MoE argument
hook (arg_groups/moe_hook.py _handle_a2a_moe, 0.5.23:400-438), each a launch.json refusal: the runner (deep_gemm or
auto only), TBO/SBO overlap, forced shared-experts fusion, deterministic inference (0.5.19-0.5.20), the model
architecture against the release's validated list (0.5.21 on: configs/moe_model_registry.py), and direct mode (the
default) across nodes (0.5.22 on). SGLang never picks deepep_v2 itself. Configs are the test helpers' shapes.
On the parent 11 of these fail (every launch was allowed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, LLAMA3, QWEN3_MOE, gate_checkpoint, reason_status

V2 = ("--moe-a2a-backend", "deepep_v2")


def _status(tmp_path: Path, release: str, config: dict[str, Any], *flags: str) -> dict[str, tuple[str, Any]]:
    return reason_status(gate_checkpoint(tmp_path, release, "9.0", config, *flags))


GLM_DSA: dict[str, Any] = {**DEEPSEEK_R1, "architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa"}


@pytest.mark.parametrize(
    ("release", "config", "flags", "rule"),
    [
        ("0.5.23", DEEPSEEK_R1, [*V2, "--moe-runner-backend", "triton"], "deepep-v2-moe-runner"),
        ("0.5.19", QWEN3_MOE, [*V2, "--moe-runner-backend=flashinfer_cutlass"], "deepep-v2-moe-runner"),
        ("0.5.23", DEEPSEEK_R1, [*V2, "--enable-two-batch-overlap"], "deepep-v2-overlap"),
        ("0.5.21", DEEPSEEK_R1, [*V2, "--enable-single-batch-overlap"], "deepep-v2-overlap"),
        ("0.5.22", DEEPSEEK_R1, [*V2, "--enforce-shared-experts-fusion"], "deepep-v2-shared-experts-fusion"),
        ("0.5.20", QWEN3_MOE, [*V2, "--enable-deterministic-inference"], "deepep-v2-deterministic"),
        ("0.5.23", LLAMA3, list(V2), "deepep-v2-model-architecture"),
        ("0.5.20", GLM_DSA, list(V2), "deepep-v2-model-architecture"),  # listed from 0.5.22 only
        ("0.5.23", DEEPSEEK_R1, [*V2, "--nnodes", "2", "--node-rank", "0"], "deepep-v2-direct-multinode"),
        ("0.5.22", DEEPSEEK_R1, [*V2, "--deepep-v2-mode", "direct", "--nnodes", "4"], "deepep-v2-direct-multinode"),
    ],
)
def test_deepep_v2_checks_refused(
    tmp_path: Path, release: str, config: dict[str, Any], flags: list[str], rule: str
) -> None:
    # fails on the parent: allowed; SGLang raises ValueError while it reads its arguments
    status = _status(tmp_path, release, config, *flags)
    assert status.get(f"refusal {rule}") == ("blocked", "crash"), status


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.23", DEEPSEEK_R1, list(V2)),
        ("0.5.23", QWEN3_MOE, [*V2, "--moe-runner-backend", "deep_gemm"]),
        ("0.5.22", GLM_DSA, list(V2)),
        ("0.5.23", DEEPSEEK_R1, [*V2, "--deepep-v2-mode", "hybrid", "--nnodes", "2", "--node-rank", "0"]),
        # no such check before 0.5.22 (igap16's deepep-v2-direct-multinode-unread judges it unknown there)
        ("0.5.21", DEEPSEEK_R1, [*V2, "--nnodes", "2", "--node-rank", "0"]),
        ("0.5.21", QWEN3_MOE, [*V2, "--enable-deterministic-inference"]),  # gone from 0.5.21
        ("0.5.23", DEEPSEEK_R1, ["--moe-a2a-backend", "deepep", "--enable-two-batch-overlap"]),  # v1: not these
        ("0.5.23", LLAMA3, [*V2, "--enable-waterfill"]),  # SGLang moves deepep_v2 to deepep first: not judged here
    ],
)
def test_other_launches_not_these_rules(tmp_path: Path, release: str, config: dict[str, Any], flags: list[str]) -> None:
    status = _status(tmp_path, release, config, *flags)
    unread = "refusal deepep-v2-direct-multinode-unread"  # unknown, not refused: test_gate_igap16_deepep_v2_direct
    assert not [k for k in status if k.startswith("refusal deepep-v2-") and k != unread], status


def test_model_not_read_is_unknown(tmp_path: Path) -> None:
    # fails on the parent (allowed): whether SGLang validated the architecture is not known
    import json

    from gate_cli import cli_json, release_box

    box = release_box(tmp_path, "0.5.23", "9.0")
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(tmp_path / "absent"), "--tp", "8", *V2]
    doc = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]
    status = reason_status(doc)
    assert doc["decision"] != "allow" and status.get("refusal deepep-v2-model-architecture", ("",))[0] == "unknown"
    assert json.dumps(doc).count("deepep-v2-moe-runner") == 0
