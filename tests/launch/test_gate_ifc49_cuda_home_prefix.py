"""ifc49 (the forty-ninth fact-check sample, row e1): a launch whose own prefix sets CUDA_HOME / CUDA_PATH.

FlashInfer's JIT, SGLang's JIT kernels, DeepGEMM and torch.utils.cpp_extension take their toolkit from $CUDA_HOME (or
$CUDA_PATH) first (stackcheck/probes/jit.py). `gate --facts` judged the JIT toolchain with the toolkit the report
chose (h200-newest: /usr/local/cuda-13.0, active_for_build), whatever the launch's `env CUDA_HOME=...` named: a launch
pointing its build at /usr/local/cuda-12.9, which the box does not have, was allowed. The toolkit choice and the jit
keys read from it are now unknown there (stackcheck/launch/facts_toolkit_env.py), unless the launch names the
toolkit the facts chose."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_", "CUDA_")):
            monkeypatch.delenv(name)


def _gate(tmp_path: Path, prefix: list[str], facts_env: dict[str, str] | None = None) -> dict[str, Any]:
    path = release_box(tmp_path, "0.5.9", "9.0")
    if facts_env is not None:
        doc = json.loads(path.read_text())
        doc["facts"]["system"]["env"] = facts_env
        path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "2"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


def _toolkit_unknowns(doc: dict[str, Any]) -> list[str]:
    return [
        str(r.get("message"))
        for f in doc.get("reasons") or []
        for r in f.get("reasons") or []
        if "from which a JIT build takes its toolkit" in str(r.get("message"))
    ]


@pytest.mark.parametrize(
    ("prefix", "facts_env"),
    [
        (["env", "CUDA_HOME=/usr/local/cuda-12.9"], None),  # row e1's toolkit, which the box does not have
        (["env", "CUDA_PATH=/opt/cuda"], None),
        (["env", "-u", "CUDA_HOME"], {"CUDA_HOME": "/usr/local/cuda-13.0"}),  # back to PATH's nvcc: not read
        (["env", "-i", "PATH=/usr/bin:/bin"], {"CUDA_HOME": "/usr/local/cuda-13.0"}),
    ],
)
def test_a_launch_that_moves_the_jit_toolkit_is_not_judged_on_the_facts_toolkit(
    tmp_path: Path, prefix: list[str], facts_env: dict[str, str] | None
) -> None:
    # fails on the parent: allowed on the facts' /usr/local/cuda-13.0
    doc = _gate(tmp_path, prefix, facts_env)
    assert doc["decision"] == "refuse", doc["decision"]
    assert _toolkit_unknowns(doc), doc.get("reasons")


@pytest.mark.parametrize(
    ("prefix", "facts_env"),
    [
        ([], None),
        (["env", "CUDA_HOME=/usr/local/cuda-13.0"], None),  # the toolkit the facts chose
        (["env", "CUDA_PATH=/usr/local/cuda-13.0/"], None),
        (["env", "CUDA_HOME=/usr/local/cuda-13.0"], {"CUDA_HOME": "/usr/local/cuda-13.0"}),  # unchanged
        (["env", "NCCL_DEBUG=INFO"], None),
    ],
)
def test_a_launch_that_keeps_the_toolkit_is_judged_as_before(
    tmp_path: Path, prefix: list[str], facts_env: dict[str, str] | None
) -> None:
    doc = _gate(tmp_path, prefix, facts_env)
    assert not _toolkit_unknowns(doc), doc.get("reasons")


def test_the_facts_file_dictionaries_are_left_as_read() -> None:
    from stackcheck.knowledge.loader import load
    from stackcheck.launch.facts_toolkit_env import apply_launch_toolkit_env

    facts: dict[str, Any] = {
        "system": {"env": {}},
        "cuda_toolkits": [{"path": "/usr/local/cuda-13.0", "active_for_build": True}],
        "jit": {"toolkit": "/usr/local/cuda-13.0", "nvcc": "/usr/local/cuda-13.0/bin/nvcc", "nvcc_found": True},
    }
    before = copy.deepcopy(facts)
    shallow = dict(facts)
    command = ["env", "CUDA_HOME=/usr/local/cuda-12.9", "python3", "-m", "sglang.launch_server"]
    assert apply_launch_toolkit_env(shallow, command, dict(load().launch)) is True
    assert facts == before  # (the sections were replaced on the copy, not changed in place)
    assert (
        shallow["jit"]["nvcc_found"] is None
        and "CUDA_HOME='/usr/local/cuda-12.9'" in shallow["jit"]["nvcc_found_reason"]
    )
    assert "active_for_build" not in shallow["cuda_toolkits"][0]


@pytest.mark.parametrize(
    "first",
    [
        "CUDA_HOME=/usr/local/cuda-12.9",
        "LD_LIBRARY_PATH=/usr/local/cuda-13.0/lib64",
        "SGLANG_NCCL_SO_PATH=libnccl.so.2",
    ],
)
def test_a_bare_assignment_as_the_first_word_is_refused(tmp_path: Path, first: str) -> None:
    # fails on the parent: the word was passed over as a launcher and the launch after it judged (rows e1, e2, e4
    # allowed), though the gate execs argv with no shell: 'CUDA_HOME=...: command not found' (exit 127)
    doc = _gate(tmp_path, [first])
    name = first.split("=", 1)[0]
    reason = next((r for r in doc.get("reasons") or [] if r.get("feature") == f"{name}="), None)
    assert reason is not None and reason["status"] == "blocked" and reason["effect"] == "crash", doc.get("reasons")
    assert f"`env {name}=... python ...`" in json.dumps(reason)


def test_an_assignment_read_by_env_is_not_refused_for_it(tmp_path: Path) -> None:
    doc = _gate(tmp_path, ["env", "NCCL_DEBUG=INFO"])
    assert not [r for r in doc.get("reasons") or [] if str(r.get("feature")).endswith("=")], doc.get("reasons")
