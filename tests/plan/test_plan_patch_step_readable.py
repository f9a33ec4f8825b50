"""The local workaround's step (features.json workaround.patch: the SM120 "add key 12" edit of SGLang's
symmetric-memory size table) is readable in the plan's output: the output's secret masking takes a `NAME_key=VALUE`
for a secret, so the step once printed `add_key=*** copy_from_key=***` and the user could not read which key to add."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_process import run_stackcheck

ROOT = Path(__file__).resolve().parent.parent.parent
FACTS = ROOT / "tests" / "cases" / "writeup-before" / "facts.json"


def _patch() -> dict[str, object]:
    features = json.loads((ROOT / "manifests" / "features.json").read_text())
    for feature in features["features"] if isinstance(features, dict) else features:
        if feature.get("id") == "torch-symm-mem":
            patch = feature["workaround"]["patch"]
            assert isinstance(patch, dict)
            return patch
    raise AssertionError("torch-symm-mem has no workaround patch")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_patch_step_names_its_keys_unmasked(fmt: str) -> None:
    patch = _patch()
    got = run_stackcheck("plan", "--facts", str(FACTS), "--want", "torch-symm-mem", "--format", fmt)
    assert got.returncode in (0, 1), got.stderr
    # the text wraps a long command with a trailing backslash (to the terminal's width): read it joined
    joined = re.sub(r"\\\n\s*", "", got.stdout) if fmt == "text" else got.stdout
    lines = [line for line in joined.splitlines() if "manual edit, not done by stackcheck" in line]
    assert lines, got.stdout
    line = lines[0]
    assert "***" not in line, line
    assert f"add key {patch['add_key']} to {patch['symbol']}" in line, line
    assert f"the value of key {patch['copy_from_key']}" in line, line
    assert str(patch["file"]) in line, line
