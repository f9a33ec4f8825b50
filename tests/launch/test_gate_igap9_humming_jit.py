"""--quantization humming with humming-kernels installed: humming-kernels compiles its kernels at run time (NVRTC where
cuda.bindings imports, else nvcc) in a CUDA environment of torch's CUDA major, looked for in $CUDA_HOME, $CUDA_PATH,
/usr/local/cuda, /usr/local/cuda-* and the nvidia-* pip wheels, never through the nvcc on PATH (humming-kernels 0.1.19
humming/jit/runtime.py:63-78, humming/utils/nvrtc.py:27-62, humming/utils/cuda.py:126-266). The gate's check
quant-package (preflight.json quant_packages, jit_toolchain): ok only where a toolkit of torch's major with its own nvcc
is there, fail where every environment it looks at is known to be another major ('No suitable CUDA N environment
found'), unknown otherwise.

The boxes are tests/cases/h200-newest (torch cu130, /usr/local/cuda-13.0 with nvcc) with their toolkits rewritten."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

CHECK = "quant-package"


def _tk(path: str, version: str | None, source: str, nvcc: bool) -> dict[str, Any]:
    return {"path": path, "version": version, "source": source, "nvcc": f"{path}/bin/nvcc" if nvcc else None,
            "active_for_build": False, "active_for_torch": False}  # fmt: skip


def _gate(tmp_path: Path, toolkits: list[dict[str, Any]] | None, torch_cuda: str | None = "13.0") -> dict[str, Any]:
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(box.read_text())
    facts = doc["facts"]
    facts["packages"]["humming-kernels"] = {"installed": True, "version": "0.1.19"}
    if torch_cuda is None:
        facts["packages"]["torch"].pop("cuda", None)
    else:
        facts["packages"]["torch"]["cuda"] = torch_cuda
    if toolkits is None:
        facts.pop("cuda_toolkits", None)
    else:
        facts["cuda_toolkits"] = toolkits
    box.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "m", LLAMA3)
    line = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        str(model),
        "--tp",
        "1",
        "--quantization",
        "humming",
    ]
    out: dict[str, Any] = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]
    return out


def _check(doc: dict[str, Any]) -> dict[str, Any]:
    found: list[dict[str, Any]] = [
        c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK
    ]
    assert len(found) == 1, doc.get("preflight")
    return found[0]


CU12_SYSTEM = _tk("/usr/local/cuda-12.8", "12.8.93", "/usr/local/cuda", True)
CU13_SYSTEM = _tk("/usr/local/cuda-13.0", "13.0.88", "/usr/local/cuda", True)


def test_only_a_toolkit_of_another_major_is_refused(tmp_path: Path) -> None:
    doc = _gate(tmp_path, [CU12_SYSTEM])
    check = _check(doc)
    assert check["status"] == "fail" and doc["decision"] == "refuse"
    assert "No suitable CUDA 13 environment found" in json.dumps(check) and "runtime.py:63-78" in json.dumps(check)


def test_no_toolkit_at_all_is_refused(tmp_path: Path) -> None:
    assert _check(_gate(tmp_path, []))["status"] == "fail"


def test_a_toolkit_of_torchs_major_found_only_through_path_is_not_looked_at(tmp_path: Path) -> None:
    # humming-kernels does not look at the nvcc on PATH: a CUDA 13 toolkit in /opt is not its environment
    assert _check(_gate(tmp_path, [_tk("/opt/cuda13", "13.0.88", "nvcc", True), CU12_SYSTEM]))["status"] == "fail"


@pytest.mark.parametrize(
    "toolkits",
    [
        [CU13_SYSTEM],
        [CU12_SYSTEM, CU13_SYSTEM],
        [_tk("/opt/cuda13", "13.0.88", "CUDA_HOME", True)],
        [_tk("/usr/local/cuda", "13.0.88", "nvcc", True)],
    ],
)
def test_a_full_toolkit_of_torchs_major_is_ok(tmp_path: Path, toolkits: list[dict[str, Any]]) -> None:
    assert _check(_gate(tmp_path, toolkits))["status"] == "ok"


@pytest.mark.parametrize(
    ("toolkits", "torch_cuda"),
    [
        (None, "13.0"),  # toolkits not probed
        ([CU13_SYSTEM], None),  # torch's CUDA not known
        ([_tk("/usr/local/cuda-13.0", None, "/usr/local/cuda", True)], "13.0"),  # version not read
        ([_tk("/venv/site-packages/nvidia/cu13", "13.0.96", "pip", False)], "13.0"),  # nvrtc.h not read
        ([_tk("/usr/local/cuda-13.0", "13.0.88", "/usr/local/cuda", False)], "13.0"),  # no nvcc: headers not read
    ],
)
def test_not_known_is_unknown(tmp_path: Path, toolkits: list[dict[str, Any]] | None, torch_cuda: str | None) -> None:
    doc = _gate(tmp_path, toolkits, torch_cuda)
    assert _check(doc)["status"] == "unknown" and doc["decision"] != "allow"


def test_a_cu12_torch_with_a_cu12_toolkit_is_ok(tmp_path: Path) -> None:
    assert _check(_gate(tmp_path, [CU13_SYSTEM, CU12_SYSTEM], "12.8"))["status"] == "ok"
