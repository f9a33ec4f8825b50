"""ifc39 (beside the thirty-ninth fact-check sample's population (t): 276 allows on 0.5.18-0.5.23): `--torchao-config`
on SGLang 0.5.18 or later. Those releases declare no such flag (launch.json release_flags: 0.5.1-0.5.17; sglang 0.5.18
sglang/srt/server_args.py has no torchao field, and prepare_server_args (:9781-9793) parses with a plain
argparse.ArgumentParser), so argparse exits with 'unrecognized arguments'. The option entry that maps the flag to its
launch fact carried no releases, which made the flag known on every release: the gate allowed it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

FLAG = "--torchao-config"


def _gate(tmp_path: Path, release: str, *flags: str) -> dict[str, Any]:
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1", *flags]
    facts = release_box(tmp_path, release, "9.0")
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _flag_reasons(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in doc.get("reasons") or [] if r.get("feature") == FLAG]


@pytest.mark.parametrize("release", ["0.5.18", "0.5.20", "0.5.23"])
def test_torchao_config_on_a_release_without_it_is_refused(tmp_path: Path, release: str) -> None:
    doc = _gate(tmp_path, release, FLAG, "int8wo")
    assert doc["decision"] == "refuse", doc.get("reasons")
    (reason,) = _flag_reasons(doc)
    assert reason["status"] == "blocked" and reason.get("effect") == "crash", reason
    assert "unrecognized arguments" in json.dumps(reason), reason


@pytest.mark.parametrize("release", ["0.5.1", "0.5.10", "0.5.17"])
def test_the_releases_that_declare_it_keep_it(tmp_path: Path, release: str) -> None:
    assert _flag_reasons(_gate(tmp_path, release, FLAG, "int8wo")) == []
