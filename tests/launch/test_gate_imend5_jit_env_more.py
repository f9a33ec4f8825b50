"""imend5: the jit probe reads more variables than `gate --facts` compared with the launch's own
(facts_loader_path.JIT_ENV): FlashInfer's FLASHINFER_NVCC (replaces the toolkit's bin/nvcc in its JIT's ninja file:
flashinfer-python 0.6.7 flashinfer/jit/cpp_ext.py:237) and FLASHINFER_EXTRA_CUDAFLAGS (stackcheck/probes/jit.py
FLASHINFER_NVCC_ENV, FLASHINFER_CUDAFLAGS_ENV), the include directories torch's build adds (CUDA_INC_PATH, CUDNN_HOME,
CUDNN_PATH) and the compiler's (CPATH, CPLUS_INCLUDE_PATH; probes/jit.py's header search). A launch setting one of them
was judged on the facts' reading (jit-toolchain ok, allow); now the jit section is unknown there, as for CXX."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import H200_NEWEST, cli_json

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "/m", "--tp", "2", "--attention-backend", "fa3"]


def _jit(doc: dict[str, Any]) -> str:
    return str(next(f["status"] for f in doc["features"] if f.get("feature") == "jit-toolchain"))


@pytest.mark.parametrize(
    "word",
    ["FLASHINFER_NVCC=/opt/old/bin/nvcc", "FLASHINFER_EXTRA_CUDAFLAGS=-ccbin=/usr/bin/g++-9", "CUDA_INC_PATH=/opt/inc",
     "CUDNN_HOME=/opt/cudnn", "CUDNN_PATH=/opt/cudnn", "CPATH=/opt/old/include", "CPLUS_INCLUDE_PATH=/opt/old/include"],
)  # fmt: skip
def test_a_launch_that_sets_another_jit_variable_is_not_judged_on_the_facts(word: str) -> None:
    # fails before imend5: allow, jit-toolchain ok
    rc, doc = cli_json(
        ["gate", "--facts", str(H200_NEWEST), "--dry-run", "--format", "json", "--", "env", word, *LAUNCH]
    )
    assert rc == 1 and _jit(doc) == "unknown", (doc["decision"], _jit(doc))


def test_the_facts_own_value_changes_nothing(tmp_path: Path) -> None:
    import json

    doc = json.loads(H200_NEWEST.read_text())
    doc["facts"]["system"]["env"] = {"FLASHINFER_NVCC": "/usr/local/cuda-13.0/bin/nvcc"}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    line = ["env", "FLASHINFER_NVCC=/usr/local/cuda-13.0/bin/nvcc", *LAUNCH]
    _rc, out = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])
    assert _jit(out) == "ok", out["decision"]
