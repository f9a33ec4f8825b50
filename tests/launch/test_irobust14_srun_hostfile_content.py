"""irobust14 (an adversarial pass over ifc66's srun host file): `srun -F FILE` / SLURM_HOSTFILE with a FILE that is
there was allowed whatever it held. Slurm 284c3b95f0 src/api/allocate.c slurm_read_hostfile cuts each line at an
unescaped '#', skips lines left empty, and returns NULL ('Invalid hostfile contents' / 'Hostlist is empty!') where a
line starts with neither a letter nor a digit or where no line names a host; srun then exits before the step, as for
a file it cannot open. Now such a file blocks; one this user cannot read blocks; a FIFO or a device (/dev/stdin) is
unknown (srun reads what it gives), not 'no file'; a file the reading does not judge (too large, a 1023-byte line,
hosts only as NAME*N under -F) is unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.readers.fsview import HostView

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
JOB = {"SLURM_JOB_ID": "4242"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _statuses(mapping: Any, tmp_path: Path, body: bytes | None, how: str = "-F", view: Any = None) -> list[str]:
    hosts = tmp_path / "hosts"
    if body is not None:
        hosts.write_bytes(body)
    prefix, env = ["srun", "-F", str(hosts)], JOB
    if how != "-F":
        prefix, env = ["srun"], {**JOB, "SLURM_HOSTFILE": str(hosts)}
    derived = gate.derive([*prefix, *LAUNCH], mapping, env)
    got = gate.srun_hostfile_problems(derived, view or HostView(), str(tmp_path), "not read")
    assert all(p.subject == "srun" for p in got)
    return [p.status for p in got]


@pytest.mark.parametrize(
    "body",
    [b"", b"\n\n", b"# the nodes\n", b"   \n", b" gpu01\n", b"gpu01\n-gpu02\n", b"# a\n\n.gpu01\n", b"#gpu01,gpu02\n"],
)
@pytest.mark.parametrize("how", ["-F", "SLURM_HOSTFILE"])
def test_a_file_naming_no_host_blocks(body: bytes, how: str, mapping: Any, tmp_path: Path) -> None:
    assert _statuses(mapping, tmp_path, body, how) == ["blocked"]  # fails before: [] (allowed)


@pytest.mark.parametrize(
    "body",
    [b"gpu01\n", b"gpu01,gpu02\r\n", b"# nodes\n\ngpu01 # first\n", b"gpu\\#01\n", b"gpu01", b"gpu01*0\n"],
)
@pytest.mark.parametrize("how", ["-F", "SLURM_HOSTFILE"])
def test_a_file_naming_hosts_is_judged_as_before(body: bytes, how: str, mapping: Any, tmp_path: Path) -> None:
    assert _statuses(mapping, tmp_path, body, how) == []


def test_a_file_not_judged_is_unknown(mapping: Any, tmp_path: Path) -> None:
    assert _statuses(mapping, tmp_path, b"gpu01*2\n") == ["unknown"]  # (-F reads NAME*N with n 0: none pushed)
    assert _statuses(mapping, tmp_path, b"gpu01*2\n", "SLURM_HOSTFILE") == []
    assert _statuses(mapping, tmp_path, b"g" * 1100 + b"\n") == ["unknown"]
    assert _statuses(mapping, tmp_path, b"\xc3\xa9gpu\n") == ["unknown"]
    assert _statuses(mapping, tmp_path, b"gpu01\n" * 200_000) == ["unknown"]  # (over 1 MiB: not read)


def test_a_fifo_is_unknown_and_a_directory_blocked(mapping: Any, tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "hosts"
    os.mkfifo(fifo)
    assert _statuses(mapping, tmp_path, None) == ["unknown"]  # fails before: blocked ('no file on this host')
    fifo.unlink()
    fifo.mkdir()
    assert _statuses(mapping, tmp_path, None) == ["blocked"]


class _Unreadable(HostView):
    def read_bytes(self, path: str, limit: int, offset: int = 0) -> bytes:
        raise PermissionError(13, "Permission denied", path)


def test_a_file_this_user_cannot_read_blocks(mapping: Any, tmp_path: Path) -> None:
    assert _statuses(mapping, tmp_path, b"gpu01\n", view=_Unreadable()) == ["blocked"]  # fails before: []


@pytest.mark.parametrize(
    "command",
    [
        ["env", "-C", "@sub", "srun", "-F", "hosts", *LAUNCH],
        ["sh", "-c", f"cd @sub && exec srun -F hosts {' '.join(LAUNCH)}"],
    ],
)
def test_a_relative_name_after_a_change_of_directory_is_not_read_from_the_start(
    command: list[str], mapping: Any, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "hosts").write_text("gpu01\n")  # here, but srun reads sub/hosts, which is not there
    command = [w.replace("@sub", str(tmp_path / "sub")) for w in command]
    derived = gate.derive(command, mapping, JOB)
    start = str(tmp_path)
    moved = gate.launch_cwd(command, mapping, JOB, start)
    got = gate.srun_hostfile_problems(derived, HostView(), start, "not read", moved)
    assert [p.status for p in got] == ["unknown"]  # fails before: [] (allowed: ./hosts read from the start)
    assert gate.srun_hostfile_problems(derived, HostView(), start, "not read", start) == []


@pytest.mark.parametrize("word", ["$HOSTS", "~/hosts", "$(cat list)", "`cat list`", "hosts*"])
def test_a_word_the_shell_expands_is_not_read_as_written(word: str, mapping: Any, tmp_path: Path) -> None:
    command = ["bash", "-c", f"srun -F {word} {' '.join(LAUNCH)}"]
    derived = gate.derive(command, mapping, {**JOB, "HOSTS": "/etc/hosts"})
    got = gate.srun_hostfile_problems(derived, HostView(), str(tmp_path), "not read", str(tmp_path))
    assert [p.status for p in got] in ([], ["unknown"])  # fails before: blocked ('<cwd>/$HOSTS is no file')
