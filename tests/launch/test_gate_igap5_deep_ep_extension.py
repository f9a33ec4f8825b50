"""DeepEP installed but not importable (igap5, item 2): deep_ep/__init__.py imports deep_ep_cpp, a top-level
extension module its setup.py builds beside the package (deepseek-ai/DeepEP setup.py, ext_modules name
'deep_ep_cpp'). Without a file of that module the target CPython's import takes, import deep_ep fails and SGLang's
DeepEP dispatcher raises 'DeepEP is not installed' at model load. The check moe-a2a-package said ok for any installed
deep-ep; now the packages probe lists the module's files (packages.deep-ep.extension_files) and the check reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import QWEN3_MOE, gate_tp8, model_dir, release_box

A2A = "moe-a2a-package"


def _deepep(tmp_path: Path, files: list[str] | None, python: str = "3.12.3") -> dict[str, Any]:
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(box.read_text())
    entry: dict[str, Any] = {"installed": True, "version": "1.2.1"}
    if files is not None:
        entry["extension_files"] = files
        # the NVSHMEM libraries each file links, read (igap11; here builds that link none)
        entry["extension_links"] = {f: {"needed": [], "rpath": None, "runpath": None, "found": {}} for f in files}
    doc["facts"]["packages"]["deep-ep"] = entry
    doc["facts"]["system"]["python"] = python
    box.write_text(json.dumps(doc))
    return gate_tp8(box, model_dir(tmp_path, "qwen3moe", QWEN3_MOE), "--moe-a2a-backend", "deepep")


def _check(doc: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == A2A)


@pytest.mark.parametrize(
    "files", [[], ["deep_ep_cpp.cpython-310-x86_64-linux-gnu.so"], ["deep_ep_cpp.cpython-312-aarch64-linux-gnu.so"]]
)
def test_no_module_for_this_python_refused(tmp_path: Path, files: list[str]) -> None:
    # fails on the parent: an installed deep-ep was ok whatever its files
    doc = _deepep(tmp_path, files)
    check = _check(doc)
    assert doc["decision"] == "refuse" and check["status"] == "fail"
    assert "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so missing" in str(check["observed"])
    assert check["source"]


def test_files_not_listed_unknown(tmp_path: Path) -> None:
    # fails on the parent (ok): a report without the listing cannot say the module is there
    doc = _deepep(tmp_path, None)
    assert doc["decision"] == "refuse" and _check(doc)["status"] == "unknown"


@pytest.mark.parametrize(
    ("files", "python"),
    [(["deep_ep_cpp.cpython-312-x86_64-linux-gnu.so"], "3.12.3"), (["deep_ep_cpp.abi3.so"], "3.11.9"),
     (["deep_ep_cpp.cpython-310-x86_64-linux-gnu.so", "deep_ep_cpp.cpython-311-x86_64-linux-gnu.so"], "3.11.9")],
)  # fmt: skip
def test_module_for_this_python_ok(tmp_path: Path, files: list[str], python: str) -> None:
    # guard: the file CPython's import takes (importlib.machinery.EXTENSION_SUFFIXES on Linux) is there
    assert _check(_deepep(tmp_path, files, python))["status"] == "ok"


def test_probe_lists_the_module_files(tmp_path: Path) -> None:
    # fails on the parent: no extension_files
    from stackcheck.probes.packages import find_distributions, package_facts

    sp = tmp_path / "site-packages"
    meta = sp / "deep_ep-1.2.1.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: deep_ep\nVersion: 1.2.1\n")
    (sp / "deep_ep").mkdir()
    (sp / "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    (sp / "deep_ep_cpp_other.so").write_bytes(b"")
    found = find_distributions({"deep-ep"}, [str(sp)])
    entry = package_facts("deep-ep", found.get("deep-ep", []))
    assert entry["extension_files"] == ["deep_ep_cpp.cpython-312-x86_64-linux-gnu.so"]
