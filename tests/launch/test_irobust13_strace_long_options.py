"""irobust13: strace's long options were listed in part (those with a required value and some plain ones) and any
other name was read as an option that might take the next word, the launch after it judged: `strace --hel`
(getopt_long's unique prefix of --help: strace prints its help and exits) and `strace --xyz` (strace exits,
"unrecognized option") were allowed, though neither runs the command (a false pass; run on this box, strace 6.1).
strace's long options are now its 6.1 table entire, so a prefix is read as strace reads it and a name it does not know
is unknown. `strace --e A=1` (the unique prefix of --env) is the opaque -E as `--env` is."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _strace(prefix: list[str], mapping: Any) -> list[str]:
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server", prefix
    return [p.status for p in d.problems]


@pytest.mark.parametrize(
    "prefix",
    [["strace", "--hel"], ["strace", "--vers"], ["strace", "-f", "--he"], ["strace", "--att", "5"],
     ["strace", "--xyz"], ["strace", "--s", "5"], ["strace", "--kill-on-exit"], ["strace", "--e", "A=1"],
     ["strace", "--u", "nobody"]],
)  # fmt: skip
def test_a_long_option_strace_prints_refuses_or_wraps_with_is_unknown(prefix: list[str], mapping: Any) -> None:
    assert _strace(prefix, mapping) == ["unknown"]  # (fails before: --hel, --vers, --he, --xyz, --kill-on-exit allowed)


@pytest.mark.parametrize(
    "prefix",
    [["strace", "--follow-forks", "--output=log"], ["strace", "--foll", "-o", "log"], ["strace", "--timestamps=ns"],
     ["strace", "--decode-fds=all", "--summary"], ["strace", "--signal=none", "-f"], ["strace", "--q"],
     ["strace", "--string-limit", "64", "--"]],
)  # fmt: skip
def test_a_long_option_strace_takes_runs_the_launch(prefix: list[str], mapping: Any) -> None:
    assert _strace(prefix, mapping) == []
