"""SGLang 0.5.23 pins sgl-flash-mla==1.0.0 (its METADATA's Requires-Dist, read in the cached cp312 wheel; 0.5.18-0.5.22
pin none), so `pip install sglang==0.5.23` brings it: the plan's SGLang step says so and the FlashMLA backends that
need it (rule sgl-flash-mla-installed, ifc48) are no longer "still blocked after the plan" on a Hopper box where the
probe read it missing (the lent H100's audit, 2026-12-06, listed all three as still blocked after installing SGLang)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import run_stackcheck

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # SGLang 0.5.23 on cc 9.0
NEEDS_IT = {"attention-flashmla", "attention-dsa-flashmla-kv", "attention-dsa-flashmla-sparse"}


def _plan(tmp_path: Path) -> dict[str, Any]:
    doc = json.loads(H200.read_text(encoding="utf-8"))
    doc["facts"]["packages"]["sglang"] = {"installed": False}
    doc["facts"]["packages"]["sgl-flash-mla"] = {"installed": False}  # (read by the probe, not installed)
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(doc), encoding="utf-8")
    done = run_stackcheck("plan", "--facts", str(facts), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    plan: dict[str, Any] = json.loads(done.stdout)["plan"]
    return plan


def test_the_sglang_step_brings_its_flash_mla_pin(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    step = next(s for s in plan["steps"] if s["component"] == "sglang")
    assert step["to"] == "0.5.23"
    assert any("sgl-flash-mla 1.0.0" in w for w in step.get("warnings") or []), step
    assert not NEEDS_IT & {b["feature"] for b in plan["still_blocked"]}, plan["still_blocked"]
