"""EAGLE-3 on a PCIe-only box: the verify pass's small all-reduces go to NCCL (degraded) unless SGLang's opt-in
PCIe-IPC all-reduce carries them (SGLang >= 0.5.21, FlashInfer >= 0.7.0, SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1 in the
launch environment, TP 2/4/8, peer access, nvcc for FlashInfer's JIT). The gate reads the launch's environment,
the audit the probed one."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main
from stackcheck.launch.recommend import _launch_effect

ROOT = Path(__file__).resolve().parent.parent.parent
SEED_AFTER = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"  # 8x SM120, cross-socket, SGLang 0.5.23
ENV = "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE"


def _run(*args: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(list(args))
    return rc, json.loads(out.getvalue())


def _facts(tmp_path: Path, edit: Any = None) -> Path:
    doc = json.loads(SEED_AFTER.read_text())
    doc = copy.deepcopy(doc)
    if edit is not None:
        edit(doc["facts"])
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    return path


def _gate_eagle3(facts: Path, monkeypatch: pytest.MonkeyPatch, env: str | None, tp: int = 8) -> tuple[int, Any]:
    monkeypatch.delenv(ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(ENV, env)
    command = ["python", "-m", "sglang.launch_server", "--model-path", "/m", "--tp", str(tp)]
    rc, doc = _run("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *command,
                   "--speculative-algorithm", "EAGLE3")  # fmt: skip
    eagle3 = next(f for f in doc["features"] if f["feature"] == "eagle3")
    return rc, (eagle3["status"], eagle3["effect"], doc)


def test_gate_eagle3_follows_the_launch_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = _facts(tmp_path)
    _, (status, effect, doc) = _gate_eagle3(facts, monkeypatch, None)
    assert (status, effect) == ("blocked", "degraded")
    assert doc["derived"]["launch"]["pcie_ipc_allreduce"] is False  # SGLang's default
    _, (status, effect, doc) = _gate_eagle3(facts, monkeypatch, "1")
    assert (status, effect) == ("ok", None)
    assert doc["derived"]["launch"]["pcie_ipc_allreduce"] is True
    _, (status, _, _) = _gate_eagle3(facts, monkeypatch, "no")
    assert status == "blocked"
    # TP 6: PCIe-IPC serves world sizes 2, 4 and 8 only
    _, (status, effect, _) = _gate_eagle3(facts, monkeypatch, "1", tp=6)
    assert (status, effect) == ("blocked", "degraded")


@pytest.mark.parametrize(
    "what, edit",
    [
        ("SGLang 0.5.20 has no PCIe-IPC", lambda f: f["packages"]["sglang"].update(version="0.5.20")),
        ("FlashInfer 0.6.18 lacks the kernels", lambda f: f["packages"]["flashinfer-python"].update(version="0.6.18")),
        ("no nvcc for FlashInfer's JIT", lambda f: f["jit"].update(nvcc_found=False)),
        ("no peer access", lambda f: f["topology"].update(p2p="none")),
    ],
)
def test_gate_eagle3_pcie_ipc_needs_its_stack(
    what: str, edit: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, (status, effect, _) = _gate_eagle3(_facts(tmp_path, edit), monkeypatch, "1")
    assert (status, effect) == ("blocked", "degraded"), what


def test_gate_unparsable_value_is_unknown_and_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rc, (_, _, doc) = _gate_eagle3(_facts(tmp_path), monkeypatch, "maybe")
    assert doc["decision"] == "refuse" and rc != 0
    assert any(f"{ENV}='maybe'" in r["message"] for item in doc["reasons"] for r in item.get("reasons") or [])


def test_audit_reads_the_probed_environment(tmp_path: Path) -> None:
    def eagle3(edit: Any) -> tuple[str, str | None]:
        _, doc = _run("audit", "--facts", str(_facts(tmp_path, edit)), "--format", "json")
        v = next(f for f in doc["features"] if f["id"] == "eagle3")
        return v["status"], v.get("effect")

    assert eagle3(None) == ("blocked", "degraded")  # not set: SGLang's default, off
    assert eagle3(lambda f: f["system"].update(env={ENV: "1"})) == ("ok", None)
    assert eagle3(lambda f: f["system"].update(env={ENV: "0"})) == ("blocked", "degraded")


def test_recommend_env_settings_are_launch_facts() -> None:
    from stackcheck.knowledge.loader import load

    launch_map = load().launch
    assert _launch_effect({}, launch_map, {ENV: "1"}) == {"pcie_ipc_allreduce": True}
    assert _launch_effect({}, launch_map, {ENV: "0"}) == {"pcie_ipc_allreduce": False}
    assert _launch_effect({}, launch_map, {ENV: "maybe"}) == {}
    assert _launch_effect({"--tp-size": 4}, launch_map, None) == {"tp": 4}
