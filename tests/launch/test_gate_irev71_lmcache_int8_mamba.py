"""irev71 (review of igap49's LMCache refusals): SGLang 0.5.21-0.5.23 also refuse --enable-lmcache beside
--enable-int8-mamba-checkpoint while they resolve their arguments (arg_groups/mamba_hook.py
handle_int8_mamba_checkpoint: ValueError '... not supported together with --enable-lmcache: LMCache is not
int8-aware'), a check igap49's nine did not carry: the gate allowed the launch, which does not start."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

RULE = "lmcache-int8-mamba-checkpoint"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_", "LMCACHE_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("LMCACHE_MP_HOST", "127.0.0.1")  # the multi-process LMCache rules pass


def _gate(tmp_path: Path, release: str, *flags: str) -> dict[str, Any]:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": "0.5.6", "dist_version": "0.5.6"}
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "2", *flags]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


def _refusal(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == f"refusal {RULE}"), None)


@pytest.mark.parametrize("release", ["0.5.21", "0.5.22", "0.5.23"])
def test_lmcache_with_the_int8_mamba_checkpoint_is_refused(tmp_path: Path, release: str) -> None:
    # fails before irev71: no such rule, the launch was allowed
    doc = _gate(tmp_path, release, "--enable-lmcache", "--enable-int8-mamba-checkpoint")
    assert doc["decision"] == "refuse", doc.get("reasons")
    refusal = _refusal(doc)
    assert refusal is not None, doc.get("reasons")
    assert "LMCache is not int8-aware" in json.dumps(refusal)


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.20", ("--enable-lmcache", "--enable-int8-mamba-checkpoint")),  # no such check before 0.5.21
        ("0.5.23", ("--enable-int8-mamba-checkpoint",)),
        ("0.5.23", ("--enable-lmcache",)),
    ],
)
def test_not_refused_by_it_without_the_pair_or_the_check(tmp_path: Path, release: str, flags: tuple[str, ...]) -> None:
    assert _refusal(_gate(tmp_path, release, *flags)) is None
