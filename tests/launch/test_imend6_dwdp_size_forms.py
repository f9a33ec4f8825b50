"""imend6: the two readers of --dwdp-size (whether it turns DP attention on, launch.json refusals.auto.dwdp, and what
SGLang's DWDP handler asserts against, refusal dwdp-constraints) read it through one helper (_dwdp_size), so every form
SGLang's argparse takes gives both the same size: `--dwdp-size=N`, a unique abbreviation, the last of repeated flags;
a value int() takes that the gate does not read as a whole number ('+4', '2_0') leaves both unknown, never DWDP off."""

from __future__ import annotations

from typing import Any

import pytest
from gate_cli import LAUNCH

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate, refusals

MAPPING = load([], env={}).launch


def _values(*flags: str) -> dict[str, Any]:
    d = gate.derive([*LAUNCH, "--model", "m", "--tp", "2", *flags], MAPPING, {})
    return refusals.launch_values(d, MAPPING, "0.5.23", {})


def _known(value: object) -> bool:
    return value is True or value is False


@pytest.mark.parametrize(
    ("flags", "size"),
    [
        (("--dwdp-size", "4"), 4),
        (("--dwdp-size=4",), 4),
        (("--dwdp-si", "4"), 4),  # a unique abbreviation argparse accepts
        (("--dwdp-si=4",), 4),
        (("--dwdp-size", "4", "--dwdp-size", "1"), 1),  # the last wins
        (("--dwdp-size", "1", "--dwdp-size=4"), 4),
        (("--dwdp-size", " 4 "), 4),
        (("--dwdp-size", "1"), 1),
        (("--dwdp-size", "+4"), None),
        (("--dwdp-size", "2_0"), None),
        (("--dwdp-size", "two"), None),
        ((), 1),
    ],
)
def test_both_readers_read_one_size(flags: tuple[str, ...], size: int | None) -> None:
    got = _values(*flags)
    on, conflicts = got["dp_attention"], got["dwdp_conflicts"]
    if size is None:
        assert not _known(on) and conflicts.holds is None, (on, conflicts)
    elif size <= 1:
        assert on is False and conflicts.holds is False and conflicts.text == "DWDP off", (on, conflicts)
    else:  # --tp 2: a DWDP size of 4 is refused, and DP attention is on
        assert on is True and conflicts.holds is True and f"--dwdp-size {size} with --tp-size 2" in conflicts.text
