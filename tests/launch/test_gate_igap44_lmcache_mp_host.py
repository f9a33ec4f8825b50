"""igap44 (issue 16): LMCache's multi-process mode under SGLang 0.5.21-0.5.23. Their LMCache radix cache builds
LMCache 0.5.6's UnifiedLMCacheMPConnector with --lmcache-config-file, which may be None
(sglang/srt/mem_cache/storage/lmcache/lmcache_unified_radix_cache.py:55-63); the connector loads LMCache's config
from that file, else from the file LMCACHE_CONFIG_FILE names, else from LMCACHE_* variables
(lmcache/v1/config_base.py load_config_with_overrides), and raises ValueError 'LMCache MP config must define mp_host'
where none gives mp_host (unified_lmcache_mp_connector.py:220-225; config.py:183: no default). So `--enable-lmcache`
with none of the three stops as the scheduler builds its cache. Before, the gate allowed it (ifc37's rules judge the
imports only)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

FEATURE = "lmcache-sglang-adapter"
RULE = "lmcache-unified-mp-host"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_", "LMCACHE_")):
            monkeypatch.delenv(name)


def _gate(tmp_path: Path, release: str, lmcache: str, env: dict[str, str], *flags: str) -> dict[str, Any]:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": lmcache, "dist_version": lmcache}
    doc["facts"].setdefault("system", {}).setdefault("env", {}).update(env)
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-lmcache", "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line, *flags])[1]


def _rules(doc: dict[str, Any], result: str) -> list[str]:
    return [
        str(x.get("rule"))
        for r in doc.get("reasons") or []
        if r.get("id") == FEATURE or FEATURE in json.dumps(r)
        for x in r.get("reasons") or []
        if x.get("result") == result
    ]


@pytest.mark.parametrize("release", ["0.5.21", "0.5.22", "0.5.23"])
def test_no_mp_host_anywhere_is_refused(tmp_path: Path, release: str) -> None:
    # fails before: allowed
    doc = _gate(tmp_path, release, "0.5.6", {})
    assert doc["decision"] == "refuse" and RULE in _rules(doc, "fail"), doc.get("reasons")
    assert "mp_host" in json.dumps(doc["reasons"])


@pytest.mark.parametrize(
    ("env", "flags"),
    [
        ({}, ("--lmcache-config-file", "/etc/lmcache/mp.yaml")),
        ({"LMCACHE_CONFIG_FILE": "/etc/lmcache/mp.yaml"}, ()),
        ({"LMCACHE_MP_HOST": "127.0.0.1"}, ()),
    ],
)
def test_a_config_file_or_the_host_variable_allows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], flags: tuple[str, ...]
) -> None:
    # the gate's own environment is the one the server inherits (a saved report's system.env is not: below)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    doc = _gate(tmp_path, "0.5.23", "0.5.6", {}, *flags)
    assert doc["decision"] == "allow" and _rules(doc, "fail") == [], doc.get("reasons")
    if env:
        monkeypatch.delenv(next(iter(env)))
        (tmp_path / "saved").mkdir()
        assert _gate(tmp_path / "saved", "0.5.23", "0.5.6", env)["decision"] == "refuse"


@pytest.mark.parametrize(
    "prefix", [("env", "LMCACHE_MP_HOST=10.0.0.5"), ("env", "-u", "X", "LMCACHE_CONFIG_FILE=/etc/lmcache/mp.yaml")]
)
def test_the_launchs_own_environment_counts(tmp_path: Path, prefix: tuple[str, ...]) -> None:
    path = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": "0.5.6", "dist_version": "0.5.6"}
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-lmcache"]
    got = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]
    assert got["decision"] == "allow", got.get("reasons")
    empty = [*line[: len(prefix) - 1], line[len(prefix) - 1].split("=")[0] + "=", *line[len(prefix) :]]
    got = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *empty])[1]
    assert got["decision"] == "refuse", got.get("reasons")  # an empty value is no host and no file


def test_a_later_lmcache_is_not_read(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", "0.5.7", {})
    assert doc["decision"] == "refuse" and f"{RULE}-unread" in _rules(doc, "unknown"), doc.get("reasons")


def test_the_probe_records_the_two_variables() -> None:
    from stackcheck.redact import redact_env

    got = redact_env({"LMCACHE_CONFIG_FILE": "/etc/lmcache/mp.yaml", "LMCACHE_MP_HOST": "10.0.0.5",
                      "LMCACHE_REMOTE_URL": "redis://user:pw@host:6379"})  # fmt: skip
    assert got == {"LMCACHE_CONFIG_FILE": "/etc/lmcache/mp.yaml", "LMCACHE_MP_HOST": "10.0.0.5"}
