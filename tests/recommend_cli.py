"""`stackcheck recommend` run in this process, as the recommend tests call it (tests/launch/test_recommend.py,
tests/recommend/): stdout captured, the JSON form read; and the autouse fixture that clears the environment variables
a recommendation may set, so the runner's own do not leak into a test."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest

from stackcheck.cli import main

# environment variables a recommendation may set: cleared around every test so the runner's own do not leak
RECOMMEND_ENV = ("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE", "SGLANG_ENABLE_JIT_DEEPGEMM", "NCCL_P2P_DISABLE")


@pytest.fixture(autouse=True)
def clean_recommend_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Autouse in a test module that imports it."""
    for name in (*RECOMMEND_ENV, "SGLANG_PCIE_IPC_MAX_NUMEL", "STACKCHECK_MANIFESTS"):
        monkeypatch.delenv(name, raising=False)


def run(*args: str) -> tuple[int, str]:
    """`stackcheck ARGS`: its exit code and stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(list(args))
    return rc, out.getvalue()


def recommend_json(*args: str) -> tuple[int, dict[str, Any]]:
    """`stackcheck recommend --format json ARGS`: its exit code and document."""
    rc, text = run("recommend", "--format", "json", *args)
    return rc, json.loads(text)
