"""SGLANG_MINICPM_FUSE_TOPK (igap4, item 2): with it on, SGLang 0.5.19-0.5.23's MiniCPM sparse backend takes its
top-k blocks from the fused TileLang kernel on every GPU and never calls sgl_kernel's infllmv2_attn_stage1, the only
code that loads the CPython-3.10-only infllm_ops library (sglang-kernel 0.4.10 sgl_kernel/infllm_v2/attention.py: the
loader runs inside the call). The rule infllm-ops-python-310 did not read the variable and refused such a launch as
a crash on Python 3.12; it now does not apply there, and the TileLang path, not followed, leaves it unknown."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

FEATURE = "attention-minicpm-sparse"
INFLLM = "infllm-ops-python-310"
TILELANG = "minicpm-fused-topk-tilelang"


def _gate(tmp_path: Path, release: str, cc: str, value: str | None) -> dict[str, Any]:
    model = model_dir(tmp_path, "llama", LLAMA3)
    env = ["env", f"SGLANG_MINICPM_FUSE_TOPK={value}"] if value is not None else []
    line = [*env, "python3", "-m", "sglang.launch_server", "--model-path", str(model)]
    args = ["gate", "--facts", str(release_box(tmp_path, release, cc)), "--dry-run", "--format", "json", "--"]
    return cli_json([*args, *line, "--attention-backend", "minicpm_flashattn"])[1]


def _rules(doc: dict[str, Any]) -> dict[str, str]:
    hits = [x for r in doc["reasons"] if r.get("feature") == FEATURE for x in r.get("reasons") or []]
    return {str(x.get("rule")): str(x.get("result")) for x in hits}


@pytest.mark.parametrize(("release", "cc"), [("0.5.23", "9.0"), ("0.5.19", "8.0")])
@pytest.mark.parametrize("value", ["1", "true"])
def test_fuse_topk_lifts_the_infllm_refusal(tmp_path: Path, release: str, cc: str, value: str) -> None:
    # fails on the parent: infllm-ops-python-310 failed (blocked, crash) whatever the variable said
    doc = _gate(tmp_path, release, cc, value)
    rules = _rules(doc)
    assert rules.get(INFLLM) != "fail" and rules.get(TILELANG) == "unknown", rules
    assert next(f for f in doc["features"] if f["feature"] == FEATURE)["status"] == "unknown"


@pytest.mark.parametrize("value", [None, "0"])
def test_without_fuse_topk_still_refused(tmp_path: Path, value: str | None) -> None:
    # guard: the variable off (or unset), infllm_ops is loaded on Python 3.12 as before
    doc = _gate(tmp_path, "0.5.23", "9.0", value)
    assert doc["decision"] == "refuse" and _rules(doc).get(INFLLM) == "fail"
    assert TILELANG not in _rules(doc)


def _verdict(env: dict[str, str], python: str = "3.12.3") -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, "9.0x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": python, "env": env},
    }
    facts = release_facts(copy.deepcopy(base), m, "0.5.23", None, None)
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def test_audit_reads_the_probed_environment() -> None:
    # fails on the parent (blocked by infllm-ops-python-310); the default (unset) stays blocked, a guard
    on = _verdict({"SGLANG_MINICPM_FUSE_TOPK": "1"})
    assert on["status"] == "unknown", json.dumps(on["reasons"])
    assert all(r.get("result") != "fail" for r in on["reasons"])
    assert _verdict({})["status"] == "blocked"
    # on Python 3.10 the TileLang path, not the library, is what stays open
    assert _verdict({"SGLANG_MINICPM_FUSE_TOPK": "1"}, "3.10.14")["status"] == "unknown"
    assert _verdict({}, "3.10.14")["status"] == "ok"


@pytest.mark.parametrize("value", ["on", "", "2"])
def test_an_unparsed_value_is_the_default_off(tmp_path: Path, value: str) -> None:
    # irev41: fails on bfbcc06 (the gate named the value unknown, "SGLang raises ValueError"): SGLang's EnvField.get
    # catches EnvBool.parse's ValueError, warns and returns the default False (0.5.19 and 0.5.23 environ.py:79-86),
    # so the launch is the one without the variable: the infllm refusal holds, and no unknown is added for it
    doc = _gate(tmp_path, "0.5.23", "9.0", value)
    assert doc["decision"] == "refuse" and _rules(doc).get(INFLLM) == "fail"
    assert not any(str(r.get("feature", "")).startswith("SGLANG_MINICPM_FUSE_TOPK") for r in doc["reasons"])
