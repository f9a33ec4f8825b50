"""A launch inside a shell string (`sh -c '...'`, a Kubernetes `command: [sh, -c]` with its launch in `args`) whose
option values are shell expansions: `--tp $TP`, `--nnodes $(LWS_GROUP_SIZE)` (LeaderWorkerSet's variables),
`--port ${PORT}`. The shell expands them when it runs; the gate read the words unexpanded and stopped with a usage
error (exit status 2, 'expected an integer'), as if the command were malformed (ireal1: a false fail of a common
Kubernetes form). Now unknown: refused unless --allow-unknown, the reason naming the expansion."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import run_stackcheck, scrubbed_environ

__all__ = ["scrubbed_environ"]

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
LAUNCH = "python3 -m sglang.launch_server --model-path /models/llm --attention-backend fa3"


def gate(*argv: str, allow_unknown: bool = False) -> tuple[int, str, str]:
    extra = ["--allow-unknown"] if allow_unknown else []
    r = run_stackcheck("gate", "--facts", str(H200), "--dry-run", *extra, "--", *argv)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize(
    ("shell", "tail", "flag"),
    [
        ("sh", "--tp $TP", "--tp-size"),
        ("bash", "--tp 2 --nnodes $(LWS_GROUP_SIZE) --node-rank $(LWS_WORKER_INDEX)", "--nnodes"),
        ("sh", "--port ${PORT}", "--port"),
        ("bash", '--mem-fraction-static "$MEM"', "--mem-fraction-static"),
        ("sh", "--tp `nproc`", "--tp-size"),
        ("sh", "--max-running-requests $N", "--max-running-requests"),  # (a flag launch.json does not list)
    ],
)
def test_an_expanded_value_in_a_shell_string_is_unknown(shell: str, tail: str, flag: str) -> None:
    code, out, err = gate(shell, "-c", f"{LAUNCH} {tail}")
    assert code == 1, err  # a refusal, not a usage error
    assert "expected an" not in err
    line = next(x for x in out.splitlines() if x.startswith(f"REFUSE {flag} "))
    assert "unknown" in line and "expands it" in line
    code, out, err = gate(shell, "-c", f"{LAUNCH} {tail}", allow_unknown=True)
    assert code == 0, out + err


def test_a_literal_word_outside_a_shell_is_still_a_bad_value() -> None:
    # no shell runs: SGLang's argparse gets '$TP' itself and rejects it
    code, _, err = gate(*LAUNCH.split(), "--tp", "$TP")
    assert code == 2 and "expected an integer" in err
