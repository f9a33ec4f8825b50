"""Every real SGLang launch line of tests/launch/real_lines/lines.jsonl (SGLang's own docs, docker and Kubernetes
files, the SGLang cookbook, the OME and RBG Kubernetes examples; each with its source file, commit and line) run
through `stackcheck gate --facts <case box> --dry-run --format json -- ARGV`, and its outcome as it was classified
(README.md there): the exit status, the decision, and the subjects refused as blocked and as unknown. A change in
any of them is a change in how the gate reads a real command line: look at the line before updating its entry."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ

from stackcheck.cli import main

__all__ = ["scrubbed_environ"]

ROOT = Path(__file__).resolve().parents[2]
LINES = Path(__file__).resolve().parent / "real_lines" / "lines.jsonl"
ENTRIES: list[dict[str, Any]] = [json.loads(x) for x in LINES.read_text(encoding="utf-8").splitlines() if x.strip()]


def outcome(entry: dict[str, Any]) -> dict[str, Any]:
    facts = ROOT / "tests" / "cases" / entry["box"] / "facts.json"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *entry["argv"]])
    got: dict[str, Any] = {"rc": rc}
    if rc in (0, 1):
        doc = json.loads(out.getvalue())
        got["decision"] = doc["decision"]
        for status in ("blocked", "unknown"):
            got[status] = sorted({str(r["feature"]) for r in doc["reasons"] if r["status"] == status})
    else:
        got["error"] = err.getvalue().strip().splitlines()[-1][:200]
    return got


def test_the_set_is_large_and_sourced() -> None:
    assert len(ENTRIES) >= 60
    for e in ENTRIES:
        assert e["source"].count("@") == 1 and ":" in e["source"], e
        assert (ROOT / "tests" / "cases" / e["box"] / "facts.json").is_file(), e
        assert e["class"] in {"allowed", "refused-true", "refused-unknown", "usage-literal"}, e


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{i}:{e['source'].rsplit('/', 1)[-1]}" for i, e in enumerate(ENTRIES)])
def test_a_real_line_keeps_its_classified_outcome(entry: dict[str, Any]) -> None:
    assert outcome(entry) == entry["expect"], " ".join(entry["argv"])
