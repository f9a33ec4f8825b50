"""`stackcheck recommend -- bash -c "python -m sglang.launch_server ..."` (issue 16, igap18): the advice is written
inside the shell's command string (after the string, bash would take the words as $0, $1, ...; the parent wrote them
there and left the dropped flags in the string), and each printed command is read back with the gate's own reader:
the launch it finds has the edited flags. Where the string cannot be rewritten, no command is printed and a note
says so (the changes stay listed)."""

from __future__ import annotations

import shlex

import pytest
from launch.test_recommend import BAD_LAUNCH, SEED_AFTER
from recommend_cli import clean_recommend_env, recommend_json  # noqa: F401 (the autouse fixture)

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.recommend import CannotEdit, _rewrite_string, edit_command

INNER = shlex.join(BAD_LAUNCH)
DROPPED = ("--enable-torch-symm-mem", "--enable-flashinfer-allreduce-fusion", "--disable-cuda-graph")


def launch_args(argv: list[str]) -> list[str]:
    """The SGLang arguments of the launch the gate's reader finds in argv."""
    argv, env = gate.split_env_prefix(argv, {})
    entry, args, _ = gate.find_launch(argv, load([], env={}).launch, env)
    assert entry is not None, argv
    return args


@pytest.mark.parametrize(
    "string",
    [
        INNER,
        f"cd /srv && {INNER} 2>&1 | tee log",
        f"export A=1; {INNER} # a comment",
        f"{INNER} &\nwait",
        f"source /venv/bin/activate && exec {INNER} > log 2>&1",
    ],
)
@pytest.mark.parametrize("shell", [["bash", "-c"], ["sh", "-lc"], ["nohup", "bash", "-o", "pipefail", "-c"]])
def test_the_advice_lands_in_the_launch(shell: list[str], string: str) -> None:
    rc, doc = recommend_json("--facts", str(SEED_AFTER), "--", *shell, string)
    assert rc == 1 and doc["command"], doc.get("notes")
    assert doc["command"][: len(shell)] == shell and len(doc["command"]) == len(shell) + 1  # nothing after the string
    args = launch_args(doc["command"])
    assert not set(DROPPED) & set(args), args
    assert args[args.index("--attention-backend") + 1] == "triton"
    assert args[:4] == ["--model-path", "/models/m", "--tp", "8"]  # the user's own arguments kept, in order
    for tail in ("2>&1 | tee log", "# a comment", "&\nwait", "> log 2>&1"):
        if tail in string:
            assert doc["command"][-1].endswith(tail), doc["command"][-1]


def test_the_model_flags_land_in_the_string_too() -> None:
    # what the model needs that the launch lacks (recommend's model_flags) is added inside the string as well
    mapping = load([], env={}).launch
    command = ["bash", "-c", "cd /srv && python -m sglang.launch_server --tp 8 2>&1 | tee log"]
    extra = [("--context-length", "4096", "the model's own limit", None)]
    argv, _env, diff = edit_command(command, {}, [], [], {}, mapping, extra)
    assert len(argv) == 3 and argv[2].endswith("| tee log"), argv
    assert launch_args(argv) == ["--tp", "8", "--context-length", "4096"]
    assert [(c.action, c.name) for c in diff] == [("add", "--context-length")]


def test_a_string_that_cannot_be_rewritten_is_said_not_printed() -> None:
    mapping = load([], env={}).launch
    argv = ["bash", "-c", "python -m sglang.launch_server --tp 8 --enable-torch-symm-mem"]
    new = ["--tp", "8", "--attention-backend", "triton"]
    line = _rewrite_string(argv, 2, ["--tp", "8", "--enable-torch-symm-mem"], new, mapping)
    assert launch_args(line) == new
    odd = ["bash", "-c", "python -m sglang.launch_server --tp 8 --enable-torch-symm-m'em'"]
    with pytest.raises(CannotEdit):  # a word written in pieces: not found as one word
        _rewrite_string(odd, 2, ["--tp", "8", "--enable-torch-symm-mem"], ["--tp", "8"], mapping)
    _rc, doc = recommend_json("--facts", str(SEED_AFTER), "--", *odd)
    assert doc["command"] == [] and any("no launch written" in n for n in doc["notes"]), doc["notes"]
    assert any(c["name"] == "--enable-torch-symm-mem" and c["action"] == "drop" for c in doc["diff"])


def test_a_direct_launch_is_edited_as_before() -> None:
    _rc, doc = recommend_json("--facts", str(SEED_AFTER), "--", *BAD_LAUNCH)
    assert doc["command"][:7] == BAD_LAUNCH[:7] and doc["command"][-2:] == ["--attention-backend", "triton"]
