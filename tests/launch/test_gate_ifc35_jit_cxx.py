"""ifc35, beside the thirty-fifth fact-check sample: population (b) held gate allows of SGLang 0.5.21 launches on a box
whose jit probe found no C++ compiler (jit.cxx_found false). SGLang 0.5.9 and later build their own JIT kernels (RoPE
at the first forward pass) with a ninja file whose link step runs $CXX, else c++ (apache-tvm-ffi 0.1.9
tvm_ffi/cpp/extension.py:414 and :461-465; sglang 0.5.23 sglang/kernels/jit/utils/compile/ninja.py:102 and :116-117),
so such a launch fails at its first forward pass. jit-toolchain's rule sglang-jit-cxx now refuses it; where the probe
could not tell (null) it is unknown; a facts document from before the probe read the compiler is not judged by it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

RULE = "sglang-jit-cxx"
_ABSENT = object()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _gate(tmp_path: Path, release: str, cxx_found: Any, *flags: str) -> dict[str, Any]:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    jit = doc["facts"]["jit"]
    jit.pop("cxx_found", None)
    if cxx_found is not _ABSENT:
        jit["cxx_found"] = cxx_found
        if cxx_found:
            jit["cxx"] = "/usr/bin/c++"
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), *flags]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


def _rule(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """(the check's status, the rule's result) for each sglang-jit-cxx reason the decision names."""
    return [
        (str(r.get("status")), str(x.get("result")))
        for r in doc.get("reasons") or []
        for x in r.get("reasons") or []
        if x.get("rule") == RULE
    ]


@pytest.mark.parametrize("flags", [("--tp", "1"), ("--tp", "2", "--enable-symm-mem")])
def test_no_compiler_refuses_every_launch(tmp_path: Path, flags: tuple[str, ...]) -> None:
    doc = _gate(tmp_path, "0.5.23", False, *flags)
    assert doc["decision"] == "refuse" and ("blocked", "fail") in _rule(doc), doc.get("reasons")
    reason = next(x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == RULE)
    assert "c++: not found" in reason["message"] and reason["effect"] == "crash"
    assert any("extension.py:414" in str(s.get("title")) for s in reason.get("source") or []), reason


def test_the_compiler_found_allows(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", True, "--tp", "1")
    assert doc["decision"] == "allow" and _rule(doc) == [], doc.get("reasons")


def test_not_told_is_unknown(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", None, "--tp", "1")
    assert doc["decision"] != "allow" and ("unknown", "unknown") in _rule(doc), doc.get("reasons")


def test_a_document_from_before_the_probe_read_it_is_not_judged_by_it(tmp_path: Path) -> None:
    assert _rule(_gate(tmp_path, "0.5.23", _ABSENT, "--tp", "1")) == []


def test_releases_before_the_jit_kernels_are_not_judged_by_it(tmp_path: Path) -> None:
    assert _rule(_gate(tmp_path, "0.5.8", False, "--tp", "1")) == []
