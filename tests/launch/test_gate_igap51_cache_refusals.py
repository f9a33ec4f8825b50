"""igap51: launches SGLang refuses while it resolves its arguments that the gate allowed.

- `--enable-unified-memory --enable-hierarchical-cache`: SGLang 0.5.15-0.5.20 assert neither the hierarchical cache nor
  LMCache is on (igap49 judged only LMCache; 0.5.21-0.5.23 assert LMCache alone).
- `--enable-int8-mamba-checkpoint` with `--enable-hierarchical-cache` (0.5.14-0.5.23) or `--enable-lmcache`
  (0.5.21-0.5.23): ValueError in the int8 mamba checkpoint's handler.
- `--kv-cache-dtype nvfp4` on an SM100-family GPU with LMCache or the hierarchical cache (0.5.21-0.5.23): SGLang puts
  NVFP4 decode on trtllm_mha and raises 'SM100 native NVFP4 with trtllm_mha does not yet support ...'.
- `--dwdp-size N` (N > 1, 0.5.17-0.5.23) turns DP attention on before SGLang's DP-attention checks: with
  --enable-lmcache 0.5.21-0.5.23 raise 'LMCacheUnifiedRadixCache does not yet support DP attention'.
The rules' sources are in manifests/launch.json (refusals, auto.dwdp)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LAUNCH, LLAMA3, cli_json, model_dir, release_box

from stackcheck.knowledge.loader import load


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_", "LMCACHE_", "MOONCAKE_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("LMCACHE_MP_HOST", "127.0.0.1")  # the multi-process LMCache rules pass


def _gate(tmp_path: Path, release: str, *flags: str, cc: str = "9.0") -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = release_box(tmp_path, release, cc)
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": "0.5.6", "dist_version": "0.5.6"}
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "2", *flags]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


def _refusal(doc: dict[str, Any], rule: str) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == f"refusal {rule}"), None)


UM_HICACHE = "unified-memory-hierarchical-cache"
INT8_HICACHE = "int8-mamba-checkpoint-hierarchical-cache"
INT8_LMCACHE = "lmcache-int8-mamba-checkpoint"
NVFP4 = "nvfp4-kv-sm100-host-cache"


@pytest.mark.parametrize(
    ("rule", "flags", "refused", "not_refused", "raised"),
    [
        (UM_HICACHE, ("--enable-unified-memory", "--enable-hierarchical-cache"), ["0.5.15", "0.5.18", "0.5.20"],
         ["0.5.21", "0.5.23"], "not yet compatible with hierarchical / host-tiered KV cache"),
        (INT8_HICACHE, ("--enable-int8-mamba-checkpoint", "--enable-hierarchical-cache"),
         ["0.5.14", "0.5.19", "0.5.23"], [], "is not supported together with --enable-hierarchical-cache"),
        (INT8_HICACHE, ("--enable-int8-mamba-checkpoint", "--enable-hicache"), ["0.5.23"], [],
         "is not supported together with --enable-hierarchical-cache"),
        (INT8_LMCACHE, ("--enable-int8-mamba-checkpoint", "--enable-lmcache"), ["0.5.21", "0.5.22", "0.5.23"],
         ["0.5.20", "0.5.14"], "LMCache is not int8-aware"),
    ],
)  # fmt: skip
def test_cache_combinations_sglang_raises_for(
    tmp_path: Path, rule: str, flags: tuple[str, ...], refused: list[str], not_refused: list[str], raised: str
) -> None:
    # fails before: no such rule (allowed, or refused for other reasons only)
    for release in refused:
        doc = _gate(tmp_path / release, release, *flags)
        assert doc["decision"] == "refuse", (release, doc.get("reasons"))
        refusal = _refusal(doc, rule)
        assert refusal is not None and refusal["status"] == "blocked", (release, doc.get("reasons"))
        assert raised in json.dumps(refusal), refusal
    for release in not_refused:
        assert _refusal(_gate(tmp_path / release, release, *flags), rule) is None, release


@pytest.mark.parametrize("host_cache", [("--enable-lmcache",), ("--enable-hierarchical-cache",)])
@pytest.mark.parametrize("release", ["0.5.21", "0.5.23"])
def test_nvfp4_kv_cache_on_sm100_with_a_host_cache(tmp_path: Path, release: str, host_cache: tuple[str, ...]) -> None:
    # fails before: allowed as far as this check goes (no rule)
    doc = _gate(tmp_path, release, "--kv-cache-dtype", "nvfp4", *host_cache, cc="10.0")
    refusal = _refusal(doc, NVFP4)
    assert refusal is not None and refusal["status"] == "blocked", doc.get("reasons")
    assert doc["decision"] == "refuse"
    assert "does not yet support hierarchical KV cache or LMCache" in json.dumps(refusal), refusal


@pytest.mark.parametrize(
    ("release", "cc", "flags"),
    [
        ("0.5.20", "10.0", ("--kv-cache-dtype", "nvfp4", "--enable-lmcache")),  # no such check before 0.5.21
        ("0.5.23", "12.0", ("--kv-cache-dtype", "nvfp4", "--enable-lmcache")),  # SM120: not is_sm100
        ("0.5.23", "10.0", ("--kv-cache-dtype", "fp8_e4m3", "--enable-lmcache")),
        ("0.5.23", "10.0", ("--kv-cache-dtype", "nvfp4")),
    ],
)
def test_nvfp4_rule_stands_aside(tmp_path: Path, release: str, cc: str, flags: tuple[str, ...]) -> None:
    assert _refusal(_gate(tmp_path, release, *flags, cc=cc), NVFP4) is None


@pytest.mark.parametrize("release", ["0.5.21", "0.5.22", "0.5.23"])
def test_dwdp_turns_dp_attention_on_for_lmcache(tmp_path: Path, release: str) -> None:
    # fails before: --dwdp-size was not read as DP attention (lmcache-dp-attention did not hold)
    doc = _gate(tmp_path, release, "--enable-lmcache", "--dwdp-size", "2")
    refusal = _refusal(doc, "lmcache-dp-attention")
    assert refusal is not None and refusal["status"] == "blocked", doc.get("reasons")
    assert doc["decision"] == "refuse"


def _values(release: str, *flags: str) -> dict[str, Any]:
    from stackcheck.launch import gate, refusals

    mapping = load([], env={}).launch
    d = gate.derive([*LAUNCH, "--model", "m", "--tp", "2", *flags], mapping, {})
    return refusals.launch_values(d, mapping, release, {})


@pytest.mark.parametrize("release", ["0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23"])
def test_dwdp_values(release: str) -> None:
    on = _values(release, "--dwdp-size", "2")
    assert (on["dp_attention"], on["attention_dp_any"], on["attention_dp_groups"]) == (True, True, True), release
    off = _values(release, "--dwdp-size", "1")
    assert (off["dp_attention"], off["attention_dp_any"], off["attention_dp_groups"]) == (False, False, False)
    odd = _values(release, "--dwdp-size", "two")
    assert all(odd[f] is not False and odd[f] is not True for f in ("dp_attention", "attention_dp_any")), odd


def test_dwdp_in_a_release_newer_than_the_data_is_unknown() -> None:
    got = _values("0.5.99", "--dwdp-size", "2")
    assert got["attention_dp_any"] is not False and got["attention_dp_any"] is not True


@pytest.mark.parametrize(
    ("flags", "status"),
    [
        (("--dwdp-size", "4"), "blocked"),  # --tp 2
        (("--dwdp-size", "2", "--enable-eplb"), "blocked"),
        (("--dwdp-size", "2", "--speculative-algorithm", "NGRAM"), "blocked"),
        (("--dwdp-size", "2", "--enable-two-batch-overlap"), "blocked"),
        (("--dwdp-size", "2", "--disaggregation-mode", "decode"), "blocked"),
        (("--dwdp-size", "2", "--pp-size", "2"), "blocked"),
        (("--dwdp-size", "2"), None),
        (("--dwdp-size", "1", "--enable-eplb"), None),
        (("--dwdp-size", "2", "--disaggregation-mode", "prefill"), None),
    ],
)
def test_dwdp_assertions(tmp_path: Path, flags: tuple[str, ...], status: str | None) -> None:
    # fails before: no such rule
    for release in ("0.5.17", "0.5.23"):
        refusal = _refusal(_gate(tmp_path / release, release, *flags), "dwdp-constraints")
        assert (refusal or {}).get("status") == status, (release, refusal)
    assert _refusal(_gate(tmp_path / "0.5.16", "0.5.16", "--dwdp-size", "4"), "dwdp-constraints") is None
