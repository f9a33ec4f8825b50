"""irev72 (found beside igap51's int8-mamba-checkpoint-hierarchical-cache): the same SGLang handler (0.5.14-0.5.18
server_args.py _handle_int8_mamba_checkpoint, 0.5.19-0.5.23 arg_groups/mamba_hook.py handle_int8_mamba_checkpoint)
raises ValueError next where --radix-cache-backend is given at all: a registered radix-cache backend is not int8-aware.
The gate allowed `--enable-int8-mamba-checkpoint --radix-cache-backend NAME`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, LLAMA3, cli_json, model_dir

RULE = "refusal int8-mamba-checkpoint-radix-cache-backend"


def _gate(tmp_path: Path, release: str, *flags: str) -> dict[str, Any]:
    doc = json.loads(H200_NEWEST.read_text())
    doc["facts"]["packages"]["sglang"].update(version=release, dist_version=release)
    facts = tmp_path / f"facts-{release}.json"
    facts.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), *flags]
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _refusal(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize("release", ["0.5.14", "0.5.18", "0.5.19", "0.5.23"])
def test_int8_mamba_checkpoint_with_a_radix_cache_backend_is_refused(tmp_path: Path, release: str) -> None:
    doc = _gate(tmp_path, release, "--enable-int8-mamba-checkpoint", "--radix-cache-backend", "mine")
    reason = _refusal(doc)
    assert doc["decision"] == "refuse"
    assert reason is not None and reason["status"] == "blocked" and reason["effect"] == "crash", reason


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.18", ["--enable-int8-mamba-checkpoint"]),
        ("0.5.18", ["--radix-cache-backend", "mine"]),
        ("0.5.13", ["--radix-cache-backend", "mine"]),
    ],
)
def test_either_alone_is_not_this_rule(tmp_path: Path, release: str, flags: list[str]) -> None:
    assert _refusal(_gate(tmp_path, release, *flags)) is None
