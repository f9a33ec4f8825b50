"""imend2: `stackcheck recommend -- env ...`: the given launch's `env` prefix as recommend reads it and writes it
back. Pinned here at eb28ed21, before recommend read the prefix with its own split_env_prefix (which kept every word
starting with `-` as an option word, took the next word after `-u` only, and wrote `-u NAME` after all of them)."""

from __future__ import annotations

from typing import Any

import pytest
from launch.test_recommend import SEED_AFTER
from recommend_cli import clean_recommend_env, recommend_json  # noqa: F401 (the autouse fixture)

LAUNCH = ["python", "-m", "sglang.launch_server", "--tp", "8"]
ADDED = ["SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1", "SGLANG_ENABLE_JIT_DEEPGEMM=0"]
EDITED = [*LAUNCH, "--attention-backend", "triton"]
DROP = ("drop", "NCCL_P2P_DISABLE")  # a never entry of recommend.json on this box, inherited from the shell below
ADDS = [("add", "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE"), ("add", "--attention-backend")]
ADDS += [("add", "SGLANG_ENABLE_JIT_DEEPGEMM")]


def _recommend(monkeypatch: pytest.MonkeyPatch, *prefix: str) -> tuple[int, dict[str, Any]]:
    monkeypatch.setenv("NCCL_P2P_DISABLE", "1")
    return recommend_json("--facts", str(SEED_AFTER), "--", "env", *prefix, *LAUNCH)


def _diff(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["action"], c["name"]) for c in doc["diff"]]


def test_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    rc, doc = _recommend(monkeypatch, "-u", "NCCL_P2P_DISABLE")
    assert rc == 1 and doc["env"] == {}
    assert doc["command"] == ["env", "-u", "NCCL_P2P_DISABLE", "-u", "NCCL_P2P_DISABLE", *ADDED, *EDITED]
    assert _diff(doc) == [DROP, *ADDS]


def test_double_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    rc, doc = _recommend(monkeypatch, "--", "A=1")
    assert rc == 1
    assert doc["command"] == ["env", "--", "-u", "NCCL_P2P_DISABLE", "A=1", *ADDED, *EDITED]
    assert _diff(doc) == [DROP, *ADDS]


def test_split_string(monkeypatch: pytest.MonkeyPatch) -> None:
    rc, doc = _recommend(monkeypatch, "-S", "A=1 NCCL_P2P_DISABLE=1")
    assert rc == 1
    assert doc["command"] == ["env", "-S", "-u", "NCCL_P2P_DISABLE", "A=1 NCCL_P2P_DISABLE=1", *ADDED, *EDITED]
    assert _diff(doc) == [DROP, *ADDS]


def test_chdir(monkeypatch: pytest.MonkeyPatch) -> None:
    rc, doc = _recommend(monkeypatch, "-C", "/srv")
    assert rc == 1
    assert doc["command"] == ["env", "-C", "-u", "NCCL_P2P_DISABLE", *ADDED, "/srv", *EDITED]
    assert _diff(doc) == [DROP, *ADDS]


def test_an_unknown_option(monkeypatch: pytest.MonkeyPatch) -> None:
    rc, doc = _recommend(monkeypatch, "--frobnicate", "A=1")
    assert rc == 1 and not doc.get("refused")
    assert doc["command"] == ["env", "--frobnicate", "-u", "NCCL_P2P_DISABLE", "A=1", *ADDED, *EDITED]
    assert any("option --frobnicate is unrecognized (env fails, exit 125)" in n for n in doc["notes"])


def test_ignore_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    rc, doc = _recommend(monkeypatch, "-i", "A=1")
    assert rc == 1
    assert doc["command"] == ["env", "-i", "-u", "NCCL_P2P_DISABLE", "A=1", *ADDED, *EDITED]
    assert _diff(doc) == [DROP, *ADDS]


def test_a_secret_assignment(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "hf_" + "q" * 34
    rc, doc = _recommend(monkeypatch, f"HF_TOKEN={secret}")
    assert rc == 1 and secret not in repr(doc)
    assert doc["command"] == ["env", "-u", "NCCL_P2P_DISABLE", "HF_TOKEN=***", *ADDED, *EDITED]
    assert doc["given"] == ["env", "HF_TOKEN=***", *LAUNCH]
