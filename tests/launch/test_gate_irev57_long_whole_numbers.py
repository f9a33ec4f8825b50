"""irev57 (beside the review: a gate attacked with odd values of the flags the fifth session's rules read): the launch
readers of --dcp-size (the DCP rules ifc38 widened to fa4 / cutedsl_mla), --ep-size and --max-ep-size tested a value
with str.isdecimal() and then called int(), which refuses more digits than sys.get_int_max_str_digits() (4,300 by
default): `--dcp-size 999...9` (5,000 digits) ended the gate in an internal error (exit 4, no decision) where
argparse's type=int refuses the value too. Such a value is now no whole number to these readers (unknown, as any
other), and the gate decides."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import run_stackcheck
from gate_cli import LAUNCH, LLAMA3, model_dir

ROOT = Path(__file__).resolve().parent.parent.parent
LONG = "9" * 5000


@pytest.mark.parametrize(
    "flags",
    [("--dcp-size", LONG), ("--ep-size", LONG), ("--ep-size", " " + LONG),
     ("--elastic-ep-backend", "mooncake", "--max-ep-size", LONG)],
)  # fmt: skip
def test_the_gate_decides_on_a_value_int_refuses_for_its_length(tmp_path: Path, flags: tuple[str, ...]) -> None:
    facts = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
    model = model_dir(tmp_path, "llama", LLAMA3)
    line = [*LAUNCH, "--model-path", str(model), *flags]
    r = run_stackcheck("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line)
    assert r.returncode in (0, 1) and "internal error" not in r.stderr, (r.returncode, r.stderr[-400:])
    assert '"decision": "refuse"' in r.stdout  # (argparse's int() refuses it: the launch does not start)


def test_the_readers_take_ordinary_values_as_before() -> None:
    from stackcheck.launch.refusals import _whole

    assert [_whole(v) for v in ("2", " 8 ", "０", "", "-1", "+2", "2.0", LONG)] == [
        2,
        8,
        0,
        None,
        None,
        None,
        None,
        None,
    ]
