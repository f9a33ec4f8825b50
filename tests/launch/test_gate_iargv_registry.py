"""launch.json release_flags `nargs` against the real SGLang wheels: tools/sglang_flags.py's reading of each
release's declarations (how many values each flag takes) is what the manifest holds for that release."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from registry_wheels import fetch_wheel

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.1", "0.5.9", "0.5.14", "0.5.23"])
def test_the_nargs_table_is_what_the_wheel_declares(version: str) -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from tools.sglang_flags import arities
    finally:
        sys.path.remove(str(ROOT))
    shipped: dict[str, Any] = dict(load([], env={}).launch)
    read = arities(fetch_wheel("sglang", version))
    table = gate._release_nargs(shipped["release_flags"], version)
    assert table is not None
    assert {f: n for f, n in read.items() if n != "1"} == table
    assert read["--enable-torch-compile"] == "0" and read["--tp-size"] == "1"
    assert "unknown" not in read.values()
