"""imend8: the srun GPU count took SGLang 0.5.3+'s DP layout (each DP group tp x pp GPUs further on) for every
release, but 0.5.1-0.5.2 move each group by tp x --gpu-id-step alone (0.5.1 data_parallel_controller.py:150, 0.5.2
:156), so their groups overlap with --pp-size and the highest ordinal is lower: `--tp 2 --pp-size 2 --dp-size 2`
takes ordinals 0-5 there. A task given 6 GPUs was refused (a false fail); the count now follows the release (the
release unknown: the larger count, and the line is judged again once it is known)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.preflight.gpus import Layout, gpu_ordinals

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2", "--pp-size", "2", "--dp-size", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _srun(line: list[str], mapping: Any, release: str | None) -> tuple[list[str], bool]:
    d = gate.derive(line, mapping, {}, release=release)
    return [p.status for p in d.problems if p.subject == "srun"], d.reads_release


@pytest.mark.parametrize("release", ["0.5.1", "0.5.1.post3", "0.5.2"])
def test_051_052_count_their_own_layout(release: str, mapping: Any) -> None:
    # fails before: refused (8 asked)
    assert _srun(["srun", "--gpus-per-task=6", *LAUNCH], mapping, release)[0] == []
    assert _srun(["srun", "--gpus-per-task=5", *LAUNCH], mapping, release)[0] == ["unknown"]
    # (--gpu-id-step 2: groups 4 apart, ranks at base + 2 x pp_local + 2 x tp_local: 0, 2, 2, 4 / 4, 6, 6, 8)
    line = ["srun", "--gpus-per-task=9", *LAUNCH, "--gpu-id-step", "2"]
    assert _srun(line, mapping, release)[0] == []


def test_053_and_an_unknown_release_count_tp_x_pp(mapping: Any) -> None:
    assert _srun(["srun", "--gpus-per-task=6", *LAUNCH], mapping, "0.5.3")[0] == ["unknown"]
    assert _srun(["srun", "--gpus-per-task=8", *LAUNCH], mapping, "0.5.3")[0] == []
    problems, again = _srun(["srun", "--gpus-per-task=6", *LAUNCH], mapping, None)
    assert problems == ["unknown"] and again
    assert not _srun(["srun", "--gpus-per-task=4", *LAUNCH[:7]], mapping, None)[1]  # (no DP: nothing to read again)


def test_the_ordinals_match_the_preflight_reading() -> None:
    layout = Layout(tp=2, pp=2, dp=2)
    assert max(gpu_ordinals(layout, dp_offset_includes_pp=False)) + 1 == 6
    assert max(gpu_ordinals(layout)) + 1 == 8
