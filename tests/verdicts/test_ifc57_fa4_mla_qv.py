"""FA4 decoding an MLA model from SGLang 0.5.17 on (the fifty-seventh fact-check sample, found beside its u20): the
FA4 backend's MLA decode passes the latent query as qv, and SGLang's vendored FlashAttention-4 asserts
'only support Blackwell arch with qv' unless the GPU's major is 10 or 11. Hopper (0.5.17+) and SM12x (0.5.18+, where
the vendored majors / paged-KV rules stand aside) were allowed; Ampere and 0.5.17's SM12x were already refused by the
paged-KV rule."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from release_box import judge, rules

from stackcheck.cli import main
from stackcheck.knowledge.loader import Manifests

ROOT = Path(__file__).resolve().parent.parent.parent
H200_NEWEST = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # SGLang 0.5.23, eight 9.0 GPUs
RULE = "mla-decode-qv-blackwell-only"
FA4 = {"attention_backend": "fa4"}
# (0.5.17 on SM12x is refused by vendored-fa4-paged-kv already)
OFF_BLACKWELL = [("9.0", "0.5.17"), ("9.0", "0.5.20"), ("9.0", "0.5.23"), ("12.0", "0.5.18"), ("12.0", "0.5.23")]
OFF_BLACKWELL.append(("12.1", "0.5.20"))


def _verdict(manifests: Manifests, cc: str, sglang: str, launch: dict[str, Any]) -> tuple[str, list[str]]:
    v = judge(manifests, "attention-fa4", cc, sglang, launch)
    return str(v["status"]), rules(v)


@pytest.mark.parametrize(("cc", "sglang"), OFF_BLACKWELL)
def test_an_mla_decode_on_fa4_off_blackwell_is_refused(manifests: Manifests, cc: str, sglang: str) -> None:
    assert _verdict(manifests, cc, sglang, {**FA4, "mla": True}) == ("blocked", [RULE])
    # an MHA model, a model the launch does not describe, and FA4 for prefill only: the rule stands aside
    assert _verdict(manifests, cc, sglang, {**FA4, "mla": False})[0] == "ok"
    assert _verdict(manifests, cc, sglang, FA4)[0] == "ok"
    split = {"prefill_attention_backend": "fa4", "decode_attention_backend": "flashinfer", "mla": True}
    assert RULE not in _verdict(manifests, cc, sglang, split)[1]
    assert RULE in _verdict(manifests, cc, sglang, {"decode_attention_backend": "fa4", "mla": True})[1]


@pytest.mark.parametrize("cc", ["10.0", "10.3"])
def test_blackwell_decodes_an_mla_model_on_fa4(manifests: Manifests, cc: str) -> None:
    for sglang in ("0.5.17", "0.5.20", "0.5.23"):
        assert _verdict(manifests, cc, sglang, {**FA4, "mla": True}) == ("ok", [])


def test_0_5_16_keeps_its_own_refusal(manifests: Manifests) -> None:
    assert _verdict(manifests, "9.0", "0.5.16", {**FA4, "mla": True}) == ("blocked", ["mla-decode-qv-refused"])


def test_the_gate_refuses_deepseek_v2_lite_on_fa4_on_a_hopper_box(tmp_path: Path) -> None:
    model = tmp_path / "dsv2-lite"
    model.mkdir()
    config = {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "hidden_size": 2048,
              "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512, "v_head_dim": 128,
              "qk_nope_head_dim": 128, "qk_rope_head_dim": 64}  # fmt: skip
    (model / "config.json").write_text(json.dumps(config), encoding="utf-8")
    out = io.StringIO()
    line = ["python", "-m", "sglang.launch_server", "--model-path", str(model), "--attention-backend", "fa4"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["gate", "--facts", str(H200_NEWEST), "--dry-run", "--format", "json", "--", *line])
    doc = json.loads(out.getvalue())
    assert doc["decision"] == "refuse"
    fa4 = [str(r.get("rule")) for b in doc["reasons"] if b["feature"] == "attention-fa4" for r in b["reasons"]]
    assert fa4 == [RULE]
