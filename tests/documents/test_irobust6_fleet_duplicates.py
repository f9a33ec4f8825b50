"""irobust6: fleet read each report with plain json.loads, which keeps the last of a key given twice: a hand-merged
report with two `facts` sections was counted on the last, while audit / gate / diff --facts refuse it (facts/model.py,
irobust5). Now fleet skips it as not a report, naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackcheck.documents import fleet

ROOT = Path(__file__).resolve().parents[2]


def test_a_report_with_a_key_twice_is_not_counted() -> None:
    text = (ROOT / "examples" / "facts" / "h200-cu130.json").read_text()
    doc = json.loads(text)
    fleet.parse_document(text.encode())  # (the document as saved is read)
    inner = json.dumps(doc["facts"])
    twice = text.rstrip().rstrip("}") + ', "facts": ' + inner + "}"
    # fails before: parsed, the second `facts` counted
    with pytest.raises(fleet.NotAReport, match="duplicate key 'facts'"):
        fleet.parse_document(twice.encode())
    nested = text.replace('"gpus": [', '"gpus": [], "gpus": [', 1)
    assert nested != text
    with pytest.raises(fleet.NotAReport, match="duplicate key 'gpus'"):
        fleet.parse_document(nested.encode())
