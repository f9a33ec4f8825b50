"""igap43 (issue 16 item 4): SGLang 0.5.23's page-interleave KV pool (`--enable-kv-cache-sharding`, PD prefill workers)
keeps its prefix-gather scratch in NCCL symmetric memory, gathered by copy engines, only where the NCCL pynccl loads is
2.31.2 or newer (sglang 0.5.23 wheel, sglang/srt/mem_cache/page_interleave_pool.py:108-111
_NCCL_SYMMETRIC_SCRATCH_MIN_VERSION = 23102, compared with NCCLLibrary().ncclGetRawVersion() at :125); below it the
pool falls back to torch-allocated scratch and NCCL's SM kernels (slower, no error): a degraded verdict, which the gate
did not give (the flag was not read). checks.json nccl rules kv-shard-nccl-*, the launch fact
launch.kv_cache_sharding (launch.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

FLAG = "--enable-kv-cache-sharding"


def _kv_rules(
    tmp_path: Path, sglang: str, nccl: dict[str, str], *flags: str, env: dict[str, str] | None = None
) -> set[str]:
    """The kv-shard-nccl-* rules among the gate's warnings and reasons for a prefill launch at SGLang `sglang` with the
    nvidia-nccl wheels `nccl` (name -> version) on h200-newest's facts."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    facts = release_box(tmp_path, sglang, "9.0")
    doc = json.loads(facts.read_text())
    packages = doc["facts"]["packages"]
    for name in ("nvidia-nccl-cu12", "nvidia-nccl-cu13"):
        packages.pop(name, None)
    for name, version in nccl.items():
        packages[name] = {"installed": True, "version": version}
    if env is not None:  # (the server's environment as the report recorded it: facts.system.env)
        doc["facts"]["system"]["env"] = {**(doc["facts"]["system"].get("env") or {}), **env}
    facts.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
            "--tp", "8", "--disaggregation-mode", "prefill", *flags]  # fmt: skip
    out: dict[str, Any] = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    found = set()
    for item in [*(out.get("warnings") or []), *(out.get("reasons") or [])]:
        for reason in item.get("reasons") or []:
            if str(reason.get("rule", "")).startswith("kv-shard-nccl"):
                assert reason.get("effect") in ("degraded", None), reason
                found.add(f"{reason['rule']}:{item.get('status')}")
    return found


@pytest.mark.parametrize(("nccl", "rule"), [({"nvidia-nccl-cu12": "2.27.7"}, "kv-shard-nccl-wheel-cu12"),
                                            ({"nvidia-nccl-cu13": "2.30.7"}, "kv-shard-nccl-wheel-cu13")])  # fmt: skip
def test_an_nccl_older_than_2_31_2_degrades_the_kv_shard_gather(
    tmp_path: Path, nccl: dict[str, str], rule: str
) -> None:
    # fails before: no verdict on the flag at all
    assert _kv_rules(tmp_path, "0.5.23", nccl, FLAG) == {f"{rule}:blocked"}


def test_no_verdict_where_the_gather_is_symmetric_or_not_used(tmp_path: Path) -> None:
    assert _kv_rules(tmp_path / "new", "0.5.23", {"nvidia-nccl-cu13": "2.31.2"}, FLAG) == set()
    assert _kv_rules(tmp_path / "flagless", "0.5.23", {"nvidia-nccl-cu13": "2.30.7"}) == set()
    # 0.5.22 has the flag and no NCCL check (its page_interleave_pool.py read)
    assert _kv_rules(tmp_path / "older", "0.5.22", {"nvidia-nccl-cu13": "2.30.7"}, FLAG) == set()
    # the variable off: the fallback is the launch's own choice, not NCCL's
    off = {"SGLANG_ENABLE_KV_SHARD_ZERO_SM_GATHER": "0"}
    assert _kv_rules(tmp_path / "off", "0.5.23", {"nvidia-nccl-cu13": "2.30.7"}, FLAG, env=off) == set()


def test_the_nccl_torch_loads_not_known_is_unknown(tmp_path: Path) -> None:
    assert _kv_rules(tmp_path, "0.5.23", {}, FLAG) == {"kv-shard-nccl-unread:unknown"}
