"""imend7 (ifc56's finding): the srun GPU check compared srun's GPUs a task with --tp x --pp over --nnodes only, so
`srun --gpus-per-task=2 python -m sglang.launch_server --tp 2 --dp-size 2` was allowed though, without DP
attention, SGLang's data parallel controller starts a TP group per DP rank on GPUs of its own (0.5.1-0.5.23
launch_dp_schedulers: the next group's first GPU is tp_size [x pp_size from 0.5.3] further on): it needs 4. With
--enable-dp-attention one TP group is shared, as before; several nodes or a size not read: unknown."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _srun(line: list[str], mapping: Any, release: str | None = None) -> list[str]:
    d = gate.derive(line, mapping, {}, release=release)
    return [p.status for p in d.problems if p.subject == "srun"]


@pytest.mark.parametrize(
    "extra", [["--dp-size", "2"], ["--data-parallel-size=2"], ["--dp-size", "4", "--tp", "1"], ["--dp-size", "3"]]
)
def test_dp_replicas_need_their_own_gpus(extra: list[str], mapping: Any) -> None:
    # fails before: no srun problem (2 GPUs a task judged enough for --tp 2)
    assert _srun(["srun", "--gpus-per-task=2", *LAUNCH, *extra], mapping) == ["unknown"]


def test_enough_gpus_for_every_replica_pass(mapping: Any) -> None:
    assert _srun(["srun", "--gpus-per-task=4", *LAUNCH, "--dp-size", "2"], mapping) == []
    assert _srun(["srun", "-G", "6", *LAUNCH, "--dp-size", "3"], mapping) == []


def test_dp_attention_shares_one_tp_group(mapping: Any) -> None:
    line = ["srun", "--gpus-per-task=2", *LAUNCH, "--dp-size", "2", "--enable-dp-attention"]
    assert _srun(line, mapping) == []


def test_several_nodes_with_dp_replicas(mapping: Any) -> None:
    # (at the merge with irev74, whose reading of the device ordinals SGLang assigns, preflight/gpus.py, took the place
    # of imend7's: a node's ranks are counted, where imend7 left several nodes unknown)
    line = [*LAUNCH, "--dp-size", "2", "--nnodes", "2"]
    assert _srun(["srun", "--gpus-per-task=1", *line], mapping) == ["unknown"]
    assert _srun(["srun", "--gpus-per-task=8", *line], mapping) == []


def test_pipeline_stages_count(mapping: Any) -> None:
    # 0.5.3 on: each DP group is tp x pp GPUs on (8 here); on 0.5.1-0.5.2 (tp on: 6, imend7's reading of
    # launch_dp_schedulers) 6 since imend8 (test_imend8_srun_dp_pp_051)
    line = [*LAUNCH, "--dp-size", "2", "--pp-size", "2"]
    assert _srun(["srun", "--gpus-per-task=6", *line], mapping, "0.5.9") == ["unknown"]
    assert _srun(["srun", "--gpus-per-task=8", *line], mapping, "0.5.9") == []
