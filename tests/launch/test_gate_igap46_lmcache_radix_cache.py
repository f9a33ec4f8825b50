"""igap46 (issue 16's package open items): `--enable-lmcache` with `--disable-radix-cache` on SGLang 0.5.21-0.5.23.

The twelfth session left this launch open as an over-refusal: registry.py builds no LMCache cache for a disabled
radix cache (0.5.21 returns ChunkCache first where chunked prefill is on; 0.5.22-0.5.23 any disabled cache first), so
the mp_host refusal seemed wrong. But those releases check the cache options while they resolve their arguments
(arg_groups/kv_cache_hook.py:433-445, handle_cache_compatibility, run from pipeline.py) and raise ValueError
'--enable-lmcache requires radix cache to be enabled' before any cache is built, whatever the chunked-prefill
setting: the launch fails. The gate now refuses it with that cause (refusal lmcache-disable-radix-cache), which the
mp_host rule did not name; with LMCACHE_MP_HOST set (mp_host given) it was allowed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

REFUSAL = "refusal lmcache-disable-radix-cache"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_", "LMCACHE_")):
            monkeypatch.delenv(name)


def _gate(tmp_path: Path, release: str, *flags: str) -> dict[str, Any]:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": "0.5.6", "dist_version": "0.5.6"}
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1", *flags]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


def _refusal(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == REFUSAL), None)


@pytest.mark.parametrize("release", ["0.5.21", "0.5.22", "0.5.23"])
@pytest.mark.parametrize("chunked", [(), ("--chunked-prefill-size", "-1"), ("--chunked-prefill-size", "4096")])
def test_lmcache_without_the_radix_cache_is_refused_for_what_sglang_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str, chunked: tuple[str, ...]
) -> None:
    # fails on the parent: mp_host given, the launch was allowed though SGLang raises at its argument check
    monkeypatch.setenv("LMCACHE_MP_HOST", "127.0.0.1")
    doc = _gate(tmp_path, release, "--enable-lmcache", "--disable-radix-cache", *chunked)
    assert doc["decision"] == "refuse", doc.get("reasons")
    refusal = _refusal(doc)
    assert refusal is not None, doc.get("reasons")
    assert "requires radix cache to be enabled" in json.dumps(refusal), refusal


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.23", ("--enable-lmcache",)),  # the radix cache on
        ("0.5.23", ("--disable-radix-cache",)),  # no LMCache
        ("0.5.20", ("--enable-lmcache", "--disable-radix-cache", "--lmcache-config-file", "/etc/lmc.yaml")),  # not read
    ],
)
def test_not_this_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str, flags: tuple[str, ...]
) -> None:
    monkeypatch.setenv("LMCACHE_MP_HOST", "127.0.0.1")
    assert _refusal(_gate(tmp_path, release, *flags)) is None
