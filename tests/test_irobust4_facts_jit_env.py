"""irobust4: `gate --facts FILE -- env CUDA_HOME=/opt/cuda-11.8 python -m sglang.launch_server ...`. The facts' jit
section (the toolkit, nvcc, host compiler, ptxas and NCCL a JIT build and the server use) was read with the facts'
own environment; a launch whose own words set, clear or change a variable that picks them (CUDA_HOME, CUDA_PATH, PATH,
CXX, CC, NVCC_CCBIN, TRITON_PTXAS_PATH, SGLANG_NCCL_SO_PATH, ...: facts_loader_path.JIT_ENV) builds with what the
facts never read. The gate judged it on the facts' toolkit (jit-toolchain ok, allow: a false pass, as igap43 found
for LD_LIBRARY_PATH); now the section is unknown with the reason and the launch is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import H200_NEWEST, cli_json

from stackcheck.launch.facts_loader_path import apply_launch_loader_path

# (a model the gate reads: with /m unread, --attention-backend fa3 is unknown since imodel2, as the model may be
# Gemma 4, whose attention backends SGLang 0.5.13-0.5.23 assert without fa3)
LLAMA = str(Path(__file__).resolve().parent / "data" / "models" / "llama3-8b")
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", LLAMA, "--tp", "2", "--attention-backend", "fa3"]
MAPPING = {"entrypoints": [{"id": "launch-server", "python_module": "sglang.launch_server"}]}


def _jit(doc: dict[str, Any]) -> str:
    return str(next(f["status"] for f in doc["features"] if f.get("feature") == "jit-toolchain"))


@pytest.mark.parametrize("prefix", [[], ["env", "NCCL_DEBUG=INFO"], ["nohup", "env", "-u", "HF_TOKEN"]])
def test_a_launch_that_keeps_the_jit_variables_is_judged_as_before(prefix: list[str]) -> None:
    rc, doc = cli_json(["gate", "--facts", str(H200_NEWEST), "--dry-run", "--format", "json", "--", *prefix, *LAUNCH])
    assert rc == 0 and doc["decision"] == "allow" and _jit(doc) == "ok", doc["decision"]


@pytest.mark.parametrize(
    "prefix",
    [["env", "CUDA_HOME=/opt/cuda-11.8"], ["env", "PATH=/opt/old/bin"], ["env", "-u", "PATH"], ["env", "-i"],
     ["timeout", "60", "env", "CXX=/usr/bin/g++-9"], ["env", "TRITON_PTXAS_PATH=/opt/old/ptxas"],
     ["bash", "-c"]],
)  # fmt: skip
def test_a_launch_that_changes_them_is_not_judged_on_the_facts_toolkit(prefix: list[str]) -> None:
    # fails before: allow, jit-toolchain ok on the facts' CUDA 13.0 toolkit
    line = (
        [*prefix, *LAUNCH]
        if prefix != ["bash", "-c"]
        else ["bash", "-c", "export PATH=/opt/x/bin:$PATH; " + " ".join(LAUNCH)]
    )
    rc, doc = cli_json(["gate", "--facts", str(H200_NEWEST), "--dry-run", "--format", "json", "--", *line])
    assert rc == 1 and doc["decision"] == "refuse" and _jit(doc) == "unknown", (doc["decision"], _jit(doc))


def test_the_section_is_replaced_not_edited() -> None:
    doc = json.loads(H200_NEWEST.read_text())
    facts = dict(doc["facts"])
    before = json.dumps(doc["facts"], sort_keys=True)
    apply_launch_loader_path(
        facts, ["env", "CUDA_PATH=/opt/c", "SGLANG_NCCL_SO_PATH=/x/libnccl.so.2", *LAUNCH], MAPPING
    )
    assert set(facts["jit"]) == {"error"} and "CUDA_PATH, SGLANG_NCCL_SO_PATH" in facts["jit"]["error"]
    assert json.dumps(doc["facts"], sort_keys=True) == before
    facts = {}  # (no jit section: its rules would be read from cuda_toolkits)
    apply_launch_loader_path(facts, ["env", "CUDA_HOME=/opt/c", *LAUNCH], MAPPING)
    assert "CUDA_HOME" in facts["jit"]["error"]
