"""A DSA model with --dcp-size > 1 (decode context parallel), as SGLang 0.5.22-0.5.23's DeepSeek family model override
reads it (arg_groups/model_overrides/deepseek_v2.py _dsa_dcp_overrides, 0.5.23:18-33): HiSparse or the hierarchical
cache, PD disaggregation and an EAGLE top-k other than 1 raise (launch.json dsa-dcp-hisparse-hicache,
dsa-dcp-disaggregation, dsa-dcp-eagle-topk); tilelang on both DSA sides with an FP8 KV cache raises for --dcp-size
above 1 (arg_groups/overrides.py _check_dsa_backend_constraints, 0.5.23:576-577: dsa-tilelang-fp8-kv-dcp); an HYV4
model raises for any --dcp-size above 1 from 0.5.20 (hyv4-dcp). Before 0.5.22 none of the DSA checks exists (not
judged: allowed as before). The configs are the test helpers' DeepSeek V3.2 and Llama 3 shapes and an HYV4 one
written here. On the parent the refusal tests fail (every launch was allowed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_V32, LLAMA3, gate_checkpoint, reason_status

# an HYV4 config in the DeepSeek shape (the architecture is what SGLang's check reads), written for these tests
HYV4: dict[str, Any] = {**DEEPSEEK_V32, "architectures": ["HYV4ForCausalLM"], "model_type": "hyv4"}

HICACHE = "refusal dsa-dcp-hisparse-hicache"
DISAGG = "refusal dsa-dcp-disaggregation"
TOPK = "refusal dsa-dcp-eagle-topk"
TILELANG = "refusal dsa-tilelang-fp8-kv-dcp"
MIXED = "refusal dsa-tilelang-fp8-kv-mixed"
HY = "refusal hyv4-dcp"
OURS = (HICACHE, DISAGG, TOPK, TILELANG, HY)
BOTH_TILELANG = ["--dsa-prefill-backend", "tilelang", "--dsa-decode-backend", "tilelang"]


def _doc(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    return gate_checkpoint(tmp_path, release, cc, config, *flags)


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags", "rule"),
    [
        ("0.5.23", "10.0", DEEPSEEK_V32, ["--dcp-size", "2", "--enable-hierarchical-cache"], HICACHE),
        ("0.5.22", "9.0", DEEPSEEK_V32, ["--decode-context-parallel-size=4", "--enable-hisparse"], HICACHE),
        ("0.5.23", "10.0", DEEPSEEK_V32, ["--dcp-size", "2", "--disaggregation-mode", "decode"], DISAGG),
        ("0.5.22", "10.0", DEEPSEEK_V32, ["--dcp-size=2", "--disaggregation-mode=prefill"], DISAGG),
        ("0.5.23", "10.0", DEEPSEEK_V32,
         ["--dcp-size", "2", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
          "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"], TOPK),
        ("0.5.23", "10.0", DEEPSEEK_V32, ["--dcp-size", "2", *BOTH_TILELANG], TILELANG),
        ("0.5.22", "9.0", DEEPSEEK_V32, ["--dcp-size", "2", *BOTH_TILELANG, "--kv-cache-dtype", "fp8_e4m3"], TILELANG),
        ("0.5.20", "9.0", HYV4, ["--dcp-size", "2"], HY),
        ("0.5.23", "10.0", HYV4, ["--dcp-size", "8"], HY),
    ],
)  # fmt: skip
def test_refused(tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: list[str], rule: str) -> None:
    # fails on the parent: allowed; SGLang raises ValueError while it reads its arguments
    doc = _doc(tmp_path, release, cc, config, *flags)
    status = reason_status(doc)
    assert status.get(rule) == ("blocked", "crash"), status
    reason = next(r for r in doc["reasons"] if r.get("feature") == rule)["reasons"][0]
    assert "dcp_size" in reason["observed"] and reason["required"] and reason["source"], reason
    assert "--dcp-size" in reason["message"] and "sglang 0.5.2" in reason["source"][0]["title"], reason


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        # the same launches SGLang takes: --dcp-size 1 (the default), no DSA model, a release without the checks
        ("0.5.23", "10.0", DEEPSEEK_V32, ["--dcp-size", "1", "--enable-hierarchical-cache"]),
        ("0.5.23", "10.0", DEEPSEEK_V32, ["--disaggregation-mode", "decode"]),
        ("0.5.23", "10.0", LLAMA3, ["--dcp-size", "2", "--disaggregation-mode", "decode"]),
        ("0.5.21", "10.0", DEEPSEEK_V32, ["--dcp-size", "2", "--enable-hierarchical-cache"]),
        ("0.5.23", "10.0", DEEPSEEK_V32, ["--dcp-size", "2", "--disaggregation-mode", "null"]),
        ("0.5.23", "10.0", DEEPSEEK_V32,
         ["--dcp-size", "2", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
          "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]),
        # tilelang with a bfloat16 KV cache, or with --dcp-size 1, passes this check
        ("0.5.23", "10.0", DEEPSEEK_V32, ["--dcp-size", "2", *BOTH_TILELANG, "--kv-cache-dtype", "bfloat16"]),
        ("0.5.23", "10.0", DEEPSEEK_V32, [*BOTH_TILELANG]),
        ("0.5.23", "9.0", DEEPSEEK_V32, ["--dcp-size", "2", *BOTH_TILELANG]),  # bfloat16 by default on Hopper
        ("0.5.19", "9.0", HYV4, ["--dcp-size", "2"]),  # no HYV4 check before 0.5.20
        ("0.5.23", "10.0", HYV4, ["--dcp-size", "1"]),
    ],
)  # fmt: skip
def test_not_refused_so(tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: list[str]) -> None:
    status = reason_status(_doc(tmp_path, release, cc, config, *flags))
    assert not any(rule in status for rule in OURS), status


def test_one_tilelang_side_with_dcp_is_the_mixed_rule(tmp_path: Path) -> None:
    # with --dcp-size > 1 the side not given is filled with trtllm: the mixed check raises first, not the DCP one
    status = reason_status(_doc(tmp_path, "0.5.23", "10.0", DEEPSEEK_V32, "--dcp-size", "2", "--dsa-prefill-backend",
                                "tilelang"))  # fmt: skip
    assert status.get(MIXED) == ("blocked", "crash") and TILELANG not in status, status


def test_dsa_with_dcp_alone_allowed(tmp_path: Path) -> None:
    # passes on the parent too: SGLang 0.5.23 fills both DSA sides with trtllm for --dcp-size > 1 and starts
    doc = _doc(tmp_path, "0.5.23", "10.0", DEEPSEEK_V32, "--dcp-size", "2")
    assert not any(rule in reason_status(doc) for rule in OURS), doc["reasons"]


def test_dcp_not_a_number_is_not_judged_ok(tmp_path: Path) -> None:
    # a --dcp-size argparse refuses (not an int) never makes these rules pass as ok on a DSA model with HiCache
    doc = _doc(tmp_path, "0.5.23", "10.0", DEEPSEEK_V32, "--dcp-size", "two", "--enable-hierarchical-cache")
    assert doc["decision"] != "allow", doc["reasons"]
