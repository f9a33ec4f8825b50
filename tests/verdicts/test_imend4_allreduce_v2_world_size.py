"""Custom all-reduce's world size per release and per class (imend4). The legacy CustomAllreduce takes world sizes
2, 4, 6 and 8; SGLang's JIT-compiled CustomAllReduceV2 takes 2-8 on every release and GPU (custom_all_reduce_v2.py:
THRESHOLD_2_SHOT_MAP's keys in 0.5.10-0.5.15, range(2, 9) in 0.5.16, range(2, 17) in 0.5.17-0.5.18, the per-GPU
tables of configs/custom_all_reduce_v2.py from 0.5.19), on full NVLink. So TP 3, 5 and 7 on NVLink keep custom
all-reduce wherever v2 is taken: 0.5.10-0.5.11 only with SGLANG_USE_JIT_ALL_REDUCE=true/1; 0.5.12-0.5.20 by default,
SGLANG_USE_JIT_ALL_REDUCE replacing SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2 where it is set (environ.py
_print_deprecated_env / _DeprecatedEnv); 0.5.21+ SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2 alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, cli_json, feature_rules

NEW = "SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2"
OLD = "SGLANG_USE_JIT_ALL_REDUCE"


def _box(tmp_path: Path, release: str, gpus: int, link: str = "nvlink", env: dict[str, str] | None = None) -> Path:
    """tests/cases/h200-newest with SGLang RELEASE, its first GPUS GPUs on LINK (peer access on) and the probed
    environment's all-reduce variables ENV."""
    doc = json.loads(H200_NEWEST.read_text())
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version=release, dist_version=release)
    facts["gpus"] = facts["gpus"][:gpus]
    pairs: list[dict[str, Any]] = []
    for a in range(gpus):
        for b in range(a + 1, gpus):
            pair: dict[str, Any] = {"a": a, "b": b, "p2p_read": "ok"}
            if link == "nvlink":
                pair.update(link="nvlink", nvlink_count=18, common_ancestor="internal")
            else:
                pair.update(link="PHB", common_ancestor="PHB")
            pairs.append(pair)
    facts["topology"] = {"interconnect": link, "same_model": True, "gpu_count": gpus, "p2p": "all",
                         "nvswitch": link == "nvlink", "pairs": pairs}  # fmt: skip
    env_doc = facts["system"].setdefault("env", {})
    for name in (NEW, OLD):
        env_doc.pop(name, None)
    env_doc.update(env or {})
    tag = "-".join(f"{k}={v}" for k, v in sorted((env or {}).items()))
    path = tmp_path / f"facts-{release}-{gpus}-{link}-{tag}.json"
    path.write_text(json.dumps(doc))
    return path


def _audit(path: Path) -> tuple[str, dict[str, str]]:
    doc = cli_json(["audit", "--facts", str(path), "--format", "json"])[1]
    f = next(f for f in doc["features"] if f["id"] == "custom-allreduce")
    return str(f["status"]), {str(r["rule"]): str(r["result"]) for r in f.get("reasons") or []}


@pytest.mark.parametrize("release", ["0.5.12", "0.5.13", "0.5.18", "0.5.20", "0.5.23"])
@pytest.mark.parametrize("gpus", [3, 5, 7])
def test_odd_world_sizes_on_nvlink_keep_v2(tmp_path: Path, release: str, gpus: int) -> None:
    status, rules = _audit(_box(tmp_path, release, gpus))
    assert rules["world-size"] == "pass"
    assert status == "ok"


@pytest.mark.parametrize("release", ["0.5.1", "0.5.9", "0.5.10", "0.5.11"])
def test_releases_without_v2_by_default_keep_the_legacy_sizes(tmp_path: Path, release: str) -> None:
    status, rules = _audit(_box(tmp_path, release, 3))
    assert rules["world-size"] == "fail" and status != "ok"


@pytest.mark.parametrize("release", ["0.5.13", "0.5.23"])
def test_odd_world_size_off_nvlink_takes_the_legacy_class(tmp_path: Path, release: str) -> None:
    status, rules = _audit(_box(tmp_path, release, 3, link="pcie-host-bridge"))
    assert rules["world-size"] == "fail" and status != "ok"


@pytest.mark.parametrize("release", ["0.5.13", "0.5.23"])
def test_v2_switched_off_keeps_the_legacy_sizes(tmp_path: Path, release: str) -> None:
    status, rules = _audit(_box(tmp_path, release, 3, env={NEW: "0"}))
    assert rules["world-size"] == "fail" and status != "ok"


@pytest.mark.parametrize("value", ["1", "TRUE"])
@pytest.mark.parametrize("release", ["0.5.10", "0.5.11"])
def test_old_name_opts_in_on_0_5_10_and_0_5_11(tmp_path: Path, release: str, value: str) -> None:
    status, rules = _audit(_box(tmp_path, release, 3, env={OLD: value}))
    assert rules["world-size"] == "pass" and status == "ok"


@pytest.mark.parametrize("release", ["0.5.12", "0.5.15", "0.5.18", "0.5.20"])
def test_old_name_replaces_the_new_one_where_set(tmp_path: Path, release: str) -> None:
    status, rules = _audit(_box(tmp_path, release, 3, env={OLD: "0", NEW: "1"}))
    assert rules["world-size"] == "fail" and status != "ok"
    status, rules = _audit(_box(tmp_path, release, 3, env={OLD: "1", NEW: "0"}))
    assert rules["world-size"] == "pass" and status == "ok"


@pytest.mark.parametrize("release", ["0.5.21", "0.5.23"])
def test_old_name_is_ignored_from_0_5_21(tmp_path: Path, release: str) -> None:
    status, rules = _audit(_box(tmp_path, release, 3, env={OLD: "0"}))
    assert rules["world-size"] == "pass" and status == "ok"


def test_two_pcie_gpus_with_the_old_name_on_0_5_11_lose_custom_allreduce(tmp_path: Path) -> None:
    """0.5.10-0.5.11 with SGLANG_USE_JIT_ALL_REDUCE=1 dispatch to v2 with no fallback, as 0.5.12 does by default."""
    status, rules = _audit(_box(tmp_path, "0.5.11", 2, link="pcie-host-bridge", env={OLD: "1"}))
    assert rules["v2-needs-nvlink-0512"] == "fail" and status != "ok"
    status, rules = _audit(_box(tmp_path, "0.5.11", 2, link="pcie-host-bridge"))
    assert "v2-needs-nvlink-0512" not in rules and status == "ok"


def test_old_name_off_on_0_5_12_keeps_two_pcie_gpus_on_the_legacy_class(tmp_path: Path) -> None:
    status, rules = _audit(_box(tmp_path, "0.5.12", 2, link="pcie-host-bridge", env={OLD: "0", NEW: "1"}))
    assert "v2-needs-nvlink-0512" not in rules and status == "ok"


def _gate(facts: Path, monkeypatch: pytest.MonkeyPatch, tp: int, env: dict[str, str]) -> tuple[str, dict[str, str]]:
    for name in (NEW, OLD):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", "/m", "--tp", str(tp)]
    doc = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    f = next(f for f in doc["features"] if f["feature"] == "custom-allreduce")
    return str(f["status"]), feature_rules(doc, "custom-allreduce", warnings=True)


def test_gate_reads_both_names_from_the_launch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = _box(tmp_path, "0.5.15", 8)
    status, rules = _gate(facts, monkeypatch, 3, {})
    assert status == "ok"
    status, rules = _gate(facts, monkeypatch, 3, {OLD: "0"})
    assert status != "ok" and rules["world-size"] == "fail"
    facts = _box(tmp_path, "0.5.11", 8)
    status, rules = _gate(facts, monkeypatch, 5, {})
    assert status != "ok" and rules["world-size"] == "fail"
    status, rules = _gate(facts, monkeypatch, 5, {OLD: "1"})
    assert status == "ok"
