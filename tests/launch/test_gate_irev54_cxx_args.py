"""irev54: a CXX with arguments (CXX='ccache g++'). SGLang 0.5.18-0.5.23 write $CXX into their JIT ninja file as one
shell-quoted word (sglang/kernels/jit/utils/compile/ninja.py 0.5.18 :52 and :101, 0.5.23 :53 and :102: shlex.quote),
so /bin/sh looks for one program named by the whole value and the first JIT build fails. The jit probe left such a
CXX null (its lookup not read) and sglang-jit-cxx unknown; the probe now says whether a program of that whole name
exists (`cxx_quoted_found`) and sglang-jit-cxx-args refuses such a launch on 0.5.18+ with the cause. 0.5.9-0.5.17
hand the value to tvm-ffi's ninja file unquoted (apache-tvm-ffi 0.1.9 tvm_ffi/cpp/extension.py:414), where a
launcher works: not judged by this rule."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box, rule_results

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

RULE = "sglang-jit-cxx-args"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF")
    path.chmod(0o755)


def test_the_probe_reads_the_whole_value_as_one_program(tmp_path: Path) -> None:
    _touch(tmp_path / "usr/bin/ccache")
    _touch(tmp_path / "usr/bin/g++")
    view = HostView(str(tmp_path))
    facts: dict[str, Any] = {"cuda_toolkits": []}
    jit = probe_jit(facts, {"CXX": "ccache g++", "PATH": "/usr/bin"}, view)
    assert jit["cxx_found"] is None and jit["cxx_quoted_found"] is False, jit
    assert "cxx_quoted_found" not in probe_jit(facts, {"CXX": "g++", "PATH": "/usr/bin"}, view)
    assert "cxx_quoted_found" not in probe_jit(facts, {"PATH": "/usr/bin"}, view)


def _gate(tmp_path: Path, release: str, quoted: Any) -> dict[str, Any]:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    jit = doc["facts"]["jit"]
    jit.pop("cxx", None)
    jit["cxx_found"] = None if quoted is not None else True
    if quoted is not None:
        jit["cxx_quoted_found"] = quoted
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


@pytest.mark.parametrize("release", ["0.5.18", "0.5.23"])
def test_a_cxx_with_arguments_is_refused_from_0518(tmp_path: Path, release: str) -> None:
    doc = _gate(tmp_path, release, False)
    assert doc["decision"] == "refuse" and ("blocked", "fail") in rule_results(doc, RULE), doc.get("reasons")
    reason = next(x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == RULE)
    assert "shlex.quote" in reason["message"] or "one shell-quoted word" in reason["message"], reason


def test_before_0518_or_one_word_it_is_not_this_rule(tmp_path: Path) -> None:
    assert rule_results(_gate(tmp_path, "0.5.17", False), RULE) == []
    assert rule_results(_gate(tmp_path, "0.5.23", None), RULE) == []
