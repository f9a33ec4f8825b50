"""The tenth fact-check sample (tests/realworld/FACTCHECK.md).

Row a4 (a false pass): the gate allowed `--attention-backend trtllm_mla` for a GLM-4 MoE Lite config on 8x B200 with
SGLang 0.5.6, a release that does not run that architecture as MLA (preflight.json model.mla_architectures: from
0.5.8). SGLang builds its trtllm_mla backend only for an MLA model (ValueError 'trtllm_mla backend can only be used
with MLA models.'), and its trtllm_mha backend only for a non-MLA one; neither check was modelled, so Llama 3 on
trtllm_mla and an MLA model on trtllm_mha (0.5.5 on, where the MLA backend list no longer refuses it) passed the
gate. features.json now has attention-trtllm-mla's mla-models-only and attention-trtllm-mha's non-mla-models-only,
judged on launch.mla (the release's MLA architectures)."""

from __future__ import annotations

import json
from pathlib import Path

from gate_cli import DEEPSEEK_R1, GIGACHAT35, LLAMA3, gate_json, model_dir

ROOT = Path(__file__).resolve().parent.parent.parent
B200 = ROOT / "tests" / "cases" / "b200-deepgemm-nvcc128" / "facts.json"  # 8x B200, SGLang 0.5.20


def _gate(tmp_path: Path, name: str, config: dict[str, object], backend: str) -> dict[str, object]:
    model = model_dir(tmp_path, name, config)
    return gate_json(B200, "--model-path", str(model), "--tp", "8", "--attention-backend", backend, dry_run=True)


def test_trtllm_mla_with_a_model_the_release_does_not_run_as_mla_is_refused(tmp_path: Path) -> None:
    """Llama 3 and GigaChat 3.5 (MLA only from SGLang 0.5.21) on trtllm_mla with 0.5.20: ValueError in SGLang."""
    for name, config in (("llama3", LLAMA3), ("gigachat", GIGACHAT35)):
        doc = _gate(tmp_path, name, config, "trtllm_mla")
        assert doc["decision"] == "refuse", (name, json.dumps(doc["reasons"])[:800])
        assert "mla-models-only" in json.dumps(doc["reasons"]), name


def test_trtllm_mha_with_an_mla_model_is_refused(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "r1", DEEPSEEK_R1, "trtllm_mha")
    assert doc["decision"] == "refuse", json.dumps(doc["reasons"])[:800]
    assert "non-mla-models-only" in json.dumps(doc["reasons"])


def test_each_backend_with_its_own_kind_of_model_is_not_judged_by_the_new_rules(tmp_path: Path) -> None:
    """(The case box is refused for its NCCL packages whatever the model: only the two rules are asserted here.)"""
    for name, config, backend in (("r1", DEEPSEEK_R1, "trtllm_mla"), ("llama3", LLAMA3, "trtllm_mha")):
        text = json.dumps(_gate(tmp_path, name, config, backend))
        assert "mla-models-only" not in text, name
        assert '"rule": "blackwell-majors"' not in text and '"rule": "decode-majors"' not in text, name
