"""irobust8: a launch in a shell's command string whose arguments hold a word the shell expands where SGLang's
parser takes an option (`bash -c "python -m sglang.launch_server --model-path M $EXTRA"`, `"$@"`, `$(cat flags)`,
`--enable-$X`) was allowed: the words it becomes were never read, so `EXTRA=--enable-lmcache` with LMCache 0.5.6 and
no LMCACHE_MP_HOST (refused when written out: test_gate_irev68_env_behind_launcher) passed. Now such a word is
unknown (fail closed); a word in a value's place (`--tp $TP`, `--attention-backend $B`) stays the flag's own reading."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_", "LMCACHE_")):
            monkeypatch.delenv(name)


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize(
    ("tail", "extra"),
    [("$EXTRA", ()), ("${EXTRA}", ()), ("$(echo --enable-lmcache)", ()), ("`echo --enable-lmcache`", ()),
     ('"$@"', ("x", "--enable-lmcache")), ("$X$Y", ()), ("--enable-$Y", ())],
)  # fmt: skip
def test_an_expanded_word_in_an_options_place_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: str, extra: tuple[str, ...]
) -> None:
    # fails before: allowed (the words the shell makes of it never read)
    monkeypatch.setenv("EXTRA", "--enable-lmcache")
    monkeypatch.setenv("X", "--enable-")
    monkeypatch.setenv("Y", "lmcache")
    path = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": "0.5.6", "dist_version": "0.5.6"}
    path.write_text(json.dumps(doc))
    model = str(model_dir(tmp_path, "llama3", LLAMA3))
    line = ["bash", "-c", f"python3 -m sglang.launch_server --model-path {model} {tail}", *extra]
    _rc, out = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])
    assert out["decision"] == "refuse", out


def _unknown(script: str, mapping: Any) -> list[str]:
    d = gate.derive(["sh", "-c", f"python3 -m sglang.launch_server --model-path m {script}"], mapping, {})
    return [p.subject for p in d.problems if p.status == "unknown" and "parser takes an option" in p.message]


@pytest.mark.parametrize(
    ("script", "subjects"),
    [("--tp 2 $EXTRA", ["$EXTRA"]), ("--enable-lmcache $EXTRA", ["$EXTRA"]),  # (a switch takes no value)
     ("--enable-lmc $EXTRA", ["$EXTRA"]),  # (a prefix of a switch: fail closed)
     ("--tp=2 $EXTRA", ["$EXTRA"]), ("--enable-$X", ["--enable-$X"]), ("$A --tp 2 $B", ["$A"]),
     ("--tp $TP", []), ("--attention-backend $B", []), ("--tp=$TP", []), ("--tp 2 -- $EXTRA", []),
     ("--tp 2", []), ("--tp 2 --served-model-name 'a$'", [])],
)  # fmt: skip
def test_which_words_stand_alone(script: str, subjects: list[str], mapping: Any) -> None:
    assert _unknown(script, mapping) == subjects


def test_a_command_run_without_a_shell_is_its_own_words(mapping: Any) -> None:
    d = gate.derive(["python3", "-m", "sglang.launch_server", "--model-path", "m", "$EXTRA"], mapping, {})
    assert not [p for p in d.problems if "expands" in p.message]
