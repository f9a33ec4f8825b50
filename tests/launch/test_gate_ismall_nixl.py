"""ismall, finding one: `--disaggregation-transfer-backend nixl` (and 0.5.13's `mooncake_tcp`) had no preflight check.

Read in the real wheels: every SGLang release 0.5.1-0.5.23 builds its NixlKVManager as the scheduler starts in prefill
or decode mode (disaggregation/prefill.py and decode.py build the KV manager in their queues' __init__), and that
manager imports nixl._api and raises ImportError when it fails (0.5.1 nixl/conn.py:122-129, 0.5.17:413-415, 0.5.23:
542-549). Only the `nixl` distribution installs the `nixl` package (nixl-cu12 / nixl-cu13 install nixl_cu12 /
nixl_cu13). `mooncake_tcp` (0.5.13 on) is rewritten to mooncake before the backend is built
(arg_groups/pd_disaggregation_hook.py). On the parent the refused cases here were allowed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, NIXL_SYSTEM_LIBS, gate_tp8, model_dir, release_box

CHECK = "transfer-package"
NIXL = ("--disaggregation-mode", "prefill", "--disaggregation-transfer-backend", "nixl")
TCP = ("--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "mooncake_tcp")
MISSING = {"installed": False}
INSTALLED = {"installed": True, "version": "1.5.2"}


def _gate(tmp_path: Path, release: str, packages: dict[str, dict[str, Any] | None], *flags: str) -> dict[str, Any]:
    """gate_tp8 of a Llama 3 on h200-newest with `release`; each named distribution's packages entry set (None:
    left out, as in a report saved before the probe looked for it)."""
    facts = release_box(tmp_path, release, "9.0")
    doc = json.loads(facts.read_text())
    for name, entry in packages.items():
        doc["facts"]["packages"].pop(name, None)
        if entry is not None:
            doc["facts"]["packages"][name] = entry
    doc["facts"].setdefault("cuda_libs", {}).update(MOONCAKE_SYSTEM_LIBS)  # (ifc44: engine.so's system libraries)
    doc["facts"]["cuda_libs"].update(NIXL_SYSTEM_LIBS)  # (ifc45: NIXL's etcd client's OpenSSL 3)
    # (igap50: nixl-cu12's UCX CUDA module beside this torch of CUDA 13)
    doc["facts"]["cuda_libs"]["libcudart.so.12"] = "/opt/cu12/lib/libcudart.so.12"
    facts.write_text(json.dumps(doc))
    return gate_tp8(facts, model_dir(tmp_path, "m", LLAMA3), *flags)


def _check(doc: dict[str, Any]) -> dict[str, Any] | None:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]
    return found[0] if found else None


@pytest.mark.parametrize("release", ["0.5.1", "0.5.9", "0.5.17", "0.5.23"])
def test_nixl_not_installed_refused(tmp_path: Path, release: str) -> None:
    # fails on the parent: allowed, and NixlKVManager's import raises ImportError as the scheduler starts
    doc = _gate(tmp_path, release, {"nixl": MISSING, "nixl-cu12": MISSING, "nixl-cu13": MISSING}, *NIXL)
    check = _check(doc)
    assert check is not None and check["status"] == "fail", check
    assert doc["decision"] == "refuse"
    assert check["required"] == "nixl._api" and check["observed"] == "not installed"
    assert "NIXL" in check["message"] and check["source"]


def test_nixl_backend_wheel_alone_is_not_nixl(tmp_path: Path) -> None:
    # nixl-cu12 installs nixl_cu12, not the nixl package SGLang imports: still refused
    doc = _gate(tmp_path, "0.5.23", {"nixl": MISSING, "nixl-cu12": INSTALLED}, *NIXL)
    check = _check(doc)
    assert check is not None and check["status"] == "fail", check


@pytest.mark.parametrize(
    ("nixl", "cu12", "cu13"),
    [
        (INSTALLED, INSTALLED, INSTALLED),  # pip install nixl (1.5.2 requires both)
        ({"installed": True, "version": "0.7.1"}, INSTALLED, MISSING),  # 0.7.1 requires nixl-cu12
        ({"installed": True, "version": "0.6.1"}, MISSING, MISSING),  # before 0.7.1 nixl ships nixl._api itself
        ({"installed": True, "version": "0.6.1"}, None, None),
    ],
)
def test_nixl_installed_allowed(tmp_path: Path, nixl: Any, cu12: Any, cu13: Any) -> None:
    packages = {"nixl": nixl, "nixl-cu12": cu12, "nixl-cu13": cu13, "mooncake-transfer-engine": MISSING}
    # SGLang 0.5.14: 0.5.15+ also need nixl's Python API of 1.2.0 (ifc52's api_floor), which these releases predate
    check = _check(_gate(tmp_path, "0.5.14", packages, *NIXL))
    assert check is not None and check["status"] == "ok", check
    assert check["observed"] == "nixl installed"


def test_nixl_meta_without_its_cuda_wheel_refused(tmp_path: Path) -> None:
    # nixl 0.7.1+ only forwards to nixl_cu12 / nixl_cu13 (pip install --no-deps nixl): its import raises ImportError
    doc = _gate(tmp_path, "0.5.23", {"nixl": INSTALLED, "nixl-cu12": MISSING, "nixl-cu13": MISSING}, *NIXL)
    check = _check(doc)
    assert check is not None and check["status"] == "fail", check
    assert check["observed"] == "nixl 1.5.2 installed; nixl-cu12 or nixl-cu13 not installed"
    assert doc["decision"] == "refuse"


@pytest.mark.parametrize(
    "packages",
    [
        {"nixl": INSTALLED, "nixl-cu12": None, "nixl-cu13": None},  # the backend wheels not read (an older report)
        {"nixl": {"installed": True}, "nixl-cu12": MISSING, "nixl-cu13": MISSING},  # nixl's version not given
    ],
)
def test_nixl_meta_unread_is_unknown(tmp_path: Path, packages: dict[str, dict[str, Any] | None]) -> None:
    # SGLang 0.5.14: 0.5.15+ also need nixl's Python API of 1.2.0 (ifc52's api_floor), which these releases predate
    check = _check(_gate(tmp_path, "0.5.14", packages, *NIXL))
    assert check is not None and check["status"] == "unknown", check


def test_nixl_not_listed_is_unknown(tmp_path: Path) -> None:
    # a report saved before the packages probe looked for nixl cannot vouch for it: unknown, and the gate refuses
    doc = _gate(tmp_path, "0.5.17", {"nixl": None}, *NIXL)
    check = _check(doc)
    assert check is not None and check["status"] == "unknown", check
    assert doc["decision"] == "refuse"


def test_mooncake_tcp_needs_mooncake(tmp_path: Path) -> None:
    # 0.5.13 on rewrites mooncake_tcp to mooncake: the same MooncakeTransferEngine import
    doc = _gate(tmp_path, "0.5.23", {"mooncake-transfer-engine": MISSING}, *TCP)
    check = _check(doc)
    assert check is not None and check["status"] == "fail", check
    ok = _check(_gate(tmp_path, "0.5.23", {"mooncake-transfer-engine": {"installed": True}}, *TCP))
    assert ok is not None and ok["status"] == "ok", ok


def test_fake_backend_needs_no_package(tmp_path: Path) -> None:
    flags = ("--disaggregation-mode", "prefill", "--disaggregation-transfer-backend", "fake")
    doc = _gate(tmp_path, "0.5.23", {"nixl": MISSING, "mooncake-transfer-engine": MISSING}, *flags)
    assert _check(doc) is None


def test_probe_lists_nixl_distributions() -> None:
    from stackcheck.probes.packages import WANTED

    assert {"nixl", "nixl-cu12", "nixl-cu13"} <= set(WANTED)


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.1", "0.5.13", "0.5.23"])
def test_wheels_import_nixl_api_in_the_kv_manager(release: str) -> None:
    """The release's NixlKVManager imports the entry's module inside a try that raises ImportError."""
    from registry_wheels import fetch_wheel, read_texts

    from stackcheck.knowledge.loader import load

    entry = next(e for e in load().preflight["transfer_packages"]["entries"] if e.get("transfer_backend") == "nixl")
    texts = read_texts(fetch_wheel("sglang", release), lambda n: n.endswith("disaggregation/nixl/conn.py"))
    (conn,) = texts.values()
    at = conn.index(f"from {entry['module']} import")
    assert "class NixlKVManager" in conn[:at] and "raise ImportError" in conn[at : at + 400]


@pytest.mark.registry
def test_nixl_wheels_are_what_the_entry_says() -> None:
    """nixl 0.7.1 ships no nixl/_api.py of its own: its nixl/__init__.py imports nixl_cu13 / nixl_cu12 and its
    METADATA requires nixl-cu12 (the entry's `backends`, from_version 0.7.1)."""
    from registry_wheels import fetch_wheel, read_texts

    from stackcheck.knowledge.loader import load

    entry = next(e for e in load().preflight["transfer_packages"]["entries"] if e.get("transfer_backend") == "nixl")
    since = entry["backends"]["from_version"]
    texts = read_texts(fetch_wheel("nixl", since), lambda n: n.startswith("nixl") and n.endswith((".py", "METADATA")))
    assert "nixl/_api.py" not in texts and "nixl/__init__.py" in texts
    init = texts["nixl/__init__.py"]
    assert all(f'"{d.replace("-", "_")}"' in init for d in entry["backends"]["distributions"])
    meta = next(t for n, t in texts.items() if n.endswith("METADATA"))
    assert "Requires-Dist: nixl-cu12" in meta
