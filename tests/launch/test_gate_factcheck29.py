"""The twenty-ninth fact-check sample (tests/realworld/FACTCHECK.md), rows a2 and a6: a DSA model (DeepSeek V3.2) with
`--enable-hisparse --disable-radix-cache` on a GPU of major 12 was allowed. HiSparse picks its own DSA backend for each
side not given, before SGLang's trtllm defaults (whose dsa_defaults entries stand aside for --enable-hisparse):
flashmla_sparse on 0.5.10-0.5.11; from 0.5.12 flashmla_kv for an FP8 KV cache (given, or the default on major >= 10)
and flashmla_sparse for bfloat16 (arg_groups/hisparse_hook.py _hisparse_default_backend, read in 0.5.12-0.5.23). Both
are FlashMLA kernels with SM90a / SM100 code only. GLM-5 on major 12 with an FP8 KV cache gets flashinfer_sparse_mla
before HiSparse from 0.5.17 (the except clause). On the parent the refusal tests fail (the launches were allowed)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_V32, LLAMA3, gate_checkpoint, reason_status

# a GLM DSA config in the DeepSeek V3.2 shape, written for these tests
GLM5: dict[str, Any] = {**DEEPSEEK_V32, "architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa"}
HS = ("--enable-hisparse", "--disable-radix-cache")


def _features(doc: dict[str, Any]) -> dict[str, str]:
    return {str(r.get("feature")): str(r.get("status")) for r in doc.get("reasons") or []}


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags", "feature"),
    [
        ("0.5.14", "12.0", DEEPSEEK_V32, [], "attention-dsa-flashmla-kv"),  # row a2: auto KV is FP8 on major 12
        ("0.5.17", "12.0", DEEPSEEK_V32, [], "attention-dsa-flashmla-kv"),  # row a6
        ("0.5.23", "12.1", DEEPSEEK_V32, ["--kv-cache-dtype", "fp8_e4m3"], "attention-dsa-flashmla-kv"),
        ("0.5.16", "12.0", GLM5, [], "attention-dsa-flashmla-kv"),  # no GLM SM12 path before 0.5.17
        ("0.5.20", "12.0", DEEPSEEK_V32, ["--kv-cache-dtype", "bfloat16"], "attention-dsa-flashmla-sparse"),
        ("0.5.11", "12.0", DEEPSEEK_V32, [], "attention-dsa-flashmla-sparse"),
    ],
)  # fmt: skip
def test_hisparse_default_backend_refused_on_major_12(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: list[str], feature: str
) -> None:
    # fails on the parent: allowed
    doc = gate_checkpoint(tmp_path, release, cc, config, *HS, *flags)
    assert doc["decision"] == "refuse", _features(doc)
    assert _features(doc).get(feature) == "blocked", _features(doc)


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        ("0.5.21", "10.0", DEEPSEEK_V32, ["--kv-cache-dtype", "fp8_e4m3"]),  # row a7: flashmla_kv has SM100 code
        ("0.5.18", "9.0", DEEPSEEK_V32, []),  # bfloat16 on major 9: flashmla_sparse runs
        ("0.5.23", "12.0", GLM5, []),  # GLM-5 FP8 on major 12: flashinfer_sparse_mla before HiSparse
    ],
)  # fmt: skip
def test_hisparse_kernels_that_run_not_refused_by_these_entries(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: list[str]
) -> None:
    doc = gate_checkpoint(tmp_path, release, cc, config, *HS, *flags)
    features = _features(doc)
    assert features.get("attention-dsa-flashmla-kv") in (None, "ok"), features
    assert features.get("attention-dsa-flashmla-sparse") in (None, "ok"), features


DCP_RULE = "refusal dsa-dcp-before-dsa-dcp-path"
EAGLE1 = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
          "--speculative-num-draft-tokens", "4"]  # fmt: skip


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        ("0.5.18", "10.0", DEEPSEEK_V32, EAGLE1),  # row a4
        ("0.5.15", "9.0", DEEPSEEK_V32, []),
        ("0.5.21", "10.0", GLM5, ["--attention-backend", "dsa"]),
    ],
)  # fmt: skip
def test_dsa_dcp_refused_before_0_5_22(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: list[str]
) -> None:
    # fails on the parent: allowed (the DSA backend returns no LSE for the DCP merge)
    doc = gate_checkpoint(tmp_path, release, cc, config, "--dcp-size", "2", *flags)
    assert reason_status(doc).get(DCP_RULE) == ("blocked", "crash"), reason_status(doc)


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.22", DEEPSEEK_V32, []),  # DSA DCP ships in 0.5.22
        ("0.5.18", DEEPSEEK_V32, ["--dcp-size", "1"]),
        ("0.5.18", DEEPSEEK_V32, ["--dcp-size", "2", "--attention-backend", "flashmla"]),  # not the DSA backend
        ("0.5.18", LLAMA3, ["--dcp-size", "2"]),  # not a DSA model
    ],
)  # fmt: skip
def test_dsa_dcp_rule_stands_aside(tmp_path: Path, release: str, config: dict[str, Any], flags: list[str]) -> None:
    flags = flags if "--dcp-size" in flags else ["--dcp-size", "2", *flags]
    doc = gate_checkpoint(tmp_path, release, "9.0", config, *flags)
    assert DCP_RULE not in reason_status(doc), reason_status(doc)


HICACHE_MOONCAKE = ("--enable-hierarchical-cache", "--hicache-storage-backend", "mooncake")
STORE = "storage-config (--hicache-storage-backend mooncake)"


def _check(doc: dict[str, Any], check: str) -> dict[str, Any] | None:
    return next((c for c in doc["preflight"]["checks"] if c.get("check") == check), None)


@pytest.mark.parametrize("release", ["0.5.18", "0.5.20", "0.5.23"])
def test_mooncake_store_without_configuration_refused(tmp_path: Path, release: str) -> None:
    # rows a1 and a5; fails on the parent: no storage-config check (and with Mooncake installed, allowed)
    for name in ("MOONCAKE_MASTER", "MOONCAKE_CLIENT", "SGLANG_HICACHE_MOONCAKE_CONFIG_PATH"):
        assert name not in os.environ
    doc = gate_checkpoint(tmp_path, release, "9.0", LLAMA3, *HICACHE_MOONCAKE)
    assert doc["decision"] == "refuse"
    assert reason_status(doc)[STORE][0] == "fail", reason_status(doc)
    check = _check(doc, "storage-config")
    assert check is not None and check["observed"] == "no configuration given", check


@pytest.mark.parametrize(
    ("env", "extra", "status"),
    [
        ({"MOONCAKE_MASTER": "10.0.0.1:50051"}, None, "ok"),
        # igap51: the file is read before MOONCAKE_MASTER; not on the filesystem a --facts gate reads: unknown
        ({"SGLANG_HICACHE_MOONCAKE_CONFIG_PATH": "/nonexistent-igap51/mooncake.json"}, None, "unknown"),
        ({}, '{"master_server_address": "10.0.0.1:50051"}', "ok"),
        ({}, '{"protocol": "tcp"}', "fail"),  # no store named: SGLang falls back to the environment
        # irev79: the HiCache cache json.loads the text before it builds Mooncake (0.5.9-0.5.23), as for any backend
        ({}, "not json", "fail"),
    ],
)  # fmt: skip
def test_mooncake_store_configuration_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], extra: str | None, status: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    flags = [*HICACHE_MOONCAKE, *(["--hicache-storage-backend-extra-config", extra] if extra else [])]
    doc = gate_checkpoint(tmp_path, "0.5.20", "9.0", LLAMA3, *flags)
    check = _check(doc, "storage-config")
    assert check is not None and check["status"] == status, check


def test_storage_config_judged_before_0_5_18(tmp_path: Path) -> None:
    # igap51 read 0.5.1-0.5.17 (tests/launch/test_gate_igap51_mooncake_master.py): the same ValueError
    doc = gate_checkpoint(tmp_path, "0.5.17", "9.0", LLAMA3, *HICACHE_MOONCAKE)
    check = _check(doc, "storage-config")
    assert check is not None and check["status"] == "fail", check
