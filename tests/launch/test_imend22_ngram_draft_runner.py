"""imend22: --speculative-algorithm NGRAM builds no draft model: NGRAMWorker drafts from its CPU-side n-gram corpus and
reuses the target's model runner (speculative/ngram_worker.py, sglang 0.5.16-0.5.23: draft_worker None, no
speculative_moe_backend_context), so --speculative-moe-runner-backend flashinfer_cutedsl runs nothing there. The
rule cutedsl-moe-runner-dsl-installed refused such a launch on a B200 without nvidia-cutlass-dsl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackcheck.cli import main

RULE = "cutedsl-moe-runner-dsl-installed"
CASES = Path(__file__).resolve().parents[1] / "cases"


def test_ngram_builds_no_draft_so_the_draft_runner_needs_no_dsl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads((CASES / "h200-newest" / "facts.json").read_text(encoding="utf-8"))  # SGLang 0.5.23
    facts = doc.get("facts", doc)
    for gpu in facts["gpus"]:
        gpu["name"], gpu["compute_capability"] = "NVIDIA B200", "10.0"
    facts["packages"]["nvidia-cutlass-dsl"] = {"installed": False}
    path = tmp_path / "b200.json"
    path.write_text(json.dumps(doc), encoding="utf-8")

    def refused(*flags: str) -> bool:
        line = ["python", "-m", "sglang.launch_server", "--model-path", "m", *flags]
        main(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])
        out = json.loads(capsys.readouterr().out)
        return any(x.get("rule") == RULE for r in out.get("reasons") or [] for x in r.get("reasons") or [])

    spec = ("--speculative-moe-runner-backend", "flashinfer_cutedsl")
    assert not refused(*spec, "--speculative-algorithm", "NGRAM")  # failed before: refused, though no draft is built
    assert refused(*spec, "--speculative-algorithm", "EAGLE")  # the draft (not read: fail closed) runs it
