"""irec3: `recommend` judged each line with the launch facts the gate sets from the served model's config.json
(gate_preflight.model_file_facts / model_launch_facts) but never read the speculative draft model the given launch
names (--speculative-draft-model-path), which the gate's preflight reads too: the draft_* facts (its MLA dims and
heads) were never set, and a line naming a draft dropped model_moe / model_dsv3_routing as not known. So on an H200
whose gcc lacks sanitizer/asan_interface.h (jit-toolchain's flashinfer-jit-asan-header, scoped to launches that may
run MoE layers) a dense Llama with a dense EAGLE draft was refused by recommend and allowed by the gate. recommend now
reads the draft with the gate's reader (commands.recommend.read_as_gate, preflight.model.read_model) and judges the
line with both roles read. The configs are this test's own minimal files in the shape of config.json."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 4,
         "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128, "torch_dtype": "bfloat16",
         "vocab_size": 1024, "intermediate_size": 8192}  # fmt: skip
MOE_DRAFT = {**LLAMA, "architectures": ["FooMoeForCausalLM"], "model_type": "foo_moe", "num_experts": 8,
             "num_hidden_layers": 1}  # fmt: skip


def _box(tmp: Path) -> Path:
    """tests/cases/h200-newest (SGLang 0.5.23, FlashInfer 0.7.2, no jit-cache) whose gcc lacks the asan header."""
    doc = copy.deepcopy(json.loads((CASES / "h200-newest" / "facts.json").read_text()))
    doc["facts"]["jit"].update(flashinfer_host="nvcc-default", nvcc_host_found=True, nvcc_host="/usr/bin/gcc",
                               nvcc_host_gnu_major=13, nvcc_host_asan_header_found=False)  # fmt: skip
    path = tmp / "facts.json"
    path.write_text(json.dumps(doc))
    return path


def _model(tmp: Path, name: str, config: dict[str, Any]) -> Path:
    (tmp / name).mkdir()
    (tmp / name / "config.json").write_text(json.dumps(config))
    return tmp / name


def _launch(target: Path, draft: Path) -> list[str]:
    return ["python", "-m", "sglang.launch_server", "--model-path", str(target), "--speculative-algorithm", "EAGLE",
            "--speculative-draft-model-path", str(draft), "--tp", "8"]  # fmt: skip


def test_a_dense_draft_read_lets_recommend_propose_the_line_the_gate_allows(tmp_path: Path) -> None:
    # fails before the fix: the draft not read, model_moe not known, the asan-header scope met: no line proposed
    facts = _box(tmp_path)
    cmd = _launch(_model(tmp_path, "llama", LLAMA), _model(tmp_path, "draft", {**LLAMA, "num_hidden_layers": 1}))
    assert stackcheck_json("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *cmd)["decision"] == (
        "allow"
    )
    doc = stackcheck_json("recommend", "--facts", str(facts), "--no-plan", "--format", "json", "--", *cmd)
    line = [str(w) for w in doc.get("command") or []]
    assert line and "--speculative-draft-model-path" in line, doc.get("refused")
    gate = stackcheck_json("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line)
    assert gate["decision"] == "allow", gate["reasons"]


def test_a_moe_draft_read_keeps_the_line_refused(tmp_path: Path) -> None:
    facts = _box(tmp_path)
    cmd = _launch(_model(tmp_path, "llama", LLAMA), _model(tmp_path, "moe-draft", MOE_DRAFT))
    gate = stackcheck_json("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *cmd)
    assert gate["decision"] == "refuse", gate["reasons"]
    doc = stackcheck_json("recommend", "--facts", str(facts), "--no-plan", "--format", "json", "--", *cmd)
    assert not doc.get("command") and "asan_interface.h" in json.dumps(doc.get("refused")), doc.get("refused")


def test_the_draft_is_read_by_the_gates_reader(tmp_path: Path) -> None:
    from stackcheck.commands.recommend import read_as_gate

    small = _model(tmp_path, "small", {**LLAMA, "num_hidden_layers": 1})
    info = read_as_gate(str(small), "draft model", {}, "0.5.23")
    assert info is not None and info.role == "draft model" and info.architectures == ["LlamaForCausalLM"]
    assert read_as_gate(str(tmp_path / "absent"), "draft model", {}, "0.5.23") is None
