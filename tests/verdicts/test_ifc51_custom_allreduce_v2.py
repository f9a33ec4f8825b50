"""SGLang 0.5.12's custom all-reduce on two PCIe GPUs (the fifty-first fact-check sample, found beside its rows):
0.5.12 dispatches every CUDA custom all-reduce to the JIT-compiled CustomAllReduceV2
(SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2, on by default), which turns itself off unless every pair of GPUs is on NVLink,
with no fallback to sgl-kernel's all-reduce; two PCIe GPUs with peer access run that legacy all-reduce on 0.5.11 (v2
opt-in) and 0.5.13+ (v2 only where can_use_custom_all_reduce_v2 finds full NVLink, else the legacy class). The audit
reads the probed environment, the gate the launch's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, cli_json, feature_rules

ENV = "SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2"
RULE = "v2-needs-nvlink-0512"


def _box(tmp_path: Path, release: str, link: str = "pcie-host-bridge", env: str | None = None) -> Path:
    """tests/cases/h200-newest with SGLang RELEASE, two of its GPUs, their pair's interconnect LINK (peer access on)
    and the probed environment's SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2 where ENV is given."""
    doc = json.loads(H200_NEWEST.read_text())
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version=release, dist_version=release)
    facts["gpus"] = facts["gpus"][:2]
    pair: dict[str, Any] = {"a": 0, "b": 1, "p2p_read": "ok"}
    if link == "nvlink":
        pair.update(link="nvlink", nvlink_count=18, common_ancestor="internal")
    else:
        pair.update(link="PHB", common_ancestor="PHB")
    facts["topology"] = {"interconnect": link, "same_model": True, "gpu_count": 2, "p2p": "all",
                         "nvswitch": link == "nvlink", "pairs": [pair]}  # fmt: skip
    env_doc = facts["system"].setdefault("env", {})
    env_doc.pop(ENV, None)
    if env is not None:
        env_doc[ENV] = env
    path = tmp_path / f"facts-{release}-{link}-{env}.json"
    path.write_text(json.dumps(doc))
    return path


def _custom_allreduce(doc: dict[str, Any]) -> tuple[str, dict[str, str]]:
    f = next(f for f in doc["features"] if f["id"] == "custom-allreduce")
    return str(f["status"]), {str(r["rule"]): str(r["result"]) for r in f.get("reasons") or []}


def _audit(path: Path) -> tuple[str, dict[str, str]]:
    return _custom_allreduce(cli_json(["audit", "--facts", str(path), "--format", "json"])[1])


def test_two_pcie_gpus_lose_custom_allreduce_on_0_5_12(tmp_path: Path) -> None:
    status, rules = _audit(_box(tmp_path, "0.5.12"))
    assert status != "ok"
    assert rules[RULE] == "fail"
    assert rules["p2p"] == "pass" and rules["world-size"] == "pass"


@pytest.mark.parametrize("value", ["0", "false", "No"])
def test_the_variable_off_restores_the_legacy_path(tmp_path: Path, value: str) -> None:
    status, rules = _audit(_box(tmp_path, "0.5.12", env=value))
    assert status == "ok"
    assert RULE not in rules


def test_the_variable_on_is_the_default(tmp_path: Path) -> None:
    assert _audit(_box(tmp_path, "0.5.12", env="1"))[1][RULE] == "fail"


@pytest.mark.parametrize("release", ["0.5.11", "0.5.13", "0.5.23"])
def test_other_releases_run_the_legacy_all_reduce_on_two_pcie_gpus(tmp_path: Path, release: str) -> None:
    status, rules = _audit(_box(tmp_path, release))
    assert status == "ok"
    assert RULE not in rules


def test_nvlink_pair_keeps_v2_on_0_5_12(tmp_path: Path) -> None:
    status, rules = _audit(_box(tmp_path, "0.5.12", link="nvlink"))
    assert status == "ok"
    assert rules[RULE] == "pass"


def _gate(facts: Path, monkeypatch: pytest.MonkeyPatch, env: str | None) -> tuple[str, dict[str, str]]:
    monkeypatch.delenv(ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(ENV, env)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", "/m", "--tp", "2"]
    doc = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    f = next(f for f in doc["features"] if f["feature"] == "custom-allreduce")
    return str(f["status"]), feature_rules(doc, "custom-allreduce", warnings=True)


def test_gate_follows_the_launch_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = _box(tmp_path, "0.5.12")
    status, rules = _gate(facts, monkeypatch, None)
    assert status != "ok" and rules[RULE] == "fail"  # a warning: the launch runs, its all-reduce through NCCL
    status, rules = _gate(facts, monkeypatch, "0")
    assert status == "ok" and RULE not in rules
