"""--speculative-draft-attention-backend with a value the manifests do not know (a typo, a backend newer than the
data, text with control characters): the draft's backend is then not judged at all, so before this the gate allowed
the launch; now it is unknown, as an unknown --attention-backend value is (refused unless --allow-unknown), and the
value is shown escaped. An algorithm that builds no draft backend of the target's kind (NGRAM) is not judged."""

from __future__ import annotations

import json
from pathlib import Path

from gate_cli import DEEPSEEK_R1, gate_json, model_dir

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"


def _draft_problems(doc: dict[str, object]) -> list[dict[str, object]]:
    text = json.dumps(doc)
    assert "\x1b" not in text
    derived = doc["derived"]
    assert isinstance(derived, dict)
    return [p for p in derived["problems"] if str(p.get("subject", "")).startswith("--speculative-draft-attention")]


def test_an_unknown_draft_backend_is_unknown_not_allowed(tmp_path: Path) -> None:
    target = model_dir(tmp_path, "target", DEEPSEEK_R1)
    spec = ("--model-path", str(target), "--speculative-algorithm", "EAGLE", "--attention-backend", "fa3")
    for value in ("trtllm_mla\x1b[2J", "no_such_backend"):
        doc = gate_json(H200, *spec, "--speculative-draft-attention-backend", value, dry_run=True)
        (p,) = _draft_problems(doc)
        assert p["status"] == "unknown" and "not an attention backend the manifests know" in str(p["message"])
        assert doc["decision"] == "refuse"
    known = gate_json(H200, *spec, "--speculative-draft-attention-backend", "fa3", dry_run=True)
    assert _draft_problems(known) == []
    ngram = ("--model-path", str(target), "--speculative-algorithm", "NGRAM", "--attention-backend", "fa3")
    assert _draft_problems(gate_json(H200, *ngram, "--speculative-draft-attention-backend", "x", dry_run=True)) == []
