"""imend12: coreutils timeout's words had two readers: runners.read_timeout (the gate's walk, gate.unplaced_before)
and a loose walk in runners.chain_end (the gate's assignment check and the target reader, assembly/target.py), which
skipped any -word and took any word as the DURATION. So `timeout abc /srv/venv/bin/python -m sglang.launch_server`
(timeout exits 125) had its interpreter followed by the target reader while the gate left the launch unknown. Now
chain_end reads each timeout with read_timeout, and stops at one that does not place its command."""

from __future__ import annotations

import pytest

from stackcheck.assembly.target import _placed_command
from stackcheck.launch.runners import chain_end, read_timeout

PY = ["/srv/venv/bin/python", "-m", "sglang.launch_server", "--model-path", "m"]

FORMS = [
    ["timeout", "5"], ["timeout", "1.5e3"], ["timeout", "-x", "5"], ["timeout", "abc"], ["timeout", "--v", "5"],
    ["timeout", "-s", "FOO", "5"], ["timeout", "-k", "abc", "5"], ["timeout", "--sig", "TERM", "10"],
    ["timeout", "-vk5", "--fo", "1m"], ["timeout", "--", "30"], ["timeout", "--help", "5"], ["timeout", "-", "5"],
    ["timeout", "--preserve-status=1", "5"], ["timeout", "0x10"], ["timeout", "5", "--"],
]  # fmt: skip


@pytest.mark.parametrize("prefix", FORMS)
def test_the_chain_places_what_read_timeout_places(prefix: list[str]) -> None:
    argv = [*prefix, *PY]
    read = read_timeout(argv, 0).command
    # fails before: chain_end placed the command behind -x, abc, --v, -s FOO, -k abc, --help, `-`, 0x10, `5 --`
    assert chain_end(argv, 0)[0] == (0 if read is None else read), prefix
    assert _placed_command(argv) == read, prefix


@pytest.mark.parametrize("prefix", FORMS)
def test_behind_nohup_the_chain_stops_at_a_timeout_it_does_not_place(prefix: list[str]) -> None:
    argv = ["nohup", *prefix, *PY]
    read = read_timeout(argv, 1).command
    assert chain_end(argv, 0) == ((1, "nohup") if read is None else (read, "timeout")), prefix
