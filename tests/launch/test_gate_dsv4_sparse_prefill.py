"""DeepSeek-V4's sparse prefill through sgl-kernel's FlashMLA sparse kernel (features.json
dsv4-flashmla-sparse-prefill; launch.json refusals.auto.attention_backend.model_features), sglang#31578.

Read in the sglang 0.5.12-0.5.23 and sglang-kernel 0.4.3-0.4.10 wheels: flash_mla_sparse_fwd refuses everything
but SM90a and SM100f; SGLang 0.5.15 and 0.5.15.post1 send every DeepSeek-V4 prefill there
(SGLANG_OPT_FLASHMLA_SPARSE_PREFILL on by default); 0.5.13-0.5.14, and 0.5.15 with the variable off, send an extend
batch over 11673 tokens; 0.5.16 and later keep SM12x off it. The audit judges the box; the gate requires the feature
only for a DeepseekV4ForCausalLM launch (the model's config.json read), and is unknown where it cannot read the
model. The config.json documents here are written for the tests with the keys the gate reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, gate_json, model_dir

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report
from stackcheck.knowledge.loader import load
from stackcheck.launch.refusals import model_kernel_features

ROOT = Path(__file__).resolve().parent.parent.parent
RTXPRO = ROOT / "tests" / "cases" / "rtxpro6000-pcie-iommu-translated" / "facts.json"  # cc 12.0
FEATURE = "dsv4-flashmla-sparse-prefill"
DSV4: dict[str, Any] = {
    "architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "hidden_size": 7168,
    "num_attention_heads": 128, "num_key_value_heads": 1, "index_topk": 1024,
}  # fmt: skip
ON = {"SGLANG_OPT_FLASHMLA_SPARSE_PREFILL": "1"}
OFF = {"SGLANG_OPT_FLASHMLA_SPARSE_PREFILL": "False"}  # SGLang compares it in lower case


def _facts(tmp_path: Path, sglang: str, cc: str = "12.0", env: dict[str, str] | None = None) -> Path:
    doc = json.loads(RTXPRO.read_text())
    facts = doc["facts"]
    for gpu in facts["gpus"]:
        gpu["compute_capability"] = cc
    kernel = {"0.5.13": "0.4.3", "0.5.14": "0.4.4", "0.5.15": "0.4.4", "0.5.16": "0.4.5"}.get(sglang, "0.4.4")
    facts["packages"]["sglang"].update(version=sglang, dist_version=sglang)
    facts["packages"]["sglang-kernel"].update(version=kernel, dist_version=kernel)
    facts["system"]["env"] = dict(env or {})
    path = tmp_path / f"facts-{sglang}-{cc}-{len(env or {})}.json"
    path.write_text(json.dumps(doc))
    return path


def _verdict(facts: Path) -> tuple[str, str | None, list[str]]:
    report, _ = build_report(Options(facts_file=str(facts)))
    f = next(x for x in report["features"] if x["id"] == FEATURE)
    rules = [str(r.get("rule")) for r in f["reasons"] if r.get("result") in ("fail", "unknown")]
    return str(f["status"]), f.get("effect"), rules


@pytest.mark.parametrize(
    ("sglang", "cc", "env", "want"),
    [
        ("0.5.15", "12.0", None, ("blocked", "crash", ["sparse-prefill-every-prefill"])),
        ("0.5.15", "12.0", ON, ("blocked", "crash", ["sparse-prefill-every-prefill"])),
        # the variable off: short prefills avoid the kernel, a batch over 11673 tokens still reaches it
        ("0.5.15", "12.0", OFF, ("blocked", "crash", ["sparse-prefill-long-batches"])),
        ("0.5.14", "12.0", None, ("blocked", "crash", ["sparse-prefill-long-batches"])),
        ("0.5.16", "12.0", None, ("ok", None, [])),
        ("0.5.16", "12.1", None, ("ok", None, [])),
        ("0.5.15", "9.0", None, ("ok", None, [])),
        ("0.5.16", "10.3", None, ("ok", None, [])),
        ("0.5.16", "8.6", None, ("blocked", "crash", ["sparse-prefill-skips-sm12x"])),
        # not read: SM107 with this kernel, releases before 0.5.13, 0.5.23's fused sgl-flash-mla paths on SM90
        ("0.5.16", "10.7", None, ("unknown", None, ["sparse-prefill-sm107"])),
        ("0.5.11", "12.0", None, ("unknown", None, ["dsv4-releases-read"])),
        ("0.5.23", "9.0", None, ("unknown", None, ["sgl-flash-mla-fused-sm90"])),
        ("0.5.23", "12.0", None, ("ok", None, [])),
        # 0.5.23 off SM12x: sgl-flash-mla's legacy kernel (SM90a/SM100f), and its fused SM100f-only kernels
        ("0.5.23", "10.0", None, ("ok", None, [])),
        ("0.5.23", "10.3", None, ("ok", None, [])),
        ("0.5.23", "8.6", None, ("blocked", "crash", ["sgl-flash-mla-legacy-arch"])),
    ],
)  # fmt: skip
def test_the_audit_verdict_by_release_gpu_and_variable(
    tmp_path: Path, sglang: str, cc: str, env: dict[str, str] | None, want: tuple[str, str | None, list[str]]
) -> None:
    assert _verdict(_facts(tmp_path, sglang, cc, env)) == want


def test_the_sm120_message_names_flashmla_the_architectures_and_the_way_out(tmp_path: Path) -> None:
    report, _ = build_report(Options(facts_file=str(_facts(tmp_path, "0.5.15"))))
    f = next(x for x in report["features"] if x["id"] == FEATURE)
    fail = next(r for r in f["reasons"] if r["result"] == "fail")
    assert "FlashMLA" in fail["message"] and "SM90a and SM100f" in fail["message"]
    assert "sm_120" in fail["message"] and "0.5.16" in fail["message"]
    assert fail["source"]


def test_only_a_deepseek_v4_launch_needs_it() -> None:
    mapping = dict(load([], env={}).launch)
    need, unread = model_kernel_features(mapping, "0.5.15", "DeepseekV4ForCausalLM")
    assert [f for f, _ in need] == [FEATURE] and unread == []
    assert model_kernel_features(mapping, "0.5.15", "LlamaForCausalLM") == ([], [])
    assert model_kernel_features(mapping, "0.5.12", "DeepseekV4ForCausalLM") == ([], [])  # not this path
    need, unread = model_kernel_features(mapping, "0.5.15", None)
    assert need == [] and [f for f, _ in unread] == [FEATURE] and "DeepseekV4ForCausalLM" in unread[0][1]
    assert model_kernel_features(mapping, None, "DeepseekV4ForCausalLM") == ([], [])


def test_the_gate_refuses_deepseek_v4_on_sm120_with_0_5_15_only(tmp_path: Path) -> None:
    facts = _facts(tmp_path, "0.5.15")
    dsv4 = model_dir(tmp_path, "DeepSeek-V4", DSV4)
    doc = gate_json(facts, "--model-path", str(dsv4), dry_run=True)
    need = next((r for r in doc["derived"]["required"] if r["feature"] == FEATURE), None)
    assert need is not None and "DeepseekV4ForCausalLM" in json.dumps(need)
    got = [b for b in doc["reasons"] if b["feature"] == FEATURE]
    assert got and got[0]["status"] == "blocked"
    # another model on the same box: not needed
    llama = model_dir(tmp_path, "Llama", LLAMA3)
    doc = gate_json(facts, "--model-path", str(llama), dry_run=True)
    assert not any(r["feature"] == FEATURE for r in doc["derived"]["required"])
    assert not any(b["feature"] == FEATURE for b in doc["reasons"])
    # the model not read: unknown (it could be DeepSeek-V4), never allowed on that account
    doc = gate_json(facts, "--model-path", str(tmp_path / "absent"), dry_run=True)
    got = [b for b in doc["reasons"] if b["feature"] == FEATURE]
    assert got and got[0]["status"] == "unknown"
    # SGLang 0.5.16 keeps SM12x off the kernel: needed, and ok
    doc = gate_json(_facts(tmp_path, "0.5.16"), "--model-path", str(dsv4), dry_run=True)
    assert any(r["feature"] == FEATURE for r in doc["derived"]["required"])
    assert not any(b["feature"] == FEATURE for b in doc["reasons"])
