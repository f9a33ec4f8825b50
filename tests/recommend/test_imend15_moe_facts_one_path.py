"""imend15: recommend's judging of a line (launch.recommend._with_moe_runner_auto) takes the launch facts of the
model's files by one path, the gate's own (gate_preflight.model_file_facts on the model as its preflight reads it:
ModelSeen.info), and every caller that read the model passes that reading: `recommend` itself, its judging of a line
without some flags (Judge.model_refusal) and the gate's advice (recommend.gate_advice, which `stackcheck gate` hands
the served model's ModelInfo). Before, the advice and Judge.model_refusal passed no ModelInfo and took a second path
that read config.json's keys again by hand (refusals.moe_runner_auto, _line_model_moe). The models are tests/gate_cli
configs: DeepSeek-R1-shaped FP8 (block) and Qwen3-MoE-shaped BF16, on the case b200-cubins-offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_R1, QWEN3_MOE, model_dir

CASES = Path(__file__).resolve().parents[1] / "cases"
FACTS = CASES / "b200-cubins-offline" / "facts.json"
FP8_BLOCK = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
MODELS = {"deepseek-fp8": {**DEEPSEEK_R1, "quantization_config": FP8_BLOCK}, "qwen3-moe-bf16": QWEN3_MOE}


def _spied(monkeypatch: pytest.MonkeyPatch, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[
    dict[str, Any], list[tuple[bool, dict[str, Any]]]
]:  # fmt: skip
    """The command's JSON and, for each line judged, whether the model as read came with it and the launch facts."""
    import stackcheck.launch.recommend as rec
    from stackcheck.cli import main

    seen: list[tuple[bool, dict[str, Any]]] = []
    real = rec._with_moe_runner_auto

    def spy(ctx: Any, model: Any, d: Any, mapping: Any, version: str | None) -> Any:
        out = real(ctx, model, d, mapping, version)
        if model.architecture is not None:
            seen.append((model.info is not None, dict(out.launch)))
        return out

    monkeypatch.setattr(rec, "_with_moe_runner_auto", spy)
    capsys.readouterr()
    main(argv)
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc, seen


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_gates_advice_judges_its_lines_with_the_model_as_read(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = model_dir(tmp_path, name, MODELS[name])
    argv = ["gate", "--facts", str(FACTS), "--cwd", str(tmp_path), "--dry-run", "--advise", "--format", "json", "--",
            "python", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "8"]  # fmt: skip
    doc, seen = _spied(monkeypatch, argv, capsys)
    assert seen, "the advice judged no line with the model"
    assert all(has_info for has_info, _ in seen), "a line judged without the model as read"  # (fails before)
    gate_launch = doc["derived"]["launch"]
    for key in ("moe_runner_auto", "model_moe", "checkpoint_quantized"):
        if key in gate_launch:  # every fact the gate read from the model, the advice's lines are judged with
            assert {launch.get(key) for _, launch in seen} == {gate_launch[key]}, key


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_line_recommend_judges_comes_with_the_model_as_read(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = model_dir(tmp_path, name, MODELS[name])
    argv = ["recommend", "--facts", str(FACTS), "--model-path", str(model), "--no-plan", "--format", "json"]
    _doc, seen = _spied(monkeypatch, argv, capsys)
    assert seen and all(has_info for has_info, _ in seen)  # (fails before: Judge.model_refusal's line without info)
