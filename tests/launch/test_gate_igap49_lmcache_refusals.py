"""igap49 (irev69's review of SGLang's LMCache hook): what SGLang 0.5.21-0.5.23 refuse beside `--enable-lmcache` while
they resolve their arguments (arg_groups/kv_cache_hook.py:433-474, handle_cache_compatibility), and the DCP check of
HiCache's DCP resolution from 0.5.17. Beside --disable-radix-cache (igap46), each of these launches raised at start
and the gate allowed it: the hierarchical cache, the unified-cache external linker, speculative decoding, DP
attention, --dcp-size > 1, streaming sessions, --hicache-host-memory-mode buffer_only, --disaggregation-mode."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_", "LMCACHE_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("LMCACHE_MP_HOST", "127.0.0.1")  # the multi-process LMCache rules pass


def _gate(tmp_path: Path, release: str, *flags: str) -> dict[str, Any]:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": "0.5.6", "dist_version": "0.5.6"}
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "2", *flags]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


def _refusal(doc: dict[str, Any], rule: str) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == f"refusal {rule}"), None)


# each rule, a launch (beside --enable-lmcache) its check raises for, and a fragment of what SGLang raises
REFUSED = [
    ("lmcache-hierarchical-cache", ("--enable-hierarchical-cache",), "are mutually exclusive"),
    ("lmcache-unified-cache-external-linker", ("--enable-unified-cache-external-linker",), "mutually exclusive"),
    ("lmcache-speculative", ("--speculative-algorithm", "NGRAM"), "does not yet support speculative decoding"),
    ("lmcache-speculative", ("--speculative-algorithm", "EAGLE3"), "does not yet support speculative decoding"),
    ("lmcache-dp-attention", ("--enable-dp-attention", "--dp-size", "2"), "does not yet support DP attention"),
    ("lmcache-dcp", ("--dcp-size", "2"), "no DCP-aware index translation"),
    ("lmcache-streaming-session", ("--enable-streaming-session",), "does not yet support streaming sessions"),
    ("lmcache-hicache-buffer-only", ("--hicache-host-memory-mode", "buffer_only"), "HiCache-only mode"),
    ("lmcache-disaggregation", ("--disaggregation-mode", "prefill"), "colocated prefill/decode scheduling only"),
    ("lmcache-disaggregation", ("--disaggregation-mode", "decode"), "colocated prefill/decode scheduling only"),
]


@pytest.mark.parametrize("release", ["0.5.21", "0.5.23"])
@pytest.mark.parametrize(("rule", "flags", "raised"), REFUSED)
def test_lmcache_with_what_sglang_refuses_is_refused(
    tmp_path: Path, release: str, rule: str, flags: tuple[str, ...], raised: str
) -> None:
    # fails on the parent (d459fd31): no such rule, these launches were not refused for it
    doc = _gate(tmp_path, release, "--enable-lmcache", *flags)
    assert doc["decision"] == "refuse", doc.get("reasons")
    refusal = _refusal(doc, rule)
    assert refusal is not None, doc.get("reasons")
    assert raised in json.dumps(refusal), refusal


@pytest.mark.parametrize(("rule", "flags", "raised"), REFUSED)
def test_the_same_launch_without_lmcache_is_not_refused_by_it(
    tmp_path: Path, rule: str, flags: tuple[str, ...], raised: str
) -> None:
    assert _refusal(_gate(tmp_path, "0.5.23", *flags), rule) is None


@pytest.mark.parametrize(("rule", "flags", "raised"), REFUSED)
def test_a_release_without_the_check_is_not_refused_by_it(
    tmp_path: Path, rule: str, flags: tuple[str, ...], raised: str
) -> None:
    assert _refusal(_gate(tmp_path, "0.5.20", "--enable-lmcache", *flags), rule) is None


@pytest.mark.parametrize(
    ("release", "refused"), [("0.5.14", False), ("0.5.15", True), ("0.5.20", True), ("0.5.23", True)]
)
def test_lmcache_with_the_unified_memory_pool(tmp_path: Path, release: str, refused: bool) -> None:
    # the unified memory pool's handler asserts LMCache off from 0.5.15 (--enable-unified-memory's first release)
    doc = _gate(tmp_path, release, "--enable-lmcache", "--enable-unified-memory")
    assert (_refusal(doc, "lmcache-unified-memory") is not None) is refused, doc.get("reasons")
    assert _refusal(_gate(tmp_path, release, "--enable-unified-memory"), "lmcache-unified-memory") is None


@pytest.mark.parametrize("release", ["0.5.17", "0.5.20"])
def test_hicache_dcp_refuses_lmcache_from_0_5_17(tmp_path: Path, release: str) -> None:
    flags = ("--enable-lmcache", "--enable-hierarchical-cache", "--dcp-size", "2")
    assert _refusal(_gate(tmp_path, release, *flags), "lmcache-dcp") is not None
    # without the hierarchical cache these releases do not check it
    assert _refusal(_gate(tmp_path, release, "--enable-lmcache", "--dcp-size", "2"), "lmcache-dcp") is None
    assert _refusal(_gate(tmp_path, "0.5.16", *flags), "lmcache-dcp") is None


@pytest.mark.parametrize(
    ("release", "flags", "refused"),
    [
        # 0.5.21 tests enable_dp_attention itself; 0.5.22-0.5.23 attention DP groups (attn_dp_size > 1)
        ("0.5.21", ("--enable-dp-attention", "--dp-size", "1"), True),
        ("0.5.23", ("--enable-dp-attention", "--dp-size", "1"), False),
        ("0.5.22", ("--enable-dp-attention", "--dp-size", "2"), True),
        ("0.5.23", ("--attn-dp-size", "2"), True),
        ("0.5.23", ("--attn-dp-size", "1"), False),
        ("0.5.23", ("--elastic-ep-join-mode", "scale"), True),
    ],
)
def test_dp_attention_as_each_release_tests_it(
    tmp_path: Path, release: str, flags: tuple[str, ...], refused: bool
) -> None:
    refusal = _refusal(_gate(tmp_path, release, "--enable-lmcache", *flags), "lmcache-dp-attention")
    assert (refusal is not None) is refused, refusal


@pytest.mark.parametrize(
    ("rule", "flags"),
    [
        ("lmcache-dcp", ("--dcp-size", "x2")),  # no whole number
        ("lmcache-dp-attention", ("--enable-prefill-cp",)),  # a flag with which SGLang sets attention DP itself
    ],
)
def test_what_the_gate_cannot_read_is_refused_not_allowed(tmp_path: Path, rule: str, flags: tuple[str, ...]) -> None:
    doc = _gate(tmp_path, "0.5.23", "--enable-lmcache", *flags)
    assert doc["decision"] == "refuse", doc.get("reasons")
    assert _refusal(doc, rule) is not None, doc.get("reasons")


def test_lmcache_alone_and_the_default_memory_mode_are_not_refused(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", "--enable-lmcache", "--hicache-host-memory-mode", "cache", "--dcp-size", "1")
    rules = [r.get("feature") for r in doc.get("reasons") or [] if str(r.get("feature", "")).startswith("refusal ")]
    assert not [r for r in rules if r.startswith("refusal lmcache-")], rules


def test_a_config_file_and_the_hicache_alias_are_read(tmp_path: Path) -> None:
    # SGLang merges --config into its arguments before the checks; 0.5.23 spells the hierarchical cache --enable-hicache
    config = tmp_path / "server.yaml"
    config.write_text("enable-lmcache: true\nhicache-host-memory-mode: buffer_only\n")
    doc = _gate(tmp_path, "0.5.23", "--config", str(config))
    assert _refusal(doc, "lmcache-hicache-buffer-only") is not None, doc.get("reasons")
    doc = _gate(tmp_path, "0.5.23", "--enable-lmcache", "--enable-hicache")
    assert _refusal(doc, "lmcache-hierarchical-cache") is not None, doc.get("reasons")
