"""Feature moe-a2a-deepep: DeepEP's intranode buffer needs peer access between every GPU pair of the node.

Round twelve of the real-world corpus (deepseek-ai/DeepEP#584): SGLang's DeepEP backend (normal or auto
--deepep-mode) gives DeepEP NVLink bytes, and DeepEP's Buffer::sync opens every other GPU's IPC handle with lazy
peer access, so a PCIe box with P2P only inside some pairs fails at start. The facts below are written for these
tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report
from stackcheck.verdicts.types import FeatureVerdict


def verdict(tmp_path: Path, facts: dict[str, Any]) -> FeatureVerdict:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    report, _ = build_report(Options(facts_file=str(path)))
    return next(f for f in report["features"] if f["id"] == "moe-a2a-deepep")


def box(gpus: int, p2p: str | None) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "gpus": [
            {"index": i, "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "compute_capability": "12.0"}
            for i in range(gpus)
        ],
        "packages": {
            "sglang": {"installed": True, "version": "0.5.8"},
            "deep-ep": {"installed": True},
            "sgl-deep-ep": {"installed": False},
        },
        # a source build for this GPU (TORCH_CUDA_ARCH_LIST=12.0), read by --deep: DeepEP's kernels have an image here
        "binaries": {
            "deep-ep": {"sass": ["sm_120"], "ptx": [], "files": [{"path": "deep_ep_cpp.so", "sass": ["sm_120"]}]}
        },
    }
    if p2p is not None:
        facts["topology"] = {"gpu_count": gpus, "p2p": p2p}
    return facts


def test_partial_peer_access_blocks_deepep_with_the_reason(tmp_path: Path) -> None:
    v = verdict(tmp_path, box(8, "some"))
    assert (v["status"], v["effect"]) == ("blocked", "crash")
    fail = next(r for r in v["reasons"] if r.get("result") == "fail")
    assert fail["observed"] == "some" and fail["required"] == "all"
    assert "DeepEP" in fail["message"] and "peer access" in fail["message"]
    assert any("deep_ep.cpp" in s.get("title", "") for s in fail["source"])


def test_no_peer_access_blocks_too(tmp_path: Path) -> None:
    assert verdict(tmp_path, box(2, "none"))["status"] == "blocked"


def test_peer_access_between_every_pair_is_ok(tmp_path: Path) -> None:
    assert verdict(tmp_path, box(8, "all"))["status"] == "ok"


def test_one_gpu_has_no_intranode_peers(tmp_path: Path) -> None:
    assert verdict(tmp_path, box(1, None))["status"] == "ok"


def test_without_deepep_installed_there_is_nothing_to_judge(tmp_path: Path) -> None:
    facts = box(8, "some")
    facts["packages"]["deep-ep"] = facts["packages"]["sgl-deep-ep"] = {"installed": False}
    assert verdict(tmp_path, facts)["status"] == "not-applicable"  # the gate's moe-a2a-package says the import fails


def test_unread_topology_on_several_gpus_is_unknown_not_ok(tmp_path: Path) -> None:
    assert verdict(tmp_path, box(4, None))["status"] == "unknown"


# ---- the gate asks for it only with --moe-a2a-backend deepep --------------------------------------------


LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "8"]


def needed(argv: list[str]) -> set[str]:
    from stackcheck.knowledge.loader import load
    from stackcheck.launch import gate

    d = gate.derive([*LAUNCH, *argv], load([], env={}).launch, {})
    return {r.feature for r in d.required}


def test_the_gate_asks_for_deepep_with_the_flag_only() -> None:
    assert "moe-a2a-deepep" in needed(["--moe-a2a-backend", "deepep"])
    assert "moe-a2a-deepep" not in needed([])
    assert "moe-a2a-deepep" not in needed(["--moe-a2a-backend", "none"])
    assert "moe-a2a-deepep" not in needed(["--moe-a2a-backend", "mooncake"])


# ---- the mode: low_latency gives DeepEP no NVLink buffer (launch.deepep_mode, from the gate) -------------


def _gate_deepep(tmp_path: Path, p2p: str, *flags: str) -> dict[str, Any]:
    import contextlib
    import io

    from stackcheck.cli import main

    path = tmp_path / f"box-{p2p}.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": box(8, p2p)}))
    argv = [*LAUNCH, "--moe-a2a-backend", "deepep", *flags]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["gate", "--dry-run", "--format", "json", "--facts", str(path), "--", *argv])
    doc = json.loads(out.getvalue())
    got: dict[str, Any] = next(f for f in doc["features"] if f["feature"] == "moe-a2a-deepep")
    return got


def test_the_default_and_normal_modes_are_blocked_on_partial_p2p(tmp_path: Path) -> None:
    assert _gate_deepep(tmp_path, "some")["status"] == "blocked"  # auto, SGLang's default: the NVLink buffer
    assert _gate_deepep(tmp_path, "some", "--deepep-mode", "normal")["status"] == "blocked"
    assert _gate_deepep(tmp_path, "some", "--deepep-mode=auto")["status"] == "blocked"


def test_low_latency_on_partial_p2p_is_unknown_not_blocked(tmp_path: Path) -> None:
    """SGLang 0.5.8 token_dispatcher/deepep.py:160-181 sizes DeepEP's NVLink bytes only for normal and auto modes, so
    with --deepep-mode low_latency Buffer::sync opens no peer's IPC handle: the rule that blocked it (a false block)
    is unknown there, never ok; with P2P between every pair it is ok."""
    got = _gate_deepep(tmp_path, "some", "--deepep-mode", "low_latency")
    assert got["status"] == "unknown"
    assert _gate_deepep(tmp_path, "all", "--deepep-mode", "low_latency")["status"] == "ok"
