"""`--moe-a2a-backend deepep_v2` with a ModelOpt MIXED_PRECISION checkpoint (issue 16, igap18), read in the real
wheels 0.5.19-0.5.23. SGLang's ModelConfig maps MIXED_PRECISION to modelopt_mixed where a quantized_layers entry is
NVFP4 or W4A16_NVFP4 (model_config.py 0.5.23:1855-1865), else to w4afp8 (W4AFp8MoEMethod on every MoE layer:
refused by DeepEP v2's check on every release). A modelopt_mixed checkpoint's MoE layer takes the quant_algo of its
experts' entries (ModelOptMixedPrecisionConfig.get_quant_method): FP8 and NVFP4 are refused on every release,
FP8_BLOCK_SCALES is taken from 0.5.20 (at 128x128), MXFP8, FP8_PB_WO and unquantized experts from 0.5.21.

Before igap18 the gate read every MIXED_PRECISION checkpoint as w4afp8 and refused them all (the taken cases here
failed); the refused ones were refused by deepep-v2-quantized-moe-method and are now this rule's."""

from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, QWEN3_MOE, gate_tp8, model_dir, reason_status, release_box

V2 = ("--moe-a2a-backend", "deepep_v2", "--ep", "8")
RULE = "refusal deepep-v2-w4afp8-moe"
OLD = "refusal deepep-v2-quantized-moe-method"
ATTN = {"model.layers.0.self_attn.qkv_proj": {"quant_algo": "NVFP4", "group_size": 16}}


def experts(algo: str, **more: Any) -> dict[str, Any]:
    """quantized_layers entries of two MoE layers' experts, each of `algo`."""
    return {
        f"model.layers.{n}.mlp.experts.{e}.{proj}": {"quant_algo": algo, **more}
        for n in (0, 1)
        for e in (0, 1)
        for proj in ("gate_proj", "down_proj")
    }


def gate_mixed(
    tmp_path: Path, release: str, layers: dict[str, Any], *flags: str, nested: bool = True, base: Any = QWEN3_MOE
) -> dict[str, Any]:
    """The gate on a MIXED_PRECISION checkpoint: in hf_quant_config.json (`nested`) or config.json's
    quantization_config (quant_method modelopt)."""
    quant = {"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": None, "quantized_layers": layers}
    config = base if nested else {**base, "quantization_config": {"quant_method": "modelopt", **quant}}
    model = model_dir(tmp_path, "m", config)
    if nested:
        (model / "hf_quant_config.json").write_text(
            json.dumps({"producer": {"name": "modelopt"}, "quantization": quant})
        )
    return gate_tp8(release_box(tmp_path, release, "10.0"), model, *V2, *flags)


@pytest.mark.parametrize(
    ("release", "layers", "nested"),
    [
        ("0.5.21", {**ATTN, **experts("FP8_BLOCK_SCALES", group_size=128)}, False),
        ("0.5.23", {**ATTN, **experts("FP8_PB_WO")}, True),  # block from group_size, 128 by default
        ("0.5.21", {**ATTN, **experts("MXFP8")}, True),  # MXFP8 1x32 taken from 0.5.21
        ("0.5.23", {**ATTN, **experts("MXFP8")}, False),
        ("0.5.22", ATTN, True),  # no experts listed: UnquantizedFusedMoEMethod, taken from 0.5.21
    ],
)
def test_experts_the_check_takes_are_allowed(
    tmp_path: Path, release: str, layers: dict[str, Any], nested: bool
) -> None:
    status = reason_status(gate_mixed(tmp_path, release, layers, nested=nested))
    assert RULE not in status and OLD not in status, status


@pytest.mark.parametrize(
    ("release", "layers"),
    [
        ("0.5.23", experts("FP8_BLOCK_SCALES")),  # no NVFP4 layer: loaded as w4afp8, W4AFp8MoEMethod
        ("0.5.20", experts("MXFP8")),
        ("0.5.23", {**ATTN, **experts("NVFP4", group_size=16)}),  # ModelOptNvFp4FusedMoEMethod
        ("0.5.21", {**ATTN, **experts("W4A16_NVFP4")}),
        ("0.5.22", {**ATTN, **experts("FP8")}),  # ModelOptFp8MoEMethod
        ("0.5.20", {**ATTN, **experts("MXFP8")}),  # MXFP8 refused before 0.5.21
        ("0.5.19", {**ATTN, **experts("FP8_BLOCK_SCALES")}),  # 0.5.19: no method -> unquantized, refused
        ("0.5.20", ATTN),  # no experts listed: unquantized, refused before 0.5.21
        ("0.5.23", {**ATTN, **experts("FP8_PB_WO", group_size=64)}),  # a 64x64 block
        ("0.5.21", {**ATTN, **experts("FP8_BLOCK_SCALES"), **experts("FP8_BLOCK_SCALES", group_size=64)}),
    ],
)
def test_experts_the_check_refuses_are_blocked(tmp_path: Path, release: str, layers: dict[str, Any]) -> None:
    doc = gate_mixed(tmp_path, release, layers)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(RULE) == ("blocked", "crash"), reason_status(doc)


def test_a_layer_maybe_unlisted_where_unquantized_is_refused_is_unknown(tmp_path: Path) -> None:
    # 0.5.20 takes FP8_BLOCK_SCALES experts (Fp8MoEMethod at 128x128) but refuses UnquantizedFusedMoEMethod, the
    # method of a MoE layer without an entry: whether every MoE layer is listed is not read
    doc = gate_mixed(tmp_path, "0.5.20", {**ATTN, **experts("FP8_BLOCK_SCALES")})
    assert doc["decision"] == "refuse"  # fails closed
    assert reason_status(doc).get(RULE, ("",))[0] == "unknown", reason_status(doc)


def test_an_unmapped_experts_algo_is_unknown(tmp_path: Path) -> None:
    doc = gate_mixed(tmp_path, "0.5.23", {**ATTN, **experts("W4A8_AWQ")})
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(RULE, ("",))[0] == "unknown", reason_status(doc)


def test_explicit_w4afp8_flag(tmp_path: Path) -> None:
    # a modelopt_mixed checkpoint: the override turns --quantization w4afp8 into modelopt_mixed (per-layer methods)
    status = reason_status(gate_mixed(tmp_path, "0.5.23", {**ATTN, **experts("MXFP8")}, "--quantization", "w4afp8"))
    assert RULE not in status and OLD not in status, status
    # a BF16 MoE checkpoint: W4AFp8Config, W4AFp8MoEMethod
    plain = gate_tp8(release_box(tmp_path, "0.5.22", "9.0"), model_dir(tmp_path, "b", QWEN3_MOE), *V2,
                     "--quantization", "w4afp8")  # fmt: skip
    assert reason_status(plain).get(RULE) == ("blocked", "crash"), reason_status(plain)


def test_dense_model_and_other_backends_are_not_this_rule(tmp_path: Path) -> None:
    dense = gate_mixed(tmp_path, "0.5.23", experts("FP8_BLOCK_SCALES"), base=LLAMA3)
    assert RULE not in reason_status(dense)
    model = model_dir(tmp_path, "d", QWEN3_MOE)
    doc = gate_tp8(release_box(tmp_path, "0.5.23", "10.0"), model, "--moe-a2a-backend", "deepep", "--ep", "8",
                   "--quantization", "w4afp8")  # fmt: skip
    assert RULE not in reason_status(doc)


def _fused_moe_branch(code: str) -> dict[str, str]:
    """ModelOptMixedPrecisionConfig.get_quant_method's FusedMoE branch, read with ast: quant_algo -> the MoE method
    and its config ("Fp8MoEMethod:mxfp8_config"); an algo of _BLOCK_FP8_ALGOS by each name of that tuple."""
    tree = ast.parse(code)
    names: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = [ast.literal_eval(e) for e in node.value.elts]
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelOptMixedPrecisionConfig")
    method = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "get_quant_method")
    branch = next(n for n in ast.walk(method) if isinstance(n, ast.If) and "FusedMoE" in ast.unparse(n.test))
    out: dict[str, str] = {}
    for stmt in branch.body:
        if not isinstance(stmt, ast.If) or not isinstance(stmt.body[0], ast.Return):
            continue
        call = stmt.body[0].value
        if not isinstance(call, ast.Call) or not isinstance(stmt.test, ast.Compare):
            continue
        what = f"{ast.unparse(call.func)}:{ast.unparse(call.args[0]).removeprefix('self.')}"
        right = stmt.test.comparators[0]
        algos = names[right.id] if isinstance(right, ast.Name) else [ast.literal_eval(right)]
        out.update({str(a): what for a in algos})
    return out


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23"])
def test_the_methods_table_is_what_the_wheel_builds(version: str) -> None:
    from registry_wheels import fetch_wheel

    from stackcheck.facts.versions import version_in
    from stackcheck.knowledge.loader import load

    rule = next(r for r in load([], env={}).launch["refusals"]["rules"] if r["id"] == RULE.removeprefix("refusal "))
    spec = next(e for e in rule["releases"] if version_in(version, e["versions"]) is True)["modelopt_mixed_moe"]
    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        modelopt = z.read("sglang/srt/layers/quantization/modelopt_quant.py").decode()
        layer = z.read("sglang/srt/layers/moe/fused_moe_triton/layer.py").decode()
    check = layer[layer.index("def _validate_deepep_v2_quant_method") :]
    check = check[: check.index("\nclass ")]
    takes_bf16 = "isinstance(quant_method, UnquantizedFusedMoEMethod)" in check
    refuses_mxfp8 = "elif quant_method.use_mxfp8:" in check
    assert spec["unquantized"] == ("taken" if takes_bf16 else "refused"), version
    built = _fused_moe_branch(modelopt)
    for algo, said in spec["methods"].items():
        method = built.get(algo)
        if method is None:
            assert said == "unquantized", (version, algo)  # no method: FusedMoE builds UnquantizedFusedMoEMethod
        elif method.startswith("Fp8MoEMethod:mxfp8"):
            assert said == ("refused" if refuses_mxfp8 else "taken"), (version, algo)
        elif method.startswith("Fp8MoEMethod:fp8_block"):
            assert said == "taken", (version, algo)
        else:
            assert method.split(":")[0] in ("ModelOptFp8MoEMethod", "ModelOptNvFp4FusedMoEMethod"), method
            assert said == "refused", (version, algo)
    assert set(built) <= set(spec["methods"]), (version, sorted(built))
    assert sorted(spec["block_algos"]) == sorted(a for a, m in built.items() if m.startswith("Fp8MoEMethod:fp8_block"))
    sized = "weight_block_size=[block_size, block_size]" in modelopt
    assert (spec["block"] == 128) is sized and (spec["block"] is None) is (not sized), version
