"""imend21: icute2 judged --speculative-moe-runner-backend flashinfer_cutedsl (feature nvfp4, rule
cutedsl-moe-runner-dsl-installed) even on a launch without --speculative-algorithm, where SGLang builds no draft
worker (managers/scheduler.py maybe_init_draft_worker, 0.5.16 / 0.5.20 / 0.5.23 wheels) and the flag runs nothing:
a B200 without nvidia-cutlass-dsl was refused for it. The draft's side is now judged only with an algorithm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackcheck.cli import main

RULE = "cutedsl-moe-runner-dsl-installed"
CASES = Path(__file__).resolve().parents[1] / "cases"


def _b200_without_dsl(tmp_path: Path) -> str:
    doc = json.loads((CASES / "h200-newest" / "facts.json").read_text(encoding="utf-8"))  # SGLang 0.5.23
    facts = doc.get("facts", doc)
    for gpu in facts["gpus"]:
        gpu["name"], gpu["compute_capability"] = "NVIDIA B200", "10.0"
    facts["packages"]["nvidia-cutlass-dsl"] = {"installed": False}
    path = tmp_path / "b200.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def test_the_draft_runner_is_judged_only_with_a_speculative_algorithm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    facts = _b200_without_dsl(tmp_path)

    def refused(*flags: str) -> bool:
        line = ["python", "-m", "sglang.launch_server", "--model-path", "m", *flags]
        main(["gate", "--facts", facts, "--dry-run", "--format", "json", "--", *line])
        doc = json.loads(capsys.readouterr().out)
        return any(x.get("rule") == RULE for r in doc.get("reasons") or [] for x in r.get("reasons") or [])

    spec = ("--speculative-moe-runner-backend", "flashinfer_cutedsl")
    assert not refused(*spec)  # failed before: refused, though no draft is built
    assert refused(*spec, "--speculative-algorithm", "EAGLE")  # the draft (not read: fail closed) runs it
