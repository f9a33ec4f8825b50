"""What manifests/recommend.json says about SGLang's PCIe-IPC all-reduce, read again from the real wheels:
the environment variable and its default, the world sizes, the releases that have it, the dispatch order,
and the upstream measurement the recommendation quotes. Marked `registry`: the wheels are downloaded once
(pip download --no-deps) into ~/.cache/stackcheck-tests/wheels and read with zipfile and ast; the tests
are skipped when the registry cannot be reached."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
CACHE = Path.home() / ".cache" / "stackcheck-tests" / "wheels"
DC = "sglang/srt/distributed/device_communicators"


def fetch_wheel(dist: str, version: str) -> Path:
    """The cached wheel for dist==version; downloaded into a temporary directory first and renamed into the
    shared cache, so a helper reading the cache never sees half a file. Skips the test when it cannot."""
    stem = f"{dist.replace('-', '_')}-{version}-"
    cached = sorted(CACHE.glob(f"{stem}*.whl"))
    if cached:
        return cached[0]
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE, prefix=".dl-") as tmp:
        cmd = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--python-version", "3.12", "--platform", "manylinux_2_34_x86_64", "--platform", "any",
            "--disable-pip-version-check", "-q", "-d", tmp, f"{dist}=={version}",
        ]  # fmt: skip
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"pip download {dist}=={version} failed: {exc}")
        got = sorted(Path(tmp).glob(f"{stem}*.whl"))
        if proc.returncode != 0 or not got:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.skip(f"pip download {dist}=={version} failed (rc {proc.returncode}): {last}")
        target = CACHE / got[0].name
        if not target.exists():
            shutil.move(str(got[0]), str(target))
    return sorted(CACHE.glob(f"{stem}*.whl"))[0]


def read(dist: str, version: str, path: str) -> str | None:
    with zipfile.ZipFile(fetch_wheel(dist, version)) as zf:
        try:
            return zf.read(path).decode("utf-8")
        except KeyError:
            return None


def metadata(dist: str, version: str) -> str:
    with zipfile.ZipFile(fetch_wheel(dist, version)) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return zf.read(name).decode("utf-8")


def module_constant(source: str, name: str) -> object:
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} not found")


def env_default(environ_py: str, name: str) -> str | None:
    """`NAME = EnvBool(False)` inside SGLang's Envs class, as text ('EnvBool(False)'), or None."""
    for node in ast.walk(ast.parse(environ_py)):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.unparse(node.value)
    return None


def pcie_ipc_option() -> dict[str, Any]:
    doc = json.loads((ROOT / "manifests" / "recommend.json").read_text())
    dec = next(d for d in doc["decisions"] if d["id"] == "all-reduce")
    option: dict[str, Any] = next(o for o in dec["options"] if o["id"] == "pcie-ipc")
    return option


@pytest.mark.registry
def test_the_environment_variable_and_its_default() -> None:
    environ = read("sglang", "0.5.23", "sglang/srt/environ.py")
    assert environ is not None
    assert env_default(environ, "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE") == "EnvBool(False)"
    assert pcie_ipc_option()["set"] == {"env": {"SGLANG_ENABLE_PCIE_IPC_ALLREDUCE": "1"}}


@pytest.mark.registry
def test_world_sizes_group_and_dtype() -> None:
    src = read("sglang", "0.5.23", f"{DC}/pcie_ipc_ar.py")
    assert src is not None
    assert module_constant(src, "_SUPPORTED_WORLD_SIZES") == (2, 4, 8)
    assert module_constant(src, "_FALLBACK_DECODE_WIDTH") == 64
    assert "inp.dtype is not torch.bfloat16" in src  # bf16 only
    assert "deterministic" in src  # deterministic inference leaves it off
    world_sizes = next(c for c in pcie_ipc_option()["when"]["all"] if c.get("fact") == "launch.tp")
    assert world_sizes["value"] == [2, 4, 8]
    fi = read("flashinfer-python", "0.7.2", "flashinfer/comm/pcie_ipc_ar.py")
    assert fi is not None and module_constant(fi, "_SUPPORTED_WORLD_SIZES") == (2, 4, 8)


@pytest.mark.registry
def test_first_releases() -> None:
    assert read("sglang", "0.5.20", f"{DC}/pcie_ipc_ar.py") is None
    assert read("sglang", "0.5.21", f"{DC}/pcie_ipc_ar.py") is not None
    assert "flashinfer_python[cu13]==0.6.18" in metadata("sglang", "0.5.21")
    assert read("flashinfer-python", "0.6.18", "flashinfer/comm/pcie_ipc_ar.py") is None
    fi = read("flashinfer-python", "0.7.0", "flashinfer/comm/pcie_ipc_ar.py")
    assert fi is not None and "class PcieIpcAllReduceWorkspace" in fi
    assert pcie_ipc_option()["releases"] == {"sglang": ">=0.5.21", "flashinfer-python": ">=0.7.0"}


@pytest.mark.registry
def test_custom_allreduce_is_tried_first() -> None:
    src = read("sglang", "0.5.23", "sglang/srt/distributed/parallel_state.py")
    assert src is not None
    fn = next(
        n
        for n in ast.walk(ast.parse(src))
        if isinstance(n, ast.FunctionDef) and n.name == "_resolve_outplace_all_reduce_method"
    )
    order = [
        r.value.value
        for r in ast.walk(fn)
        if isinstance(r, ast.Return) and isinstance(r.value, ast.Constant) and isinstance(r.value.value, str)
    ]
    assert order.index("ca") < order.index("pcie_ipc")


@pytest.mark.registry
def test_the_quoted_measurement_is_upstreams() -> None:
    """Every figure the recommendation quotes at TP8 is in the docstring of SGLang's own module."""
    src = read("sglang", "0.5.23", f"{DC}/pcie_ipc_ar.py")
    assert src is not None
    doc = ast.get_docstring(ast.parse(src)) or ""
    assert "8x SM120" in doc
    gain = pcie_ipc_option()["gain"]
    figures = [f for f in gain["figures"] if f.get("tp") == 8]
    assert len(figures) == 4
    for f in figures:
        for key in ("before", "after"):
            text = f"{f[key]:g}" if isinstance(f[key], float) else str(f[key])
            assert text in doc, (f["metric"], key, text)


@pytest.mark.registry
def test_torch_symm_mem_turns_itself_off_without_multicast() -> None:
    src = read("sglang", "0.5.23", f"{DC}/torch_symm_mem.py")
    assert src is not None
    assert "multicast_ptr == 0" in src and "self.disabled = True" in src
