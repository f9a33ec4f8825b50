"""irobust11: `sbatch --wrap "python -m sglang.launch_server ..."` (and sbatch before the launch's words) submits the
command to Slurm, which runs it on the job's allocated node later (sbatch(1) --wrap). The gate read it as an SGLang
wrapper with none of the string's flags and judged it on this box's facts, with no problem naming sbatch; it is
unknown now, as bsub and qsub are (elsewhere.ELSEWHERE)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import run_stackcheck, scrubbed_environ

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
LAUNCH = "python -m sglang.launch_server --model-path m --attention-backend triton"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize(
    "argv",
    [["sbatch", "--wrap", LAUNCH], ["sbatch", f"--wrap={LAUNCH}"], ["/usr/bin/sbatch", "-N1", *LAUNCH.split()]],
    ids=["wrap", "wrap-equals", "words"],
)
def test_sbatch_before_the_launch_is_unknown(argv: list[str], mapping: Any) -> None:
    d = gate.derive(argv, mapping, {})
    got = [p for p in d.problems if p.subject == "sbatch"]
    assert [p.status for p in got] == ["unknown"], d.problems


def test_the_gate_names_sbatch(tmp_path: Path) -> None:
    r = run_stackcheck("gate", "--facts", str(CASES / "h200-newest" / "facts.json"), "--cwd", str(tmp_path),
                       "--dry-run", "--format", "json", "--", "sbatch", "--wrap", LAUNCH)  # fmt: skip
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["decision"] == "refuse"
    assert any(p.get("subject") == "sbatch" and p["status"] == "unknown" for p in doc["derived"]["problems"])
