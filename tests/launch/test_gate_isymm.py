"""`--enable-symm-mem` judged by the gate (tests/realworld/FACTCHECK.md, the thirty-first sample's open rows): SGLang
0.5.1-0.5.23 build their NCCL symmetric-memory allocator when the server starts, with torch's load_inline and -lnccl,
which only an unversioned libnccl.so satisfies (the nvidia-nccl wheel ships libnccl.so.2 alone). checks.json nccl
rule symm-mem-allocator-link reads the jit probe's jit.libnccl_so_found for a launch with the flag at tp > 1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

RULE = "symm-mem-allocator-link"


def _box(tmp_path: Path, release: str, found: bool | None, cc: str = "8.6") -> Path:
    """tests/cases/h200-newest at `release` (a pip NCCL wheel, no NCCL in its toolkit) with jit.libnccl_so_found
    set to `found` (None: left out, as a facts document from before the probe read it)."""
    path = release_box(tmp_path, release, cc)
    doc = json.loads(path.read_text())
    # the build's other hops in place (tests/launch/test_gate_isymm2.py)
    doc["facts"]["jit"].update(
        cxx_found=True, cxx_cuda_runtime_h_found=True, cxx_nccl_h_found=True, libcudart_so_found=True
    )
    if found is not None:
        doc["facts"]["jit"]["libnccl_so_found"] = found
        if found:
            doc["facts"]["jit"]["libnccl_so"] = "/usr/lib/x86_64-linux-gnu/libnccl.so"
    path.write_text(json.dumps(doc))
    return path


def _gate(tmp_path: Path, facts: Path, *flags: str) -> dict[str, Any]:
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), *flags]
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _rule(doc: dict[str, Any]) -> tuple[str, str] | None:
    """(the nccl check's status, the rule's result) where the decision names this rule, else None."""
    for r in doc.get("reasons") or []:
        for x in r.get("reasons") or []:
            if x.get("rule") == RULE:
                return str(r.get("status")), str(x.get("result"))
    return None


@pytest.mark.parametrize("release", ["0.5.1", "0.5.10", "0.5.14", "0.5.17", "0.5.19", "0.5.23"])
def test_no_libnccl_so_refuses_symm_mem_at_tp_above_one(tmp_path: Path, release: str) -> None:
    doc = _gate(tmp_path, _box(tmp_path, release, False), "--tp", "2", "--enable-symm-mem")
    assert doc["decision"] == "refuse"
    assert _rule(doc) == ("blocked", "fail"), doc.get("reasons")
    reason = next(x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == RULE)
    assert "cannot find -lnccl" in reason["message"] and reason["effect"] == "crash"


def test_libnccl_so_found_allows_it(tmp_path: Path) -> None:
    doc = _gate(tmp_path, _box(tmp_path, "0.5.17", True), "--tp", "2", "--enable-symm-mem")
    assert doc["decision"] == "allow" and _rule(doc) is None, doc.get("reasons")


def test_not_read_is_unknown_and_refused_unless_allowed(tmp_path: Path) -> None:
    facts = _box(tmp_path, "0.5.19", None)
    doc = _gate(tmp_path, facts, "--tp", "2", "--enable-symm-mem")
    assert doc["decision"] == "refuse" and _rule(doc) == ("unknown", "unknown"), doc.get("reasons")


@pytest.mark.parametrize("flags", [("--tp", "1", "--enable-symm-mem"), ("--tp", "2"), ("--tp", "8")])
def test_tp_one_or_no_flag_does_not_need_the_link(tmp_path: Path, flags: tuple[str, ...]) -> None:
    """From 0.5.5 use_symmetric_memory does nothing for a TP group of one; without the flag no allocator is built."""
    doc = _gate(tmp_path, _box(tmp_path, "0.5.17", False), *flags)
    assert _rule(doc) is None, doc.get("reasons")


@pytest.mark.parametrize(("release", "refused"), [("0.5.2", True), ("0.5.4", True), ("0.5.5", False)])
def test_tp_one_before_0_5_5_builds_it_too(tmp_path: Path, release: str, refused: bool) -> None:
    """0.5.1-0.5.4's use_symmetric_memory builds the pool whenever the flag is on (no world-size test)."""
    doc = _gate(tmp_path, _box(tmp_path, release, False), "--tp", "1", "--enable-symm-mem")
    assert (_rule(doc) == ("blocked", "fail")) is refused, doc.get("reasons")


def test_the_audit_does_not_judge_it_without_a_launch(tmp_path: Path) -> None:
    """The rule is a launch's: the audit's nccl check is the same with and without a libnccl.so."""
    statuses = []
    for found in (False, True):
        _rc, doc = cli_json(["audit", "--facts", str(_box(tmp_path, "0.5.17", found)), "--format", "json"])
        check = next(c for c in doc["checks"] if c.get("id") == "nccl")
        statuses.append((check.get("status"), [x.get("rule") for x in check.get("reasons") or []]))
    assert statuses[0] == statuses[1] and RULE not in statuses[0][1]
