"""irev73: srun reads options from its own environment before its command line (Slurm 26.05.3 src/srun/opt.c
env_vars[] :546-645, applied in order at :660-684, the command line after them): SRUN_EXPORT_ENV "overrides
SLURM_EXPORT_ENV" (:570-571, since 23.02), SRUN_CONTAINER / SRUN_CONTAINER_ID / SRUN_CONTAINER_TYPE set --container,
--container-id, --container-type (:639-641), and a SPANK plugin's option (pyxis' --container-image) is read from
SLURM_SPANK__SLURM_SPANK_OPTION_<plugin>_<option> (src/common/spank.c spank_process_env_options :1205-1240,
_opt_env_name :1407, SPANK_OPTION_ENV_PREFIX "_SLURM_SPANK_OPTION_"). irev72 read SLURM_EXPORT_ENV alone, and the
root change only from the command line: `SRUN_EXPORT_ENV=NONE srun python -m sglang.launch_server ...` and
`SRUN_CONTAINER=/bundle srun ...` were judged with the caller's environment and the host's files."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
PYXIS_IMAGE = "SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_image"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load().launch


def _unknown(subject: str, line: list[str], env: dict[str, str], mapping: Any) -> list[Any]:
    d = gate.derive(line, mapping, env)
    assert d.entrypoint == "launch-server", line
    return [p for p in d.problems if p.subject == subject and p.status == "unknown"]


@pytest.mark.parametrize(
    "env",
    [
        {"SRUN_EXPORT_ENV": "NONE"},  # fails before the fix
        {"SLURM_EXPORT_ENV": "ALL", "SRUN_EXPORT_ENV": "NONE"},  # fails before the fix (SRUN_ overrides)
        {"SLURM_EXPORT_ENV_HET_GROUP_1": "NONE"},  # fails before the fix (inside a heterogeneous job)
    ],
)
def test_srun_export_env_is_an_env_policy(env: dict[str, str], mapping: Any) -> None:
    assert _unknown("env", ["srun", *LAUNCH], env, mapping), env


@pytest.mark.parametrize(
    ("line", "env"),
    [
        (["srun", *LAUNCH], {"SRUN_EXPORT_ENV": "ALL", "SLURM_EXPORT_ENV": "NONE"}),
        (["srun", "--export=ALL", *LAUNCH], {"SRUN_EXPORT_ENV": "NONE"}),  # (the command line wins)
        (["srun", *LAUNCH], {"SLURM_EXPORT_ENV": "ALL"}),
    ],
)
def test_the_whole_environment_passed_is_judged(line: list[str], env: dict[str, str], mapping: Any) -> None:
    assert not _unknown("env", line, env, mapping), (line, env)


@pytest.mark.parametrize(
    "env",
    [
        {"SRUN_CONTAINER": "/bundles/sglang"},  # fails before the fix
        {"SRUN_CONTAINER_ID": "c1"},  # fails before the fix
        {PYXIS_IMAGE: "lmsysorg/sglang:latest"},  # fails before the fix
        {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_name": "kept"},  # fails before the fix
    ],
)
def test_a_container_from_srun_environment_is_a_root_change(env: dict[str, str], mapping: Any) -> None:
    assert _unknown("root", ["srun", *LAUNCH], env, mapping), env


@pytest.mark.parametrize(
    "env",
    [{}, {"SRUN_CPUS_PER_TASK": "4"}, {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_no_container_mount_home": "1"}],
)
def test_no_container_no_root_change(env: dict[str, str], mapping: Any) -> None:
    assert not _unknown("root", ["srun", *LAUNCH], env, mapping), env


def test_the_messages_name_the_environment_spellings(mapping: Any) -> None:
    # fails before the fix: the messages named SLURM_EXPORT_ENV alone and no container variable
    (env,) = _unknown("env", ["srun", *LAUNCH], {"SRUN_EXPORT_ENV": "NONE"}, mapping)
    assert "SRUN_EXPORT_ENV" in env.message
    (root,) = _unknown("root", ["srun", *LAUNCH], {"SRUN_CONTAINER": "/b"}, mapping)
    assert "SRUN_CONTAINER" in root.message
