"""irobust3: `gate --facts FILE -- env LD_LIBRARY_PATH=/x ...` on a facts file whose cuda_libs fields have other types
than a report writes (a hand-written or edited facts file). The launch's own loader path (launch/facts_loader_path.py,
igap43) copied `cuda_libs.unreadable` with dict() and iterated `cuda_libs.interpreter_rpath.dirs` as they came: a
string or a list of names for the first, a number for the second ended the gate with exit 4, "internal error" (a bug
in stackcheck), where the audit of the same file reads it (every other reader takes `unreadable` only as a mapping).
A string `dirs` was iterated letter by letter, so "/" counted as a DT_RPATH directory. Now a field of another type is
read as absent (`unreadable`: none recorded; `dirs`: no DT_RPATH), so the launch's loader path makes those answers
unknown and the gate refuses (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import run_stackcheck
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, model_dir, release_box

from stackcheck.launch.facts_loader_path import apply_launch_loader_path


@pytest.mark.parametrize(
    "odd",
    [
        {"unreadable": "libnuma.so.1"},
        {"unreadable": ["libnuma.so.1"]},
        {"unreadable": [1]},
        {"interpreter_rpath": {"dirs": 5}},
        {"interpreter_rpath": {"dirs": "/usr/lib/x86_64-linux-gnu"}},
        {"ld_library_path": 5},
        {"ld_library_path": [1, None, {"a": 1}]},
    ],
)
def test_odd_types_in_the_facts_make_the_gate_refuse_not_crash(tmp_path: Path, odd: dict[str, Any]) -> None:
    facts = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(facts.read_text())
    doc["facts"]["packages"]["mooncake-transfer-engine"] = {"installed": True, "version": "0.3.13.post1"}
    doc["facts"]["packages"]["torch"]["cuda"] = "12.8"
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", **MOONCAKE_SYSTEM_LIBS, **odd}
    facts.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "m", LLAMA3)
    line = ["env", "LD_LIBRARY_PATH=/opt/old/lib", "python3", "-m", "sglang.launch_server", "--model-path", str(model),
            "--tp", "8", "--disaggregation-mode", "prefill"]  # fmt: skip
    r = run_stackcheck("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line, timeout=120)
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    assert out["decision"] == "refuse"
    check = next(c for c in out["preflight"]["checks"] if c["check"] == "transfer-package")
    assert check["status"] == "unknown", check


def test_a_string_rpath_is_no_directory_list() -> None:
    libs = {"libnuma.so.1": "/libnuma.so.1", "ld_library_path": ["/opt/a"], "interpreter_rpath": {"dirs": "/x"}}
    facts: dict[str, Any] = {"cuda_libs": libs}
    assert apply_launch_loader_path(facts, ["env", "LD_LIBRARY_PATH=/opt/new", "python3"], {}) == ["libnuma.so.1"]
