"""ifc61: a layout whose ranks land on one CUDA device twice was ok in the gpu-count check (it compared the highest
ordinal with the GPUs visible, the distinct count only shown). SGLang 0.5.1-0.5.2 move each DP group by tp x
--gpu-id-step alone (0.5.1 data_parallel_controller.py:150, preflight.json gpu_layout.dp_offset), so `--tp 1 --pp-size 4
--dp-size 2` puts its groups on 0-3 and 1-4: GPUs 1-3 each carry two schedulers, and each sizes its static pool as
--mem-fraction-static of the whole GPU (0.5.1 model_runner.py), so the second is not known to start (imend8 made the
srun form of it an allow; the sixty-first sample's row o1). Now unknown wherever two ranks share an ordinal."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch.preflight.gpus import Layout, check_gpu_count, visible_devices

GPUS = [{"index": i, "name": "NVIDIA H200", "memory_total_bytes": 150_000_000_000} for i in range(8)]


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _status(layout: Layout, release: str | None, data: Any) -> tuple[str, str]:
    visible = visible_devices(None, GPUS)
    got, _ = check_gpu_count(layout, visible, GPUS, None, {}, None, data, release)
    return got.status, got.message


@pytest.mark.parametrize("release", ["0.5.1", "0.5.1.post3", "0.5.2"])
@pytest.mark.parametrize(
    "layout",
    [
        Layout(tp=1, pp=4, dp=2),
        Layout(tp=2, pp=2, dp=2),
        Layout(tp=1, pp=2, dp=2),
        Layout(tp=2, pp=2, dp=2, base_gpu_id=1),
    ],
)
def test_051_052_groups_that_overlap_are_unknown(layout: Layout, release: str, data: Any) -> None:
    # fails before: ok (the highest ordinal within the 8 GPUs)
    status, message = _status(layout, release, data)
    assert status == "unknown" and "share CUDA ordinal" in message, (layout, release, message)


@pytest.mark.parametrize("release", ["0.5.3", "0.5.13", "0.5.23"])
def test_053_groups_that_follow_each_other_are_ok(release: str, data: Any) -> None:
    assert _status(Layout(tp=1, pp=4, dp=2), release, data)[0] == "ok"
    assert _status(Layout(tp=2, pp=2, dp=2), release, data)[0] == "ok"


def test_one_gpu_per_rank_stays_ok(data: Any) -> None:
    for layout in (Layout(tp=2, pp=2), Layout(tp=2, dp=2), Layout(tp=4, dp=2, dp_attention=True),
                   Layout(tp=2, gpu_id_step=2), Layout(tp=4, pp=2, dp=2, dp_attention=True)):  # fmt: skip
        assert _status(layout, "0.5.1", data)[0] == "ok", layout


def test_a_step_that_lands_two_stages_on_one_ordinal_is_unknown(data: Any) -> None:
    # (the gate's layout formula: --tp 2 --pp-size 2 --gpu-id-step 2 -> 0, 2, 2, 4)
    status, message = _status(Layout(tp=2, pp=2, gpu_id_step=2), "0.5.23", data)
    assert status == "unknown" and "ordinal 2 " in message, message
