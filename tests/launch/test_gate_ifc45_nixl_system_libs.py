"""The forty-fifth fact-check sample's row p3 (tests/realworld/FACTCHECK.md, "Forty-fifth sample"): NIXL's compiled
bindings (nixl._bindings in nixl 0.6.1 / 0.7.0, nixl_cu12._bindings / nixl_cu13._bindings that nixl 0.7.1 forwards
to) load the etcd client their wheels bundle, libetcd-cpp-api-core, which NEEDs libssl.so.3 and libcrypto.so.3:
OpenSSL 3's libraries, which no NIXL wheel brings. On a box whose loader finds them not (Ubuntu 20.04 and RHEL 8 ship
OpenSSL 1.1 only) SGLang's `from nixl._api import nixl_agent` fails as the scheduler starts. On the parent every box
here passed the gate's transfer-package check (preflight.json, the nixl entry's system_libraries)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, NIXL_SYSTEM_LIBS, gate_tp8, model_dir, release_box

CHECK = "transfer-package"
NIXL = ("--disaggregation-mode", "prefill", "--disaggregation-transfer-backend", "nixl")
MISSING = {"installed": False}
# (igap50: the libcudart.so.12 nixl-cu12's UCX CUDA module NEEDs beside this torch of CUDA 13, found)
FOUND = {**MOONCAKE_SYSTEM_LIBS, **NIXL_SYSTEM_LIBS, "libcudart.so.12": "/opt/cu12/lib/libcudart.so.12"}


def _gate(tmp_path: Path, nixl: str, libs: Mapping[str, str | None], backend: str = "nixl-cu12") -> dict[str, Any]:
    """gate_tp8 of a Llama 3 on h200-newest at SGLang 0.5.23 with nixl `nixl` (and `backend` 0.7.1 beside it from
    0.7.1 on, the other CUDA wheel not installed, no Mooncake) and cuda_libs `libs` (a key left out: not looked
    for)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    # SGLang 0.5.14: 0.5.15+ also need nixl's Python API of 1.2.0 (ifc52's api_floor), which these releases predate
    facts = release_box(tmp_path, "0.5.14", "9.0")
    doc = json.loads(facts.read_text())
    packages = doc["facts"]["packages"]
    packages.update({"nixl": {"installed": True, "version": nixl}, "nixl-cu12": MISSING, "nixl-cu13": MISSING,
                     "mooncake-transfer-engine": MISSING})  # fmt: skip
    packages[backend] = {"installed": True, "version": "0.7.1"}
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", **libs}
    facts.write_text(json.dumps(doc))
    return gate_tp8(facts, model_dir(tmp_path, "m", LLAMA3), *NIXL)


def _check(doc: dict[str, Any]) -> dict[str, Any]:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]
    assert found, doc.get("preflight")
    check: dict[str, Any] = found[0]
    return check


@pytest.mark.parametrize(
    ("nixl", "backend", "absent"),
    [
        ("0.6.1", "nixl-cu12", "libssl.so.3"),
        ("0.7.0", "nixl-cu12", "libcrypto.so.3"),
        ("0.7.1", "nixl-cu12", "libssl.so.3"),
        ("0.7.1", "nixl-cu13", "libcrypto.so.3"),
    ],
)
def test_openssl_3_the_loader_does_not_find_is_refused(tmp_path: Path, nixl: str, backend: str, absent: str) -> None:
    # fails on the parent: ok and allowed (the bindings' import stops at the etcd client's OpenSSL 3)
    doc = _gate(tmp_path, nixl, {**FOUND, absent: None}, backend)
    check = _check(doc)
    assert check["status"] == "fail", check
    assert doc["decision"] == "refuse"
    assert absent in check["message"] and nixl in check["message"] and "cannot open shared object" in check["message"]


def test_not_looked_for_is_unknown(tmp_path: Path) -> None:
    # fails on the parent: ok (a facts file saved before the probe looked for OpenSSL 3)
    doc = _gate(tmp_path, "0.7.1", MOONCAKE_SYSTEM_LIBS)
    check = _check(doc)
    assert check["status"] == "unknown", check
    assert "libssl.so.3" in check["message"] and "not probed" in check["message"]
    assert doc["decision"] == "refuse"


@pytest.mark.parametrize("nixl", ["0.8.0rc1", "0.8.0", "0.6.0"])
def test_a_release_not_read_without_openssl_3_is_unknown(tmp_path: Path, nixl: str) -> None:
    """The sample's row p3 was nixl 0.8.0rc1 beside nixl-cu12 0.7.1 with OpenSSL 3 not looked for (allowed on the
    parent); here it is looked for and not found: no release outside 0.6.1-0.7.1 (nor a pre-release) was read."""
    doc = _gate(tmp_path, nixl, {**FOUND, "libssl.so.3": None})
    check = _check(doc)
    assert check["status"] == "unknown", check
    assert "was not read" in check["message"]


def test_a_pre_release_between_two_releases_that_need_it_is_refused(tmp_path: Path) -> None:
    # 0.7.1rc1 lies between 0.7.0 and 0.7.1, both read and both needing OpenSSL 3: its code is one of theirs
    check = _check(_gate(tmp_path, "0.7.1rc1", {**FOUND, "libssl.so.3": None}))
    assert check["status"] == "fail", check


def test_every_library_found_passes(tmp_path: Path) -> None:
    for nixl in ("0.6.1", "0.7.0", "0.7.1", "0.8.0rc1", "1.5.2"):
        # (igap50: nixl 1.1.0+ import the backend of torch's CUDA major, nixl_cu13 on this box)
        backend = "nixl-cu13" if nixl == "1.5.2" else "nixl-cu12"
        assert _check(_gate(tmp_path / nixl, nixl, FOUND, backend))["status"] == "ok", nixl


def _closure_left(wheel: Path, start: str) -> tuple[set[str], set[str]]:
    """(the DT_NEEDED names the libraries of WHEEL do not satisfy, walked from the member START through the ones it
    bundles, by file name; every file name in the wheel)."""
    import tempfile
    import zipfile

    from registry_wheels import extract

    from stackcheck.readers.libs import read_object

    with zipfile.ZipFile(wheel) as z:
        names = {Path(n).name: n for n in z.namelist()}
    with tempfile.TemporaryDirectory() as tmp:
        root = extract(wheel, Path(tmp), lambda n: ".so" in Path(n).name)
        left: set[str] = set()
        seen: set[str] = set()
        todo = [start]
        while todo:
            member = todo.pop()
            if member in seen:
                continue
            seen.add(member)
            for soname in read_object(root / member).needed:
                if soname in names:
                    todo.append(names[soname])
                else:
                    left.add(soname)
    return left, set(names)


@pytest.mark.registry
@pytest.mark.parametrize(
    ("dist", "version", "package"),
    [("nixl", "0.6.1", "nixl"), ("nixl", "0.7.0", "nixl"), ("nixl-cu12", "0.7.1", "nixl_cu12"),
     ("nixl-cu13", "0.7.1", "nixl_cu13")],
)  # fmt: skip
def test_wheels_bindings_need_the_system_libraries_the_entry_names(dist: str, version: str, package: str) -> None:
    """The bindings' NEEDED closure in the PyPI wheel (cp312 x86_64) leaves the entry's sonames to the loader: none is
    in the wheel, every one is needed, for each release of the entry's needs_versions read."""
    import zipfile

    from registry_wheels import fetch_wheel

    from stackcheck.facts.versions import version_in
    from stackcheck.knowledge.loader import load

    entry = next(e for e in load().preflight["transfer_packages"]["entries"] if e.get("transfer_backend") == "nixl")
    (system,) = entry["system_libraries"]
    wheel = fetch_wheel(dist, version)
    with zipfile.ZipFile(wheel) as z:
        start = next(n for n in z.namelist() if n.startswith(f"{package}/_bindings.") and n.endswith(".so"))
    left, names = _closure_left(wheel, start)
    assert version_in(version, system["needs_versions"]), version  # (nixl-cu12 / -cu13 0.7.1: beside nixl 0.7.1)
    for soname in system["sonames"]:
        assert soname in left and soname not in names, (soname, sorted(left))
