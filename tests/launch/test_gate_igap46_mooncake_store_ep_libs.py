"""igap46 (issue 16, package open items): the HiCache Mooncake store and Mooncake EP link the transfer engine's
system libraries.

mooncake-transfer-engine 0.3.5-0.3.13.post1's mooncake/store.so NEEDs libibverbs.so.1, libnuma.so.1 and libcurl.so.4
(libmlx5.so.1 from 0.3.12, the bundled libunwind's liblzma.so.5 until 0.3.11.post1), exactly as engine.so does
(readelf -dW of the 18 cached wheels), and the EP extension that mooncake_ep_buffer's Buffer imports (0.3.7 on) links
libibverbs, libmlx5, libnuma and libcurl through the wheel's own libraries: none is in any wheel. Only the engine's
entries (--disaggregation-mode) judged them, so `--hicache-storage-backend mooncake` and `--moe-a2a-backend mooncake`
passed the package check on a box whose loader finds no libibverbs. Judged now as the engine's are: blocked only where
the facts' cuda_libs looked for the library and the loader finds none, a note (liblzma) or unknown otherwise."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, QWEN3_MOE, gate_tp8, model_dir, release_box

FOUND = {**MOONCAKE_SYSTEM_LIBS, "liblzma.so.5": "/usr/lib/x86_64-linux-gnu/liblzma.so.5"}
STORE = ("--enable-hierarchical-cache", "--hicache-storage-backend", "mooncake")
EP = ("--moe-a2a-backend", "mooncake", "--deepep-mode", "low_latency")


def _gate(tmp_path: Path, version: str, libs: Mapping[str, str | None] | None, *flags: str) -> dict[str, Any]:
    """gate_tp8 on h200-newest at SGLang 0.5.23 (torch relabelled CUDA 12.8: libcudart.so.12 is torch's) with
    mooncake-transfer-engine `version` and cuda_libs `libs` (None: the report has no cuda_libs)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    facts = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(facts.read_text())
    doc["facts"]["packages"]["mooncake-transfer-engine"] = {"installed": True, "version": version}
    doc["facts"]["packages"]["torch"]["cuda"] = "12.8"
    if libs is None:
        doc["facts"].pop("cuda_libs", None)
    else:
        doc["facts"]["cuda_libs"] = {"ld_cache": "file", **libs}
    facts.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "m", QWEN3_MOE if flags[0] == EP[0] else LLAMA3)
    return gate_tp8(facts, model, *flags)


def _check(doc: dict[str, Any], name: str) -> dict[str, Any]:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == name]
    assert found, doc.get("preflight")
    check: dict[str, Any] = found[0]
    return check


@pytest.mark.parametrize(
    ("version", "absent"),
    [("0.3.5", "libibverbs.so.1"), ("0.3.10.post2", "libcurl.so.4"), ("0.3.12", "libmlx5.so.1"),
     ("0.3.13.post1", "libnuma.so.1"), ("0.3.9", "liblzma.so.5")],
)  # fmt: skip
def test_the_store_without_a_system_library_is_refused(tmp_path: Path, version: str, absent: str) -> None:
    # fails on the parent: the transfer-package check passed (Mooncake installed)
    doc = _gate(tmp_path, version, {**FOUND, absent: None}, *STORE)
    check = _check(doc, "transfer-package")
    assert check["status"] == "fail" and doc["decision"] == "refuse", check
    assert absent in check["message"] and "mooncake/store.so" in check["message"], check["message"]
    assert "MooncakeDistributedStore" in check["message"]


@pytest.mark.parametrize(
    ("version", "absent"),
    [("0.3.7", "libibverbs.so.1"), ("0.3.9", "libmlx5.so.1"), ("0.3.13.post1", "libcurl.so.4"),
     ("0.3.11", "liblzma.so.5")],
)  # fmt: skip
def test_mooncake_ep_without_a_system_library_is_refused(tmp_path: Path, version: str, absent: str) -> None:
    # fails on the parent: unknown (whether the build has EP is not read), never naming the library
    doc = _gate(tmp_path, version, {**FOUND, absent: None}, *EP)
    check = _check(doc, "moe-a2a-package")
    assert check["status"] == "fail" and doc["decision"] == "refuse", check
    assert absent in check["message"] and "Mooncake EP extension" in check["message"], check["message"]


@pytest.mark.parametrize(
    ("version", "libs", "flags", "check_name", "status"),
    [
        # every library found: the store passes, EP stays unknown (whether the build has EP is not read)
        ("0.3.13.post1", FOUND, STORE, "transfer-package", "ok"),
        ("0.3.13.post1", FOUND, EP, "moe-a2a-package", "unknown"),
        # 0.3.12 on bundles no libunwind: liblzma not needed
        ("0.3.12", {**FOUND, "liblzma.so.5": None}, STORE, "transfer-package", "ok"),
        # libmlx5 before 0.3.12: the store does not link it; EP does (0.3.7 on)
        ("0.3.11", {**FOUND, "libmlx5.so.1": None}, STORE, "transfer-package", "ok"),
        # 0.3.6.post1 has no EP module: its libraries do not decide, the EP question stays unknown
        ("0.3.6.post1", {**FOUND, "libmlx5.so.1": None}, EP, "moe-a2a-package", "unknown"),
        # a report that did not probe the loader: unknown, never ok
        ("0.3.13.post1", None, STORE, "transfer-package", "unknown"),
        # a release not read, a library not found: unknown
        ("0.3.14", {**FOUND, "libibverbs.so.1": None}, STORE, "transfer-package", "unknown"),
    ],
)
def test_what_is_not_refused(
    tmp_path: Path, version: str, libs: dict[str, str | None] | None, flags: tuple[str, ...], check_name: str,
    status: str,
) -> None:  # fmt: skip
    assert _check(_gate(tmp_path, version, libs, *flags), check_name)["status"] == status


def test_liblzma_not_probed_is_a_note_on_the_store(tmp_path: Path) -> None:
    libs = {k: v for k, v in FOUND.items() if k != "liblzma.so.5"}
    check = _check(_gate(tmp_path, "0.3.10", libs, *STORE), "transfer-package")
    assert check["status"] == "ok" and "liblzma.so.5" in check["message"] and "not probed" in check["message"], check


@pytest.mark.registry
def test_the_real_wheels_store_so_links_what_engine_so_links(tmp_path: Path) -> None:
    """readelf -dW of mooncake/store.so and engine.so in the cached wheels: the same system libraries."""
    import shutil
    import subprocess
    import zipfile

    from registry_wheels import cached

    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf here")
    system = {"libibverbs.so.1", "libnuma.so.1", "libcurl.so.4", "libmlx5.so.1"}
    for version, want in (("0.3.6.post1", system - {"libmlx5.so.1"}), ("0.3.13.post1", system)):
        wheel = cached("mooncake-transfer-engine", version, "3.11")
        if wheel is None:
            pytest.skip(f"mooncake-transfer-engine {version} not cached")
        needed = {}
        with zipfile.ZipFile(wheel) as z:
            for name in ("store.so", "engine.so"):
                path = tmp_path / f"{version}-{name}"
                path.write_bytes(z.read(f"mooncake/{name}"))
                out = subprocess.run([readelf, "-dW", str(path)], capture_output=True, text=True, check=True).stdout
                needed[name] = {line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line}
        assert needed["store.so"] & system == needed["engine.so"] & system == want, (version, needed)
