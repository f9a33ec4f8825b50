"""Mooncake's bundled libunwind and liblzma.so.5 (issue 16's package open items, igap44): PyPI's
mooncake-transfer-engine 0.3.5-0.3.11.post1 ship mooncake_transfer_engine.libs/libunwind-5d1f6f10.so.8.0.1, which
mooncake/engine.so NEEDs and which NEEDs liblzma.so.5 with no RPATH of its own; no wheel brings liblzma (readelf on
the 18 cached wheels; 0.3.12 on bundle no libunwind). So a box whose loader finds no liblzma.so.5 fails at SGLang's
`from mooncake.engine import TransferEngine`. liblzma is in every Debian, Ubuntu and RHEL base image, and reports
written before the cuda_libs probe looked for it do not name it: there the check stays as it was, with a note naming
the library not read (preflight.json system_libraries `not_probed_note`), never ok where it is known absent."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, gate_tp8, model_dir, release_box

CHECK = "transfer-package"
PREFILL = ("--disaggregation-mode", "prefill")
LZMA = "liblzma.so.5"
FOUND = {**MOONCAKE_SYSTEM_LIBS, LZMA: f"/usr/lib/x86_64-linux-gnu/{LZMA}"}
OLD_REPORT = dict(MOONCAKE_SYSTEM_LIBS)  # a cuda_libs section that did not look for liblzma.so.5


def _gate(tmp_path: Path, package: Mapping[str, Any], libs: Mapping[str, str | None], *flags: str) -> dict[str, Any]:
    """gate_tp8 of a Llama 3 on h200-newest at SGLang 0.5.23 (torch relabelled CUDA 12.8: the libcudart rule
    passes) with packages.mooncake-transfer-engine `package` and cuda_libs `libs` (a key left out: not looked for)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    facts = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(facts.read_text())
    doc["facts"]["packages"]["mooncake-transfer-engine"] = {"installed": True, **package}
    doc["facts"]["packages"]["torch"]["cuda"] = "12.8"
    # (and its NCCL wheel the cu12 one a cu128 build pins: igap47's torch-nccl-wheel-other-major is unknown for a cu12
    # torch beside only nvidia-nccl-cu13 under a CUDA 13 driver)
    packages = doc["facts"]["packages"]
    packages["nvidia-nccl-cu12"] = {**packages.pop("nvidia-nccl-cu13"), "installed": True}
    packages["nvidia-nccl-cu13"] = {"installed": False}
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", **libs}
    facts.write_text(json.dumps(doc))
    return gate_tp8(facts, model_dir(tmp_path, "m", LLAMA3), *(flags or PREFILL))


def _check(doc: dict[str, Any]) -> dict[str, Any]:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]
    assert found, doc.get("preflight")
    check: dict[str, Any] = found[0]
    return check


@pytest.mark.parametrize("version", ["0.3.5", "0.3.8.post1", "0.3.11.post1"])
def test_liblzma_the_loader_does_not_find_is_refused(tmp_path: Path, version: str) -> None:
    # fails before: ok and allowed (engine.so's bundled libunwind NEEDs liblzma.so.5)
    doc = _gate(tmp_path, {"version": version}, {**FOUND, LZMA: None})
    check = _check(doc)
    assert check["status"] == "fail", check
    assert doc["decision"] == "refuse"
    message = check["message"]
    assert LZMA in message and version in message and "libunwind" in message, message
    assert LZMA in str(check["observed"])


def test_mooncake_tcp_is_refused_too(tmp_path: Path) -> None:
    flags = ("--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "mooncake_tcp")
    assert _check(_gate(tmp_path, {"version": "0.3.9"}, {**FOUND, LZMA: None}, *flags))["status"] == "fail"


@pytest.mark.parametrize("version", ["0.3.12", "0.3.13.post1"])
def test_releases_without_libunwind_pass_without_liblzma(tmp_path: Path, version: str) -> None:
    check = _check(_gate(tmp_path, {"version": version}, {**FOUND, LZMA: None}))
    assert check["status"] == "ok", check
    assert LZMA not in check["message"]


def test_found_passes_without_a_note(tmp_path: Path) -> None:
    check = _check(_gate(tmp_path, {"version": "0.3.10"}, FOUND))
    assert check["status"] == "ok", check
    assert LZMA not in check["message"]


@pytest.mark.parametrize("version", ["0.3.6", "0.3.11"])
def test_a_report_that_did_not_look_for_it_keeps_its_verdict_with_a_note(tmp_path: Path, version: str) -> None:
    # fails before: ok without a word of liblzma
    doc = _gate(tmp_path, {"version": version}, OLD_REPORT)
    check = _check(doc)
    assert check["status"] == "ok", check
    assert doc["decision"] != "refuse"
    assert LZMA in check["message"] and "not probed" in check["message"], check["message"]
    # a release that does not link it gets no note
    later = _check(_gate(tmp_path / "later", {"version": "0.3.13"}, OLD_REPORT))
    assert later["status"] == "ok" and LZMA not in later["message"], later
    # and an old report that lacks another library still fails on that one
    failed = _check(_gate(tmp_path / "ibv", {"version": version}, {**OLD_REPORT, "libibverbs.so.1": None}))
    assert failed["status"] == "fail" and "libibverbs.so.1" in failed["message"], failed


@pytest.mark.parametrize(
    "package",
    [
        {"version": "0.3.14"},
        {"version": "0.3.6+cu128"},
        {"version": "0.3.9", "editable": True},
        {"version": "0.3.12", "source_install": "file"},  # igap44 (2): PyPI's 0.3.12 bundles no libunwind
    ],
)
def test_a_release_not_read_without_liblzma_is_never_ok(tmp_path: Path, package: dict[str, Any]) -> None:
    # 0.3.14 (not read) and local builds may bundle a libunwind of their own: unknown, not ok
    check = _check(_gate(tmp_path, package, {**FOUND, LZMA: None}))
    assert check["status"] == "unknown", check
    assert LZMA in check["message"]


def test_an_unreadable_copy_is_not_read_as_absent(tmp_path: Path) -> None:
    libs: dict[str, Any] = {**FOUND, LZMA: None, "unreadable": {LZMA: "/usr/lib/x86_64-linux-gnu/liblzma.so.5: denied"}}
    check = _check(_gate(tmp_path, {"version": "0.3.7"}, libs))
    # irev69: looked for and not known is unknown (it was ok with the note, which is for a report that never looked)
    assert check["status"] == "unknown", check
    assert LZMA in check["message"]


def test_the_cuda_libs_probe_looks_for_liblzma() -> None:
    from stackcheck.knowledge.loader import load
    from stackcheck.probes.cudalibs import SONAMES

    for entry in load().preflight["transfer_packages"]["entries"]:
        for system in entry.get("system_libraries") or ():
            for soname in system["sonames"]:
                assert soname in SONAMES, soname


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.3.5", "0.3.7.post2", "0.3.11.post1", "0.3.12", "0.3.13.post1"])
def test_wheels_bundled_libunwind_links_liblzma_where_the_entry_says(version: str) -> None:
    """The libunwind mooncake/engine.so NEEDs from the wheel's mooncake_transfer_engine.libs (cp311 x86_64) and its
    own DT_NEEDED, against the entry's liblzma item; no liblzma is in the wheel."""
    import tempfile
    import zipfile

    from registry_wheels import extract, fetch_wheel

    from stackcheck.facts.versions import version_in
    from stackcheck.knowledge.loader import load
    from stackcheck.readers.libs import read_object

    entry = next(e for e in load().preflight["transfer_packages"]["entries"] if e.get("transfer_backend") == "mooncake")
    system = next(s for s in entry["system_libraries"] if LZMA in s["sonames"])
    wheel = fetch_wheel("mooncake-transfer-engine", version, "3.11")
    with tempfile.TemporaryDirectory() as tmp:
        root = extract(wheel, Path(tmp), lambda n: n == "mooncake/engine.so" or "/libunwind" in n)
        engine = read_object(root / "mooncake" / "engine.so")
        unwind = [n for n in engine.needed if n.startswith("libunwind")]
        lzma = any(LZMA in read_object(root / "mooncake_transfer_engine.libs" / n).needed for n in unwind)
    with zipfile.ZipFile(wheel) as z:
        assert not any(Path(n).name.startswith("liblzma") for n in z.namelist())
    assert lzma is bool(version_in(version, system["needs_versions"])), (version, unwind)
