"""`--enable-symm-mem` and torch's own `-lcudart` (igap24, issue 16): the load_inline build of SGLang's NCCL
symmetric-memory allocator is with_cuda, so its link adds -L<CUDA home>/lib64 and -lcudart; a CUDA home with headers
and no libcudart.so (pip wheels) compiles and then fails the link. checks.json nccl rule
symm-mem-allocator-cudart-link reads jit.libcudart_so_found. Before: no rule read it and the gate allowed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, allocator_box, cli_json, gate_json, model_dir, rule_results

RULE = "symm-mem-allocator-cudart-link"


_box = allocator_box


def _gate(tmp_path: Path, facts: Path, *flags: str) -> dict[str, Any]:
    return gate_json(facts, "--model-path", str(model_dir(tmp_path, "llama3", LLAMA3)), *flags, dry_run=True)


def _rule(doc: dict[str, Any]) -> tuple[str, str] | None:
    """(the check's status, the rule's result) where the decision names this rule, else None."""
    return next(iter(rule_results(doc, RULE)), None)


@pytest.mark.parametrize("release", ["0.5.1", "0.5.5", "0.5.12", "0.5.23"])
def test_no_libcudart_so_refuses_symm_mem(tmp_path: Path, release: str) -> None:
    doc = _gate(tmp_path, _box(tmp_path, release, libcudart_so_found=False, libcudart_so=None),
                "--tp", "2", "--enable-symm-mem")  # fmt: skip
    assert doc["decision"] == "refuse" and _rule(doc) == ("blocked", "fail"), doc.get("reasons")
    reason = next(x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == RULE)
    assert "cannot find -lcudart" in reason["message"] and reason["effect"] == "crash"
    assert any("cpp_extension.py" in str(s.get("title")) for s in reason.get("source") or []), reason


def test_libcudart_so_found_allows_it(tmp_path: Path) -> None:
    doc = _gate(tmp_path, _box(tmp_path, "0.5.17"), "--tp", "2", "--enable-symm-mem")
    assert doc["decision"] == "allow" and _rule(doc) is None, doc.get("reasons")


@pytest.mark.parametrize("value", [None, "unread"])
def test_not_read_is_unknown(tmp_path: Path, value: str | None) -> None:
    """A facts document from before the probe read it (no key), or a look that could not read a directory (null)."""
    jit: dict[str, Any] = {"libcudart_so_found": None, "libcudart_so": None}
    box = _box(tmp_path, "0.5.19", **jit)
    if value == "unread":
        doc = json.loads(box.read_text())
        doc["facts"]["jit"].update(libcudart_so_found=None, libcudart_so_reason="LIBRARY_PATH entry 'libs'")
        box.write_text(json.dumps(doc))
    doc = _gate(tmp_path, box, "--tp", "2", "--enable-symm-mem")
    assert doc["decision"] == "refuse" and _rule(doc) == ("unknown", "unknown"), doc.get("reasons")


@pytest.mark.parametrize(
    ("release", "flags", "judged"),
    [
        ("0.5.17", ("--tp", "1", "--enable-symm-mem"), False),  # 0.5.5 on: a TP group of one builds nothing
        ("0.5.17", ("--tp", "8"), False),  # no flag, no allocator
        ("0.5.4", ("--tp", "1", "--enable-symm-mem"), True),  # 0.5.1-0.5.4 build it at any TP size
    ],
)
def test_the_rules_scope(tmp_path: Path, release: str, flags: tuple[str, ...], judged: bool) -> None:
    doc = _gate(tmp_path, _box(tmp_path, release, libcudart_so_found=False), *flags)
    assert (_rule(doc) == ("blocked", "fail")) is judged, doc.get("reasons")


def test_the_audit_does_not_judge_it_without_a_launch(tmp_path: Path) -> None:
    statuses = []
    for found in (False, True):
        _rc, doc = cli_json(["audit", "--facts", str(_box(tmp_path, "0.5.17", libcudart_so_found=found)),
                             "--format", "json"])  # fmt: skip
        check = next(c for c in doc["checks"] if c.get("id") == "nccl")
        statuses.append((check.get("status"), [x.get("rule") for x in check.get("reasons") or []]))
    assert statuses[0] == statuses[1] and RULE not in statuses[0][1]
