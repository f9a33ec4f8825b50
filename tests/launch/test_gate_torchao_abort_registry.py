"""torchao's load gate and the abort rule (igap25, stackcheck/verdicts/torchao_gate.py) against the real wheels:

- each release's own torchao/__init__.py (0.9.0-0.17.0, read from the wheel at test time, never stored here) is
  imported in a child process against a small torch module of ours that has only a __version__, torch.version
  and a torch.ops.load_library that counts its calls; whether it calls load_library must be what
  torchao_gate.loads says, for torch 2.7.1 to 2.11.0, a 2.9 nightly included;
- the kernel symbol probe reads torchao 0.12.0's and 0.13.0's libraries against torch 2.9.1's, 2.10.0's and
  2.11.0's: 0.12.0 under 2.9.1 has libraries that resolve in full (the abort), 0.13.0 under 2.10.0 and 2.11.0 none
  (each misses c10::cuda::c10_cuda_check_implementation with an int line number: a caught OSError)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from registry_wheels import extract_dynamic, fetch_wheel

from stackcheck.readers.fsview import HostView
from stackcheck.readers.kernelsymbols import probe_kernel_symbols
from stackcheck.verdicts.torchao_gate import BUILT_BEFORE_29, loads

pytestmark = pytest.mark.registry

RELEASES = ("0.9.0", "0.10.0", "0.11.0", "0.12.0", "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.16.0", "0.17.0", "0.18.0")
TORCHES = (
    "2.7.1+cu126", "2.8.0+cu128", "2.9.0+cu128", "2.9.1+cu128", "2.9.0.dev20250826+cu128", "2.10.0+cu128",
    "2.10.0.dev20251201+cu128", "2.11.0+cu130", "2.11.0.dev20251225+cu130",
)  # fmt: skip
TORCH_STUB = """\
class _Version:
    git_version = "stub"


class _Ops:
    calls = 0

    def load_library(self, path):
        _Ops.calls += 1


version = _Version()
ops = _Ops()
__version__ = {version!r}
"""
CHILD = """\
try:
    import torchao  # noqa: F401  (its imports after the gate fail here: only the gate runs)
except Exception:
    pass
import torch

print(torch.ops.calls)
"""


def _tree(root: Path, release: str, torch: str) -> Path:
    """A directory holding the release's own torchao/__init__.py with one empty _C.abi3.so beside it, its
    dist-info (the version torchao reads with importlib.metadata), and our torch module at version `torch`."""
    base = root / f"{release}-{torch}"
    (base / "torchao").mkdir(parents=True)
    (base / "torch").mkdir()
    with zipfile.ZipFile(fetch_wheel("torchao", release)) as zf:
        (base / "torchao" / "__init__.py").write_bytes(zf.read("torchao/__init__.py"))
    (base / "torchao" / "_C.abi3.so").write_bytes(b"")
    info = base / f"torchao-{release}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torchao\nVersion: {release}\n")
    (base / "torch" / "__init__.py").write_text(TORCH_STUB.format(version=torch))
    return base


@pytest.mark.parametrize("release", RELEASES)
def test_each_release_gate_is_read_as_its_init_runs(tmp_path: Path, release: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHAO_")}
    got: dict[str, bool] = {}
    for torch in TORCHES:
        base = _tree(tmp_path, release, torch)
        proc = subprocess.run(
            [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(base)!r})\n{CHILD}"],
            capture_output=True, text=True, timeout=60, check=False, env=env, cwd=base,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        got[torch] = int(proc.stdout.split()[-1]) > 0
    want = {torch: loads(release, torch)[0] for torch in TORCHES}
    assert got == want
    if release == "0.13.0":  # the string test: 2.10 and 2.11 load them again
        assert got["2.10.0+cu128"] and got["2.11.0+cu130"] and not got["2.9.1+cu128"]


TORCH_LIBS = (
    "libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so", "libc10.so", "libc10_cuda.so", "libtorch_python.so",
    "libshm.so", "libtorch_nvshmem.so",
)  # fmt: skip


def _read(tmp_path: Path, torchao: str, torch: str) -> dict[str, int]:
    """The kernel symbol probe's reading of torchao `torchao`'s _C*.so against torch `torch`'s libraries: the
    number of torch symbols each file misses."""
    site = tmp_path / f"site-{torchao}-{torch}"
    for d in ("sgl_kernel", "torchao", "torch/lib"):
        (site / d).mkdir(parents=True)
    kernel = fetch_wheel("sgl-kernel", "0.3.0")
    (site / "sgl_kernel" / "common_ops.abi3.so").symlink_to(extract_dynamic(kernel, "sgl_kernel/common_ops.abi3.so"))
    ao = fetch_wheel("torchao", torchao)
    with zipfile.ZipFile(ao) as zf:
        names = [n for n in zf.namelist() if n.startswith("torchao/_C") and n.endswith(".so")]
    for name in names:
        (site / name).symlink_to(extract_dynamic(ao, name))
    wheel = fetch_wheel("torch", torch)
    with zipfile.ZipFile(wheel) as zf:
        present = set(zf.namelist())
    for lib in TORCH_LIBS:
        if f"torch/lib/{lib}" in present:
            (site / "torch" / "lib" / lib).symlink_to(extract_dynamic(wheel, f"torch/lib/{lib}"))
    packages = {
        "sgl-kernel": {"installed": True, "version": "0.3.0", "location": str(site)},
        "torch": {"installed": True, "version": torch, "location": str(site)},
    }
    ks = probe_kernel_symbols(packages, HostView("/"), None)
    assert ks is not None
    got = {e["path"].split("/", 1)[1]: e.get("torch_missing_count") for e in ks["extensions"]}
    assert got and all(isinstance(v, int) for v in got.values()), ks["extensions"]
    return got


def test_torchao_012_resolves_under_torch_291_and_013_does_not_under_210_211(tmp_path: Path) -> None:
    """The one pair of the matrix whose libraries load in full across 2.9 (an abort), and 0.13.0, which its string
    test lets load under 2.10 and 2.11, failing to resolve in every file there (caught, no abort)."""
    assert "0.12.0" in BUILT_BEFORE_29 and loads("0.12.0", "2.9.1")[0] is True
    got = _read(tmp_path, "0.12.0", "2.9.1")
    assert got == {"_C.abi3.so": 0, "_C_cutlass_100a.abi3.so": 0, "_C_cutlass_90a.abi3.so": 1}, got
    for torch in ("2.10.0", "2.11.0"):
        assert loads("0.13.0", torch)[0] is True
        missing = _read(tmp_path, "0.13.0", torch)
        assert len(missing) == 3 and all(n > 0 for n in missing.values()), (torch, missing)


def test_gate_refuses_torchao_012_under_real_torch_291(tmp_path: Path) -> None:
    """End to end: the probe's real reading of 0.12.0 under torch 2.9.1 in a gated --torchao-config launch is
    refused for the abort (it was judged degraded only)."""
    from gate_cli import LLAMA3, gate_json, model_dir

    got = _read(tmp_path, "0.12.0", "2.9.1")
    root = Path(__file__).resolve().parents[2]
    doc = json.loads((root / "tests" / "cases" / "h200-newest" / "facts.json").read_text())
    packages = doc["facts"]["packages"]
    packages["sglang"].update(version="0.5.9", dist_version="0.5.9")
    packages["torch"].update(version="2.9.1+cu128", dist_version="2.9.1")
    site = "/opt/venv/lib/python3.12/site-packages"
    packages["torchao"] = {"installed": True, "version": "0.12.0", "location": site}
    ext = [
        {"extension": "torchao", "path": f"torchao/{n}", "torch_symbols": 60, "torch_missing_count": c,
         "torch_missing": ["_ZNK3c106SymInt6sym_neERKS0_"] * c}
        for n, c in got.items()
    ]  # fmt: skip
    doc["facts"]["kernel_symbols"] = {
        "package": "sglang-kernel", "version": "0.4.10", "files": [], "extension_dirs": [site], "extensions": ext,
        "torch_version": "2.9.1+cu128",
    }  # fmt: skip
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(doc))
    out = gate_json(facts, "--model-path", str(model_dir(tmp_path, "llama", LLAMA3)), "--torchao-config", "int8wo")
    (entry,) = [f for f in out["reasons"] if f.get("feature") == "extension-torch-abi-torchao"]
    assert [r["effect"] for r in entry["reasons"] if r["rule"] == "torchao-abi-abort"] == ["crash"], entry
