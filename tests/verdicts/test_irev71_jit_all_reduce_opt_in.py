"""irev71 (review of ifc51's v2-needs-nvlink-0512): SGLang 0.5.10 and 0.5.11 take the JIT-compiled CustomAllReduceV2
where SGLANG_USE_JIT_ALL_REDUCE is true or 1 (custom_all_reduce.py dispatch_custom_allreduce, get_bool_env_var:
lower-cased, anything else false), and that class turns itself off unless every GPU pair is on NVLink, with no
fallback to sgl-kernel's all-reduce (custom_all_reduce_v2.py: `if full_nvlink != True: return` with disabled set):
two PCIe GPUs with the variable on lose custom all-reduce, which the audit and the gate called ok (ifc51 read the
opt-in and judged the default only)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, cli_json, feature_rules

ENV = "SGLANG_USE_JIT_ALL_REDUCE"
RULE = "v2-needs-nvlink-0512"  # irev71 wrote its own rule; imend4 (merged beside it) widened this one to 0.5.10-0.5.11


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "SGL_")):
            monkeypatch.delenv(name)


def _box(tmp_path: Path, release: str, link: str = "pcie-host-bridge", env: str | None = None) -> Path:
    """tests/cases/h200-newest with SGLang RELEASE, two of its GPUs on LINK (peer access on) and the probed
    environment's SGLANG_USE_JIT_ALL_REDUCE where ENV is given."""
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
    for name in [n for n in env_doc if n.startswith(("SGLANG_", "SGL_"))]:
        del env_doc[name]
    if env is not None:
        env_doc[ENV] = env
    path = tmp_path / f"facts-{release}-{link}-{env}.json"
    path.write_text(json.dumps(doc))
    return path


def _audit(path: Path) -> tuple[str, dict[str, str]]:
    doc = cli_json(["audit", "--facts", str(path), "--format", "json"])[1]
    f = next(f for f in doc["features"] if f["id"] == "custom-allreduce")
    return str(f["status"]), {str(r["rule"]): str(r["result"]) for r in f.get("reasons") or []}


@pytest.mark.parametrize("release", ["0.5.10", "0.5.11"])
@pytest.mark.parametrize("value", ["1", "true", "TRUE"])
def test_the_opt_in_on_two_pcie_gpus_loses_custom_allreduce(tmp_path: Path, release: str, value: str) -> None:
    # fails before irev71: ok
    status, rules = _audit(_box(tmp_path, release, env=value))
    assert status != "ok"
    assert rules[RULE] == "fail"


@pytest.mark.parametrize("value", [None, "0", "false", "yes", "on"])  # get_bool_env_var: only true / 1 turn it on
def test_without_the_opt_in_the_legacy_all_reduce_runs(tmp_path: Path, value: str | None) -> None:
    status, rules = _audit(_box(tmp_path, "0.5.11", env=value))
    assert status == "ok" and RULE not in rules


@pytest.mark.parametrize("release", ["0.5.9", "0.5.13"])
def test_other_releases_do_not_read_the_variable(tmp_path: Path, release: str) -> None:
    status, rules = _audit(_box(tmp_path, release, env="1"))
    assert status == "ok" and RULE not in rules


def test_an_nvlink_pair_keeps_v2(tmp_path: Path) -> None:
    status, rules = _audit(_box(tmp_path, "0.5.11", link="nvlink", env="1"))
    assert status == "ok" and rules[RULE] == "pass"


def test_the_gate_reads_the_launchs_own_variable(tmp_path: Path) -> None:
    facts = _box(tmp_path, "0.5.11")
    line = ["env", f"{ENV}=1", "python3", "-m", "sglang.launch_server", "--model-path", "/m", "--tp", "2"]
    doc = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    assert feature_rules(doc, "custom-allreduce", warnings=True)[RULE] == "fail"
