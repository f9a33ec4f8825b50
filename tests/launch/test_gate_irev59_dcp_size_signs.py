"""irev59 (review of the sixth 2026-12-05 session): the --dcp-size reader stripped a leading '-' and then a leading
'+' before its digit test, and then called int() on the whole value: `--dcp-size=-+5` passed the test on '5' and
int('-+5') raised ValueError, so the gate ended in an internal error (exit 4, no decision) instead of deciding.
SGLang's argparse (type=int) refuses the value as well, so the launch does not start: the value is no whole number
to the reader (unknown, as any other), and the gate decides (refuse, since unknown is not allowed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_cli import LAUNCH, LLAMA3, cli_json, model_dir

ROOT = Path(__file__).resolve().parent.parent.parent
FACTS = str(ROOT / "tests" / "cases" / "h200-newest" / "facts.json")


def _gate(tmp_path: Path, value: str) -> tuple[int, dict[str, object]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    model = model_dir(tmp_path, "llama", LLAMA3)
    line = [*LAUNCH, "--model-path", str(model), "--tp", "8", "--attention-backend", "fa4", f"--dcp-size={value}"]
    return cli_json(["gate", "--facts", FACTS, "--dry-run", "--format", "json", "--", *line])


@pytest.mark.parametrize("value", ["-+5", "+-5", "--5", "++5", "-+"])
def test_two_signs_are_no_whole_number_and_the_gate_decides(tmp_path: Path, value: str) -> None:
    rc, doc = _gate(tmp_path, value)  # (cli_json asserts exit 0 or 1: not the internal error's 4)
    assert rc == 1 and doc["decision"] == "refuse", doc.get("reasons")


@pytest.mark.parametrize("value", ["2", "+2", " 2 "])
def test_one_sign_or_none_is_read_as_before(tmp_path: Path, value: str) -> None:
    """The same launch with a value int() reads decides the same way for each spelling of 2."""
    assert _gate(tmp_path / "a", value)[1]["decision"] == _gate(tmp_path / "b", "2")[1]["decision"]
