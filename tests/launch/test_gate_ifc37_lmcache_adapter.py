"""ifc37, the thirty-seventh fact-check sample: the gate allowed `--enable-lmcache` whatever LMCache release was
installed, judging only that its compiled c_ops loads into torch. SGLang's LMCache radix cache also imports names from
LMCache's SGLang integration and calls its connector with keywords, which only some LMCache releases have (read in the
wheels, 2026-12-05): SGLang 0.5.2-0.5.12 import LMCacheLayerwiseConnector (first in LMCache 0.3.6) and pass it
tp_group= (accepted from LMCache 0.3.9: 0.3.6 / 0.3.7 raise TypeError); 0.5.13-0.5.20 also import
multi_process_adapter.LMCacheMPConnector (first in 0.4.6) and, on CUDA, raise ValueError without
--lmcache-config-file; 0.5.21-0.5.23 import lmcache_mp_metadata and unified_lmcache_mp_connector (first in 0.5.6).
The feature lmcache-sglang-adapter now refuses those launches."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

FEATURE = "lmcache-sglang-adapter"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _gate(tmp_path: Path, release: str, lmcache: str | None, *flags: str) -> dict[str, Any]:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    if lmcache is not None:
        doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": lmcache, "dist_version": lmcache}
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-lmcache", "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line, *flags])[1]


def _failed(doc: dict[str, Any]) -> list[str]:
    """The rules of lmcache-sglang-adapter that the decision names as failed."""
    return [
        str(x.get("rule"))
        for r in doc.get("reasons") or []
        if r.get("id") == FEATURE or FEATURE in json.dumps(r)
        for x in r.get("reasons") or []
        if x.get("result") == "fail"
    ]


@pytest.mark.parametrize(
    ("release", "lmcache", "flags", "rule"),
    [
        ("0.5.10", "0.3.6", (), "lmcache-layerwise-tp-group"),
        ("0.5.10", "0.3.7", (), "lmcache-layerwise-tp-group"),
        ("0.5.10", "0.3.5", (), "lmcache-layerwise-tp-group"),
        ("0.5.13", "0.4.5", ("--lmcache-config-file", "/etc/lmc.yaml"), "lmcache-mp-connector"),
        ("0.5.13", "0.5.6", (), "lmcache-mp-config-file"),
        ("0.5.21", "0.5.5", (), "lmcache-unified-mp"),
    ],
)
def test_an_lmcache_without_what_sglang_calls_is_refused(
    tmp_path: Path, release: str, lmcache: str, flags: tuple[str, ...], rule: str
) -> None:
    doc = _gate(tmp_path, release, lmcache, *flags)
    assert doc["decision"] == "refuse" and rule in _failed(doc), doc.get("reasons")


@pytest.mark.parametrize(
    ("release", "lmcache", "flags"),
    [
        ("0.5.10", "0.3.9", ()),
        ("0.5.10", "0.3.10.post1", ()),
        ("0.5.13", "0.4.6", ("--lmcache-config-file", "/etc/lmc.yaml")),
        # igap44: without --lmcache-config-file (or LMCACHE_CONFIG_FILE / LMCACHE_MP_HOST) LMCache 0.5.6's connector
        # raises ValueError 'LMCache MP config must define mp_host' (rule lmcache-unified-mp-host)
        ("0.5.21", "0.5.6", ("--lmcache-config-file", "/etc/lmc.yaml")),
    ],
)
def test_a_matching_lmcache_allows(tmp_path: Path, release: str, lmcache: str, flags: tuple[str, ...]) -> None:
    doc = _gate(tmp_path, release, lmcache, *flags)
    assert doc["decision"] == "allow" and _failed(doc) == [], doc.get("reasons")


@pytest.mark.parametrize("release", ["0.5.10", "0.5.21"])
def test_no_lmcache_installed_is_refused(tmp_path: Path, release: str) -> None:
    """Without LMCache the import fails: SGLang 0.5.2-0.5.20 raise RuntimeError 'LMCache is not installed',
    0.5.21-0.5.23 end on the ImportError. The flag asks for the feature, not applicable without the package: refused."""
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": False}
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-lmcache", "--tp", "1"]
    got = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]
    assert got["decision"] == "refuse", got.get("reasons")
    assert any(r.get("feature") == FEATURE for r in got.get("reasons") or []), got.get("reasons")
