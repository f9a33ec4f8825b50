"""triage --facts judges the launch whose arguments SGLang logged as it started (`server_args=ServerArgs(...)` in
0.5.1-0.5.18, `server_args={...}` from 0.5.19), not the default launch (issue 16): the plan step or the check's
fix is the one for that launch's flags. The logs here are written for this test in the shape SGLang prints."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from gate_cli import allocator_box

from stackcheck.cli import main
from stackcheck.launch.server_args import field_values, launch_flags
from stackcheck.launch.triage import load_signatures, triage_stream

CRASH = """[2026-12-05 08:00:05 TP3] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/env/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2711, in run_scheduler_process
    import torch.distributed
  File "/opt/env/lib/python3.12/site-packages/torch/__init__.py", line 430, in <module>
    from torch._C import *  # noqa: F403
ImportError: /opt/env/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommResume
[2026-12-05 08:00:06] Received sigquit from a child process. It usually means the child failed.
"""


def dataclass_line(symm_mem: bool) -> str:
    return (
        "[2026-12-05 08:00:01] server_args=ServerArgs(model_path='/srv/models/llama, 70b', tp_size=8, pp_size=1, "
        f"attention_backend='fa3', enable_symm_mem={symm_mem}, enable_torch_symm_mem=False, lora_paths=None, "
        "json_model_override_args='{}', speculative_config=<SpecConfig: (x>, mem_fraction_static=0.88)\n"
    )


def dict_line(symm_mem: bool) -> str:
    return (
        "[2026-12-05 08:00:01] server_args={'model_path': '/srv/models/llama', 'tp_size': 8, 'pp_size': 1, "
        f"'attention_backend': 'fa3', 'enable_symm_mem': {symm_mem}, 'lora_paths': ['a', 'b'], "
        "'json_model_override_args': {'rope_scaling': None}, 'mem_fraction_static': 0.88}\n"
    )


def triage(tmp_path: Path, log: str, *args: str) -> dict[str, Any]:
    path = tmp_path / "server.log"
    path.write_text(log)
    facts = allocator_box(tmp_path, "0.5.10", libnccl_so_found=False, libnccl_so=None)  # no libnccl.so to link
    out = io.StringIO()
    old, sys.stdout = sys.stdout, out
    try:
        assert main(["triage", str(path), "--facts", str(facts), *args]) == 0
    finally:
        sys.stdout = old
    if "--format" in args:
        doc: dict[str, Any] = json.loads(out.getvalue())
        return doc
    return {"text": out.getvalue()}


@pytest.mark.parametrize("line", [dataclass_line, dict_line])
def test_the_logged_launch_decides_the_fix(tmp_path: Path, line: Any) -> None:
    # the default launch (no server_args line): the allocator's rules read --enable-symm-mem, not known
    doc = triage(tmp_path, CRASH, "--format", "json")
    assert doc["fix"]["check"] == "nccl" and doc["fix"]["status"] == "unknown" and doc["fix"]["not_judged"]
    assert "launch" not in doc
    # the launch that crashed had --enable-symm-mem at tp 8: its allocator's link fails on this box
    doc = triage(tmp_path, line(True) + CRASH, "--format", "json")
    fix = doc["fix"]
    assert fix["status"] == "failed" and "not_judged" not in fix, fix
    assert "cannot find -lnccl" in fix["message"] and "libnccl-dev" in fix["message"]
    assert doc["launch"]["line"] == 1 and doc["launch"]["facts"]["symm_mem"] is True
    assert doc["launch"]["facts"]["tp"] == 8 and doc["launch"]["facts"]["attention_backend"] == "fa3"
    assert "--enable-symm-mem" in doc["launch"]["flags"]
    text = triage(tmp_path, line(True) + CRASH)["text"]
    shown = next(x for x in text.splitlines() if x.startswith("launch: as logged at line 1 (server_args): "))
    assert "--tp-size 8" in shown and "--enable-symm-mem" in shown
    assert line is dict_line or "--model-path '/srv/models/llama, 70b'" in shown  # quoted: it pastes as one word
    assert "check nccl on this box: failed" in text and "cannot find -lnccl" in text
    # the same crash with the flag off: that rule is not the answer
    doc = triage(tmp_path, line(False) + CRASH, "--format", "json")
    assert doc["fix"]["status"] != "failed" and "--enable-symm-mem" not in doc["launch"]["flags"]


def test_values_are_read_whole_and_only_as_literals() -> None:
    text = dataclass_line(True).split("server_args=", 1)[1]
    fields = ["model_path", "tp_size", "enable_symm_mem", "speculative_config", "mem_fraction_static", "lora_paths"]
    got = field_values(text, fields)
    assert got == {"model_path": "/srv/models/llama, 70b", "tp_size": 8, "enable_symm_mem": True, "lora_paths": None}
    # the object's repr with its unbalanced bracket hides what follows it: unknown, never a wrong value
    assert "mem_fraction_static" not in got
    options = [
        {"flag": "--tp-size", "value": "int", "fact": "tp"},
        {"flag": "--enable-symm-mem", "value": "bool", "fact": "symm_mem"},
        {"flag": "--json-model-override-args", "value": "str"},
        {"flag": "--model-path", "value": "str"},
    ]
    flags, stated = launch_flags(dict_line(False).split("server_args=", 1)[1], options)
    assert flags == ["--model-path", "/srv/models/llama", "--tp-size", "8"]  # a dict where a string is read: left out
    assert sorted(stated) == ["symm_mem", "tp"]


def test_the_line_is_found_across_chunks_and_the_last_one_counts() -> None:
    log = dataclass_line(False) + "[2026-12-05 08:00:02] restarting\n" + dataclass_line(True) + CRASH
    for size in (7, 64, 1 << 20):
        result = triage_stream(io.BytesIO(log.encode()), "<mem>", load_signatures(), chunk_size=size)
        assert result.server_args is not None
        line, text = result.server_args
        assert line == 3 and "enable_symm_mem=True" in text and text.startswith("ServerArgs(")
    result = triage_stream(io.BytesIO(log.rstrip("\n").encode()[: len(dataclass_line(False)) - 1]), "<mem>",
                           load_signatures())  # fmt: skip
    assert result.server_args is not None and result.server_args[0] == 1  # a log ending on the line, no newline
    assert triage_stream(io.BytesIO(CRASH.encode()), "<mem>", load_signatures()).server_args is None
