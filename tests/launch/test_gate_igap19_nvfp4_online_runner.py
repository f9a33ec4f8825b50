"""igap19 (4): --quantization nvfp4_online on major 10 with a MoE runner SGLang's nvfp4_online branch refuses.

On SM100 the refusal nvfp4-online-sm100 passes; SGLang then resolves the MoE runner for the quantization and raises
for any --moe-runner-backend but auto (flashinfer_trtllm), flashinfer_trtllm and flashinfer_trtllm_routed (0.5.14-
0.5.17), flashinfer_cutedsl too from 0.5.18, and in 0.5.23 flashinfer_megamoe with --moe-a2a-backend
flashinfer_megamoe and SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16 on (read from the launch's environment since
igap20). From 0.5.18 flashinfer_cutedsl with --moe-a2a-backend deepep raises in the MoE argument check. All before
the model loads, dense models included.
On the parent (4b195b7) the refused cases are allowed (no such rules)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from gate_cli import QWEN3_MOE, gate_checkpoint

FLAG = ("--quantization", "nvfp4_online")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _refusals(release: str, *flags: str) -> dict[str, str]:
    doc = gate_checkpoint(Path(tempfile.mkdtemp()), release, "10.0", QWEN3_MOE, *FLAG, *flags)
    return {
        str(r["feature"]).removeprefix("refusal "): str(r["status"])
        for r in doc.get("reasons") or []
        if str(r.get("feature", "")).startswith("refusal nvfp4-online")
    }


@pytest.mark.parametrize(
    ("release", "flags", "rule", "status"),
    [
        ("0.5.14", ("--moe-runner-backend", "triton"), "nvfp4-online-moe-runner", "blocked"),
        ("0.5.17", ("--moe-runner-backend", "flashinfer_cutedsl"), "nvfp4-online-moe-runner", "blocked"),
        ("0.5.23", ("--moe-runner-backend", "flashinfer_cutlass"), "nvfp4-online-moe-runner", "blocked"),
        ("0.5.22", ("--moe-runner-backend", "flashinfer_megamoe"), "nvfp4-online-moe-runner", "blocked"),
        (
            "0.5.18",
            ("--moe-runner-backend", "flashinfer_cutedsl", "--moe-a2a-backend", "deepep"),
            "nvfp4-online-cutedsl-deepep",
            "blocked",
        ),
        ("0.5.23", ("--moe-runner-backend", "flashinfer_megamoe"), "nvfp4-online-megamoe-a2a", "blocked"),
        (
            "0.5.23",
            ("--moe-runner-backend", "flashinfer_megamoe", "--moe-a2a-backend", "flashinfer_megamoe"),
            "nvfp4-online-megamoe-a2a",
            "blocked",  # SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16 unset: off (igap20 reads it; was unknown)
        ),
    ],
)
def test_a_runner_the_nvfp4_online_branch_refuses_is_refused(
    release: str, flags: tuple[str, ...], rule: str, status: str
) -> None:
    assert _refusals(release, *flags).get(rule) == status


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.23", ()),
        ("0.5.14", ("--moe-runner-backend", "flashinfer_trtllm_routed")),
        ("0.5.18", ("--moe-runner-backend", "flashinfer_cutedsl")),
        ("0.5.23", ("--moe-runner-backend", "auto")),
        ("0.5.20", ("--moe-runner-backend", "flashinfer_cutedsl", "--moe-a2a-backend", "flashinfer")),
    ],
)
def test_a_runner_it_takes_is_not_refused_by_these_rules(release: str, flags: tuple[str, ...]) -> None:
    assert _refusals(release, *flags) == {}
