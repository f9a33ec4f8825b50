"""The packages probe on fake dist-info directories: nothing is imported, metadata is read as text."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.packages import WANTED, PackagesProbe, read_torch_version_py, variant_from

TORCH_VERSION_PY = """\
from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']
__version__ = '2.11.0+cu130'
debug = False
cuda: Optional[str] = '13.0'
git_version = '0123456789abcdef0123456789abcdef01234567'
hip: Optional[str] = None
"""


def dist(sp: Path, name: str, version: str | None, *, editable: bool = False) -> Path:
    info = sp / f"{name.replace('-', '_')}-{version or '0'}.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}"]
    if version is not None:
        lines.append(f"Version: {version}")
    (info / "METADATA").write_text("\n".join(lines) + "\n\nLong description\nVersion: 9.9.9\n", encoding="utf-8")
    if editable:
        (info / "direct_url.json").write_text(
            json.dumps({"url": "file:///src/x", "dir_info": {"editable": True}}), encoding="utf-8"
        )
    return info


def fake_torch(sp: Path, version_py: str = TORCH_VERSION_PY) -> None:
    dist(sp, "torch", "2.11.0+cu130")
    pkg = sp / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise RuntimeError('stackcheck imported torch')\n", encoding="utf-8")
    (pkg / "version.py").write_text(version_py, encoding="utf-8")


def run(dirs: list[Path]) -> dict[str, dict[str, object]]:
    result = PackagesProbe().run(ProbeContext(env={}, path_dirs=[str(d) for d in dirs]))
    packages: dict[str, dict[str, object]] = result.facts["packages"]
    return packages


def test_torch_read_without_import(tmp_path: Path) -> None:
    sp = tmp_path / "site-packages"
    fake_torch(sp)
    packages = run([sp])
    assert "torch" not in sys.modules
    assert packages["torch"] == {
        "installed": True,
        "version": "2.11.0+cu130",
        "dist_version": "2.11.0+cu130",
        "location": str(sp),
        "editable": False,
        "copies": 1,
        "cuda": "13.0",
        "variant": "cu130",
        "git_version": "0123456789abcdef0123456789abcdef01234567",
    }
    assert set(packages) == set(WANTED)
    assert packages["sglang"] == {"installed": False}


def test_the_cuda_11_nccl_wheel_is_read(tmp_path: Path) -> None:
    """icorpM (returnn#1802): nvidia-nccl-cu11 writes the same nvidia/nccl/lib/libnccl.so.2 as the cu12 / cu13
    wheels, so check nccl needs to know whether it is there (rule one-nccl-wheel-cu11)."""
    sp = tmp_path / "site-packages"
    dist(sp, "nvidia-nccl-cu11", "2.14.3")
    dist(sp, "nvidia-nccl-cu12", "2.27.3")
    packages = run([sp])
    assert packages["nvidia-nccl-cu11"]["installed"] is True and packages["nvidia-nccl-cu11"]["version"] == "2.14.3"
    assert packages["nvidia-nccl-cu12"]["version"] == "2.27.3"


def test_the_moe_all_to_all_packages_are_read(tmp_path: Path) -> None:
    """igap2: --moe-a2a-backend deepep / mooncake import deep_ep / mooncake.mooncake_ep_buffer when the dispatcher is
    built (the gate's preflight check moe-a2a-package): the probe says whether each distribution is installed, DeepEP
    built from its repository (a dist-info named deep_ep) included."""
    sp = tmp_path / "site-packages"
    dist(sp, "deep_ep", "1.2.1")
    packages = run([sp])
    assert packages["deep-ep"]["installed"] is True and packages["deep-ep"]["version"] == "1.2.1"
    assert packages["mooncake-transfer-engine"] == {"installed": False}


def test_torch_cpu_and_default_builds(tmp_path: Path) -> None:
    sp = tmp_path / "a"
    fake_torch(sp, "__version__ = '2.9.1+cpu'\ncuda = None\ngit_version = 'x'\n")
    assert run([sp])["torch"]["variant"] == "cpu"
    assert variant_from("2.9.1", "12.8") == "cu128"
    assert variant_from("2.9.1", None, "6.4.43482") == "rocm6.4"
    assert variant_from("2.9.1+rocm6.4") == "rocm6.4"


def test_torch_version_py_is_not_executed(tmp_path: Path) -> None:
    sp = tmp_path / "sp"
    fake_torch(sp, "import os\nos.system('touch PWNED')\n__version__ = '2.10.0'\ncuda = '12.9'\n")
    assert read_torch_version_py(str(sp))["__version__"] == "2.10.0"
    pkg = run([sp])["torch"]
    assert pkg["variant"] == "cu129"
    assert not Path("PWNED").exists()


def _read_with_ast_module(source: str, path: str) -> dict[str, str | None]:
    """read_torch_version_py's reading as it was written with ast.parse: the reference it must agree with."""
    import ast

    values: dict[str, str | None] = {}
    for node in ast.parse(source, filename=path).body:
        target = value = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            if isinstance(value.value, str) or value.value is None:
                values[target.id] = value.value
    return values


@pytest.mark.parametrize(
    "source",
    [
        "__version__ = '2.9.1+cu128'\ndebug = False\ncuda: Optional[str] = '12.8'\ngit_version = 'abc'\nhip = None\n",
        "from typing import Optional\n__all__ = ['__version__']\n__version__ = '2.10.0'\ncuda = '13.0'\n"
        "hip: None = None\n",
        "__version__ = cuda = '1'\ncuda = 12.8\nhip = ('a',)\ngit_version = f'x{1}'\n__version__ += 'y'\n",
        "if True:\n    cuda = '12.9'\n__version__ = 'a' 'b'\nhip = -1\n",
        "# coding: latin-1\n__version__ = '\u00e9'\n",
        "__version__ = '2.9.1'\ncuda = '12.8\n",  # a syntax error: raised as ast.parse raises it
        "x: int\n__version__: str = 'v'\n(cuda) = '12.1'\nhip = None; git_version = \"g\"\n",
    ],
)
def test_torch_version_py_reads_as_ast_parse(tmp_path: Path, source: str) -> None:
    sp = tmp_path / "sp"
    fake_torch(sp, source)
    path = str(sp / "torch" / "version.py")
    try:
        expected: object = _read_with_ast_module(source, path)
    except SyntaxError as exc:
        expected = (type(exc), exc.msg, exc.filename, exc.lineno, exc.offset)
    try:
        got: object = read_torch_version_py(str(sp))
    except SyntaxError as exc:
        got = (type(exc), exc.msg, exc.filename, exc.lineno, exc.offset)
    assert got == expected


def test_torch_version_py_missing(tmp_path: Path) -> None:
    sp = tmp_path / "sp"
    dist(sp, "torch", "2.9.0")
    pkg = run([sp])["torch"]
    assert pkg["installed"] is True
    assert pkg["version"] == "2.9.0"
    assert "torch/version.py" in str(pkg["error"])


def test_kernel_variant(tmp_path: Path) -> None:
    sp = tmp_path / "sp"
    dist(sp, "sglang-kernel", "0.4.1+cu130")
    dist(sp, "sgl-kernel", "0.3.21")
    packages = run([sp])
    assert packages["sglang-kernel"]["variant"] == "cu130"
    assert packages["sgl-kernel"]["variant"] is None


def test_two_copies(tmp_path: Path) -> None:
    user, system = tmp_path / "user/site-packages", tmp_path / "sys/site-packages"
    dist(user, "flashinfer-python", "0.5.3")
    dist(system, "flashinfer-python", "0.4.1")
    pkg = run([user, system])["flashinfer-python"]
    assert pkg["copies"] == 2
    assert pkg["version"] == "0.5.3"
    assert pkg["location"] == str(user)
    assert pkg["other_locations"] == [str(system)]


def test_same_dir_listed_twice_is_one_copy(tmp_path: Path) -> None:
    sp = tmp_path / "sp"
    dist(sp, "triton", "3.5.0")
    assert run([sp, sp])["triton"]["copies"] == 1


def test_broken_metadata(tmp_path: Path) -> None:
    sp = tmp_path / "sp"
    dist(sp, "sglang", None)
    (sp / "vllm-0.11.0.dist-info").mkdir(parents=True)  # no METADATA at all
    result = PackagesProbe().run(ProbeContext(env={}, path_dirs=[str(sp)]))
    packages = result.facts["packages"]
    assert packages["sglang"]["installed"] is True
    assert packages["sglang"]["version"] is None
    assert "no Version header" in packages["sglang"]["error"]
    assert "METADATA: missing" in packages["vllm"]["error"]
    assert result.status == "partial"


def test_editable(tmp_path: Path) -> None:
    sp = tmp_path / "site-packages"
    dist(sp, "sglang", "0.5.6", editable=True)
    assert run([sp])["sglang"]["editable"] is True
    # legacy `setup.py develop`: an egg-link pointing to a project with .egg-info
    sp2 = tmp_path / "sp2/site-packages"
    sp2.mkdir(parents=True)
    project = tmp_path / "src/flashinfer"
    (project / "flashinfer_python.egg-info").mkdir(parents=True)
    (project / "flashinfer_python.egg-info/PKG-INFO").write_text("Name: flashinfer-python\nVersion: 0.6.0\n")
    (sp2 / "flashinfer-python.egg-link").write_text(f"{project}\n.\n", encoding="utf-8")
    pkg = run([sp2])["flashinfer-python"]
    assert pkg["editable"] is True
    assert pkg["version"] == "0.6.0"
    assert pkg["location"] == str(project)


def test_missing_and_unreadable_dirs(tmp_path: Path) -> None:
    (tmp_path / "file.zip").write_bytes(b"PK")
    packages = run([tmp_path / "nope", tmp_path / "file.zip"])
    assert all(p == {"installed": False} for p in packages.values())


def test_real_path_is_fast() -> None:
    start = (
        time.process_time()
    )  # CPU time of this process (its threads too): the work done, which a loaded box does not inflate
    result = PackagesProbe().run(ProbeContext(env={}))
    assert time.process_time() - start < 1.0
    assert result.facts["packages"]["nvidia-ml-py"]["installed"] is True


def test_through_a_root_view_and_an_unknown_search_path(tmp_path: Path) -> None:
    """Box paths inside a root view; when the target's sys.path is unknown the packages are unknown (an
    error on every entry), never "not installed" from stackcheck's own environment."""
    sp = tmp_path / "opt/serve/lib/python3.12/site-packages"
    fake_torch(sp)
    dist(sp, "sglang", "0.5.9")
    facts = {"python": {"sys_path": ["/opt/serve/lib/python3.12/site-packages", "/missing"]}}
    result = PackagesProbe().run(ProbeContext(env={}, root=tmp_path, facts=facts))
    pkgs = result.facts["packages"]
    assert pkgs["torch"]["version"] == "2.11.0+cu130" and pkgs["torch"]["cuda"] == "13.0"
    assert pkgs["torch"]["location"] == "/opt/serve/lib/python3.12/site-packages"
    assert pkgs["sglang"]["version"] == "0.5.9"
    unknown = PackagesProbe().run(ProbeContext(env={}, facts={"python": {"sys_path": None, "error": "hung"}}))
    assert unknown.status == "failed" and "sys.path is unknown: hung" in str(unknown.reason)
    assert all("installed" not in p and "hung" in p["error"] for p in unknown.facts["packages"].values())


def test_flash_attn_4_version_from_metadata_without_import(tmp_path: Path) -> None:
    """flash-attn-4 (SGLang 0.5.10-0.5.15 run FA4 from it) is read from its dist-info like every other package:
    the wheel's directory is flash_attn_4-V.dist-info and its code flash_attn/cute/, which is never imported."""
    sp = tmp_path / "site-packages"
    dist(sp, "flash-attn-4", "4.0.0b13")
    code = sp / "flash_attn" / "cute"
    code.mkdir(parents=True)
    (sp / "flash_attn" / "__init__.py").write_text("raise RuntimeError('stackcheck imported flash_attn')\n")
    (code / "__init__.py").write_text("raise RuntimeError('stackcheck imported flash_attn.cute')\n")
    packages = run([sp])
    assert "flash_attn" not in sys.modules
    assert packages["flash-attn-4"] == {
        "installed": True,
        "version": "4.0.0b13",
        "dist_version": "4.0.0b13",
        "location": str(sp),
        "editable": False,
        "copies": 1,
    }
    # FA2's flash-attn shares the import name but is another distribution: it is not taken for flash-attn-4
    other = tmp_path / "fa2"
    dist(other, "flash-attn", "2.8.3")
    assert run([other])["flash-attn-4"] == {"installed": False}


def test_flash_attn_4_in_the_target_environment(tmp_path: Path) -> None:
    """In another interpreter's environment (facts.python.sys_path, read through a root view) flash-attn-4 is
    found the same way as SGLang beside it."""
    sp = tmp_path / "opt/venv/lib/python3.12/site-packages"
    dist(sp, "sglang", "0.5.12")
    dist(sp, "flash_attn_4", "4.0.0b15")  # the wheel's own spelling of the directory name
    facts = {"python": {"sys_path": ["/opt/venv/lib/python3.12/site-packages"]}}
    pkgs = PackagesProbe().run(ProbeContext(env={}, root=tmp_path, facts=facts)).facts["packages"]
    assert pkgs["sglang"]["version"] == "0.5.12"
    assert pkgs["flash-attn-4"]["version"] == "4.0.0b15"
    assert pkgs["flash-attn-4"]["location"] == "/opt/venv/lib/python3.12/site-packages"


def test_kernels_and_cupy_are_read(tmp_path: Path) -> None:
    """igap41: Hugging Face's kernels (rule kernels-needs-version-transformers, the gate's model.registry.
    import_failures) and LMCache's cupy (rule lmcache-cupy-cuda13-driver) were never in the probe's list, so a live
    box's report named none of them and both rules were left out: a pass."""
    sp = tmp_path / "site-packages"
    dist(sp, "kernels", "0.15.1")
    dist(sp, "cupy-cuda13x", "14.2.0")
    packages = run([sp])
    assert packages["kernels"]["installed"] is True and packages["kernels"]["version"] == "0.15.1"
    assert packages["cupy-cuda13x"]["version"] == "14.2.0" and packages["cupy-cuda12x"] == {"installed": False}


@pytest.mark.parametrize(
    ("direct_url", "source"),
    [
        ({"url": "file:///src/Mooncake", "dir_info": {}}, "dir"),
        ({"url": "https://github.com/x/y", "vcs_info": {"vcs": "git", "commit_id": "ab12"}}, "vcs"),
        ({"url": "file:///src/Mooncake", "dir_info": {"editable": True}}, None),  # editable: said as editable
        # igap44: a wheel or sdist file on this machine (pip install ./m.whl writes archive_info and its file:// URL;
        # pip 23.2 here) may be one built here: no index's wheel read; an https archive is an index's or a host's
        ({"url": "file:///w/m-0.3.6-cp311-cp311-linux_x86_64.whl", "archive_info": {}}, "file"),
        ({"url": "FILE:/w/m-0.3.6.tar.gz", "archive_info": {"hash": "sha256=ab"}}, "file"),
        ({"url": "https://files.pythonhosted.org/m-0.3.6-cp311-manylinux_2_17_x86_64.whl", "archive_info": {}}, None),
        ({"url": 7, "archive_info": {}}, None),
    ],
)
def test_a_source_install_is_named(tmp_path: Path, direct_url: dict[str, Any], source: str | None) -> None:
    """igap41: pip's PEP 610 record says a distribution was built here from a directory or a checkout, not installed
    from an index's wheel (a Mooncake built with its own CUDA is no PyPI wheel read: check transfer-package)."""
    sp = tmp_path / "site-packages"
    info = dist(sp, "mooncake-transfer-engine", "0.3.6")
    (info / "direct_url.json").write_text(json.dumps(direct_url), encoding="utf-8")
    got = run([sp])["mooncake-transfer-engine"]
    assert got.get("source_install") == source, got
