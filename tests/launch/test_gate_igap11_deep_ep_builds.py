"""DeepEP installed editable, and on a free-threaded CPython (igap11, item 3; check moe-a2a-package).

An editable install (`pip install -e` of DeepEP, setuptools' PEP 660 editable_wheel) leaves only its dist-info and an
`__editable__.<name>-<version>.pth` in site-packages: setuptools builds the extension deep_ep_cpp in place, in the
project directory, and the .pth either lists that directory (a static path) or imports a
`__editable___<name>_<version>_finder` module whose MAPPING names each top-level package and module with its path
there (setuptools command/editable_wheel.py: _select_strategy, _TopLevelFinder, _find_top_level_modules with the
extension names, the finder's _find_spec trying importlib.machinery.all_suffixes()). The check looked for deep_ep_cpp
in site-packages and refused such an install; the packages probe now follows the .pth / finder (extension_dir).

A free-threaded CPython (3.13t) imports `.cpython-313t-ARCH-linux-gnu.so` (its SOABI carries the ABI flag t), not a
GIL build's `.cpython-313-...` file; its library directories are lib/python3.13t (sysconfig's abi_thread), which the
check reads from sys.path and the distribution's location. The site-packages written here are small fakes in the same
shape, not copies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import QWEN3_MOE, gate_tp8, model_dir, release_box

A2A = "moe-a2a-package"
SO312 = "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so"


def _site(tmp_path: Path, pth: str | None, finder: str | None = None) -> Path:
    sp = tmp_path / "lib" / "python3.12" / "site-packages"
    meta = sp / "deep_ep-1.2.1+abc1234.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: deep_ep\nVersion: 1.2.1+abc1234\n")
    (meta / "direct_url.json").write_text(json.dumps({"url": "file:///src/DeepEP", "dir_info": {"editable": True}}))
    if pth is not None:
        (sp / "__editable__.deep_ep-1.2.1+abc1234.pth").write_text(pth)
    if finder is not None:
        (sp / "__editable___deep_ep_1_2_1_abc1234_finder.py").write_text(finder)
    return sp


def _project(tmp_path: Path, *files: str) -> Path:
    project = tmp_path / "src" / "DeepEP"
    (project / "deep_ep").mkdir(parents=True)
    (project / "deep_ep" / "__init__.py").write_text("")
    for name in files:
        (project / name).write_bytes(b"\x7fELF")
    return project


def _probe(sp: Path) -> dict[str, Any]:
    from stackcheck.probes.packages import find_distributions, package_facts

    found = find_distributions({"deep-ep"}, [str(sp)])
    return package_facts("deep-ep", found.get("deep-ep", []))


def _finder(mapping: dict[str, str], annotated: bool = False) -> str:
    head = "MAPPING: dict[str, str] = " if annotated else "MAPPING = "
    return f"import sys\n{head}{mapping!r}\nNAMESPACES = {{}}\n\ndef install():\n    pass\n"


@pytest.mark.parametrize("annotated", [False, True])
def test_probe_follows_the_editable_finder(tmp_path: Path, annotated: bool) -> None:
    # fails on the parent: extension_files listed site-packages, where an editable install has no deep_ep_cpp
    project = _project(tmp_path, SO312)
    mapping = {"deep_ep": str(project / "deep_ep"), "deep_ep_cpp": str(project / "deep_ep_cpp")}
    pth = "import __editable___deep_ep_1_2_1_abc1234_finder; __editable___deep_ep_1_2_1_abc1234_finder.install()"
    entry = _probe(_site(tmp_path, pth, _finder(mapping, annotated)))
    assert entry["editable"] is True and entry["extension_files"] == [SO312]
    assert entry["extension_dir"] == str(project)


def test_probe_follows_a_static_editable_pth(tmp_path: Path) -> None:
    # fails on the parent: as above, with the .pth that lists the project directory
    project = _project(tmp_path, SO312, "deep_ep_cpp.cpython-311-x86_64-linux-gnu.so")
    entry = _probe(_site(tmp_path, f"{project}\n"))
    assert entry["extension_files"] == ["deep_ep_cpp.cpython-311-x86_64-linux-gnu.so", SO312]


def test_probe_editable_without_a_readable_project_lists_nothing(tmp_path: Path) -> None:
    # an editable dist-info whose .pth is missing, or whose finder does not name the module: not listed (unknown)
    assert "extension_files" not in _probe(_site(tmp_path / "a", None))
    project = _project(tmp_path / "b", SO312)
    pth = "import __editable___deep_ep_1_2_1_abc1234_finder; __editable___deep_ep_1_2_1_abc1234_finder.install()"
    entry = _probe(_site(tmp_path / "b", pth, _finder({"deep_ep": str(project / "deep_ep")})))
    assert "extension_files" not in entry and "editable" in entry["error"]


def _gate(tmp_path: Path, entry: dict[str, Any], python: str = "3.12.3", sys_path: list[str] | None = None) -> Any:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(box.read_text())
    files = entry.get("extension_files")
    if isinstance(files, list) and "extension_links" not in entry:  # builds that link no NVSHMEM, read
        entry = {**entry, "extension_links": {f: {"needed": [], "found": {}} for f in files}}
    doc["facts"]["packages"]["deep-ep"] = {"installed": True, "version": "1.2.1", **entry}
    doc["facts"]["system"]["python"] = python
    if sys_path is not None:
        doc["facts"]["python"] = {"sys_path": sys_path}
    box.write_text(json.dumps(doc))
    out = gate_tp8(box, model_dir(tmp_path, "qwen3moe", QWEN3_MOE), "--moe-a2a-backend", "deepep")
    return next(c for c in (out.get("preflight") or {}).get("checks") or [] if c.get("check") == A2A)


def test_gate_accepts_the_editable_build_and_unknown_where_unread(tmp_path: Path) -> None:
    # fails on the parent: the probe's old listing of site-packages (none) refused the editable install
    project = _project(tmp_path, SO312)
    pth = "import __editable___deep_ep_1_2_1_abc1234_finder; __editable___deep_ep_1_2_1_abc1234_finder.install()"
    mapping = {"deep_ep": str(project / "deep_ep"), "deep_ep_cpp": str(project / "deep_ep_cpp")}
    entry = _probe(_site(tmp_path, pth, _finder(mapping)))
    check = _gate(tmp_path / "g1", entry)
    assert check["status"] == "ok" and str(project) in check["message"]
    unread = {"editable": True, "location": "/opt/venv/lib/python3.12/site-packages"}
    check = _gate(tmp_path / "g2", unread)
    assert check["status"] == "unknown" and "editable" in check["message"]


FT_SITE = "/opt/venv/lib/python3.13t/site-packages"
GIL_SITE = "/opt/venv/lib/python3.13/site-packages"


@pytest.mark.parametrize(
    ("files", "location", "status"),
    [
        (["deep_ep_cpp.cpython-313t-x86_64-linux-gnu.so"], FT_SITE, "ok"),
        (["deep_ep_cpp.cpython-313-x86_64-linux-gnu.so"], FT_SITE, "fail"),  # a GIL build's module
        (["deep_ep_cpp.cpython-313t-x86_64-linux-gnu.so"], GIL_SITE, "fail"),
        (["deep_ep_cpp.cpython-313-x86_64-linux-gnu.so"], GIL_SITE, "ok"),
        (["deep_ep_cpp.abi3.so"], FT_SITE, "unknown"),  # listed by 3.13t's import, an ABI it lacks
        (["deep_ep_cpp.cpython-313-x86_64-linux-gnu.so"], "/src/DeepEP", "unknown"),  # the build not read
        (["deep_ep_cpp.so"], "/src/DeepEP", "ok"),  # taken by either build
        ([], "/src/DeepEP", "fail"),
    ],
)
def test_free_threaded_python_judged_by_its_own_suffix(tmp_path: Path, files: list[str], location: str,
                                                      status: str) -> None:  # fmt: skip
    # the fail on a 3.13t box with a GIL build's file and the unknowns fail on the parent (it took .cpython-313-
    # for any 3.13; the 313t file on a free-threaded Python was refused there)
    check = _gate(tmp_path, {"location": location, "extension_files": files}, python="3.13.1")
    assert check["status"] == status, check


def test_free_threaded_read_from_sys_path(tmp_path: Path) -> None:
    # fails on the parent: the 313t module refused as missing
    path = ["/usr/lib/python313t.zip", "/usr/lib/python3.13t", "/usr/lib/python3.13t/lib-dynload", FT_SITE]
    entry = {"location": "/src/DeepEP", "extension_files": ["deep_ep_cpp.cpython-313t-x86_64-linux-gnu.so"]}
    assert _gate(tmp_path, entry, python="3.13.1", sys_path=path)["status"] == "ok"


def test_suffixes_and_builds() -> None:
    from stackcheck.verdicts.package_checks import import_suffixes, python_builds

    assert import_suffixes("3.13.1", "x86_64", True) == [".cpython-313t-x86_64-linux-gnu.so", ".abi3.so", ".so"]
    assert import_suffixes("3.15.0", "aarch64", True) == [".cpython-315t-aarch64-linux-gnu.so", ".abi3t.so", ".so"]
    assert import_suffixes("3.12.3", "x86_64") == [".cpython-312-x86_64-linux-gnu.so", ".abi3.so", ".so"]
    assert python_builds("3.12.3", ["/x/lib/python3.12t/site-packages"]) == [False]  # no free-threaded 3.12
    assert python_builds("3.14.0", ["/x/lib/python3.13t/site-packages"]) == [False, True]  # another version's
    assert python_builds("3.14.0", ["/x/lib/python3.14/site-packages", "/x/lib/python3.14t"]) == [False, True]
