"""Values the probes read out of binaries reach every output safely (irobust, an adversarial pass over the tenth
session's additions): the NCCL version string of the library SGLANG_NCCL_SO_PATH names (its NCCL_SUFFIX is free
text, makefiles/version.mk), each run through the real `python -m stackcheck` in a fresh process.

Found: a credential shape glued to the digit before it (`NCCL version 2.27.7hf_...+cuda12.9`: the suffix straight
after the patch number) was not masked, since a token had to start after no letter and no digit; it reached
`probe --format json`, `audit --format json`, `plan --format json` and the gate's text and JSON refusal ("cannot read
version '2.27.7hf_...'"). The libraries are small fakes of NCCL's shape (tests/elfwriter.py), as in the igap36 tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import (
    clean_env,
    run_stackcheck,
    scrubbed_environ,  # noqa: F401 (the autouse fixture)
)
from elfwriter import build_so
from gate_cli import LLAMA3, model_dir, release_box

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_WINDOW, nccl_so_path
from stackcheck.readers.fsview import HostView

#: token shapes as a build could put them right after NCCL's patch number (none is a real credential)
GLUED = ["hf_SEKRITabcdefghij0123", "ghp_SEKRITabcdefghij0123", "sk-SEKRITabcdefghij0123"]
CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e")


def _library(path: Path, version: bytes) -> Path:
    """A libnccl.so.2 exporting every function pynccl binds (and the window pair), `version` NUL-terminated after its
    dynamic data, as NCCL's .rodata carries its VERSION_STRING."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = build_so(defined=[*PYNCCL_FUNCTIONS, *PYNCCL_WINDOW], soname="libnccl.so.2")
    path.write_bytes(data + b"\0" + version + b"\0")
    return path


def _clean(text: str, where: str) -> None:
    assert "SEKRIT" not in text, (where, text[max(0, text.find("SEKRIT") - 160) : text.find("SEKRIT") + 40])
    for raw in CONTROLS:
        assert raw not in text, (where, repr(raw))


@pytest.mark.parametrize("token", GLUED)
def test_a_token_glued_to_the_nccl_version_is_masked_in_the_probe(tmp_path: Path, token: str) -> None:
    lib = _library(tmp_path / "lib" / "libnccl.so.2", f"NCCL version 2.27.7{token}+cuda12.9".encode())
    # the probe reads it (the value is there to leak), then every output of this box's probe masks it
    assert nccl_so_path({"SGLANG_NCCL_SO_PATH": str(lib)}, HostView())["nccl_so_path_version"] == f"2.27.7{token}"
    env = clean_env(SGLANG_NCCL_SO_PATH=str(lib), XDG_CACHE_HOME=str(tmp_path / "cache"))
    for fmt in ("json", "text"):
        proc = run_stackcheck("probe", "--format", fmt, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        _clean(proc.stdout + proc.stderr, f"probe --format {fmt}")
    doc = json.loads(run_stackcheck("probe", "--format", "json", env=env, timeout=120).stdout)
    shown = doc["facts"]["jit"]["nccl_so_path_version"]
    assert shown.startswith("2.27.7") and shown.endswith("***"), shown


@pytest.mark.parametrize("token", GLUED[:1])
def test_a_token_glued_to_the_nccl_version_is_masked_in_every_verb(tmp_path: Path, token: str) -> None:
    """SGLang 0.5.4's own NCCL version check (symm-mem-nccl-so-path-version) quotes the version it could not read."""
    lib = _library(tmp_path / "lib" / "libnccl.so.2", f"NCCL version 2.27.7{token}+cuda12.9".encode())
    box = release_box(tmp_path, "0.5.4", "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["packages"]["nvidia-nccl-cu13"].update(version="2.30.7", dist_version="2.30.7")  # torch's pin
    doc["facts"]["jit"].update(nccl_so_path({"SGLANG_NCCL_SO_PATH": str(lib)}, HostView()))
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)), "--tp",
            "2", "--enable-symm-mem"]  # fmt: skip
    env = clean_env(XDG_CACHE_HOME=str(tmp_path / "cache"))
    runs = [["gate", "--facts", str(box), "--dry-run", "--format", fmt, "--", *line] for fmt in ("text", "json")]
    runs += [["audit", "--facts", str(box), "--format", fmt] for fmt in ("text", "json", "markdown")]
    runs += [["plan", "--facts", str(box), "--format", "json"], ["explain", "torch-symm-mem", "--facts", str(box)]]
    for args in runs:
        proc = run_stackcheck(*args, env=env, timeout=120)
        assert proc.returncode in (0, 1), (args, proc.stderr)
        _clean(proc.stdout + proc.stderr, " ".join(args[:1] + args[-3:]))
    # the refusal still quotes what it could not read, masked (the gate fails closed: unknown)
    gate = json.loads(run_stackcheck(*runs[1], env=env, timeout=120).stdout)
    quoted = [r["message"] for b in gate["reasons"] for r in b.get("reasons") or [] if "cannot read version" in
              str(r.get("message"))]  # fmt: skip
    assert gate["decision"] == "refuse" and quoted and "2.27.7hf_***" in quoted[0], quoted
