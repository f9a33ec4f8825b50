"""igap48 (task 3): PyPI's mooncake-transfer-engine 0.3.8, 0.3.8.post1 and 0.3.9 bundle an engine copy
(mooncake_transfer_engine.libs/engine-*.so) that NEEDs libpython3.11.so.1.0 (cp311 wheels, readelf -dW; no other
release 0.3.7-0.3.13.post1 links a libpython), and their EP modules (ep_X_Y_Z, 0.3.9's pg_X_Y_Z), which
mooncake_ep_buffer's Buffer imports, NEED that copy. An interpreter that links its libpython has it loaded; a
statically linked one (no libpython in its DT_NEEDED) leaves it to the loader: where the loader finds none,
--moe-a2a-backend mooncake fails as the dispatcher builds its buffer. preflight.json a2a_packages python_library,
judged in the check moe-a2a-package; the cuda_libs probe records the interpreter's libpython and looks the sonames
up."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes.cudalibs import SONAMES, interpreter_rpath
from stackcheck.readers.fsview import HostView
from stackcheck.verdicts.package_checks import check_a2a_package

SONAME = "libpython3.11.so.1.0"
SYSTEM = {
    n: f"/usr/lib/x86_64-linux-gnu/{n}" for n in ("libibverbs.so.1", "libnuma.so.1", "libcurl.so.4", "libmlx5.so.1")
}
STATIC: dict[str, Any] = {"interpreter": "/usr/bin/python3.11", "rpath": None, "dirs": [], "libpython": ""}
SHARED: dict[str, Any] = {**STATIC, "interpreter": "/opt/py/bin/python3.11", "libpython": SONAME}


def _data() -> Any:
    return json.loads((Path(__file__).resolve().parents[2] / "manifests" / "preflight.json").read_text())


def _check(version: str, own: dict[str, Any] | None, found: str | bool | None, python: str = "3.11.9") -> Any:
    """moe-a2a-package for --moe-a2a-backend mooncake at SGLang 0.5.23, torch CUDA 12.8 (the libcudart rule does not
    apply), every system library found; `own` the interpreter's ELF reading (None: not read), `found` the loader's
    answer for libpython3.11.so.1.0 (False: not looked for)."""
    libs: dict[str, Any] = {"ld_cache": "file", **SYSTEM, "liblzma.so.5": "/usr/lib/x86_64-linux-gnu/liblzma.so.5"}
    if found is not False:
        libs[SONAME] = found
    if own is not None:
        libs["interpreter_rpath"] = own
    facts = {
        "packages": {
            "mooncake-transfer-engine": {"installed": True, "version": version},
            "torch": {"installed": True, "version": "2.9.1+cu128", "cuda": "12.8"},
        },
        "system": {"python": python},
        "cuda_libs": libs,
    }
    return check_a2a_package("mooncake", facts, _data(), "0.5.23")


@pytest.mark.parametrize("version", ["0.3.8", "0.3.8.post1", "0.3.9"])
def test_static_python_without_libpython_fails(version: str) -> None:
    # fails before: the entry's installed_unknown (unknown), no word of libpython
    got = _check(version, STATIC, None)
    assert got.status == "fail", got
    assert SONAME in got.message and version in got.message and SONAME in str(got.observed)


@pytest.mark.parametrize(
    ("own", "found"),
    [(SHARED, None), (STATIC, "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0")],  # linked itself; found by the loader
)
def test_linked_or_found_is_not_failed(own: dict[str, Any], found: str | None) -> None:
    got = _check("0.3.8", own, found)
    assert got.status != "fail", got
    assert "libpython" not in got.message, got


@pytest.mark.parametrize("version", ["0.3.7", "0.3.10", "0.3.13.post1"])
def test_releases_that_link_no_libpython(version: str) -> None:
    got = _check(version, STATIC, None)
    assert got.status != "fail" and "libpython" not in got.message, got


@pytest.mark.parametrize(
    ("own", "found", "python", "words"),
    [
        (None, None, "3.11.9", "was not read"),  # the interpreter's ELF not read
        (STATIC, False, "3.11.9", "was not probed"),  # the soname not looked for
        ({"interpreter": "/usr/bin/python3.11", "error": "not an ELF file"}, None, "3.11.9", "was not read"),
    ],
)
def test_unread_is_unknown(own: dict[str, Any] | None, found: str | bool | None, python: str, words: str) -> None:
    got = _check("0.3.9", own, found, python)
    assert got.status == "unknown" and SONAME in got.message and words in got.message, got


def test_the_probe_reads_the_interpreter_and_looks_the_sonames_up() -> None:
    assert SONAME in SONAMES and "libpython3.12.so.1.0" in SONAMES
    got = interpreter_rpath(HostView(), sys.executable, cache_dir="")
    assert "error" in got or isinstance(got.get("libpython"), str), got
