"""irev56: SGLang 0.5.12 and later read a --speculative-draft-model-path's config whatever the algorithm. Their server
args resolve the algorithm's alias with the draft's config: _resolve_speculative_algorithm_alias calls get_config on
the draft path whenever one is given (sglang 0.5.12 server_args.py:319-332, called from _handle_speculative_decoding
:3564-3568 with no algorithm check, from __post_init__ :976; 0.5.13 arg_groups/speculative_hook.py:13-25 and :72-77,
server_args.py:1019; 0.5.18 speculative_hook.py:24-36, server_args.py:3742; 0.5.23 speculative_hook.py:81-95 and
:150-159, arg_groups/pipeline.py:304-306; not in 0.5.9, 0.5.10 or 0.5.11). So a local draft path that is not there
fails the launch at startup even without --speculative-algorithm, or with NGRAM: igap22's note (warn) for a draft
not loaded let the gate allow it (a false pass). The checks that reach the draft's config stay as they were there;
what its checkpoint would need is still not required (not loaded)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import facts_of, load_doc

from stackcheck.knowledge.loader import load
from stackcheck.launch import preflight
from stackcheck.readers.fsview import HostView

LLAMA = {"architectures": ["LlamaForCausalLM"], "num_attention_heads": 32, "num_key_value_heads": 8}
FP8_BLOCK = {
    "architectures": ["LlamaForCausalLM"],
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]},
}


def _run(
    tmp_path: Path, draft: str, version: str | None, *algorithm: str, cwd_unknown: str | None = None
) -> preflight.Preflight:
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
        sglang_version=version,
        readings=preflight.Readings(),
        cwd_unknown=cwd_unknown,
    )
    return preflight.run(inp)


def _draft(res: preflight.Preflight) -> set[str]:
    return {r.status for r in res.results if r.check == "draft-model"}


@pytest.mark.parametrize("version", ["0.5.12", "0.5.18", "0.5.23", None])
@pytest.mark.parametrize("algorithm", [(), ("NGRAM",)], ids=["no-algorithm", "ngram"])
def test_a_missing_draft_path_fails_where_its_config_is_read_at_startup(
    tmp_path: Path, version: str | None, algorithm: tuple[str, ...]
) -> None:
    res = _run(tmp_path, str(tmp_path / "missing"), version, *algorithm)
    assert _draft(res) == {"fail"}, [r.message for r in res.results if r.check == "draft-model"]
    assert any("config" in r.message and "0.5.12" in r.message for r in res.results if r.check == "draft-model")


@pytest.mark.parametrize("version", ["0.5.9", "0.5.11"])
def test_before_0_5_12_a_draft_never_loaded_is_still_a_note(tmp_path: Path, version: str) -> None:
    assert _draft(_run(tmp_path, str(tmp_path / "missing"), version)) == {"warn"}


def test_a_read_draft_config_still_requires_nothing_when_not_loaded(tmp_path: Path) -> None:
    draft = tmp_path / "d"
    draft.mkdir()
    (draft / "config.json").write_text(json.dumps(FP8_BLOCK))
    res = _run(tmp_path, str(draft), "0.5.23")
    assert "fp8-block-gemm" not in {r.feature for r in res.requirements}
    assert _draft(res) == {"ok"}


def test_a_relative_draft_path_in_an_unknown_working_directory_stays_unknown(tmp_path: Path) -> None:
    # the shell string's `cd` hides where ./draft leads: whether SGLang 0.5.12+ finds its config is not known
    res = _run(tmp_path, "./draft", "0.5.23", cwd_unknown="cd $WORK")
    assert _draft(res) == {"unknown"}, [r.message for r in res.results if r.check == "draft-model"]
    assert _draft(_run(tmp_path, "./draft", "0.5.11", cwd_unknown="cd $WORK")) == {"warn"}
