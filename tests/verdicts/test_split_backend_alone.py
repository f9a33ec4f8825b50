"""One split attention flag given alone (issue 16): `--decode-attention-backend flashinfer` without
--attention-backend leaves the prefill side to SGLang, which fills it from --attention-backend (get_attention_backends
/ attention_backends_of: each side falls back to it) and picks that exactly as for a bare launch (its default picker
and the model overrides key on attention_backend alone; read in 0.5.5-0.5.23). On an aarch64 GH200 with SGLang
0.5.20 that pick is fa3 for an MHA or MLA model, whose aarch64 sglang-kernel wheel ships no flash_ops: the gate
judged only flashinfer and allowed the launch. It now needs what SGLang's pick needs on the other side, and stays
as it was with both split flags or --attention-backend given. For a hybrid GDN model, SGLang's pick for the other
side is admitted where its pick is for a bare launch (a split flag does not change it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from verdicts.test_factcheck6 import _facts, _gate, _model, _needs

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.refusals import refusal_problems


@pytest.mark.parametrize("flag", ["--decode-attention-backend", "--prefill-attention-backend"])
def test_one_split_flag_leaves_the_other_side_to_sglangs_pick(tmp_path: Path, flag: str) -> None:
    facts = _facts(tmp_path, "aarch64")
    doc = _gate(facts, "--model-path", str(_model(tmp_path, "LlamaForCausalLM")), flag, "flashinfer")
    assert _needs(doc, "attention-fa3") and doc["decision"] == "refuse"
    other = "prefill" if flag.startswith("--decode") else "decode"
    why = next(r for r in doc["derived"]["required"] if r["feature"] == "attention-fa3")
    assert f"the {other} side" in str(why)


def test_both_split_flags_or_the_attention_flag_leave_nothing_to_sglang(tmp_path: Path) -> None:
    facts = _facts(tmp_path, "aarch64")
    model = str(_model(tmp_path, "LlamaForCausalLM"))
    both = ["--prefill-attention-backend", "flashinfer", "--decode-attention-backend", "triton"]
    for flags in (both, ["--attention-backend", "flashinfer"]):
        doc = _gate(facts, "--model-path", model, *flags)
        assert not _needs(doc, "attention-fa3"), flags


QWEN3_NEXT = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "num_attention_heads": 16,
              "num_key_value_heads": 2, "head_dim": 256, "hidden_size": 2048}  # fmt: skip


def test_a_gdn_models_other_side_is_sglangs_admitted_pick() -> None:
    """0.5.18+: `--prefill-attention-backend triton` alone on a B200 leaves decode to SGLang's override (triton or
    trtllm_mha): admitted, where the gate said unknown; on SM110, whose pick is not known to be admitted, still
    unknown; a refused given side is still refused."""
    mapping = dict(load([], env={}).launch)

    def status(version: str, flags: list[str], majors: set[int]) -> str:
        d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "q", *flags], mapping, {})
        models: dict[str, Any] = {"model": attention_keys(QWEN3_NEXT)}
        got = [p for p in refusal_problems(d, mapping, version, majors, "Qwen3NextForCausalLM", models)
               if p.subject == "refusal hybrid-gdn-blackwell-backend"]  # fmt: skip
        return str(got[0].status) if got else "ok"

    triton = ["--prefill-attention-backend", "triton"]
    for version in ("0.5.16", "0.5.18", "0.5.20", "0.5.23"):
        assert status(version, triton, {10}) == "ok", version
    assert status("0.5.18", triton, {11}) == "unknown"
    assert status("0.5.18", ["--decode-attention-backend", "fa3"], {10}) == "blocked"
