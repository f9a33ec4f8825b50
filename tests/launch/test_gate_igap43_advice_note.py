"""igap43 (issue 16 item 5): where the advice (stackcheck recommend's notes) cannot read a command line, the gate
printed "note: no advice: UsageError", the class name and nothing of use: now the error's own words, or no note where it
has none. A fake gate_advice raises here (the wrapper command the issue names was not reproduced at this commit)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.errors import UsageError


def _advice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: Exception) -> list[str] | None:
    def fail(*args: object, **kw: object) -> list[str]:
        raise exc

    import stackcheck.launch.recommend as recommend

    monkeypatch.setattr(recommend, "gate_advice", fail)
    tmp_path.mkdir(parents=True, exist_ok=True)
    facts = release_box(tmp_path, "0.5.23", "9.0")
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3))]
    doc = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    advice = doc.get("advice")
    return advice if isinstance(advice, list) else None


def test_a_usage_error_says_what_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    said = _advice(tmp_path / "a", monkeypatch, UsageError("server command: --tp needs a value"))
    assert said == ["no advice for this command line: server command: --tp needs a value"], said
    assert _advice(tmp_path / "b", monkeypatch, UsageError("")) is None  # (before: ["no advice: UsageError: "])
    bug = _advice(tmp_path / "c", monkeypatch, KeyError("x"))
    assert bug == ["no advice: KeyError: 'x'"], bug  # (a defect keeps its class name)
