"""igap12: a DSA model (DeepSeek V3.2) with --dsa-/--nsa-prefill-backend or decode-backend flashmla_kv, or
flashmla_auto, runs FlashMLA's sparse FP8 decode kernel (flash_mla_with_kvcache with top-k indices), which has SM90
and SM100-family kernels only ('Unsupported architecture for sparse decode fwd': sglang-kernel 0.4.10 flashmla_ops,
sgl-flash-mla 1.0.0 _C_legacy); flashmla_auto picks it or flashmla_sparse per prefill batch. ifc22 judged
flashmla_sparse only, so flashmla_kv on SM120 or Ada passed when the other side named a backend not judged.
fa3 and tilelang stay not judged (see the report). The model config is tests/gate_cli.DEEPSEEK_V32 (written for the
tests). On the parent (b33a6f2) 4 of these fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_V32, gate_tp8, model_dir, release_box


def _gate(tmp_path: Path, release: str, cc: str, *flags: str) -> dict[str, Any]:
    return gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "m", DEEPSEEK_V32), *flags)


def _blocked(doc: dict[str, Any]) -> dict[str, list[Any]]:
    return {
        str(r["feature"]): [x.get("rule") for x in r.get("reasons") or []]
        for r in doc.get("reasons") or []
        if r.get("status") == "blocked"
    }


@pytest.mark.parametrize(
    ("release", "cc", "flags"),
    [
        ("0.5.23", "12.0", ("--dsa-prefill-backend", "tilelang", "--dsa-decode-backend", "flashmla_kv")),
        ("0.5.16", "12.0", ("--dsa-prefill-backend", "tilelang", "--dsa-decode-backend", "flashmla_kv")),
        ("0.5.19", "12.0", ("--nsa-prefill-backend", "flashmla_auto", "--nsa-decode-backend", "tilelang")),
        ("0.5.16", "8.9", ("--dsa-prefill-backend", "flashmla_kv", "--dsa-decode-backend", "tilelang")),
    ],
)
def test_flashmla_kv_off_sm90_and_sm100_is_refused(
    tmp_path: Path, release: str, cc: str, flags: tuple[str, ...]
) -> None:
    doc = _gate(tmp_path, release, cc, *flags)
    assert doc["decision"] == "refuse"
    assert "flashmla-kv-arch" in _blocked(doc).get("attention-dsa-flashmla-kv", []), doc.get("reasons")


@pytest.mark.parametrize("cc", ["9.0", "10.0"])
def test_flashmla_kv_on_hopper_and_sm100_is_allowed(tmp_path: Path, cc: str) -> None:
    doc = _gate(tmp_path, "0.5.23", cc, "--dsa-prefill-backend", "flashmla_auto", "--dsa-decode-backend", "flashmla_kv")
    assert doc["decision"] == "allow", doc.get("reasons")
