"""imend7 (imend6's finding): flock's -w / --timeout / --wait and -E / --conflict-exit-code values were not read, so
`flock -w abc F python -m sglang.launch_server ...` (flock exits 64, "invalid timeout value", before running
anything) was read as a launch. Now a value util-linux flock rejects (sys-utils/flock.c: strtotimeval_or_err, a
timer setup_timer cannot set, strtos32_or_err and 0-255) blocks the launch; a hexadecimal timeout or a decimal comma
(the locale decides) is unknown. Where flock is installed, each reading is compared with the real flock's exit."""

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

REFUSED_W = ["abc", "", "5 ", "5e", "-1", "inf", "nan", "-2.5", "1e19", "1e999", "1x"]
TAKEN_W = ["5", " 5", "+2", ".5", "5.", "1e3", "0", "-0", "1e-400", "9.2e18", "-0.0000001"]
REFUSED_E = ["abc", "", "5 ", "-1", "256", "0x10", "1.0", "99999999999", "9" * 5000]
TAKEN_E = ["5", " 5", "+2", "07", "255", "0"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _flock(line: list[str], mapping: Any) -> list[str]:
    return [p.status for p in gate.derive(line, mapping, {}).problems if p.subject == "flock"]


@pytest.mark.parametrize("value", REFUSED_W)
def test_a_timeout_flock_rejects_blocks(value: str, mapping: Any) -> None:
    # fails before: no flock problem (the launch read as run)
    for line in (["flock", "-w", value, "F", *LAUNCH], ["flock", f"--timeout={value}", "F", *LAUNCH],
                 ["flock", "--wait", value, "F", "-c", " ".join(LAUNCH)]):  # fmt: skip
        assert _flock(line, mapping) == ["blocked"], line


@pytest.mark.parametrize("value", REFUSED_E)
def test_an_exit_code_flock_rejects_blocks(value: str, mapping: Any) -> None:
    for line in (["flock", "-E", value, "F", *LAUNCH], ["flock", f"--conflict-exit-code={value}", "F", *LAUNCH]):
        assert _flock(line, mapping) == ["blocked"], line


def test_an_attached_value_and_a_cluster_are_read(mapping: Any) -> None:
    assert _flock(["flock", "-nwabc", "F", *LAUNCH], mapping) == ["blocked"]
    assert _flock(["flock", "-E300", "F", *LAUNCH], mapping) == ["blocked"]
    assert _flock(["flock", "-nw5", "-E3", "F", *LAUNCH], mapping) == []


@pytest.mark.parametrize(("option", "value"), [("-w", v) for v in TAKEN_W] + [("-E", v) for v in TAKEN_E])
def test_values_flock_takes_pass(option: str, value: str, mapping: Any) -> None:
    line = ["flock", option, value, "F", *LAUNCH]
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server" and _flock(line, mapping) == [], d.problems


@pytest.mark.parametrize("value", ["0x10", "1,5"])
def test_a_hexadecimal_timeout_or_a_decimal_comma_is_unknown(value: str, mapping: Any) -> None:
    assert _flock(["flock", "-w", value, "F", *LAUNCH], mapping) == ["unknown"]


@pytest.mark.skipif(shutil.which("flock") is None, reason="no flock on this box")
@pytest.mark.parametrize(("option", "value"), [("-w", v) for v in REFUSED_W + TAKEN_W]
                         + [("-E", v) for v in REFUSED_E[:-1] + TAKEN_E])  # fmt: skip
def test_the_reading_agrees_with_the_real_flock(option: str, value: str, tmp_path: Path) -> None:
    lock = str(tmp_path / "lock")
    run = subprocess.run(["flock", option, value, lock, "true"], capture_output=True, timeout=30,
                         env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}, check=False)  # fmt: skip
    refused = read_flock(["flock", option, value, lock, "true"], 0).kind == "refused"
    assert (run.returncode != 0) == refused, (option, value, run.returncode, run.stderr)
