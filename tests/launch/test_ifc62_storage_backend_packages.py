"""ifc62 (the sixty-second sample, rows f1-f4): `--enable-hierarchical-cache --hicache-storage-backend nixl` (or eic,
aibrix) with an @FILE extra config was allowed on a box without the backend's package: only Mooncake's storage backend
had a package check. SGLang's HiCache controller builds the backend as the server starts (StorageBackendFactory loads
its module, whose top-level import of nixl._api / eic / aibrix_kvcache raises ImportError; attach_storage_backend
re-raises: 0.5.13 cache_controller.py:501-563, 0.5.23 :614-696), so the launch exits before serving."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import check_transfer_package


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _status(backend: str, packages: dict[str, Any], data: Any, release: str = "0.5.13") -> str | None:
    got = check_transfer_package("storage_backend", backend, f"--hicache-storage-backend {backend}",
                                 {"packages": packages}, data, release)  # fmt: skip
    return None if got is None else got.status


@pytest.mark.parametrize(("backend", "dist"), [("nixl", "nixl"), ("eic", "eic"), ("aibrix", "aibrix-kvcache")])
def test_a_storage_backend_without_its_package_is_not_ok(backend: str, dist: str, data: Any) -> None:
    assert _status(backend, {dist: {"installed": False}}, data) == "fail"
    assert _status(backend, {dist: {"installed": False}}, data, "0.5.23") == "fail"
    assert _status(backend, {}, data) == "unknown"  # (a packages list that does not name it)
    assert _status(backend, {dist: {"installed": True, "version": "1.0.0"}}, data) in ("ok", "unknown")


def test_the_ranges_and_the_backends_that_need_none(data: Any) -> None:
    assert _status("eic", {"eic": {"installed": False}}, data, "0.5.2") is None  # (no eic choice before 0.5.3)
    assert _status("file", {}, data) is None  # (HiCacheFile imports nothing of its own)


def test_nixls_forwarding_is_read_as_for_the_transfer_backend(data: Any) -> None:
    # nixl 0.7.1+ only forwards to nixl-cu12 / nixl-cu13: with neither installed the import fails
    pkgs = {"nixl": {"installed": True, "version": "0.7.1"}, "nixl-cu12": {"installed": False},
            "nixl-cu13": {"installed": False}}  # fmt: skip
    assert _status("nixl", pkgs, data) == "fail"
