"""icubin2: the gate judges FlashInfer's CUDNN_SDPA cubins for `--mm-attention-backend flashinfer_cudnn` (launch.json
maps the choice to feature mm-attention-flashinfer-cudnn). On the offline B200 box (FLASHINFER_NO_DOWNLOAD, no cubins,
SGLang 0.5.20) without nvidia-cudnn-frontend the cubins being absent refuses the launch with the rule's failure;
present (and taken as they are) passes it; with nvidia-cudnn-frontend installed FlashInfer runs the cuDNN graph and
the rule does not apply; facts from before icubin2 (no CUDNN_SDPA read) leave it unknown."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from cli_process import stackcheck_json

CASES = Path(__file__).resolve().parents[1] / "cases"
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--mm-attention-backend", "flashinfer_cudnn"]


def facts_with(tmp: Path, ready: bool | None, frontend: bool = False) -> Path:
    doc: dict[str, Any] = json.loads((CASES / "b200-cubins-offline" / "facts.json").read_text())
    doc = copy.deepcopy(doc)
    cubins = doc["facts"]["flashinfer_cubins"]
    if ready is not None:
        cubins["ready"]["CUDNN_SDPA"] = ready
        if ready is False:
            cubins["ready_reason"]["CUDNN_SDPA"] = "CUDNN_SDPA's cubins are all missing (synthetic)"
    if frontend:
        doc["facts"]["packages"]["nvidia-cudnn-frontend"] = {"installed": True, "version": "1.32.0"}
    path = tmp / "facts.json"
    path.write_text(json.dumps(doc))
    return path


def rule_of(path: Path) -> tuple[str, dict[str, Any] | None]:
    doc = stackcheck_json("gate", "--facts", str(path), "--format", "json", "--", *LAUNCH)
    feature = next((f for f in doc["reasons"] if f["feature"] == "mm-attention-flashinfer-cudnn"), None)
    if feature is None:  # (the gate lists the features that are not ok)
        return str(doc["decision"]), None
    rule = next((r for r in feature["reasons"] if r.get("rule") == "cudnn-sdpa-cubins"), None)
    return str(doc["decision"]), rule


def test_absent_cubins_under_no_download_refuse(tmp_path: Path) -> None:
    decision, rule = rule_of(facts_with(tmp_path, False))
    assert decision == "refuse"
    assert rule is not None and rule["result"] == "fail" and "Artifact not found locally" in rule["message"]


def test_present_cubins_pass_the_rule(tmp_path: Path) -> None:
    _, rule = rule_of(facts_with(tmp_path, True))
    assert rule is None or rule["result"] == "pass"


def test_cudnn_frontend_takes_the_graph_path(tmp_path: Path) -> None:
    _, rule = rule_of(facts_with(tmp_path, False, frontend=True))
    assert rule is None or rule["result"] not in ("fail", "unknown")


def test_facts_from_before_are_unknown(tmp_path: Path) -> None:
    _, rule = rule_of(facts_with(tmp_path, None))
    assert rule is not None and rule["result"] == "unknown"
