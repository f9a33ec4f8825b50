"""irev68 (review of igap44 / the LMCache rules): an empty --lmcache-config-file is no file.

SGLang 0.5.13-0.5.20 read `server_args.lmcache_config_file or ""` and raise ValueError 'MP mode requires
--lmcache-config-file' where that is empty (sglang 0.5.13 lmc_radix_cache.py:110, :141-145); 0.5.21-0.5.23 hand the
value to LMCache 0.5.6's UnifiedLMCacheMPConnector, whose load_config_with_overrides takes `config_file_path or
os.getenv("LMCACHE_CONFIG_FILE")` (lmcache/v1/config_base.py:567): an empty path is no file there either, and without
the variable the connector raises 'LMCache MP config must define mp_host' (unified_lmcache_mp_connector.py:220-225).
A launch script's `--lmcache-config-file "$CFG"` with CFG unset is such a launch; the gate allowed it (the rules
asked only that the flag be given)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

_HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("_igap44", str(_HERE / "test_gate_igap44_lmcache_mp_host.py"))
assert _spec is not None and _spec.loader is not None
_igap44: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_igap44)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_", "LMCACHE_")):
            monkeypatch.delenv(name)


@pytest.mark.parametrize("flags", [("--lmcache-config-file", ""), ("--lmcache-config-file=",)])
@pytest.mark.parametrize(("release", "lmcache", "rule"), [
    ("0.5.23", "0.5.6", "lmcache-unified-mp-host"),
    ("0.5.21", "0.5.6", "lmcache-unified-mp-host"),
    ("0.5.17", "0.5.6", "lmcache-mp-config-file"),
])  # fmt: skip
def test_an_empty_config_file_is_refused(tmp_path: Path, release: str, lmcache: str, rule: str,
                                         flags: tuple[str, ...]) -> None:  # fmt: skip
    # fails before: allowed
    doc = _igap44._gate(tmp_path, release, lmcache, {}, *flags)
    assert doc["decision"] == "refuse" and rule in _igap44._rules(doc, "fail"), doc.get("reasons")


def test_an_empty_flag_beside_the_variable_is_allowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """0.5.21-0.5.23: the empty path falls through to LMCACHE_CONFIG_FILE's file (config_base.py:567)."""
    monkeypatch.setenv("LMCACHE_CONFIG_FILE", "/etc/lmcache/mp.yaml")
    doc = _igap44._gate(tmp_path, "0.5.23", "0.5.6", {}, "--lmcache-config-file", "")
    assert doc["decision"] == "allow" and _igap44._rules(doc, "fail") == [], doc.get("reasons")


def test_a_later_lmcache_with_an_empty_flag_is_not_allowed(tmp_path: Path) -> None:
    doc = _igap44._gate(tmp_path, "0.5.23", "0.5.7", {}, "--lmcache-config-file", "")
    assert doc["decision"] == "refuse", doc.get("reasons")
