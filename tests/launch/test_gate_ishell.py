"""stackcheck gate reads a launch inside a shell's command string (`bash -c "..."`) as the shell runs it (ishell):
every reader (flags, launch facts, environment, argparse) gets the launch's own words only, up to the next control
operator, its redirections left out; a launch after `cd /x &&`, `source venv/bin/activate &&` or `export A=1;` is
found, and the exports and `A=1` prefixes before it are the environment it sees."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_process import clean_env, run_stackcheck

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate, gate_preflight

LAUNCH = "python -m sglang.launch_server --model-path m"


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def _bash(shipped: dict[str, Any], text: str, env: dict[str, str] | None = None) -> gate.Derived:
    return gate.derive(["bash", "-c", text], shipped, env or {})


@pytest.mark.parametrize(
    "text",
    [
        f"{LAUNCH} --tp 8 && echo --attention-backend fa3",
        f"{LAUNCH} --tp 8 || echo --attention-backend fa3",
        f"{LAUNCH} --tp 8; echo --attention-backend fa3",
        f"{LAUNCH} --tp 8 | grep -v --attention-backend fa3",
        f"{LAUNCH} --tp 8&&echo --attention-backend fa3",
        f"{LAUNCH} --tp 8 & echo --attention-backend fa3",
        f"{LAUNCH} --tp 8\necho --attention-backend fa3",
        f"{LAUNCH} --tp 8 # --attention-backend fa3",
    ],
)
def test_words_after_an_operator_are_not_the_launch_s(shipped: dict[str, Any], text: str) -> None:
    d = _bash(shipped, text)
    assert d.entrypoint == "launch-server"
    assert d.sglang_args == ["--model-path", "m", "--tp", "8"]
    assert "--attention-backend" not in d.options
    assert not any(r.feature == "attention-fa3" for r in d.required)


@pytest.mark.parametrize(
    "text",
    [
        f"{LAUNCH} --attention-backend fa3 2>&1 | tee log",
        f"{LAUNCH} --attention-backend fa3 > log 2>&1",
        f"{LAUNCH} --attention-backend fa3 &>log",
        f"{LAUNCH} >>log --attention-backend fa3",
        f"{LAUNCH} --attention-backend fa3 >log 2>&1 </dev/null &",
    ],
)
def test_redirections_are_left_out_and_the_launch_read_whole(shipped: dict[str, Any], text: str) -> None:
    d = _bash(shipped, text)
    assert d.sglang_args == ["--model-path", "m", "--attention-backend", "fa3"]
    assert d.options["--attention-backend"] == "fa3"
    assert any(r.feature == "attention-fa3" for r in d.required)
    assert gate.argv_problems(d, shipped, "0.5.9") == []


@pytest.mark.parametrize(
    "before",
    [
        "cd /x && ",
        "cd /x&&",
        "source venv/bin/activate && ",
        ". /opt/venv/bin/activate; ",
        "export A=1; ",
        "set -e\ncd /srv\n",
        "nvidia-smi || true; ",
        "mkdir -p /logs && exec ",
    ],
)
def test_a_launch_after_an_operator_is_found(shipped: dict[str, Any], before: str) -> None:
    d = _bash(shipped, f"{before}{LAUNCH} --attention-backend fa3 --tp 2 2>&1 | tee log")
    assert d.entrypoint == "launch-server"
    assert d.sglang_args == ["--model-path", "m", "--attention-backend", "fa3", "--tp", "2"]
    assert any(r.feature == "attention-fa3" for r in d.required)
    assert gate.argv_problems(d, shipped, "0.5.9") == []


def test_a_stray_word_of_a_launch_after_cd_is_still_refused(shipped: dict[str, Any]) -> None:
    d = _bash(shipped, f"cd /x && {LAUNCH} --tp 2 stray > log")
    assert [p.observed for p in gate.argv_problems(d, shipped, "0.5.9")] == ["stray"]


JIT = "SGLANG_ENABLE_JIT_DEEPGEMM"


@pytest.mark.parametrize(
    ("text", "outer", "seen"),
    [
        (f"{JIT}=0 {LAUNCH}", {}, False),
        (f"cd /x && {JIT}=0 exec {LAUNCH}", {}, False),
        (f"export {JIT}=0; {LAUNCH}", {}, False),
        (f"export {JIT}=0 && cd /x && {LAUNCH}", {}, False),
        (f"{JIT}=0; export {JIT}; {LAUNCH}", {}, False),
        (f"declare -x {JIT}=0; {LAUNCH}", {}, False),
        (f"env {JIT}=0 {LAUNCH}", {}, False),
        # a plain assignment sets a shell variable: not exported, the server never sees it ...
        (f"{JIT}=0; {LAUNCH}", {}, True),
        # ... unless the variable came in exported: then the server sees the new value
        (f"{JIT}=0; {LAUNCH}", {JIT: "1"}, False),
        (f"unset {JIT}; {LAUNCH}", {JIT: "0"}, True),
        # an assignment prefix holds for its own command only
        (f"{JIT}=0 true; {LAUNCH}", {}, True),
    ],
)
def test_the_shell_s_environment_reaches_the_launch(
    shipped: dict[str, Any], text: str, outer: dict[str, str], seen: bool
) -> None:
    d = _bash(shipped, text, outer)
    assert d.entrypoint == "launch-server"
    assert d.env[JIT] is seen


def test_expanded_words_are_kept_for_the_readers_and_end_argparse_s_reading(shipped: dict[str, Any]) -> None:
    d = _bash(shipped, f'{LAUNCH} --attention-backend "$BACKEND" --tp 2 "$@" stray')
    assert d.options["--attention-backend"] == "$BACKEND"  # an unknown value, never a pass
    assert any(p.subject == "--attention-backend=$BACKEND" and p.status == "unknown" for p in d.problems)
    assert gate.argv_problems(d, shipped, "0.5.9") == []


def test_quoted_operators_are_words(shipped: dict[str, Any]) -> None:
    d = _bash(shipped, f"{LAUNCH} --served-model-name 'a && b' --chat-template \"x|y\"")
    assert d.sglang_args[-4:] == ["--served-model-name", "a && b", "--chat-template", "x|y"]


@pytest.mark.parametrize(
    ("text", "commands"),
    [
        ("a b && c 'd e' | f", [["a", "b"], ["c", "d e"], ["f"]]),
        ("a 2>&1 >log b 8>x c", [["a", "b", "c"]]),
        ("a>log;b<in|&c", [["a"], ["b"], ["c"]]),
        ('a "$(x y)" `z w` ${v:-q r}', [["a", "$(x y)", "`z w`", "${v:-q r}"]]),
        ("a\\ b c\\\nd", [["a b", "cd"]]),
        ("cat <<EOF\nlaunch --x\nEOF\nb", [["cat"], ["b"]]),
        ("( a ) && { b; }", [["a"], ["{", "b"], ["}"]]),
        ("a#b c $x d$y #e f", [["a#b", "c", "$x", "d$y"]]),
        ("a&b 12x>y", [["a"], ["b", "12x"]]),
        ("a 'open", None),
        ('a "open', None),
        ("a >", None),
    ],
)
def test_shell_commands(text: str, commands: list[list[str]] | None) -> None:
    assert gate.shell_commands(text) == commands


def test_a_config_file_inside_a_shell_string_is_left_unknown(
    shipped: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bash -c "cd /x && python -m sglang.launch_server --config c.yaml"`: the file is the shell's cd's, and the
    launch no tail of the command to merge into: not read, the launch facts are unknown (never merged elsewhere)."""
    (tmp_path / "c.yaml").write_text("attention-backend: fa3\n")
    monkeypatch.chdir(tmp_path)
    data = dict(load([], env={}).preflight)
    command = ["bash", "-c", f"cd /x && {LAUNCH} --config c.yaml --tp 2 2>&1 | tee log"]
    to_derive, path, problem = gate_preflight.expand_config(command, shipped, data, {})
    assert (to_derive, path, problem) == (command, None, None)
    d = gate.derive(to_derive, shipped, {})
    assert d.entrypoint == "launch-server" and ("--config", "unknown") in [(p.subject, p.status) for p in d.problems]
    plain = [*LAUNCH.split(), "--config", "c.yaml", "--tp", "2"]
    merged, path, _ = gate_preflight.expand_config(plain, shipped, data, {})
    assert path == str(tmp_path / "c.yaml") and "fa3" in merged  # (a plain launch's file is read, as before)


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("before", ["export CUDA_VISIBLE_DEVICES=0,1 && ", "CUDA_VISIBLE_DEVICES=0,1 exec ", ""])
def test_the_preflight_reads_the_shell_s_environment(before: str) -> None:
    """The preflight (gpu-count) reads the launch's own environment: a CUDA_VISIBLE_DEVICES exported in the shell
    string leaves 2 of the 8 GPUs to a --tp 8 launch, which was passed before (the gate read its own environment)."""
    env = clean_env("HF_", "CUDA_", PYTHONPATH=str(ROOT))
    model = ROOT / "tests" / "data" / "models" / "llama3-8b"
    text = f"{before}python -m sglang.launch_server --tp 8 --model-path {model} 2>&1 | tee log"
    facts = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
    args = ["gate", "--facts", str(facts), "--dry-run", "--", "bash", "-c", text]
    p = run_stackcheck(*args, env=env, stdin=subprocess.DEVNULL)
    refused = "REFUSE gpu-count [preflight]" in p.stdout
    assert refused is bool(before), p.stdout + p.stderr
    if before:
        assert p.returncode == 1 and "CUDA_VISIBLE_DEVICES '0,1'" in p.stdout
