"""checks.json nccl rule symm-mem-allocator-link read against the real SGLang wheels: every release from 0.5.1 builds
its NCCL symmetric-memory allocator with torch's load_inline, linked with a bare -lnccl (no -L of its own, no
versioned name, no try/except that would fall back), from 0.5.5 only for a TP group larger than one. A release
that links the NCCL wheel's directory or its libnccl.so.2, or catches the failed build, fails here."""

from __future__ import annotations

import re
from typing import Any

import pytest
from registry_wheels import fetch_wheel, read_texts, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load

ALLOCATOR = "sglang/srt/distributed/device_communicators/pynccl_allocator.py"
ALL = ["0.5.1", "0.5.1.post3", *(f"0.5.{n}" for n in range(2, 24))]
DEFAULT = ["0.5.1", "0.5.9", "0.5.10", "0.5.17", "0.5.23"]


def _versions() -> list[str]:
    return ALL if run_all() else DEFAULT


def _rule() -> dict[str, Any]:
    checks = load([], env={}).checks
    nccl = next(c for c in checks if c["id"] == "nccl")
    return dict(next(r for r in nccl["rules"] if r["id"] == "symm-mem-allocator-link"))


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_allocator_links_a_bare_lnccl(version: str) -> None:
    code = read_texts(fetch_wheel("sglang", version), lambda n: n == ALLOCATOR)[ALLOCATOR]
    call = re.search(r"torch\.utils\.cpp_extension\.load_inline\((.*?)\n\s*\)", code, re.S)
    assert call is not None, f"{version}: no load_inline call in {ALLOCATOR}"
    args = call.group(1)
    assert re.search(r"extra_ldflags=\[\s*\"-lnccl\"\s*\]", args), f"{version}: {args}"
    assert "-L" not in args and "libnccl.so" not in args and "library_dirs" not in args
    # the build is not caught: a failed link raises out of get_nccl_mem_pool
    body = code[code.index("def get_nccl_mem_pool") :]
    body = body[: body.index("\ndef ", 1) if "\ndef " in body[1:] else len(body)]
    assert not re.search(r"except (Exception|RuntimeError|OSError|BaseException)", body), version
    # from 0.5.5 a group of one skips it (the rule's tp > 1); 0.5.1-0.5.4 build it at any TP size
    skips_one = re.search(r"world_size == 1", code) is not None
    assert skips_one == (version_in(version, ">=0.5.5") is True), version
    when = _rule()["when"]
    assert isinstance(when, dict)
    bounds = [c["value"] for c in when["all"] if c.get("fact") == "pkg.sglang.version"]
    any_tp = [c["value"] for c in when["all"][-1]["any"] if c.get("fact") == "pkg.sglang.version"]
    assert bounds == [">=0.5.1"] and any_tp == ["<0.5.5"]
