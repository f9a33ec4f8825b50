"""attention-fa3's fa3-majors verdict on a GPU outside SGLang's FA3 majors said "use --attention-backend
flashinfer", which is wrong for a model whose own backend list refuses flashinfer (GPT-OSS, Olmo2, Llama 4 on
some releases): the gate's recommend note, model-aware since launch/recommend.py, then named another backend on
the same screen. The message now names no backend and points at the advice."""

from __future__ import annotations

import json
from pathlib import Path

from gate_cli import GPT_OSS, gate_json, model_dir

from stackcheck.knowledge.loader import load

ROOT = Path(__file__).resolve().parent.parent.parent
SEED_AFTER = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"  # SM120, SGLang 0.5.23


def test_the_fa3_majors_message_names_no_backend() -> None:
    features = {f["id"]: f for f in load([], env={}).features}
    rule = next(r for r in features["attention-fa3"]["rules"] if r["id"] == "fa3-majors")
    assert "--attention-backend flashinfer" not in rule["message"]
    assert "--advise" in rule["message"]


def test_gpt_oss_on_sm120_with_fa3_is_not_told_to_use_flashinfer(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "gpt-oss", GPT_OSS)
    doc = gate_json(SEED_AFTER, "--model-path", str(model), "--attention-backend", "fa3", dry_run=True)
    assert doc["decision"] == "refuse"
    fa3 = next(r for r in doc["reasons"] if r["feature"] == "attention-fa3")
    assert "use --attention-backend flashinfer" not in json.dumps(fa3)
    assert any("fa3 -> triton" in a for a in doc["advice"])  # the model-aware advice, unchanged
