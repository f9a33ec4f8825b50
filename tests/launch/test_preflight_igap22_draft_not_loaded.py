"""igap22 (4): the preflight reads a --speculative-draft-model-path that SGLang never loads (no
--speculative-algorithm, or NGRAM: no draft worker is built, or it loads no model) as a note: its missing directory
is a warn, not a failure, and what its checkpoint would need (an FP8 block draft: fp8-block-gemm, deepgemm) is not
required of the launch. With a draft-loading algorithm both stay as they were (an over-refusal fixed, no allow
added where a draft is loaded)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import facts_of, load_doc

from stackcheck.knowledge.loader import load
from stackcheck.launch import preflight
from stackcheck.readers.fsview import HostView

FP8_BLOCK = {
    "architectures": ["LlamaForCausalLM"],
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]},
}
LLAMA = {"architectures": ["LlamaForCausalLM"], "num_attention_heads": 32, "num_key_value_heads": 8}


def _run(tmp_path: Path, draft: str, *algorithm: str) -> preflight.Preflight:
    target = tmp_path / "m"
    target.mkdir(exist_ok=True)
    (target / "config.json").write_text(json.dumps(LLAMA))
    options: dict[str, Any] = {"--model-path": str(target), "--speculative-draft-model-path": draft}
    if algorithm:
        options["--speculative-algorithm"] = algorithm[0]
    inp = preflight.Inputs(
        options=options,
        env={},
        facts=facts_of(load_doc("h200-1x.json")),
        data=load([], env={}).preflight,
        view=HostView(),
        cwd=str(tmp_path),
        home=str(tmp_path / "home"),
        sglang_version="0.5.9",
        readings=preflight.Readings(),  # this box: a local path that is not there fails
    )
    return preflight.run(inp)


def _draft_checks(res: preflight.Preflight) -> dict[str, str]:
    return {r.check: r.status for r in res.results if "draft model" in r.message}


@pytest.mark.parametrize("algorithm", [(), ("NGRAM",)], ids=["no-algorithm", "ngram"])
def test_a_missing_draft_path_never_loaded_is_a_note(tmp_path: Path, algorithm: tuple[str, ...]) -> None:
    res = _run(tmp_path, str(tmp_path / "missing"), *algorithm)
    checks = _draft_checks(res)
    assert checks and set(checks.values()) == {"warn"}, checks
    assert any(preflight.NOT_LOADED in r.message for r in res.results)


def test_a_missing_draft_path_that_is_loaded_still_fails(tmp_path: Path) -> None:
    res = _run(tmp_path, str(tmp_path / "missing"), "EAGLE")
    assert "fail" in _draft_checks(res).values(), _draft_checks(res)


@pytest.mark.parametrize(("algorithm", "required"), [((), False), (("NGRAM",), False), (("EAGLE",), True)])
def test_a_drafts_needs_count_only_where_it_is_loaded(
    tmp_path: Path, algorithm: tuple[str, ...], required: bool
) -> None:
    draft = tmp_path / "d"
    draft.mkdir()
    (draft / "config.json").write_text(json.dumps(FP8_BLOCK))
    res = _run(tmp_path, str(draft), *algorithm)
    needed = {r.feature for r in res.requirements}
    assert ("fp8-block-gemm" in needed) is required, needed
    assert [m.role for m in res.models] == ["model", "draft model"]  # read either way: the gate's own readers ask
