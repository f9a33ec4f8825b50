"""irev76 (review of imend8's HiCache rule on the memory available beside irev74's cgroup reader): the facts' memory
available (system.memory_available_bytes) is MemAvailable lowered to the probe's own cgroup headroom, and the rule
allowed a pool that fits it. But `srun --mem=200G python -m sglang.launch_server ...` runs the server in a step of its
own memory limit (Slurm task/cgroup), and SGLang 0.5.21+ checks the pools against that cgroup's headroom (0.5.23
mem_cache/host_memory.py): 8 ranks x 100 GB were allowed on a 2 TB box under a 200 GB step. Likewise a systemd-run
unit (another slice). Now the rule is unknown there (Derived.other_cgroup)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, LLAMA3, cli_json, model_dir

RULE = "refusal hicache-host-pool-memory"
TB = 10**12
HICACHE = ["--tp-size", "8", "--enable-hierarchical-cache", "--hicache-size", "100"]  # (800 GB of pools)


def _reason(tmp_path: Path, before: list[str], env: dict[str, str] | None = None) -> dict[str, Any] | None:
    doc = json.loads(H200_NEWEST.read_text())  # (8 H200s of 150.75 GB)
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version="0.5.23", dist_version="0.5.23")
    facts["system"].update(memory_total_bytes=2 * TB, memory_limit_bytes=None, memory_available_bytes=2 * TB)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    prefix = ["env", *(f"{k}={v}" for k, v in (env or {}).items())] if env else []
    line = [*prefix, *before, "python3", "-m", "sglang.launch_server", "--model-path", str(model), *HICACHE]
    out = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]
    return next((r for r in out.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize(
    ("before", "env"),
    [(["srun", "--ntasks=1", "--mem=200G"], None),
     (["srun", "--ntasks=1", "--mem-per-gpu", "20G"], None),
     (["srun", "--ntasks=1"], {"SLURM_MEM_PER_NODE": "204800"}),
     (["systemd-run", "--scope", "--slice=small.slice"], None)],
)  # fmt: skip
def test_a_server_in_a_cgroup_of_its_own_is_unknown(
    tmp_path: Path, before: list[str], env: dict[str, str] | None
) -> None:
    # fails before: no reason (the pools compared with the probe's own cgroup headroom)
    reason = _reason(tmp_path, before, env)
    assert reason is not None and reason["status"] == "unknown", json.dumps(reason)
    assert "cgroup" in json.dumps(reason)


@pytest.mark.parametrize("before", [[], ["srun", "--ntasks=1"], ["nice", "-n", "5"]])
def test_the_gates_own_cgroup_is_judged_as_before(tmp_path: Path, before: list[str]) -> None:
    assert _reason(tmp_path, before) is None
