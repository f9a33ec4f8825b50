"""launch.json `refusals` against the real SGLang wheels: each rule's check is in the releases its ranges say it
applies to and absent from the others, and the attention backends the EAGLE top-k/page-size check accepts are
the ones the release's own code lists. A few releases by default; every release of the data with
STACKCHECK_REGISTRY_ALL=1."""

from __future__ import annotations

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
        if rule["id"] == "eagle-topk-page-size" and hits:
            name, at = hits[0]
            assert allowed_backends(code[name], at) == entry["allowed"], (version, name)
    for backend, spec in table["auto"]["page_size"]["forced_by"].items():
        forced = any(PAGE_TEXT[backend] in body for body in code.values())
        assert forced is bool(version_in(version, spec["versions"])), (backend, version)
