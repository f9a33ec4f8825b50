"""A toolkit step's hypothetical jit section (plan.hypothetical.apply_choice) and the jit probe's `-lnccl` look
(jit.libnccl_so_found, check nccl rule symm-mem-allocator-link): the step replaces only the CUDA home's lib
directory among those the link searches, so what was found elsewhere, or found nowhere, stays as it was. Before
(irev50): the step dropped the keys, and a box where the link provably fails read unknown after any toolkit step (the
check left the plan's still-failing list)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from stackcheck.plan.hypothetical import apply_choice
from stackcheck.plan.solver import Choice
from stackcheck.verdicts.context import Context

OLD = "/usr/local/cuda-12.4"


def after_toolkit_step(jit: dict[str, Any]) -> dict[str, Any]:
    facts = {"jit": {"toolkit": OLD, "nvcc_found": True, **jit}, "cuda_toolkits": []}
    choice = Choice("toolkit", "cuda", "12.9", release={"version": "12.9"})
    out = apply_choice(cast("Any", facts), choice, cast("Context", None))
    return dict(out["jit"])


def test_no_libnccl_so_anywhere_stays_not_found() -> None:
    jit = after_toolkit_step({"libnccl_so_found": False, "libnccl_so_dirs": [f"{OLD}/lib64", "/usr/lib"]})
    assert jit["libnccl_so_found"] is False


def test_a_libnccl_so_outside_the_cuda_home_stays_found() -> None:
    so = "/usr/lib/x86_64-linux-gnu/libnccl.so"
    jit = after_toolkit_step({"libnccl_so_found": True, "libnccl_so": so})
    assert jit["libnccl_so_found"] is True and jit["libnccl_so"] == so


@pytest.mark.parametrize("so", [f"{OLD}/lib64/libnccl.so", "/usr/local/cuda/lib64/libnccl.so"])
def test_a_libnccl_so_in_a_cuda_home_is_not_known_after_the_step(so: str) -> None:
    jit = after_toolkit_step({"libnccl_so_found": True, "libnccl_so": so})
    assert "libnccl_so_found" not in jit and "libnccl_so" not in jit


def test_an_unread_look_stays_unread() -> None:
    jit = after_toolkit_step({"libnccl_so_found": None, "libnccl_so_reason": "CXX=icpx"})
    assert "libnccl_so_found" not in jit


@pytest.mark.parametrize("before", [False, None, True])
def test_the_new_toolkits_libcudart_so_is_on_the_link_after_the_step(before: bool | None) -> None:
    """igap24: torch's -lcudart is looked up in -L<CUDA home>/lib64, which after the step is the new, complete
    toolkit's (libcudart.so of cuda-cudart-dev): found, whatever the old CUDA home held (a pip home's .so.13 only)."""
    jit = after_toolkit_step({"libcudart_so_found": before})
    assert jit["libcudart_so_found"] is True
