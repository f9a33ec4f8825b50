"""irev52: a launch.json `env` variable whose value SGLang's reader would refuse (EnvBool: 'on' is neither true nor
false) is a problem only on a release that reads it (the spec's `versions`): SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE is read
by 0.5.13-0.5.17 only, so on 0.5.10 or 0.5.23 'on' is never read and must not make the launch unknown (refused
without --allow-unknown); on 0.5.13 it still is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gate_cli import QWEN3_MOE, cli_json, model_dir, release_box

VAR = "SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _env_reasons(tmp_path: Path, release: str) -> list[str]:
    facts = release_box(tmp_path, release, "9.0")
    model = str(model_dir(tmp_path, "m", QWEN3_MOE))
    line = ["env", f"{VAR}=on", "python3", "-m", "sglang.launch_server", "--model-path", model]
    doc = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    return [str(r.get("status")) for r in doc.get("reasons") or [] if str(r.get("feature", "")).startswith(VAR)]


@pytest.mark.parametrize(("release", "read"), [("0.5.10", False), ("0.5.23", False), ("0.5.13", True)])
def test_a_refused_value_counts_only_where_the_release_reads_it(tmp_path: Path, release: str, read: bool) -> None:
    assert _env_reasons(tmp_path, release) == (["unknown"] if read else [])
