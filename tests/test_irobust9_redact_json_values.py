"""irobust9: a secret-named key whose value is a JSON array or object (`--hicache-storage-backend-extra-config
'{"password": ["..."]}'`, `{"secret": {"value": "..."}}`, `{"auth": ["user", "..."]}`). The assignment pattern took
the value to be its first run of characters up to a quote: the `[` or `{` alone was masked and the secret after it
was shown in the gate's JSON decision (its `command`) and in every text redact_text masks. The whole bracketed
value is masked now (up to its first closing bracket, at most 1,000 characters, so a long line stays linear)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from cli_process import ROOT, run_stackcheck

from stackcheck.redact import redact_argv, redact_text

SECRET = "zq7Plainvalue42x"
SHAPES = [
    '{"password": ["%s"]}',
    '{"password":  [ "%s" ] }',
    '{"auth": ["user", "%s"]}',
    '{"secret": {"v": "%s"}}',
    '{"credentials": {"user": "u", "value": "%s"}}',
    '{"api_key": [["a", "%s"]]}',
    '{\\"token\\": [\\"%s\\"]}',
    "password: [%s]",
    "token=[%s, x]",
]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_bracketed_secret_value_is_masked(shape: str) -> None:
    text = shape % SECRET
    assert SECRET not in redact_text(text)
    argv = ["python", "-m", "sglang.launch_server", "--hicache-storage-backend-extra-config", text]
    assert SECRET not in " ".join(redact_argv(argv))


@pytest.mark.parametrize(
    "text", ['{"max_tokens": [1, 2]}', '{"tokenizer": ["a"]}', '{"keys": [1]}', "[token] is [x]", '{"token": null}']
)
def test_values_of_other_keys_stay(text: str) -> None:
    assert redact_text(text) == text


def test_a_long_line_of_unclosed_brackets_stays_linear() -> None:
    line = "token:[," * 8000 + "x"
    start = time.perf_counter()
    redact_text(line)
    assert time.perf_counter() - start < 2.0


def test_the_gate_json_decision_shows_no_bracketed_secret(tmp_path: Path) -> None:
    config = '{"backend": "s3", "auth": ["user", "SECRET"], "secret": {"value": "SECRET"}}'.replace("SECRET", SECRET)
    got = run_stackcheck(
        "gate", "--facts", str(ROOT / "examples/facts/h200-cu130.json"), "--dry-run", "--format", "json", "--",
        "python", "-m", "sglang.launch_server", "--model-path", str(tmp_path),
        "--hicache-storage-backend-extra-config", config,
    )  # fmt: skip
    assert got.returncode in (0, 1), got.stderr
    assert SECRET not in got.stdout + got.stderr
