"""ifc49 (the forty-ninth fact-check sample, row r1): a flag launch.json lists without release entries was never
judged against the release's own flags.

undeclared_problems left every flag launch.json lists to release_problems, which judges only the options that carry
`releases`; six options carry none (--enable-lmcache, --lmcache-config-file, --enable-kv-cache-sharding,
--enable-deterministic-inference, --rl-on-policy-target, --pdmux-config-path), so on a release that does not declare
one (release_flags, read from every wheel) the gate allowed a launch argparse ends at once with 'unrecognized
arguments' (exit status 2). Row r1: SGLang 0.5.1.post3 with LMCache installed, `--enable-lmcache
--lmcache-config-file ...`, was allowed; the 0.5.1.post3 wheel has no 'lmcache' anywhere in sglang/srt, 0.5.2 declares
--enable-lmcache (server_args.py:1801) but not --lmcache-config-file, 0.5.21 has no --enable-kv-cache-sharding (0.5.22
does). Such a flag is now judged by release_flags as any unlisted flag is."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box


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
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), *flags]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


def _flag_reason(doc: dict[str, Any], flag: str) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == flag), None)


@pytest.mark.parametrize(
    ("release", "flags", "flag"),
    [
        ("0.5.1.post3", ("--enable-lmcache", "--lmcache-config-file", "/etc/lmcache/mp.yaml"), "--enable-lmcache"),
        ("0.5.1", ("--enable-lmcache",), "--enable-lmcache"),
        ("0.5.2", ("--enable-lmcache", "--lmcache-config-file", "/etc/lmcache/mp.yaml"), "--lmcache-config-file"),
        ("0.5.12", ("--enable-lmcache", "--lmcache-config-file", "/etc/lmcache/mp.yaml"), "--lmcache-config-file"),
        ("0.5.21", ("--tp", "2", "--enable-kv-cache-sharding"), "--enable-kv-cache-sharding"),
        ("0.5.2", ("--enable-deterministic-inference",), "--enable-deterministic-inference"),
    ],
)  # fmt: skip
def test_a_listed_flag_the_release_does_not_declare_is_refused(
    tmp_path: Path, release: str, flags: tuple[str, ...], flag: str
) -> None:
    # fails on the parent: no reason names the flag (row r1 was allowed)
    doc = _gate(tmp_path, release, *flags)
    reason = _flag_reason(doc, flag)
    assert reason is not None, doc.get("reasons")
    assert doc["decision"] == "refuse"
    assert reason["status"] in ("blocked", "unknown"), reason  # unknown where the release loads plugins first
    assert f"SGLang {release} declares no {flag}" in json.dumps(reason)


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.2", ("--enable-lmcache",)),
        ("0.5.13", ("--enable-lmcache", "--lmcache-config-file", "/etc/lmcache/mp.yaml")),
        ("0.5.22", ("--tp", "2", "--enable-kv-cache-sharding")),
        ("0.5.3", ("--enable-deterministic-inference",)),
    ],
)  # fmt: skip
def test_a_listed_flag_the_release_declares_is_not_refused_for_it(
    tmp_path: Path, release: str, flags: tuple[str, ...]
) -> None:
    doc = _gate(tmp_path, release, *flags)
    assert all(_flag_reason(doc, f) is None for f in flags if f.startswith("--")), doc.get("reasons")


def test_every_listed_flag_without_release_entries_is_in_release_flags() -> None:
    """The flags launch.json lists without `releases` are judged by release_flags alone now: each must be declared
    by some release there (a flag no release declares would be refused everywhere)."""
    from stackcheck.knowledge.loader import load
    from stackcheck.launch import gate

    mapping: dict[str, Any] = dict(load().launch)
    releases = [str(r) for r in mapping["release_flags"]["releases"]]
    declared = set().union(*(gate._declared_in(mapping, r) or set() for r in releases))
    for option in gate._options(mapping):
        if not option.get("releases"):
            assert any(n in declared for n in gate._names(option)), option["flag"]
