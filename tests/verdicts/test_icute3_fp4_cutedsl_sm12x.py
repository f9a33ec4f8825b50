"""icute3: --fp4-gemm-backend flashinfer_cutedsl on an SM 12.x GPU (RTX PRO 6000, DGX Spark). SGLang admits the value
on every GPU and hands 'cute-dsl' to FlashInfer's mm_fp4, whose cute-dsl requirement lists only 100 / 103 (/ 107) up
to flashinfer-python 0.7.0: BackendSupportedError at the first NVFP4 GEMM (blocked, crash; it was ok: the flag was
not read). From 0.7.1 the requirement admits 120 / 121 through an SM12x runner not read here (unknown)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature

BLOCKED = "cutedsl-fp4-gemm-sm12x-flashinfer"
UNREAD = "cutedsl-fp4-gemm-sm12x-unread"


def _results(sglang: str, cc: str, **launch: Any) -> tuple[str, dict[str, str]]:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, f"{cc}x2"),
        "topology": {"interconnect": "pcie"},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    ctx = Context(facts=facts, manifests=m, launch={"tp": 2, "quantization": "modelopt_fp4", **launch})  # type: ignore[arg-type]
    v = evaluate_feature(next(f for f in m.features if f["id"] == "nvfp4"), ctx)
    rules = {str(r.get("rule")): str(r.get("result")) for r in v["reasons"] if "sm12x" in str(r.get("rule"))}
    return v["status"], rules


@pytest.mark.parametrize(("sglang", "result"), [("0.5.21", "fail"), ("0.5.23", "unknown")])
def test_flashinfer_cutedsl_on_sm120(sglang: str, result: str) -> None:
    # fails before the fix: the flag was not read, both said nothing of the cute-dsl GEMM on SM 12.x
    status, rules = _results(sglang, "12.0", fp4_gemm_backend="flashinfer_cutedsl")
    judged = {k: v for k, v in rules.items() if k.startswith("cutedsl-fp4")}
    assert (BLOCKED if result == "fail" else UNREAD, result) in judged.items(), rules
    if result == "fail":  # flashinfer-python 0.6.18 (0.5.21's pin) lacks 120 in the requirement
        assert status == "blocked", rules
    # not given, another backend, or an SM 10.x GPU: not applied
    for cc, launch in (("12.0", {}), ("12.0", {"fp4_gemm_backend": "flashinfer_cutlass"}),
                       ("10.0", {"fp4_gemm_backend": "flashinfer_cutedsl"})):  # fmt: skip
        _, other = _results(sglang, cc, **launch)
        assert {v for k, v in other.items() if k.startswith("cutedsl-fp4")} <= {"skipped"}, (cc, launch, other)


def test_the_gate_reads_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # fails before the fix: --fp4-gemm-backend was not parsed into a launch fact, the launch was not refused for it
    from stackcheck.cli import main

    doc = json.loads((Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json").read_text())
    doc["facts"]["gpus"] = [
        {"index": i, "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "compute_capability": "12.0",
         "uuid": None, "pci_bus_id": None, "memory_bytes": None}
        for i in range(2)
    ]  # fmt: skip
    doc["facts"]["topology"] = {"interconnect": "pcie-host-bridge", "same_model": True, "gpu_count": 2, "p2p": "all",
                                "pairs": []}  # fmt: skip
    doc["facts"]["packages"]["flashinfer-python"]["version"] = "0.6.18"
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(doc))
    capsys.readouterr()
    rc = main(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", "python", "-m",
          "sglang.launch_server", "--model-path", "m", "--tp", "2", "--quantization", "modelopt_fp4",
          "--fp4-gemm-backend", "flashinfer_cutedsl"])  # fmt: skip
    captured = capsys.readouterr()
    assert rc in (0, 1) and captured.out, (rc, captured.err)
    out = json.loads(captured.out)
    got = [(str(x.get("rule")), str(x.get("result"))) for r in out.get("reasons") or [] if r.get("feature") == "nvfp4"
           for x in r.get("reasons") or [] if str(x.get("rule")).startswith("cutedsl-fp4")]  # fmt: skip
    assert (out["decision"], got) == ("refuse", [(BLOCKED, "fail")]), out


@pytest.mark.registry
@pytest.mark.parametrize("flashinfer", ["0.6.12", "0.6.18", "0.7.0", "0.7.1", "0.7.2"])
def test_the_rule_agrees_with_the_wheels(flashinfer: str) -> None:
    # fails before the fix: no rule. The rule's bound is where mm_fp4's cute-dsl requirement first lists 120 / 121
    import re
    import zipfile

    from registry_wheels import fetch_wheel

    from stackcheck.facts.versions import version_in

    with zipfile.ZipFile(fetch_wheel("flashinfer-python", flashinfer)) as z:
        text = z.read("flashinfer/gemm/gemm_base.py").decode()
    found = re.search(r"@supported_compute_capability\(\[([0-9, ]+)\]\)\ndef _cute_dsl_gemm_fp4_requirement", text)
    assert found is not None, flashinfer
    listed = {int(c) for c in found.group(1).split(",")}
    nvfp4 = next(f for f in load().features if f["id"] == "nvfp4")
    rule = next(r for r in nvfp4["rules"] if r["id"] == BLOCKED)
    assert version_in(flashinfer, str(rule["require"]["value"])) is ({120, 121} <= listed), (flashinfer, listed)
