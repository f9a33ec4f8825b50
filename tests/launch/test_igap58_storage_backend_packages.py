"""igap58: the HiCache storage backends simm (0.5.11+), mori (0.5.15+), npu_memcache (0.5.20+), tensorcast (0.5.21+)
and seaweedfs (0.5.22+) had no package check, so `--enable-hierarchical-cache --hicache-storage-backend simm` was
allowed on a box without the package their module imports as the server builds it (simm.kv, mori.umbp,
memcache_hybrid, tensorcast.api.store, boto3: read in the sglang wheels, preflight.json transfer_packages). The
backends that import nothing of their own (file, sim, shm) are listed with their reading (`no_package`)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.probes.packages import WANTED
from stackcheck.verdicts.package_checks import check_transfer_package


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _status(backend: str, packages: dict[str, Any], data: Any, release: str = "0.5.23") -> str | None:
    got = check_transfer_package("storage_backend", backend, f"--hicache-storage-backend {backend}",
                                 {"packages": packages}, data, release)  # fmt: skip
    return None if got is None else got.status


NEW = [("simm", "simm", "0.5.11"), ("mori", "mori", "0.5.15"), ("npu_memcache", "memcache-hybrid", "0.5.20"),
       ("tensorcast", "tensorcast", "0.5.21"), ("seaweedfs", "boto3", "0.5.22")]  # fmt: skip


@pytest.mark.parametrize(("backend", "dist", "first"), NEW)
def test_a_storage_backend_without_its_package_fails(backend: str, dist: str, first: str, data: Any) -> None:
    assert _status(backend, {dist: {"installed": False}}, data) == "fail"
    assert _status(backend, {dist: {"installed": False}}, data, first) == "fail"
    assert _status(backend, {}, data) == "unknown"  # (a packages list that does not name it)


@pytest.mark.parametrize(("backend", "dist", "first"), NEW)
def test_before_its_first_release_no_entry_judges_it(backend: str, dist: str, first: str, data: Any) -> None:
    major, minor, patch = first.split(".")
    before = f"{major}.{minor}.{int(patch) - 1}"
    assert _status(backend, {dist: {"installed": False}}, data, before) is None


def test_an_installed_package_whose_module_is_not_read_stays_unknown(data: Any) -> None:
    # mori built without UMBP has no mori.umbp; PyPI's simm is another project
    assert _status("mori", {"mori": {"installed": True, "version": "0.1.0"}}, data) == "unknown"
    assert _status("simm", {"simm": {"installed": True, "version": "0.0.0"}}, data) == "unknown"
    assert _status("seaweedfs", {"boto3": {"installed": True, "version": "1.44.18"}}, data) == "ok"
    assert _status("npu_memcache", {"memcache-hybrid": {"installed": True, "version": "1.3.0"}}, data) == "ok"


def test_the_probe_looks_for_the_distributions_whose_name_was_read() -> None:
    for dist in ("boto3", "memcache-hybrid", "mori"):
        assert dist in WANTED
    # (names not read from a real wheel or build file stay unprobed: the check is unknown on a probed box)
    assert "tensorcast" not in WANTED and "simm" not in WANTED


def test_every_storage_backend_choice_is_judged_or_listed_as_needing_none(data: Any) -> None:
    """Each --hicache-storage-backend choice of each release 0.5.1-0.5.23 (launch.json release_choices) has a
    transfer_packages entry or a no_package row covering that release, except dynamic (the user's own module) and
    hf3fs (hf3fs_fuse only where the extra config does not ask for the mock client: not judged, the description)."""
    from stackcheck.facts.versions import version_in_settled

    launch = load([], env={}).launch
    table = next(r for r in launch["release_choices"] if r["flags"] == ["--hicache-storage-backend"])
    spec = data["transfer_packages"]
    missing = []
    for run in table["runs"]:
        for v in range(1, 24):
            release = f"0.5.{v}"
            if not version_in_settled(release, run["versions"]):
                continue
            for choice in run["choices"]:
                if choice in ("dynamic", "hf3fs"):
                    continue
                judged = any(e.get("storage_backend") == choice and version_in_settled(release, e["versions"])
                             for e in spec["entries"])  # fmt: skip
                none = any(choice in row["storage_backends"] and version_in_settled(release, row["versions"])
                           for row in spec.get("no_package", []))  # fmt: skip
                if judged == none:
                    missing.append((release, choice, judged))
    assert missing == []


@pytest.mark.registry
@pytest.mark.parametrize(("backend", "first"), [(b, f) for b, _, f in NEW] + [(b, "0.5.23") for b, _, _ in NEW])
def test_the_wheels_import_the_module_where_the_entries_say(backend: str, first: str) -> None:
    """The release registers the backend and its storage module imports the entry's module; no METADATA requires the
    distribution."""
    from registry_wheels import fetch_wheel, read_texts

    entry = next(e for e in load([], env={}).preflight["transfer_packages"]["entries"]
                 if e.get("storage_backend") == backend)  # fmt: skip
    wheel = fetch_wheel("sglang", first)
    texts = read_texts(wheel, lambda n: ("mem_cache/storage/" in n and n.endswith(".py")) or n.endswith("METADATA"))
    factory = next(t for n, t in texts.items() if n.endswith("storage/backend_factory.py"))
    assert f'"{backend}",' in factory
    module = entry["module"]
    needles = (f"from {module} import", f"import {module}")
    assert any(any(x in t for x in needles) for n, t in texts.items() if n.endswith(".py")), (first, module)
    meta = "".join(t for n, t in texts.items() if n.endswith("METADATA"))
    assert meta and not any(f"Requires-Dist: {d}" in meta.replace("\r", "") for d in entry["distributions"])
