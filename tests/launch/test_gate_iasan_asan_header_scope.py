"""iasan: which launches the gate needs jit-toolchain's rules flashinfer-jit-asan-header / -cc-asan-header of.

FlashInfer 0.5.0-0.7.4's nv_internal/cpp/common/memoryUtils.cu includes <sanitizer/asan_interface.h> with no
condition (flashinfer#4470; 0.7.2.post1 and 0.7.4 too), and five JIT generators list it among their sources: the
CUTLASS fused MoE, the trtllm-gen fused MoE (SM100), moe_utils (the CuTe-DSL MoE's moe_sort / moe_permute), the
DeepSeek-V3 fused routing and the SM90 FP8 block-scale GEMM. icov1 scoped the two rules to the features mxfp4-moe and
nvfp4, so a launch reaching those modules any other way (--moe-runner-backend flashinfer_cutlass with a BF16 MoE
model, SGLang's own flashinfer_trtllm pick for an FP8 DeepSeek checkpoint on SM100, a DeepSeek-V3-routed model on
Hopper, --fp8-gemm-backend flashinfer_deepgemm) was allowed on a box whose gcc lacks the header. Each shape here is
refused with the header missing, allowed with it found, and unknown with the reading null. The boxes are
tests/cases/h200-newest (SGLang 0.5.23, FlashInfer 0.7.2, no flashinfer-jit-cache) with the jit section's host-compiler
keys set; the configs are this test's own minimal files in the shape of config.json."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

from stackcheck.knowledge.loader import load

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
MANIFESTS = load([], env={})
RULES = ("flashinfer-jit-asan-header", "flashinfer-jit-cc-asan-header")
MLA = {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "q_lora_rank": 1536}
FP8_BLOCK = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}


def _config(arch: str, model_type: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": model_type, "hidden_size": 2048,
                            "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
                            "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 1024}  # fmt: skip
    base.update(extra)
    return base


DS3 = dict(n_routed_experts=16, moe_intermediate_size=2048, n_group=4, topk_group=2, num_experts_per_tok=4,
           topk_method="noaux_tc", scoring_func="sigmoid", moe_layer_freq=1, **MLA)  # fmt: skip
# (ifc65: the three routing keys DeepSeek-V3 checkpoints state; without them SGLang 0.5.20-0.5.23 are unknown)
GPT_OSS = dict(hidden_size=2880, num_attention_heads=64, num_key_value_heads=8, head_dim=64, num_local_experts=32,
               experts_per_token=4, intermediate_size=2880, quantization_config={"quant_method": "mxfp4"})  # fmt: skip
MODELS = {
    "llama": _config("LlamaForCausalLM", "llama", intermediate_size=8192),
    "qwen3moe": _config("Qwen3MoeForCausalLM", "qwen3_moe", num_experts=16, moe_intermediate_size=512),
    "ds3-bf16": _config("DeepseekV3ForCausalLM", "deepseek_v3", **DS3),
    "ds3-fp8": _config("DeepseekV3ForCausalLM", "deepseek_v3", quantization_config=FP8_BLOCK, **DS3),
    "gpt-oss-mxfp4": _config("GptOssForCausalLM", "gpt_oss", **GPT_OSS),
}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("iasan-models")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return root


NVCC_DEFAULT = {"flashinfer_host": "nvcc-default", "nvcc_host_found": True, "nvcc_host": "/usr/bin/gcc",
                "nvcc_host_gnu_major": 13}  # fmt: skip
CC = {"flashinfer_host": "cc", "cc_host_found": True, "cc_host": "/usr/bin/g++-15", "cc_host_gnu_major": 15}


def _facts(tmp: Path, key: str, found: bool | None, *, host: dict[str, Any], gpu: str | None = None,
           packages: dict[str, Any] | None = None) -> Path:  # fmt: skip
    """h200-newest with the jit section's host keys, `key` = `found` (None: null with a reason), another GPU (`gpu`:
    "B200" as compute capability 10.0) and package entries replaced."""
    doc = copy.deepcopy(json.loads((CASES / "h200-newest" / "facts.json").read_text()))
    facts = doc["facts"]
    facts["jit"].update(host)
    facts["jit"][key] = found
    if found is None:
        facts["jit"][key.replace("_found", "_reason")] = "CPATH names a relative directory"
    if gpu == "B200":
        for g in facts["gpus"]:
            g.update(name="NVIDIA B200", compute_capability="10.0", memory_bytes=191_000_000_000)
    facts["packages"].update(packages or {})
    path = tmp / f"facts-{key}-{found}-{gpu}-{len(packages or {})}.json"
    path.write_text(json.dumps(doc))
    return path


def _gate(facts: Path, cwd: Path, model: str, *flags: str) -> tuple[str, dict[str, str]]:
    """The decision of a launch of `model` with `flags`, and jit-toolchain's rules among its refusals: id -> result."""
    doc = stackcheck_json("gate", "--facts", str(facts), "--cwd", str(cwd), "--dry-run", "--format", "json", "--",
                          "python", "-m", "sglang.launch_server", "--model-path", model, "--tp", "8",
                          *flags)  # fmt: skip
    rules = {
        str(x.get("rule")): str(x.get("result"))
        for r in doc.get("reasons") or []
        if r.get("feature") == "jit-toolchain"
        for x in r.get("reasons") or []
    }
    return str(doc["decision"]), rules


#: (model, flags, GPU) of each launch that JIT-builds a module compiling memoryUtils.cu
SHAPES: dict[str, tuple[str, tuple[str, ...], str | None]] = {
    # CUTLASS fused MoE (flashinfer/jit/fused_moe.py gen_cutlass_fused_moe_module) on a BF16 MoE model
    "cutlass-bf16-moe": ("qwen3moe", ("--moe-runner-backend", "flashinfer_cutlass"), None),
    # the same on an FP8 checkpoint
    "cutlass-fp8-moe": ("ds3-fp8", ("--moe-runner-backend", "flashinfer_cutlass"), None),
    # the CuTe-DSL MoE's moe_sort (jit/moe_utils.py gen_moe_utils_module)
    "cutedsl-moe": ("qwen3moe", ("--moe-runner-backend", "flashinfer_cutedsl"), "B200"),
    # flashinfer_mxfp4 on SM90: cutlass_fused_moe (mxfp4-moe is needed here only for its bmm-cubins rule)
    "mxfp4-sm90": ("gpt-oss-mxfp4", ("--moe-runner-backend", "flashinfer_mxfp4"), None),
    # trtllm-gen fused MoE given by flag on SM100 (gen_trtllm_gen_fused_moe_sm100_module)
    "trtllm-given": ("qwen3moe", ("--moe-runner-backend", "flashinfer_trtllm"), "B200"),
    # SGLang 0.5.23's own pick for an FP8 DeepSeek checkpoint on SM100 (launch.moe_runner_auto flashinfer_trtllm)
    "trtllm-auto-fp8-deepseek": ("ds3-fp8", (), "B200"),
    # the DeepSeek-V3 fused routing (gen_dsv3_fused_routing_module) on Hopper with the default (Triton) runner
    "dsv3-routing-hopper": ("ds3-bf16", ("--moe-runner-backend", "triton"), None),
    # the SM90 FP8 block-scale GEMM (gen_fp8_blockscale_gemm_sm90_module) of a dense FP8 model
    "fp8-blockscale-sm90": ("llama", ("--quantization", "fp8", "--fp8-gemm-backend", "flashinfer_deepgemm"), None),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_launch_reaching_memoryutils_is_judged(tmp_path: Path, cwd: Path, shape: str) -> None:
    model, flags, gpu = SHAPES[shape]
    key, rule = "nvcc_host_asan_header_found", "flashinfer-jit-asan-header"
    decision, rules = _gate(_facts(tmp_path, key, False, host=NVCC_DEFAULT, gpu=gpu), cwd, model, *flags)
    assert decision == "refuse" and rules.get(rule) == "fail", (shape, decision, rules)
    decision, rules = _gate(_facts(tmp_path, key, None, host=NVCC_DEFAULT, gpu=gpu), cwd, model, *flags)
    assert decision == "refuse" and rules.get(rule) == "unknown", (shape, decision, rules)
    decision, rules = _gate(_facts(tmp_path, key, True, host=NVCC_DEFAULT, gpu=gpu), cwd, model, *flags)
    assert rule not in rules, (shape, decision, rules)
    assert decision == "allow" or gpu == "B200", (shape, decision, rules)  # (the B200 box may lack other things)


@pytest.mark.parametrize("shape", ["cutlass-bf16-moe", "dsv3-routing-hopper", "fp8-blockscale-sm90"])
def test_cc_is_judged_by_its_own_rule(tmp_path: Path, cwd: Path, shape: str) -> None:
    model, flags, gpu = SHAPES[shape]
    key, rule = "cc_host_asan_header_found", "flashinfer-jit-cc-asan-header"
    decision, rules = _gate(_facts(tmp_path, key, False, host=CC, gpu=gpu), cwd, model, *flags)
    assert decision == "refuse" and rules.get(rule) == "fail", (shape, decision, rules)
    decision, rules = _gate(_facts(tmp_path, key, None, host=CC, gpu=gpu), cwd, model, *flags)
    assert decision == "refuse" and rules.get(rule) == "unknown", (shape, decision, rules)
    decision, rules = _gate(_facts(tmp_path, key, True, host=CC, gpu=gpu), cwd, model, *flags)
    assert decision == "allow" and rule not in rules, (shape, decision, rules)


def test_a_dense_launch_that_builds_none_of_them_is_allowed(tmp_path: Path, cwd: Path) -> None:
    facts = _facts(tmp_path, "nvcc_host_asan_header_found", False, host=NVCC_DEFAULT)
    for flags in ((), ("--quantization", "fp8"), ("--moe-runner-backend", "triton")):
        decision, rules = _gate(facts, cwd, "llama", *flags)
        assert decision == "allow" and not set(rules) & set(RULES), (flags, decision, rules)


def test_flashinfer_jit_cache_provides_the_modules(tmp_path: Path, cwd: Path) -> None:
    cache = {"flashinfer-jit-cache": {"installed": True, "version": "0.7.2", "location": "/x"}}
    facts = _facts(tmp_path, "nvcc_host_asan_header_found", False, host=NVCC_DEFAULT, packages=cache)
    decision, rules = _gate(facts, cwd, "qwen3moe", "--moe-runner-backend", "flashinfer_cutlass")
    assert not set(rules) & set(RULES), (decision, rules)


def test_flashinfer_0_7_4_still_includes_the_header(tmp_path: Path, cwd: Path) -> None:
    # (0.7.2.post1 and 0.7.4 wheels: memoryUtils.cu:18, the include unchanged; flashinfer#4662 in no release read)
    fi = {"flashinfer-python": {"installed": True, "version": "0.7.4", "dist_version": "0.7.4", "location": "/x"}}
    facts = _facts(tmp_path, "nvcc_host_asan_header_found", False, host=NVCC_DEFAULT, packages=fi)
    _, rules = _gate(facts, cwd, "qwen3moe", "--moe-runner-backend", "flashinfer_cutlass")
    assert rules.get("flashinfer-jit-asan-header") == "fail", rules


def test_a_string_launch_fact_absent_is_not_met_and_its_unread_value_is() -> None:
    from stackcheck.launch import gate

    d = gate.derive(["python", "-m", "sglang.launch_server", "--model-path", "m"], MANIFESTS.launch, {})
    cond = {"launch": "moe_runner_auto", "in": ["flashinfer_trtllm", "unread"]}
    assert gate._cond3(cond, d, d.defaults) is False  # (a runner given, a release outside the pick's reading)
    d.launch["moe_runner_auto"] = "unread"
    assert gate._cond3(cond, d, d.defaults) is True  # (the model not read: fail closed)
    d.launch["moe_runner_auto"] = "auto"
    assert gate._cond3(cond, d, d.defaults) is False
    assert gate.describe_condition(cond) == "moe_runner_auto in flashinfer_trtllm, unread"


def test_the_scope_note_names_the_conditions_beside_the_features() -> None:
    from stackcheck.verdicts.rule_cover import scope_note

    scoped = {"features": ["nvfp4"], "when": [{"launch": "model_moe", "op": "==", "value": True}], "why": "w"}
    item = {"rules": [{"id": "a", "required_by": scoped}, {"id": "b"}]}
    note = scope_note("a", item, ["1", "2"], {"a": {"1": "crash", "2": "crash"}, "b": {"1": "crash"}})
    assert "launches that use nvfp4 and the launches its required_by's conditions name" in note, note


@pytest.mark.parametrize("model", ["llama", "ds3-bf16"])
def test_recommend_judges_its_line_with_the_gates_scope(tmp_path: Path, cwd: Path, model: str) -> None:
    """recommend's check_problems adds the launch's needs as the gate does, now with the model's launch.model_moe:
    a dense line is proposed and allowed (without it the scope failed closed and refused every line), an MoE line
    is refused as the gate refuses it (with the header missing). (irec3: the MoE line is DeepSeek-V3's, whose routing
    builds memoryUtils.cu; a Qwen3 MoE line on this H200 builds none: test_gate_irec3_moe_routing_scope)"""
    facts = _facts(tmp_path, "nvcc_host_asan_header_found", False, host=NVCC_DEFAULT)
    doc = stackcheck_json("recommend", "--facts", str(facts), "--model-path", str(cwd / model), "--tp", "8",
                          "--no-plan", "--format", "json")  # fmt: skip
    line = [str(w) for w in doc.get("command") or []]
    if model == "ds3-bf16":
        assert not line and "asan_interface.h" in json.dumps(doc.get("refused")), doc.get("refused")
        return
    assert line, doc.get("refused")
    gate = stackcheck_json("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line)
    assert gate["decision"] == "allow", gate["reasons"]
