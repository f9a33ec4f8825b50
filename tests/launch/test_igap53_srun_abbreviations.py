"""igap53: srun reads its long options through getopt_long, which takes a unique prefix of a long option's name
(`--exp=NONE` is `--export=NONE`: Slurm 26.05.3 src/common/slurm_opt.c builds the table, src/srun/opt.c:709 reads
it). The gate looked for the full spellings only, so `srun --exp=NONE python -m sglang.launch_server ...` was judged
with the environment the tasks never get, and `srun --contai=IMG ...` as run on this box. A prefix naming several
options srun refuses as ambiguous: never read as if absent."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import read_runner, srun_long

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load().launch


def _problems(line: list[str], mapping: Any, subject: str, env: dict[str, str] | None = None) -> list[Any]:
    d = gate.derive(line, mapping, env or {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, (line, d.entrypoint)
    return [p for p in d.problems if p.subject == subject and p.status == "unknown"]


@pytest.mark.parametrize(
    "line",
    [
        ["srun", "--exp=NONE", *LAUNCH],
        ["srun", "--expo", "NONE", *LAUNCH],
        ["srun", "-N1", "--expor=ALL,LD_LIBRARY_PATH=/x", *LAUNCH],
        ["srun", "--ex=NONE", *LAUNCH],  # (ambiguous: export, exclude, exact, ...; srun refuses it)
        ["nohup", "srun", "--exp=NIL", *LAUNCH],
    ],
)
def test_an_abbreviated_export_is_an_env_policy(line: list[str], mapping: Any) -> None:
    # fails on the parent: only `--export` and `--export=` were read, the launch judged with this environment
    got = _problems(line, mapping, "env")
    assert got and "fail closed" in got[0].message, line


@pytest.mark.parametrize(
    "line",
    [["srun", "--exp=ALL", *LAUNCH], ["srun", "--expo", "ALL", *LAUNCH], ["srun", "--exclusive", *LAUNCH]],
)
def test_an_abbreviated_export_of_all_is_judged(line: list[str], mapping: Any) -> None:
    assert not _problems(line, mapping, "env"), line


def test_an_export_word_after_the_command_is_the_servers(mapping: Any) -> None:
    # (the words after srun's command are the server's own, not srun's options)
    assert not _problems(["srun", "-N1", *LAUNCH, "--exp=NONE"], mapping, "env")


@pytest.mark.parametrize(
    "line",
    [
        ["srun", "--contai=img", *LAUNCH],
        ["srun", "--container-ty", "oci", *LAUNCH],
        ["srun", "--cont=img", *LAUNCH],  # (ambiguous: container, context, contiguous)
    ],
)
def test_an_abbreviated_container_option_is_a_root_change(line: list[str], mapping: Any) -> None:
    # fails on the parent: only words starting with --container were read
    got = _problems(line, mapping, "root")
    assert got, line


def test_srun_long_reads_prefixes_as_getopt_long_does() -> None:
    assert srun_long("--exp=NONE") == ("export",)
    assert srun_long("--export") == ("export",)
    assert srun_long("--container=x") == ("container",)  # (an exact name wins over longer ones)
    assert len(srun_long("--ex")) > 1 and "export" in srun_long("--ex")
    assert srun_long("--no-such-option") == ()


def test_an_ambiguous_prefix_leaves_the_command_unknown() -> None:
    # fails on the parent: `--ex NONE` was read as an unknown option whose value may be the next word; now ambiguous
    r = read_runner(["srun", "--ex", "NONE", "A=1", "python"], 0)
    assert r.command is None and r.unsure is not None and "ambiguous" in r.unsure
    # a unique prefix of an option taking a value takes the next word
    assert read_runner(["srun", "--nodel", "n1", "A=1", "python"], 0).command == 3
