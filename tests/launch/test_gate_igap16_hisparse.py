"""--enable-hisparse (HiSparse, hierarchical sparse attention) without --disable-radix-cache: SGLang 0.5.10-0.5.23's
HiSparse validation asserts the radix cache is off (launch.json hisparse-radix-cache; 0.5.23
arg_groups/hisparse_hook.py:109-111, 0.5.10 server_args.py:6189-6191). Launches where SGLang turns the radix cache
off itself (a PD decode server, --enable-mis, deterministic inference) are not judged. The configs are the test
helpers' DeepSeek V3.2 shape. On the parent the refusal tests fail (the launches were allowed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_V32, gate_checkpoint, reason_status

RULE = "refusal hisparse-radix-cache"


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.23", ["--enable-hisparse"]),
        ("0.5.10", ["--enable-hisparse", "--nsa-decode-backend", "flashmla_sparse"]),
        ("0.5.17", ["--enable-hisparse", "--disaggregation-mode", "prefill"]),
        ("0.5.21", ["--enable-hisparse", "--enable-hierarchical-cache"]),
    ],
)
def test_refused(tmp_path: Path, release: str, flags: list[str]) -> None:
    # fails on the parent: allowed; SGLang's assertion stops it while it reads its arguments
    doc = gate_checkpoint(tmp_path, release, "9.0", DEEPSEEK_V32, *flags)
    assert reason_status(doc).get(RULE) == ("blocked", "crash"), doc["reasons"]
    reason = next(r for r in doc["reasons"] if r.get("feature") == RULE)["reasons"][0]
    assert "disable_radix_cache False" in reason["observed"] and "--disable-radix-cache" in reason["required"], reason
    assert "hisparse_hook.py" in reason["source"][-1]["title"], reason


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.23", ["--enable-hisparse", "--disable-radix-cache"]),
        ("0.5.23", ["--disable-radix-cache"]),
        ("0.5.23", []),
        ("0.5.9", ["--disable-radix-cache"]),
        # SGLang turns the radix cache off itself for these: not judged
        ("0.5.23", ["--enable-hisparse", "--disaggregation-mode", "decode"]),
        ("0.5.23", ["--enable-hisparse", "--enable-mis"]),
        ("0.5.23", ["--enable-hisparse", "--enable-deterministic-inference"]),
    ],
)
def test_not_refused_so(tmp_path: Path, release: str, flags: list[str]) -> None:
    assert RULE not in reason_status(gate_checkpoint(tmp_path, release, "9.0", DEEPSEEK_V32, *flags))
