"""igap47: LMCACHE_MP_HOST set to a blank value under SGLang 0.5.21-0.5.23 with LMCache 0.5.6. LMCache's connector
loads its config from --lmcache-config-file (or LMCACHE_CONFIG_FILE's file) and then lets every LMCACHE_* variable
that is set override it (lmcache 0.5.6 lmcache/v1/config_base.py:567-573 load_config_with_overrides:
update_config_from_env after from_file; lmcache/v1/config.py:999-1052 _update_config_from_env: a variable that is
set, `os.getenv(...) is not None`, is taken through _parse_quoted_string, which strips whitespace and one pair of
quotes, config_base.py:137-161, and mp_host's converter str, config.py:183). So LMCACHE_MP_HOST="" or " " replaces
the file's mp_host with "" and the connector raises ValueError 'LMCache MP config must define mp_host'
(lmcache/integration/sglang/unified_lmcache_mp_connector.py:220-225). Before: a config file with such a variable was
allowed, and LMCACHE_MP_HOST=" " alone counted as a host (launch.json read it as true)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

FEATURE = "lmcache-sglang-adapter"
RULE = "lmcache-mp-host-blank"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_", "LMCACHE_")):
            monkeypatch.delenv(name)


def _gate(tmp_path: Path, release: str, lmcache: str, prefix: list[str], *flags: str) -> dict[str, Any]:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": lmcache, "dist_version": lmcache}
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-lmcache"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line, *flags])[1]


def _rules(doc: dict[str, Any], result: str) -> list[str]:
    return [
        str(x.get("rule"))
        for r in doc.get("reasons") or []
        if r.get("id") == FEATURE or FEATURE in json.dumps(r)
        for x in r.get("reasons") or []
        if x.get("result") == result
    ]


BLANK = ["LMCACHE_MP_HOST=", "LMCACHE_MP_HOST= ", "LMCACHE_MP_HOST=\t ", 'LMCACHE_MP_HOST=""', "LMCACHE_MP_HOST=''"]


@pytest.mark.parametrize("assign", BLANK)
@pytest.mark.parametrize(
    ("env", "flags"),
    [
        ([], ("--lmcache-config-file", "/etc/lmcache/mp.yaml")),
        (["LMCACHE_CONFIG_FILE=/etc/lmcache/mp.yaml"], ()),
    ],
)
def test_a_blank_host_variable_overrides_the_file_and_is_refused(
    tmp_path: Path, assign: str, env: list[str], flags: tuple[str, ...]
) -> None:
    # fails before: allowed (the file gave the host; the blank variable that replaces it was not judged)
    doc = _gate(tmp_path, "0.5.23", "0.5.6", ["env", *env, assign], *flags)
    assert doc["decision"] == "refuse" and RULE in _rules(doc, "fail"), doc.get("reasons")


@pytest.mark.parametrize("assign", ["LMCACHE_MP_HOST= ", "LMCACHE_MP_HOST=  \t"])
def test_a_blank_host_alone_is_no_host(tmp_path: Path, assign: str) -> None:
    # fails before: allowed (' ' counted as a host)
    doc = _gate(tmp_path, "0.5.21", "0.5.6", ["env", assign])
    assert doc["decision"] == "refuse" and "lmcache-unified-mp-host" in _rules(doc, "fail"), doc.get("reasons")


@pytest.mark.parametrize(
    ("prefix", "flags"),
    [
        (["env", "LMCACHE_MP_HOST=10.0.0.5"], ("--lmcache-config-file", "/etc/lmcache/mp.yaml")),
        (["env", "LMCACHE_MP_HOST= 10.0.0.5 "], ()),
        (["env", "X=1"], ("--lmcache-config-file", "/etc/lmcache/mp.yaml")),  # unset: the file's host stands
    ],
)
def test_a_host_or_no_variable_is_allowed(tmp_path: Path, prefix: list[str], flags: tuple[str, ...]) -> None:
    doc = _gate(tmp_path, "0.5.23", "0.5.6", prefix, *flags)
    assert doc["decision"] == "allow" and _rules(doc, "fail") == [], doc.get("reasons")


def test_a_later_lmcache_with_a_blank_host_is_unknown(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", "0.5.7", ["env", "LMCACHE_MP_HOST="], "--lmcache-config-file", "/m.yaml")
    assert doc["decision"] == "refuse" and RULE in _rules(doc, "unknown"), doc.get("reasons")


def test_sglang_before_0_5_21_does_not_read_the_variable(tmp_path: Path) -> None:
    """0.5.13-0.5.20 read the file with LMCache's lmcache_get_config (integration/sglang/utils.py:15-31: from_file,
    no LMCACHE_* override) and pass its mp_host themselves (sglang 0.5.20 lmc_radix_cache.py:148-152)."""
    doc = _gate(tmp_path, "0.5.20", "0.5.6", ["env", "LMCACHE_MP_HOST="], "--lmcache-config-file", "/m.yaml")
    assert RULE not in _rules(doc, "fail") + _rules(doc, "unknown"), doc.get("reasons")


def test_the_audit_reads_the_probed_environment(tmp_path: Path) -> None:
    """Without a launch command: the probed system.env (LMCACHE_CONFIG_FILE and a blank LMCACHE_MP_HOST)."""
    path = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": "0.5.6", "dist_version": "0.5.6"}
    env = doc["facts"].setdefault("system", {}).setdefault("env", {})
    env.update({"LMCACHE_CONFIG_FILE": "/etc/lmcache/mp.yaml", "LMCACHE_MP_HOST": " "})
    path.write_text(json.dumps(doc))
    got = cli_json(["audit", "--facts", str(path), "--format", "json"])[1]
    feature = next(f for f in got["features"] if f["id"] == FEATURE)
    mine = [r for r in feature["reasons"] if r.get("rule") == RULE]
    assert feature["status"] == "blocked" and [r.get("result") for r in mine] == ["fail"], feature
    env["LMCACHE_MP_HOST"] = "10.0.0.5"
    path.write_text(json.dumps(doc))
    got = cli_json(["audit", "--facts", str(path), "--format", "json"])[1]
    feature = next(f for f in got["features"] if f["id"] == FEATURE)
    mine = [r for r in feature["reasons"] if r.get("rule") == RULE]
    assert feature["status"] == "ok" and [r.get("result") for r in mine] == ["pass"], feature
