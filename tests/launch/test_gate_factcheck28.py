"""The twenty-eighth fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Twenty-eighth sample"; rows a4,
a6 and a7 of bench/factcheck28_drawn.json), read in the real wheels:

- a4 / a7: `--disaggregation-mode prefill` (SGLang's default transfer backend, mooncake) on 0.5.17 / 0.5.11 with no
  Mooncake installed: SGLang builds its MooncakeTransferEngine at startup, whose `from mooncake.engine import
  TransferEngine` fails, and raises ImportError (sglang 0.5.11 wheel, model_executor/model_runner.py:483-484,
  :1241-1284; distributed/device_communicators/mooncake_transfer_engine.py:102-109). No release requires Mooncake.
- a6: `--enable-hierarchical-cache --hicache-storage-backend mooncake` on 0.5.13: the HiCache controller builds the
  Mooncake store at startup, whose `from mooncake.store import MooncakeDistributedStore` fails (sglang 0.5.13 wheel,
  managers/cache_controller.py:501-504, mem_cache/storage/mooncake_store/mooncake_store.py:255-265).

The gate's preflight check transfer-package (preflight.json transfer_packages) judges both. On the parent the refused
cases here fail (allowed, no such check)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, gate_tp8, model_dir, release_box

CHECK = "transfer-package"
DIST = "mooncake-transfer-engine"
PREFILL = ("--disaggregation-mode", "prefill")
HICACHE_MOONCAKE = ("--enable-hierarchical-cache", "--hicache-storage-backend", "mooncake")


def _gate(tmp_path: Path, release: str, cc: str, mooncake: dict[str, Any] | None, *flags: str) -> dict[str, Any]:
    """gate_tp8 of a Llama 3 on h200-newest with `release` at `cc`; the packages probe's mooncake-transfer-engine
    entry set to `mooncake` (None: left out, as in a report that does not list it)."""
    facts = release_box(tmp_path, release, cc)
    doc = json.loads(facts.read_text())
    doc["facts"]["packages"].pop(DIST, None)
    if mooncake is not None:
        doc["facts"]["packages"][DIST] = mooncake
    doc["facts"].setdefault("cuda_libs", {}).update(MOONCAKE_SYSTEM_LIBS)  # (ifc44: engine.so's system libraries)
    facts.write_text(json.dumps(doc))
    return gate_tp8(facts, model_dir(tmp_path, "m", LLAMA3), *flags)


def _check(doc: dict[str, Any]) -> dict[str, Any] | None:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]
    return found[0] if found else None


MISSING = {"installed": False}
INSTALLED = {"installed": True, "version": "0.3.7"}
# a release whose transfer engine links no libcudart (0.3.5-0.3.6.post1, preflight.json runtime_library): 0.3.7 on
# links libcudart.so.12, which h200-newest's CUDA 13 torch does not load, so there the check is not ok (icorpAB)
INSTALLED_NO_CUDART = {"installed": True, "version": "0.3.6.post1"}


@pytest.mark.parametrize(
    ("release", "cc", "flags"),
    [
        ("0.5.17", "10.0", PREFILL),  # row a4
        ("0.5.11", "12.0", PREFILL),  # row a7
        ("0.5.1", "9.0", ("--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "mooncake")),
        ("0.5.23", "9.0", PREFILL),
        ("0.5.13", "8.0", HICACHE_MOONCAKE),  # row a6
        ("0.5.23", "9.0", HICACHE_MOONCAKE),
    ],
)
def test_mooncake_not_installed_refused(tmp_path: Path, release: str, cc: str, flags: tuple[str, ...]) -> None:
    # fails on the parent: allowed; the transfer engine's or the store's import raises ImportError at startup
    doc = _gate(tmp_path, release, cc, MISSING, *flags)
    assert doc["decision"] == "refuse"
    check = _check(doc)
    assert check is not None and check["status"] == "fail", check
    assert "mooncake" in check["message"] and check["source"]


def test_mooncake_not_listed_is_unknown(tmp_path: Path) -> None:
    # fails on the parent: allowed; a report whose packages probe does not name Mooncake cannot vouch for it
    doc = _gate(tmp_path, "0.5.17", "10.0", None, *PREFILL)
    check = _check(doc)
    assert check is not None and check["status"] == "unknown", check
    assert doc["decision"] == "refuse"


@pytest.mark.parametrize(
    ("mooncake", "flags"),
    [
        (INSTALLED_NO_CUDART, PREFILL),  # Mooncake installed (a release that links no libcudart): the check passes
        (INSTALLED, HICACHE_MOONCAKE),
        (MISSING, ("--enable-hierarchical-cache",)),  # no storage backend
        (MISSING, ("--enable-hierarchical-cache", "--hicache-storage-backend", "file")),  # needs no package
        (MISSING, ("--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "fake")),  # no package
        (MISSING, ("--hicache-storage-backend", "mooncake")),  # without HiCache SGLang builds no store
        (MISSING, ()),
    ],
)
def test_other_launches_pass_or_not_judged(tmp_path: Path, mooncake: dict[str, Any], flags: tuple[str, ...]) -> None:
    check = _check(_gate(tmp_path, "0.5.17", "9.0", mooncake, *flags))
    assert check is None or check["status"] == "ok", check
    if mooncake is INSTALLED or mooncake is INSTALLED_NO_CUDART:
        assert check is not None


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.1", "0.5.11", "0.5.23"])
def test_wheels_import_mooncake_where_the_entries_say(release: str) -> None:
    """Each transfer_packages entry's module is imported by the release's own code (the transfer engine's and the
    store's `from MODULE import`), and no release's METADATA requires the distribution."""
    from registry_wheels import fetch_wheel, read_texts

    from stackcheck.knowledge.loader import load

    wheel = fetch_wheel("sglang", release)
    texts = read_texts(wheel, lambda n: (n.endswith(".py") and "mooncake" in n) or n.endswith("METADATA"))
    entries = [e for e in load().preflight["transfer_packages"]["entries"] if "mooncake" in e["module"]]
    assert entries
    for entry in entries:
        needle = f"from {entry['module']} import"
        assert any(needle in t for n, t in texts.items() if n.endswith(".py")), (release, needle)
        meta = "".join(t for n, t in texts.items() if n.endswith("METADATA"))
        assert meta and not any(f"Requires-Dist: {d}" in meta for d in entry["distributions"]), release
