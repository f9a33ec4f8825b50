"""A feature is never ok on a box where no GPU was seen (FACTCHECK.md, thirteenth sample, row d1): its rules that
read the GPU do not apply there, which says nothing about the GPUs it will run on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report

ROOT = Path(__file__).resolve().parent.parent.parent
NO_DRIVER = ROOT / "tests" / "cases" / "no-driver" / "facts.json"


def _features(facts: dict[str, Any], tmp_path: Path) -> dict[str, dict[str, Any]]:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts))
    report, _ = build_report(Options(facts_file=str(path)))
    return {f["id"]: dict(f) for f in report["features"]}


def test_no_gpu_seen_leaves_every_feature_short_of_ok(tmp_path: Path) -> None:
    facts = json.loads(NO_DRIVER.read_text())
    assert facts["facts"]["gpus"] == []
    features = _features(facts, tmp_path)
    assert [f for f, v in features.items() if v["status"] == "ok"] == []
    flashinfer = features["attention-flashinfer"]
    assert flashinfer["status"] == "unknown"
    assert flashinfer["reasons"][0]["rule"] == "gpu"
    assert flashinfer["reasons"][0]["message"].startswith("no GPU visible")


def test_the_same_box_with_a_gpu_is_judged_on_its_rules(tmp_path: Path) -> None:
    facts = json.loads(NO_DRIVER.read_text())
    facts["facts"]["gpus"] = [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}]
    features = _features(facts, tmp_path)
    assert features["attention-flashinfer"]["status"] == "ok"
    assert features["cuda-graph"]["status"] == "ok"
