"""ifc59 (beside the fifty-ninth sample's population f, whose 20 flock forms were all allowed): flock reads -w with
strtold and refuses a value it sets ERANGE for (util-linux lib/strutils.c strtold_or_err; "invalid timeout value:
... Numerical result out of range", exit 64): a non-zero value below the smallest normal long double
(3.3621e-4932) as well as one past its largest. The gate read the value with float(), where 1e-5000 is 0.0 and
1e-4940 a double's 0.0 too, so `flock -w 1e-5000 F python -m sglang.launch_server ...` was read as taken. Where
flock is installed each reading is compared with the real flock's exit."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import read_flock

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]
UNDERFLOW = ["1e-5000", "-1e-5000", "1e-4940", "3.36e-4932", "33.6e-4933", "0.0001e-4929", "1e-99999999999999999999"]
TAKEN = ["1e-400", "0e-5000", "3.37e-4932", "0.00034e-4928", "4e-4932", "000.000", "5."]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _flock(line: list[str], mapping: Any) -> list[str]:
    return [p.status for p in gate.derive(line, mapping, {}).problems if p.subject == "flock"]


@pytest.mark.parametrize("value", UNDERFLOW)
def test_a_timeout_strtold_underflows_on_blocks(value: str, mapping: Any) -> None:
    # fails before: no flock problem (float() read it as 0.0, taken)
    for line in (["flock", "-w", value, "F", *LAUNCH], ["flock", f"--wait={value}", "F", "-c", " ".join(LAUNCH)]):
        assert _flock(line, mapping) == ["blocked"], line


@pytest.mark.parametrize("value", TAKEN)
def test_values_at_and_above_the_smallest_normal_pass(value: str, mapping: Any) -> None:
    assert _flock(["flock", "-w", value, "F", *LAUNCH], mapping) == []


@pytest.mark.skipif(shutil.which("flock") is None, reason="no flock on this box")
@pytest.mark.parametrize("value", UNDERFLOW + TAKEN)
def test_the_reading_agrees_with_the_real_flock(value: str, tmp_path: Path) -> None:
    lock = str(tmp_path / "lock")
    run = subprocess.run(["flock", "-w", value, lock, "true"], capture_output=True, timeout=30,
                         env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}, check=False)  # fmt: skip
    refused = read_flock(["flock", "-w", value, lock, "true"], 0).kind == "refused"
    assert (run.returncode != 0) == refused, (value, run.returncode, run.stderr)
