"""imend5: a launch whose own words change PATH with neither CUDA_HOME nor CUDA_PATH set.

torch.utils.cpp_extension's _find_cuda_home and FlashInfer's get_cuda_path (flashinfer/jit/cpp_ext.py, flashinfer-python
0.6.7 lines 48-66) take $CUDA_HOME / $CUDA_PATH first, else the parent of `which nvcc`. Under `gate --facts`, a launch
`env PATH=/usr/local/cuda-13.0/bin:... python -m sglang.launch_server` made the jit section unknown but kept the
toolkits probe's `active_for_build`, so the toolkit/driver rules (toolkit.found, toolkit.cuda) were judged on the
facts' CUDA 12.4 toolkit: driver-vs-toolkit ok, while the build takes CUDA 13.0's nvcc under a CUDA 12.4 driver."""

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
        if name.startswith(("SGLANG_", "SGL_", "STACKCHECK_", "CUDA_")):
            monkeypatch.delenv(name)


def _box(tmp_path: Path, facts_env: dict[str, str] | None = None) -> Path:
    """h200-newest with a CUDA 12.4 toolkit (found through PATH's nvcc) and a driver for CUDA 12.4."""
    path = release_box(tmp_path, "0.5.9", "9.0")
    doc = json.loads(path.read_text())
    facts = doc["facts"]
    home = "/usr/local/cuda-12.4"
    facts["cuda_toolkits"] = [{**facts["cuda_toolkits"][0], "path": home, "version": "12.4.131",
                               "nvcc": f"{home}/bin/nvcc", "source": "nvcc"}]  # fmt: skip
    facts["jit"].update(toolkit=home, nvcc=f"{home}/bin/nvcc", cuda="12.4", chosen_by="nvcc")
    facts["driver"]["cuda"] = "12.4"
    if facts_env is not None:
        facts["system"]["env"] = facts_env
    path.write_text(json.dumps(doc))
    return path


def _statuses(
    tmp_path: Path, prefix: list[str], facts_env: dict[str, str] | None = None, shell: str | None = None
) -> dict[str, Any]:
    box = _box(tmp_path, facts_env)
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", str(model)]
    if shell is not None:
        line = ["bash", "-c", f"{shell} python3 -m sglang.launch_server --model-path {model}"]
    out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]
    return {str(f["feature"]): f["status"] for f in out["features"]}


def test_the_facts_toolkit_is_judged_where_the_launch_keeps_path(tmp_path: Path) -> None:
    assert _statuses(tmp_path, [])["driver-vs-toolkit"] == "ok"


@pytest.mark.parametrize(
    "prefix",
    [
        ["env", "PATH=/usr/local/cuda-13.0/bin:/usr/bin:/bin"],
        ["env", "PATH=/usr/local/cuda-13.0/bin:$PATH"],  # (a quoted $PATH: env does not expand it)
        ["env", "-i", "HOME=/root"],  # (no PATH at all)
        ["env", "-u", "PATH"],
    ],
)
def test_a_launch_that_moves_paths_nvcc_leaves_the_toolkit_rules_unknown(tmp_path: Path, prefix: list[str]) -> None:
    # fails before imend5: driver-vs-toolkit ok on the facts' CUDA 12.4 toolkit
    got = _statuses(tmp_path, prefix)
    assert got["driver-vs-toolkit"] == "unknown", got


def test_a_shell_strings_export_path_leaves_the_toolkit_rules_unknown(tmp_path: Path) -> None:
    got = _statuses(tmp_path, [], shell="export PATH=/usr/local/cuda-13.0/bin:$PATH &&")
    assert got["driver-vs-toolkit"] == "unknown", got


def test_cuda_home_still_decides_where_the_launch_keeps_it(tmp_path: Path) -> None:
    # the facts' CUDA_HOME comes before PATH's nvcc: a launch PATH changes no toolkit there
    prefix = ["env", "PATH=/usr/local/cuda-13.0/bin:/usr/bin:/bin"]
    got = _statuses(tmp_path, prefix, {"CUDA_HOME": "/usr/local/cuda-12.4"})
    assert got["driver-vs-toolkit"] == "ok", got


def test_a_probed_gate_forgets_the_build_choice_a_shell_string_moves() -> None:
    # gate without --facts (irev70): the probes read the environment without a shell string's own words; the jit
    # section was made an error, but the toolkits probe's build choice was kept (fails before imend5)
    from stackcheck.launch.facts_loader_path import apply_launch_env_unread

    facts: dict[str, Any] = {
        "cuda_toolkits": [{"path": "/usr/local/cuda-12.4", "version": "12.4.131", "active_for_build": True}],
        "jit": {"toolkit": "/usr/local/cuda-12.4", "nvcc_found": True},
    }
    before = json.dumps(facts)
    out = dict(facts)
    apply_launch_env_unread(out, {"PATH": "/usr/bin"}, {"PATH": "/usr/local/cuda-13.0/bin:/usr/bin"})
    assert json.dumps(facts) == before
    assert "active_for_build" not in out["cuda_toolkits"][0]
    kept = dict(facts)
    apply_launch_env_unread(kept, {"PATH": "/usr/bin", "CUDA_HOME": "/usr/local/cuda-12.4"},
                            {"PATH": "/x:/usr/bin", "CUDA_HOME": "/usr/local/cuda-12.4"})  # fmt: skip
    assert kept["cuda_toolkits"][0]["active_for_build"] is True


def test_unsetting_the_variable_the_toolkit_came_from_is_seen_where_the_facts_env_lacks_it(tmp_path: Path) -> None:
    # the toolkits probe's `source` says CUDA_HOME picked it, the facts' environment does not record CUDA_HOME (a
    # hand-written or trimmed one): `env -u CUDA_HOME` moves the build to PATH's nvcc (fails before imend5: ok)
    box = _box(tmp_path)
    doc = json.loads(box.read_text())
    doc["facts"]["cuda_toolkits"][0]["source"] = "CUDA_HOME"
    doc["facts"]["system"].pop("env", None)
    box.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["env", "-u", "CUDA_HOME", "python3", "-m", "sglang.launch_server", "--model-path", str(model)]
    out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]
    got = {str(f["feature"]): f["status"] for f in out["features"]}
    assert got["driver-vs-toolkit"] == "unknown", got
    line = line[3:]  # (the launch alone: the facts' toolkit)
    out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]
    assert {str(f["feature"]): f["status"] for f in out["features"]}["driver-vs-toolkit"] == "ok"
