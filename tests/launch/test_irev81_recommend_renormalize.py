"""irev81: ifc64's launch.model_moe_renormalize (the BF16 trtllm-gen MoE asserts the routed top-k renormalizes; check
moe-trtllm-gen-cubins, rules unquantized-auto-renormalize / unquantized-flag-renormalize) is set by the gate from the
model's config.json; irev80, merged after it, made recommend judge its line with the launch facts the gate sets, but
only launch.moe_runner_auto and launch.model_moe. So on a B200 with every trtllm-gen cubin family present, recommend
proposed a line for a BF16 Qwen3-MoE (norm_topk_prob absent: its config class defaults it false) or a DeepSeek-V3
with norm_topk_prob false that the gate refused (moe-trtllm-gen-cubins blocked, crash). Now recommend sets the fact
as the gate does. The facts are the case b200-cubins-offline with the families made ready; the configs are this
test's own minimal files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

FACTS = Path(__file__).resolve().parents[1] / "cases" / "b200-cubins-offline" / "facts.json"
BASE: dict[str, Any] = {
    "hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
    "torch_dtype": "bfloat16", "vocab_size": 1024,
}  # fmt: skip
# (irev82: the router keys DeepSeek-V3's published config.json states; without them ifc65's model-config-keys is
# unknown on SGLang 0.5.20, which recommend now refuses the line for as the gate does)
MLA: dict[str, Any] = {"kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
                       "v_head_dim": 128, "topk_method": "noaux_tc", "scoring_func": "sigmoid",
                       "moe_layer_freq": 1}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "qwen3-moe-default": {**BASE, "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
                          "num_experts": 64, "num_experts_per_tok": 8},
    "deepseek-v3-no-renormalize": {**BASE, **MLA, "architectures": ["DeepseekV3ForCausalLM"],
                                   "model_type": "deepseek_v3", "n_routed_experts": 64, "num_experts_per_tok": 8,
                                   "norm_topk_prob": False},
    "deepseek-v3-renormalize": {**BASE, **MLA, "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
                                "n_routed_experts": 64, "num_experts_per_tok": 8},
}  # fmt: skip


def _box(tmp_path: Path) -> Path:
    doc = json.loads(FACTS.read_text())
    cubins = (doc.get("facts") or doc)["flashinfer_cubins"]
    for family in ("TRTLLM_GEN_FMHA", "TRTLLM_GEN_GEMM", "DEEPGEMM", "TRTLLM_GEN_BMM"):
        cubins["ready"][family] = True
        cubins["ready_reason"].pop(family, None)
        cubins["families"][family].update(manifest=True, listed=4, missing=0)
    # (irecmodel: recommend now refuses a line on a needed check that is unknown, as the gate does: the box's JIT
    # toolchain read, the nvcc 12.8 of the case b200-deepgemm-nvcc128, so that check jit-toolchain is judged)
    nvcc = json.loads((FACTS.parents[1] / "b200-deepgemm-nvcc128" / "facts.json").read_text())
    (doc.get("facts") or doc)["jit"] = (nvcc.get("facts") or nvcc)["jit"]
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    return path


def _rules(doc: dict[str, Any]) -> list[str]:
    return [str(r.get("rule")) for c in doc.get("reasons") or [] if c.get("feature") == "moe-trtllm-gen-cubins"
            and c.get("status") == "blocked" for r in c.get("reasons") or []]  # fmt: skip


@pytest.mark.parametrize("name", sorted(MODELS))
def test_recommend_and_gate_agree_on_the_renormalize_assertion(tmp_path: Path, name: str) -> None:
    facts = _box(tmp_path)
    model = tmp_path / name
    model.mkdir()
    (model / "config.json").write_text(json.dumps(MODELS[name]))
    doc = stackcheck_json("recommend", "--facts", str(facts), "--model-path", str(model), "--tp", "8", "--no-plan",
                          "--format", "json")  # fmt: skip
    line = [str(w) for w in doc.get("command") or []]
    asserts = name != "deepseek-v3-renormalize"
    if not line:
        refused = json.dumps(doc.get("refused"))
        assert asserts and "moe-trtllm-gen-cubins" in refused, refused
        return
    gate = stackcheck_json("gate", "--facts", str(facts), "--cwd", str(tmp_path), "--dry-run", "--format", "json",
                           "--", *line)  # fmt: skip
    assert not any(r.endswith("-renormalize") for r in _rules(gate)), (line, _rules(gate))  # (fails before: proposed)
