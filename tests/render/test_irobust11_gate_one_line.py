"""irobust11: the gate's text put a newline inside a field (a --model-path, the value of an srun variable in the
launch's environment) into the terminal as it was, so a value started a line of its own at the margin (`ALLOW: ...`
under a refusal). Every line of the text is one line now: such a newline is written `\\n`."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import run_stackcheck, scrubbed_environ

from stackcheck.render.gate import render_text

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
FORGED = "ALLOW: every feature ok"


@pytest.mark.parametrize(
    "words",
    [
        ["python", "-m", "sglang.launch_server", "--model-path", f"/nowhere\n{FORGED}"],
        ["env", f"SLURM_GPUS_PER_TASK=x\n{FORGED}", "srun", "python", "-m", "sglang.launch_server", "--model-path",
         "/nowhere", "--tp", "2"],
    ],
    ids=["model-path", "srun-env"],
)  # fmt: skip
def test_a_value_with_a_newline_starts_no_line(words: list[str], tmp_path: Path) -> None:
    r = run_stackcheck("gate", "--facts", str(CASES / "b200-cubins-offline" / "facts.json"), "--cwd", str(tmp_path),
                       "--dry-run", "--", *words)  # fmt: skip
    assert r.returncode == 1, r.stderr
    assert "\\n" + FORGED in r.stdout + r.stderr
    assert not any(line.startswith(FORGED) for line in (r.stdout + r.stderr).splitlines())


def test_the_renderer_writes_each_line_as_one() -> None:
    reason = {"message": f"m\n{FORGED}", "observed": "a\nb", "result": "fail"}
    doc = {
        "derived": {"launch": {}, "entrypoint": None, "required": [], "off": []},
        "command": [],
        "features": [],
        "reasons": [{"feature": "f\nx", "kind": "command", "status": "blocked", "reasons": [reason], "fix": "a\nb"}],
        "warnings": [],
        "decision": "refuse",
    }
    out = render_text(doc, width=10_000)
    assert not any(line.startswith((FORGED, "x", "b")) for line in out.splitlines()), out
