"""The twenty-sixth fact-check sample's image false pass (tests/realworld/FACTCHECK.md, "Twenty-sixth sample"; row
i14 of bench/factcheck26_drawn.json): config.toml's mode jit-cdi with libnvidia-container 1.17.8 was judged "no
requirement check, the container starts". nvidia-container-toolkit knows jit-cdi from 1.18.0 only (v1.17.8
internal/runtime/runtime_factory.go:110-121: legacy, csv, cdi, else 'invalid runtime mode'; v1.18.0
internal/info/auto.go:46), and before 1.18.0 the toolkit is never newer than libnvidia-container, so no container
starts: unknown (the mode is not one it knows), never ok. On the parent 2 of these fail."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.image.require import judge_facts, parse_nvidia_require

R550 = {"version": "550.163.01", "cuda": "12.4"}


def _judge(text: str, lib: str | None) -> Any:
    image = {"nvidia_require": parse_nvidia_require({"NVIDIA_REQUIRE_CUDA": text}).to_facts()}
    toolkit = {"mode": "jit-cdi", "mode_source": "config", "libnvidia_container": lib}
    return judge_facts(image, R550, [{"index": 0, "compute_capability": "9.0", "brand": "TESLA"}], toolkit=toolkit)


@pytest.mark.parametrize("lib", ["1.17.8", "1.8.1"])
def test_jit_cdi_before_the_toolkit_knows_it_is_not_ok(lib: str) -> None:
    # fails on the parent: satisfied, "NVIDIA_REQUIRE_* is not evaluated"
    j = _judge("cuda>=12.8", lib)
    assert j.satisfied is None
    assert "jit-cdi" in j.reason and "1.18.0" in j.reason


def test_jit_cdi_from_1_18_still_does_not_check() -> None:
    j = _judge("cuda>=12.8", "1.18.0")
    assert j.satisfied is True and "not evaluated" in j.reason
    assert _judge("cuda>=12.8", None).satisfied is None  # not read: legacy may check it
