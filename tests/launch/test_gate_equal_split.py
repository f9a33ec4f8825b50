"""Two equal split flags (`--prefill-attention-backend X --decode-attention-backend X`): from 0.5.5 SGLang sets
attention_backend to X (launch.json refusals.auto.attention_backend.equal_split) after its model-specific
adjustments and before the checks that follow them. So the checks after it read X (the Flex Attention assertion,
the EAGLE top-k/page-size check, the hybrid GDN check at model load up to 0.5.15), where the gate judged SGLang's own
pick; the model assertions (GPT-OSS, Olmo2, Llama 4: rules marked before_equal_split) still read --attention-backend
as given or the model override's pick. Read in the wheels by the registry test below."""

from __future__ import annotations

import ast
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from gate_cli import QWEN3_NEXT, gate_json, model_dir
from registry_wheels import fetch_wheel, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.refusals import refusal_problems

ROOT = Path(__file__).resolve().parent.parent.parent
RTXPRO6000 = ROOT / "tests" / "cases" / "rtxpro6000-pcie-iommu-translated" / "facts.json"  # SGLang 0.5.11, SM120
EQUAL = ("--prefill-attention-backend", "X", "--decode-attention-backend", "X")


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def equal(backend: str) -> list[str]:
    return [backend if a == "X" else a for a in EQUAL]


def statuses(
    mapping: dict[str, Any], version: str, flags: list[str], arch: str | None = None, majors: set[int] | None = None,
    models: dict[str, Any] | None = None,
) -> dict[str, str]:  # fmt: skip
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
    got = refusal_problems(d, mapping, version, majors or {12}, arch, models or {"model": None})
    return {p.subject.removeprefix("refusal "): p.status for p in got}


def test_equal_split_flags_meet_the_flex_attention_assertion(mapping: dict[str, Any]) -> None:
    """The false pass: SGLang 0.5.5-0.5.23 take two equal flex_attention split flags as --attention-backend
    flex_attention, whose assertion ends a speculative launch; the gate judged SGLang's own pick (never flex)."""
    spec = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1"]
    for version in ("0.5.5", "0.5.9", "0.5.15", "0.5.19", "0.5.23"):
        got = statuses(mapping, version, [*spec, *equal("flex_attention")])
        assert got.get("flex-attention-speculative") == "blocked", (version, got)
        # unequal split flags leave attention_backend to SGLang, which never picks flex_attention
        unequal = ["--prefill-attention-backend", "flex_attention", "--decode-attention-backend", "triton"]
        assert "flex-attention-speculative" not in statuses(mapping, version, [*spec, *unequal]), version
    # 0.5.3-0.5.4 have no such lines: attention_backend stays SGLang's own
    assert "flex-attention-speculative" not in statuses(mapping, "0.5.4", [*spec, *equal("flex_attention")])


def test_equal_split_flags_replace_a_given_attention_backend(mapping: dict[str, Any]) -> None:
    """--attention-backend flashinfer with two equal torch_native split flags: the EAGLE top-k/page-size check
    reads torch_native (not a paging backend), which SGLang refuses."""
    spec = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4"]
    flags = [*spec, "--page-size", "16", "--attention-backend", "flashinfer", *equal("torch_native")]
    assert statuses(mapping, "0.5.20", flags).get("eagle-topk-page-size") == "blocked"
    flags = [*spec, "--page-size", "16", "--attention-backend", "torch_native", *equal("flashinfer")]
    assert "eagle-topk-page-size" not in statuses(mapping, "0.5.20", flags)


def test_the_model_assertions_still_read_the_given_backend(mapping: dict[str, Any]) -> None:
    """Olmo2 and Llama 4 assert attention_backend in the model-specific adjustments, before the equal split flags
    set it: the override's pick is asserted there, so equal flashinfer split flags pass those assertions."""
    for version in ("0.5.15", "0.5.19", "0.5.23"):
        assert "olmo2-attention-backend" not in statuses(mapping, version, equal("flashinfer"), "Olmo2ForCausalLM")
        llama4 = statuses(mapping, version, equal("flashinfer"), "Llama4ForConditionalGeneration")
        assert "llama4-listed-attention-backend" not in llama4, version
        oss = statuses(mapping, version, equal("flashinfer"), "GptOssForCausalLM")  # its sides: asserted anyway
        assert oss.get("gpt-oss-attention-backend") == "blocked", version


def test_equal_split_flags_meet_the_hybrid_gdn_check_up_to_0_5_15(mapping: dict[str, Any]) -> None:
    """0.5.5-0.5.15 check attention_backend as the model loads, after the equal split flags set it."""
    models = {"model": {"model_type": "qwen3_next", "architectures": ["Qwen3NextForCausalLM"]}}
    for version in ("0.5.11", "0.5.15"):
        got = statuses(mapping, version, equal("flex_attention"), "Qwen3NextForCausalLM", {12}, models)
        assert got.get("hybrid-gdn-blackwell-backend") == "blocked", (version, got)
        got = statuses(mapping, version, equal("triton"), "Qwen3NextForCausalLM", {12}, models)
        assert "hybrid-gdn-blackwell-backend" not in got, version


def test_the_gate_refuses_qwen3_next_on_equal_flex_split_flags(tmp_path: Path) -> None:
    """End to end on the RTX PRO 6000 case (SGLang 0.5.11, SM120): allowed before, refused as a crash now."""
    model = model_dir(tmp_path, "qwen3-next", QWEN3_NEXT)
    doc = gate_json(RTXPRO6000, "--model-path", str(model), *equal("flex_attention"), dry_run=True)
    got = [r for r in doc["reasons"] if r["feature"] == "refusal hybrid-gdn-blackwell-backend"]
    assert doc["decision"] == "refuse" and got and got[0]["status"] == "blocked", doc["reasons"]
    doc = gate_json(RTXPRO6000, "--model-path", str(model), *equal("triton"), dry_run=True)
    assert not [r for r in doc["reasons"] if r["feature"] == "refusal hybrid-gdn-blackwell-backend"]


# ---- the wheels ------------------------------------------------------------------------------------------------

HOP = re.compile(r"prefill_attention_backend == (?:self|view)\.decode_attention_backend")
MODEL_STEP = re.compile(r"(?<!def )\b_?(?:handle_)?model_specific_adjustments\b(?:\(|, server_args)")
ATTENTION_STEP = re.compile(r"(?<!def )\b_?handle_attention_backend_compatibility\b(?:\(|, server_args)")
SPECULATIVE_STEP = re.compile(r"(?<!def )\b_?handle_speculative_decoding\b(?:\(|, server_args)")


def _versions() -> list[str]:
    if run_all():
        return [str(v) for v in load([], env={}).launch["release_flags"]["releases"]]
    return ["0.5.4", "0.5.5", "0.5.14", "0.5.15", "0.5.19", "0.5.23"]


def _sources(version: str) -> dict[str, str]:
    out: dict[str, str] = {}
    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        for name in z.namelist():
            if name == "sglang/srt/server_args.py" or re.fullmatch(r"sglang/srt/arg_groups/[\w/]+\.py", name):
                out[name] = z.read(name).decode("utf-8", "replace")
    return out


def _function_at(code: str, offset: int) -> tuple[str, int]:
    """The innermost function holding `offset` of `code`: (its name, the offset its body starts at)."""
    line = code.count("\n", 0, offset) + 1
    best: tuple[int, str, int] = (0, "", 0)
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno <= line <= (node.end_lineno or 0):
            if node.lineno >= best[0]:
                start = sum(len(x) + 1 for x in code.split("\n")[: node.lineno - 1])
                best = (node.lineno, node.name, start)
    return best[1], best[2]


def _steps(code: dict[str, str]) -> str:
    """The dispatcher's text: ServerArgs.__post_init__ (to 0.5.17), its _run_resolution_pipeline (0.5.18), else
    arg_groups/pipeline.py (0.5.19+)."""
    server = code["sglang/srt/server_args.py"]
    for node in ast.walk(ast.parse(server)):
        if isinstance(node, ast.FunctionDef) and node.name in ("__post_init__", "_run_resolution_pipeline"):
            body = ast.get_source_segment(server, node) or ""
            if MODEL_STEP.search(body):
                return body
    return code["sglang/srt/arg_groups/pipeline.py"]


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_equal_split_hop_is_where_the_wheel_has_it(version: str) -> None:
    """launch.json's equal_split range holds exactly the wheels whose argument handling sets attention_backend from
    two equal split flags; there it runs in the attention backend step, after the model-specific adjustments (which
    hold the assertions of the rules marked before_equal_split) and before speculative decoding; the Flex Attention
    assertion follows it in the same step."""
    launch = load([], env={}).launch
    spec = launch["refusals"]["auto"]["attention_backend"]["equal_split"]
    code = _sources(version)
    hits = [(n, m.start()) for n, b in code.items() for m in HOP.finditer(b)]
    assert bool(hits) == (version_in(version, spec["versions"]) is True), (version, hits)
    if not hits:
        return
    name, at = hits[0]
    body = code[name][at : at + 300]
    assert re.search(r'attention_backend = self\.prefill_attention_backend|"attention_backend": view\.prefill', body)
    func, _ = _function_at(code[name], at)
    if func == "_attention_backend_default":  # 0.5.15+: a declared pass, run inside the attention step
        runner = next((n, b.index(f"{func})")) for n, b in code.items() if f"run_post_process_pass(self, {func})" in b
                      or f"run_post_process_pass(server_args, {func})" in b)  # fmt: skip
        func, _ = _function_at(code[runner[0]], runner[1])
        name, at = runner
    assert func.lstrip("_") == "handle_attention_backend_compatibility", (version, func)
    flex = code[name].find("not supported with Flex Attention")
    assert flex > at and _function_at(code[name], flex)[0] == func, version
    steps = _steps(code)
    model, attention, speculative = (p.search(steps) for p in (MODEL_STEP, ATTENTION_STEP, SPECULATIVE_STEP))
    assert model and attention and speculative, version
    assert model.start() < attention.start() < speculative.start(), version
    rules = {r["id"]: r for r in launch["refusals"]["rules"]}
    text = {  # the assertion messages of the rules that run before the hop
        "gpt-oss-attention-backend": "GptOssForCausalLM requires one of",
        "olmo2-attention-backend": "FlashInfer backend can significantly degrade the performance of Olmo3",
        "llama4-listed-attention-backend": "is required for Llama4 model but got",
        "llama4-attention-backend": 'is required for Llama4 model"',
        "exaone4-attention-backend": "is required for {model_arch}, but got",
        "gemma4-attention-backend": "Gemma4 only supports trtllm_mha, triton",  # imodel2
    }
    assert {i for i, r in rules.items() if r.get("before_equal_split")} == set(text)
    for rule, message in text.items():
        where = [(n, b.index(message)) for n, b in code.items() if message in b]
        for n, offset in where:
            assert _function_at(code[n], offset)[0].lstrip("_") == "handle_model_specific_adjustments", (version, rule)
