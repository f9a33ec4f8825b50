"""igap43 (issue 16 item 3): `gate --facts FILE -- env LD_LIBRARY_PATH=/x python -m sglang.launch_server ...`. The
saved report's cuda_libs are the loader's answers for the LD_LIBRARY_PATH it was taken with; the launch's own prefix
makes the server's loader search other directories first (glibc elf/dl-load.c _dl_map_object: the executable's
DT_RPATH, LD_LIBRARY_PATH, the ld.so cache, the default directories), so an older copy in /x shadows the facts' one and
a library only /x holds is found: the facts alone cannot say. Before, the facts' answer was taken (ok): now unknown
with that reason, except where the facts record the directories they searched (cuda_libs.ld_library_path) and the
launch's can be told to give the same answer (stackcheck/launch/facts_loader_path.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, cli_json, model_dir, release_box

from stackcheck.launch.facts_loader_path import apply_launch_loader_path, launch_loader_path

PREFILL = ["--disaggregation-mode", "prefill"]


def _gate(tmp_path: Path, libs: dict[str, Any], prefix: list[str]) -> dict[str, Any]:
    """gate --facts of a Llama 3 prefill launch at SGLang 0.5.23 with mooncake-transfer-engine 0.3.13.post1 (its
    engine.so needs libibverbs, libnuma, libcurl and libmlx5 from the loader's path: check transfer-package)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    facts = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(facts.read_text())
    doc["facts"]["packages"]["mooncake-transfer-engine"] = {"installed": True, "version": "0.3.13.post1"}
    doc["facts"]["packages"]["torch"]["cuda"] = "12.8"
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", **libs}
    facts.write_text(json.dumps(doc))
    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
            "--tp", "8", *PREFILL]  # fmt: skip
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _check(doc: dict[str, Any]) -> dict[str, Any]:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == "transfer-package"]
    assert found, doc.get("preflight")
    check: dict[str, Any] = found[0]
    return check


@pytest.mark.parametrize("prefix", [["env", "LD_LIBRARY_PATH=/opt/old/lib"],
                                    ["env", "-i", "LD_LIBRARY_PATH=/x", "PATH=/usr/bin"], ["bash", "-c"]])  # fmt: skip
def test_a_launch_changing_the_loader_path_is_not_judged_on_the_facts_view(tmp_path: Path, prefix: list[str]) -> None:
    # fails before: ok (every library found in the facts' default directory)
    recorded = {**MOONCAKE_SYSTEM_LIBS, "ld_library_path": ["/opt/cuda/lib64"]}
    if prefix == ["bash", "-c"]:  # a shell string's export before the launch
        doc = _gate_shell(tmp_path, recorded)
    else:
        doc = _gate(tmp_path, recorded, prefix)
    check = _check(doc)
    assert check["status"] == "unknown", check
    assert doc["decision"] != "allow"


def _gate_shell(tmp_path: Path, libs: dict[str, Any]) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    facts = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(facts.read_text())
    doc["facts"]["packages"]["mooncake-transfer-engine"] = {"installed": True, "version": "0.3.13.post1"}
    doc["facts"]["packages"]["torch"]["cuda"] = "12.8"
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", **libs}
    facts.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "m", LLAMA3)
    script = (f"export LD_LIBRARY_PATH=/opt/old/lib && python3 -m sglang.launch_server --model-path {model} --tp 8 "
              "--disaggregation-mode prefill")  # fmt: skip
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", "bash", "-c", script])[1]


def test_the_facts_view_stands_where_the_launch_keeps_it(tmp_path: Path) -> None:
    # no prefix: as before (the facts' answer); a prefix that sets the directories the facts searched: the same
    assert _check(_gate(tmp_path / "a", dict(MOONCAKE_SYSTEM_LIBS), []))["status"] == "ok"
    recorded = {**MOONCAKE_SYSTEM_LIBS, "ld_library_path": ["/opt/cuda/lib64"]}
    same = _gate(tmp_path / "b", recorded, ["env", "LD_LIBRARY_PATH=/opt/cuda/lib64/", "NCCL_DEBUG=INFO"])
    assert _check(same)["status"] == "ok"
    # `env -i`: no LD_LIBRARY_PATH; the libraries were found past the facts' one directory, so they are found again
    assert _check(_gate(tmp_path / "d", recorded, ["env", "-i", "PATH=/usr/bin"]))["status"] == "ok"
    # facts that did not record their loader path: any change is unknown (fails before: ok)
    unrecorded = _gate(tmp_path / "c", dict(MOONCAKE_SYSTEM_LIBS), ["env", "LD_LIBRARY_PATH=/opt/cuda/lib64"])
    check = _check(unrecorded)
    assert check["status"] == "unknown", check


def test_what_the_facts_can_tell() -> None:
    libs: dict[str, Any] = {
        "libnuma.so.1": "/opt/b/libnuma.so.1",  # found in the facts' second directory
        "libcurl.so.4": "/usr/lib/x86_64-linux-gnu/libcurl.so.4",  # found past LD_LIBRARY_PATH
        "libcudart.so.12": "/opt/py/lib/libcudart.so.12",  # found through the interpreter's DT_RPATH
        "libmlx5.so.1": None,
        "ld_cache": "file",
        "ld_library_path": ["/opt/a", "/opt/b"],
        "interpreter_rpath": {"interpreter": "/opt/py/bin/python3", "rpath": "$ORIGIN/../lib", "dirs": ["/opt/py/lib"]},
    }
    mapping: dict[str, Any] = {}
    facts: dict[str, Any] = {"cuda_libs": json.loads(json.dumps(libs))}
    # a subset that reaches /opt/b through nothing new: every answer holds but the missing one's
    assert apply_launch_loader_path(facts, ["env", "LD_LIBRARY_PATH=/opt/b", "python3"], mapping) == ["libmlx5.so.1"]
    facts = {"cuda_libs": json.loads(json.dumps(libs))}
    got = apply_launch_loader_path(facts, ["env", "LD_LIBRARY_PATH=/opt/new:/opt/b", "python3"], mapping)
    assert sorted(got) == ["libcurl.so.4", "libmlx5.so.1", "libnuma.so.1"]  # (DT_RPATH's stays)
    assert facts["cuda_libs"]["libcudart.so.12"] == "/opt/py/lib/libcudart.so.12"
    assert "/opt/new:/opt/b" in facts["cuda_libs"]["unreadable"]["libnuma.so.1"]
    assert launch_loader_path(["env", "LD_LIBRARY_PATH=/opt/a:/opt/b", "x"], mapping, ["/opt/a", "/opt/b"])[1] is False
    assert launch_loader_path(["env", "-u", "LD_LIBRARY_PATH", "x"], mapping, None) == ([], True)
    assert launch_loader_path(["python3"], mapping, None) == (None, False)
