"""ifc47 (the forty-seventh fact-check sample, rows p1 and p2): `--enable-lmcache --lmcache-config-file ''` on SGLang
0.5.20 beside LMCache 0.5.6 was allowed. SGLang 0.5.13-0.5.20's LMCache radix cache takes the flag as
`get_memory().lmcache_config_file or ""` and, in multi-process mode (every CUDA device), raises ValueError "MP mode
requires --lmcache-config-file" where that is empty (sglang 0.5.20 wheel, sglang/srt/mem_cache/storage/lmcache/
lmc_radix_cache.py:112 and :141-147; 0.5.13 :137-144): an empty value is no file, and LMCACHE_CONFIG_FILE is not read
there. SGLang 0.5.21-0.5.23 hand the flag to LMCache 0.5.6's load_config_with_overrides, whose `config_file_path or
os.getenv("LMCACHE_CONFIG_FILE")` (lmcache/v1/config_base.py:567) reads an empty path as none given either. Rules
lmcache-mp-config-file and lmcache-unified-mp-host (-unread) took the flag as given whenever it was on the command
line, its value not read."""

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
        if name.startswith(("SGLANG_", "STACKCHECK_", "LMCACHE_")):
            monkeypatch.delenv(name)


def _gate(tmp_path: Path, release: str, *words: str, prefix: tuple[str, ...] = ()) -> dict[str, Any]:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": "0.5.6", "dist_version": "0.5.6"}
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-lmcache", *words]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


def _failed(doc: dict[str, Any]) -> list[str]:
    return [
        str(x.get("rule"))
        for r in doc.get("reasons") or []
        if FEATURE in json.dumps(r)
        for x in r.get("reasons") or []
        if x.get("result") == "fail"
    ]


@pytest.mark.parametrize(
    ("release", "words", "prefix", "rule"),
    [
        # rows p1 / p2 (their env prefixes are not read by 0.5.20)
        ("0.5.20", ("--lmcache-config-file", ""), ("env", "LMCACHE_MP_HOST= "), "lmcache-mp-config-file"),
        ("0.5.20", ("--lmcache-config-file", ""), ("env", "LMCACHE_CONFIG_FILE=mp.yaml"), "lmcache-mp-config-file"),
        ("0.5.13", ("--lmcache-config-file=",), (), "lmcache-mp-config-file"),
        ("0.5.23", ("--lmcache-config-file", ""), (), "lmcache-unified-mp-host"),
    ],
)
def test_an_empty_config_file_is_none_given(
    tmp_path: Path, release: str, words: tuple[str, ...], prefix: tuple[str, ...], rule: str
) -> None:
    # fails before: allowed (the flag counted as given whatever its value)
    doc = _gate(tmp_path, release, *words, prefix=prefix)
    assert doc["decision"] == "refuse" and rule in _failed(doc), doc.get("reasons")


@pytest.mark.parametrize("release", ["0.5.20", "0.5.23"])
def test_a_config_file_named_is_still_allowed(tmp_path: Path, release: str) -> None:
    doc = _gate(tmp_path, release, "--lmcache-config-file", "/etc/lmcache/mp.yaml")
    assert doc["decision"] == "allow" and _failed(doc) == [], doc.get("reasons")


def test_on_0_5_21_the_variable_still_gives_the_host_beside_an_empty_flag(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", "--lmcache-config-file", "", prefix=("env", "LMCACHE_MP_HOST=10.0.0.5"))
    assert doc["decision"] == "allow", doc.get("reasons")
