"""irev76 (review of the shell-string reading beside iallow1's walk and ireal1's expansion unknowns): in a shell's
command string the gate reads the `export`, `unset`, `declare -x` and assignments before the launch, and passed every
other command over as one run in a child. But `source FILE` / `. FILE`, `eval STRING`, `set -a` and the shell
functions of environment tools (`module load`, `conda activate`, ...) run in the shell itself and set the environment
the launch starts with: `bash -c 'source /opt/other/bin/activate && python -m sglang.launch_server ...'` (another
PATH, so another interpreter) or `bash -c '. ./env.sh; python ...'` was judged with the environment before the string
(a false pass for every rule reading it). Now such a command before the launch is an unknown env problem."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = "python3 -m sglang.launch_server --model-path m --tp 2"
SECRET = "Zq8f3kLm9Pw2Rt7Yv4Bn6Hc1Xa"  # (made up: a random-looking word, as redact_value judges one)


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _problems(text: str, mapping: Any) -> list[gate.Problem]:
    d = gate.derive(["bash", "-c", text], mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, (text, d.entrypoint)
    return [p for p in d.problems if p.status != "note"]


@pytest.mark.parametrize(
    "text",
    [f"source /opt/other/bin/activate && {LAUNCH}",
     f". ./env.sh; {LAUNCH}",
     f"module load cuda/12.4 && {LAUNCH}",
     f"set -a; CUDA_VISIBLE_DEVICES=0; {LAUNCH}",
     f"set -o allexport; A=1; {LAUNCH}",
     f'eval "$(conda shell.bash hook)" && conda activate sg && {LAUNCH}',
     f"if true; then source x; fi; exec {LAUNCH}"],
)  # fmt: skip
def test_a_command_that_sets_the_shells_environment_before_the_launch_is_unknown(text: str, mapping: Any) -> None:
    # fails before: no problem (the launch judged with the environment before the string)
    got = [(p.subject, p.status) for p in _problems(text, mapping)]
    assert ("env", "unknown") in got, (text, got)


@pytest.mark.parametrize(
    "text",
    [f"set -eux; {LAUNCH}",
     f"export A=1; cd /tmp && exec {LAUNCH}",
     f"pip list >/dev/null; {LAUNCH} 2>&1 | tee log",
     f"{LAUNCH}; source after.sh"],
)  # fmt: skip
def test_other_commands_before_or_after_the_launch_are_judged_as_before(text: str, mapping: Any) -> None:
    assert _problems(text, mapping) == [], text


def test_the_message_names_the_command_without_a_secret(mapping: Any) -> None:
    for text, shown in ((f"source /x/{SECRET}.sh && {LAUNCH}", "`source`"),
                        (f'eval "export HF_TOKEN=hf_{SECRET}"; {LAUNCH}', "`eval`"),
                        (f"module load cuda/{SECRET}; {LAUNCH}", "`module load`")):  # fmt: skip
        message = next(p.message for p in _problems(text, mapping) if p.subject == "env")
        assert shown in message and "fail closed" in message and SECRET not in message, message
