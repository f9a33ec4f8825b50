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
}
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
        hits = [(name, body.index(text)) for name, body in code.items() if text in body]
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
