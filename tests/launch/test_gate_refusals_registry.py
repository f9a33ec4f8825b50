"""launch.json `refusals` against the real SGLang wheels: each rule's check is in the releases its ranges say it
applies to and absent from the others, and the attention backends the EAGLE top-k/page-size check accepts are
the ones the release's own code lists. A few releases by default; every release of the data with
STACKCHECK_REGISTRY_ALL=1."""

from __future__ import annotations

import ast
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from registry_wheels import fetch_wheel, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load

# a fragment of each rule's upstream message, to find the check in a wheel
CHECK_TEXT = {
    "eagle-topk-page-size": "with page_size > 1 is",
    "trtllm-mha-topk-one": "trtllm_mha backend only supports topk = 1",
    "standalone-dp-attention": "standalone speculative decoding does not support dp attention",
    "ngram-dp-attention": "ngram speculative decoding does not support dp attention",
    "flex-attention-speculative": "Speculative decoding is currently not supported with Flex Attention",
    # the assert before SGLang's own choice of steps, top-k and draft tokens
    "spec-topk-without-steps": "speculative_eagle_topk is None",
    # the unguarded comparison of the top-k with 1 is the first operand of the top-k/page-size check
    "spec-steps-without-topk": "with page_size > 1 is",
    # checked when the trtllm_mha backend starts, in its own module (CHECK_FILE)
    "trtllm-mha-page-128-heads": "dynamic tokens-per-page kernels, which only",
}
# a rule checked outside the argument handling: the module of the wheel that holds its check
CHECK_FILE = {"trtllm-mha-page-128-heads": "sglang/srt/layers/attention/trtllm_mha_backend.py"}
# what a range's extra conditions (`also`) stand for in the wheel
ALSO_TEXT = {
    "speculative_adaptive": "not cfg.speculative_adaptive and cfg.speculative_num_steps is None|"
    "not server_args.speculative_adaptive",
    "model_architecture": "def _handle_iquest_q1_mtp_draft",
}
PAGE_TEXT = {  # the warning each backend logs when it forces its page size
    "flashmla": "FlashMLA only supports a page_size of 64",
    "cutlass_mla": "Cutlass MLA only supports a page_size of 128",
    "trtllm_mla": "TensorRT-LLM MLA only supports page_size",
    "trtllm_mha": "TensorRT-LLM MHA only supports page_size",
}
DEFAULT = ["0.5.1", "0.5.3", "0.5.9", "0.5.13", "0.5.23"]


def _versions() -> list[str]:
    if not run_all():
        return DEFAULT
    return [str(v) for v in load([], env={}).launch["release_flags"]["releases"]]


def sources(wheel: Path) -> dict[str, str]:
    """The argument-handling sources of an SGLang wheel: server_args.py and arg_groups/*.py."""
    out: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name == "sglang/srt/server_args.py" or (
                name.startswith("sglang/srt/arg_groups/") and name.endswith(".py")
            ):
                out[name] = z.read(name).decode("utf-8", "replace")
    return out


def module(version: str, name: str) -> dict[str, str]:
    """One module of an SGLang wheel, by its path in the wheel ({} when the wheel has none)."""
    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        return {name: z.read(name).decode("utf-8", "replace")} if name in z.namelist() else {}


def allowed_backends(code: str, at: int) -> list[str] | None:
    """The backends the top-k/page-size check accepts, read from the code just before its message."""
    window = code[max(0, at - 1500) : at]
    forms = [  # a single backend compared with !=, or a list, or the tuple of 0.5.13+
        r'attention_backend != "(\w+)"',
        r"attention_backend not in \[([^\]]*)\]",
        r"_PAGE_TREE_SPEC_BACKENDS = \(([^)]*)\)",
    ]
    found: list[tuple[int, list[str]]] = []
    for pattern in forms:
        for m in re.finditer(pattern, window):
            names = re.findall(r'"(\w+)"', m.group(1)) if '"' in m.group(1) else [m.group(1)]
            found.append((m.start(), names))
    return max(found)[1] if found else None


def auto_topk(code: dict[str, str]) -> dict[str, Any]:
    """SGLang's own top-k, read from (_)auto_choose_speculative_params' if/elif chain: STANDALONE's, each listed
    architecture's, and the last branch's (every other architecture)."""
    fn = next(
        node
        for body in code.values()
        if "auto_choose_speculative_params" in body
        for node in ast.walk(ast.parse(body))
        if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") == "auto_choose_speculative_params"
    )
    out: dict[str, Any] = {"standalone": None, "architectures": {}, "otherwise": None}

    def topk(body: list[ast.stmt]) -> int:
        ret = next(b for b in body if isinstance(b, ast.Return))
        assert isinstance(ret.value, ast.Tuple)
        value = ret.value.elts[1]
        assert isinstance(value, ast.Constant) and isinstance(value.value, int)
        return value.value

    for stmt in fn.body:
        branch: ast.stmt | None = stmt if isinstance(stmt, ast.If) else None
        if isinstance(stmt, ast.Return):
            out["otherwise"] = topk([stmt])
        while isinstance(branch, ast.If):
            test = branch.test
            assert isinstance(test, ast.Compare)
            compared = test.comparators[0]
            if isinstance(compared, ast.Constant) and compared.value == "STANDALONE":
                out["standalone"] = topk(branch.body)
            else:
                assert isinstance(compared, ast.List)
                for name in compared.elts:
                    assert isinstance(name, ast.Constant)
                    out["architectures"][name.value] = topk(branch.body)
            nxt = branch.orelse
            branch = nxt[0] if len(nxt) == 1 and isinstance(nxt[0], ast.If) else None
            if nxt and branch is None:
                out["otherwise"] = topk(nxt)
    return out


def entry_for(rule: dict[str, Any], version: str) -> dict[str, Any] | None:
    return next((e for e in rule["releases"] if version_in(version, e["versions"]) is True), None)


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_refusal_rules_are_what_the_wheel_checks(version: str) -> None:
    table = load([], env={}).launch["refusals"]
    code = sources(fetch_wheel("sglang", version))
    assert code, f"no server_args.py in the sglang {version} wheel"
    for rule in table["rules"]:
        entry = entry_for(rule, version)
        assert entry is not None, (rule["id"], version)
        text = CHECK_TEXT[rule["id"]]
        where = code if rule["id"] not in CHECK_FILE else module(version, CHECK_FILE[rule["id"]])
        hits = [(name, body.index(text)) for name, body in where.items() if text in body]
        assert bool(hits) is bool(entry["applies"]), (rule["id"], version, [n for n, _ in hits])
        for cond in entry.get("also") or []:
            pattern = ALSO_TEXT[cond["fact"]]
            assert any(re.search(pattern, body) for body in code.values()), (rule["id"], version, cond)
        if rule["id"] == "spec-topk-without-steps":  # the adaptive escape is there from the range that names it
            adaptive = any(re.search(ALSO_TEXT["speculative_adaptive"], body) for body in code.values())
            assert adaptive is any(c["fact"] == "speculative_adaptive" for c in entry.get("also") or []), version
            iquest = any(ALSO_TEXT["model_architecture"] in body for body in code.values())
            assert iquest is any(c["fact"] == "model_architecture" for c in entry.get("also") or []), version
        if rule["id"] == "eagle-topk-page-size" and hits:
            name, at = hits[0]
            assert allowed_backends(code[name], at) == entry["allowed"], (version, name)
    for backend, spec in table["auto"]["page_size"]["forced_by"].items():
        forced = any(PAGE_TEXT[backend] in body for body in code.values())
        assert forced is bool(version_in(version, spec["versions"])), (backend, version)


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_auto_top_k_is_what_the_wheel_picks(version: str) -> None:
    spec = load([], env={}).launch["refusals"]["auto"]["speculative_topk"]
    entry = entry_for({"releases": spec["by_release"]}, version)
    assert entry is not None
    read = auto_topk(sources(fetch_wheel("sglang", version)))
    assert read["otherwise"] == entry["otherwise"]
    assert read["standalone"] == entry.get("standalone")
    differ = {a: k for a, k in read["architectures"].items() if k != read["otherwise"]}
    assert differ == entry["architectures"]


# ---- trtllm-mha-page-128-heads: the check in trtllm_mha_backend.py and the model shapes it reads -------------

PAGE_128 = "trtllm-mha-page-128-heads"


def _derive_shapes_architectures(model_config: str) -> list[str]:
    """The architectures whose head dims _derive_model_shapes sets itself: those its long if/elif chain names
    before the generic branch."""
    fn = next(
        n
        for n in ast.walk(ast.parse(model_config))
        if isinstance(n, ast.FunctionDef) and n.name == "_derive_model_shapes"
    )
    for node in ast.walk(fn):
        branches: list[ast.If] = []
        chain: ast.stmt | None = node if isinstance(node, ast.If) else None
        while isinstance(chain, ast.If):
            branches.append(chain)
            chain = chain.orelse[0] if len(chain.orelse) == 1 and isinstance(chain.orelse[0], ast.If) else None
        if len(branches) > 3:
            return sorted(
                {
                    c.value
                    for b in branches
                    for c in ast.walk(b.test)
                    if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value[:1].isupper()
                }
            )
    return []


def _page_versions() -> list[str]:
    return _versions() if run_all() else ["0.5.16", "0.5.17", "0.5.20", "0.5.23"]


@pytest.mark.registry
@pytest.mark.parametrize("version", _page_versions())
def test_the_trtllm_mha_page_128_check_is_what_the_wheel_raises(version: str) -> None:
    """In the releases the rule applies to, trtllm_mha_backend.py raises for pages >= 128 off XQA (SM90, SM120)
    when q heads // kv heads per attention-TP rank <= 1 or the QK and V head dims differ; ModelConfig reads the KV
    heads from the attributes model_heads reads, in that order; the architectures whose shapes SGLang sets itself
    are the rule's; trtllm_mha keeps 128 from the same release. Before, none of it."""
    from stackcheck.launch.refusals import model_heads

    launch = load([], env={}).launch
    rule = next(r for r in launch["refusals"]["rules"] if r["id"] == PAGE_128)
    entry = entry_for(rule, version)
    assert entry is not None
    backend = next(iter(module(version, CHECK_FILE[PAGE_128]).values()))
    check = re.search(r"if self\.page_size >= (\d+) and not self\.is_xqa_impl:(.*?)raise ValueError", backend, re.S)
    assert bool(check) is entry["applies"], version
    keeps = launch["refusals"]["auto"]["page_size"]["forced_by"]["trtllm_mha"]
    kept = (entry_for({"releases": keeps.get("keeps_by_release") or []}, version) or keeps)["keeps"]
    assert (128 in kept) is entry["applies"], version  # pages of 128 reach trtllm_mha exactly where it checks them
    if not check:
        return
    assert int(check.group(1)) == 128
    body = check.group(2)
    assert "num_q_heads // num_kv_heads <= 1" in body and "config.head_dim != config.v_head_dim" in body
    assert "config.num_attention_heads // attn_tp_size" in body and "get_num_kv_heads(attn_tp_size)" in body
    xqa = re.search(r"self\.is_xqa_impl = (.*)", backend)
    assert xqa is not None
    majors = sorted(int(m) for m in re.findall(r"is_sm(\d+?)0", xqa.group(1)))
    assert majors == entry["trtllm_gen_heads"]["xqa_majors"], xqa.group(1)
    config = next(iter(module(version, "sglang/srt/configs/model_config.py").values()))
    assert _derive_shapes_architectures(config) == entry["trtllm_gen_heads"]["shapes_set_by_sglang"]
    attributes = re.search(r"attributes = \[(.*?)\]", config, re.S)
    assert attributes is not None
    order = re.findall(r'"(\w+)"', attributes.group(1))
    # model_heads takes the first of these that config.json states: a config giving two takes the earlier one
    for i, key in enumerate(order):
        cfg = {"num_attention_heads": 32, **{k: 4 * (j + 1) for j, k in enumerate(order[i:])}}
        assert model_heads(cfg, entry["trtllm_gen_heads"]) == (32, 4, None, None), key
    for model_type in entry["trtllm_gen_heads"]["kv_heads_elsewhere"]:
        assert f'"{model_type}"' in config, model_type
    # the model override that sets page 128 itself: in the argument hooks, next to its architectures
    own = entry["trtllm_gen_heads"]["model_page_size"]
    hooks = [
        body
        for body in sources(fetch_wheel("sglang", version)).values()
        if all(f'"{a}"' in body for a in own["architectures"])
    ]
    assert any(f'overrides["page_size"] = {own["value"]}' in body for body in hooks), version
