"""The forty-fourth fact-check sample's Mooncake rows (tests/realworld/FACTCHECK.md, "Forty-fourth sample"): every
PyPI mooncake-transfer-engine 0.3.5-0.3.13.post1 builds mooncake/engine.so NEEDing libibverbs.so.1, libnuma.so.1 and
libcurl.so.4 (libmlx5.so.1 too from 0.3.12), system libraries its wheel does not bring, so `--disaggregation-mode`
fails at SGLang's `from mooncake.engine import TransferEngine` on a box whose loader finds one not (preflight.json
transfer_packages, the mooncake.engine entries' system_libraries). On the parent every box here passes the check."""

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
FOUND = MOONCAKE_SYSTEM_LIBS


def _gate(tmp_path: Path, version: str, libs: Mapping[str, str | None], *flags: str) -> dict[str, Any]:
    """gate_tp8 of a Llama 3 on h200-newest at SGLang 0.5.23 (its torch relabelled a CUDA 12.8 build, so the
    libcudart.so.12 rule passes) with mooncake-transfer-engine `version` and cuda_libs `libs` (a key left out: not
    looked for)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    facts = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(facts.read_text())
    doc["facts"]["packages"]["mooncake-transfer-engine"] = {"installed": True, "version": version}
    doc["facts"]["packages"]["torch"]["cuda"] = "12.8"
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", **libs}
    facts.write_text(json.dumps(doc))
    return gate_tp8(facts, model_dir(tmp_path, "m", LLAMA3), *(flags or PREFILL))


def _check(doc: dict[str, Any]) -> dict[str, Any]:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]
    assert found, doc.get("preflight")
    check: dict[str, Any] = found[0]
    return check


@pytest.mark.parametrize(
    ("version", "absent"),
    [
        ("0.3.5", "libibverbs.so.1"),
        ("0.3.6.post1", "libibverbs.so.1"),
        ("0.3.10.post2", "libcurl.so.4"),
        ("0.3.13.post1", "libnuma.so.1"),
        ("0.3.12", "libmlx5.so.1"),
    ],
)
def test_a_system_library_the_loader_does_not_find_is_refused(tmp_path: Path, version: str, absent: str) -> None:
    # fails on the parent: ok (only libcudart.so.12 was judged)
    doc = _gate(tmp_path, version, {**FOUND, absent: None})
    check = _check(doc)
    assert check["status"] == "fail", check
    assert doc["decision"] == "refuse"
    assert (
        absent in check["message"] and version in check["message"] and "cannot open shared object" in check["message"]
    )


@pytest.mark.parametrize("flags", [PREFILL, ("--disaggregation-mode", "decode", "--disaggregation-transfer-backend",
                                             "mooncake_tcp")])  # fmt: skip
def test_not_looked_for_is_unknown(tmp_path: Path, flags: tuple[str, ...]) -> None:
    # fails on the parent: ok (a facts file that did not look for libibverbs.so.1)
    libs = {k: v for k, v in FOUND.items() if k != "libibverbs.so.1"}
    check = _check(_gate(tmp_path, "0.3.13.post1", libs, *flags))
    assert check["status"] == "unknown", check
    assert "libibverbs.so.1" in check["message"] and "not probed" in check["message"]


def test_every_library_found_passes(tmp_path: Path) -> None:
    for version in ("0.3.5", "0.3.9", "0.3.13.post1"):
        assert _check(_gate(tmp_path / version, version, dict(FOUND)))["status"] == "ok", version
    # libmlx5.so.1 is linked from 0.3.12 only: 0.3.11.post1 without it passes
    no_mlx5 = {k: v for k, v in FOUND.items() if k != "libmlx5.so.1"}
    assert _check(_gate(tmp_path / "old", "0.3.11.post1", {**no_mlx5, "libmlx5.so.1": None}))["status"] == "ok"


def test_unread_release_without_a_library_is_unknown(tmp_path: Path) -> None:
    check = _check(_gate(tmp_path, "0.3.14", {**FOUND, "libibverbs.so.1": None}))
    assert check["status"] == "unknown", check
    assert "0.3.14 was not read" in check["message"]


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.3.5", "0.3.8", "0.3.11.post1", "0.3.12", "0.3.13.post1"])
def test_wheels_engine_links_the_system_libraries_the_entry_names(version: str) -> None:
    """mooncake/engine.so's DT_NEEDED in the PyPI wheel (cp311 x86_64), with those of the libraries it NEEDs from the
    wheel's mooncake_transfer_engine.libs (the bundled libunwind's liblzma.so.5, igap44), against the entry's
    system_libraries; none of them is in the wheel."""
    import tempfile
    import zipfile

    from registry_wheels import extract, fetch_wheel

    from stackcheck.facts.versions import version_in
    from stackcheck.knowledge.loader import load
    from stackcheck.readers.libs import read_object

    entry = next(e for e in load().preflight["transfer_packages"]["entries"] if e.get("transfer_backend") == "mooncake")
    wheel = fetch_wheel("mooncake-transfer-engine", version, "3.11")
    with tempfile.TemporaryDirectory() as tmp:
        root = extract(
            wheel,
            Path(tmp),
            lambda n: (
                n == "mooncake/engine.so" or (n.startswith("mooncake_transfer_engine.libs/") and not n.endswith("/"))
            ),
        )
        needed = list(read_object(root / "mooncake" / "engine.so").needed)
        bundled = root / "mooncake_transfer_engine.libs"
        for name in list(needed):
            if (bundled / name).is_file():
                needed += read_object(bundled / name).needed
    with zipfile.ZipFile(wheel) as z:
        names = {Path(n).name for n in z.namelist()}
    for system in entry["system_libraries"]:
        for soname in system["sonames"]:
            assert (soname in needed) is bool(version_in(version, system["needs_versions"])), (soname, needed)
            assert soname not in names


@pytest.mark.parametrize("version", ["0.3.12rc1", "0.3.12.dev0", "0.3.12a1"])
def test_a_pre_release_below_the_mlx5_range_is_not_a_release_read(tmp_path: Path, version: str) -> None:
    """0.3.12rc1 is outside `>=0.3.12` (PEP 440 leaves a release's pre-releases out) but inside the read range: no
    pre-release was read, and one built from 0.3.12's code links libmlx5.so.1 as 0.3.12 does. Fails before: the
    check judged it a release read that does not link libmlx5 and passed it (irev64's Mooncake finding, here in the
    system libraries)."""
    doc = _gate(tmp_path, version, {**FOUND, "libmlx5.so.1": None})
    check = _check(doc)
    assert check["status"] == "unknown", check
    assert "was not read" in check["message"]
    assert doc["decision"] == "refuse"
    found = _check(_gate(tmp_path / "found", version, FOUND))
    assert found["status"] == "ok", found
