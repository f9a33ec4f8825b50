"""irev47: a secret right after a backslash escape is masked, and the gate's typed-value refusal (igap15) quotes the
value as the command line shows it.

repr() and terminal_safe write a control character as `\\x07`, `\\u202e`, `\\n`: the token after it then follows a
letter or digit, and the token shapes (which start a word) missed it. typed_value_problems quotes the rejected value
with repr() in its message and raw as `observed`: `--ep-size $'\\x07hf_...'` showed the token in the message, and a
random-looking value (a password given to the wrong flag), masked in the decision's command, was shown in both.
A usage error quoting such a value with repr() (`--tp $'\\x07hf_...'`) showed the token on stderr too.
On the parent (7e0220f) 11 of these 12 fail (the word test passes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

TOKEN = "hf_ABCDEFGH12345678"


@pytest.mark.parametrize(
    "text",
    [
        repr("\x07" + TOKEN),
        repr("\u202e" + TOKEN),
        repr("\n" + TOKEN),
        repr("\U0010fffe" + TOKEN),
        "\\x1b]0;t\\x07ghp_ABCDEFGH12345678",
        repr("\ttoken=s3cr3tvalue"),
        repr("\x07Bearer s3cr3tvalue"),
        repr("\x1bAuthorization: s3cr3tvalue"),
    ],
)
def test_a_token_after_an_escape_is_masked(text: str) -> None:
    from stackcheck.redact import public_document, redact_text

    secret = "s3cr3tvalue" if "s3cr3tvalue" in text else text.rpartition("_")[2]
    assert secret not in redact_text(text), redact_text(text)
    assert secret not in json.dumps(public_document({"message": text}))


def test_a_word_is_not_taken_for_an_escape() -> None:
    from stackcheck.redact import redact_text

    assert redact_text(TOKEN) == "hf_***"  # (as before)
    assert redact_text("x07ahf_ABCDEFGH12345678") == "x07ahf_ABCDEFGH12345678"  # a letter, not an escape, before it
    # a digit before it: masked since irobust (a token straight after a version number, `2.27.7hf_...`), escape or not
    assert redact_text("x07hf_ABCDEFGH12345678") == "x07hf_***"


@pytest.mark.parametrize(
    ("flags", "secret"),
    [
        (("--ep-size", "\x07" + TOKEN), "ABCDEFGH12345678"),
        (("--watchdog-timeout", "Zx9$kLm2#pQ8!vR4x"), "Zx9$kLm2#pQ8!vR4x"),  # masked in the command line too
    ],
)
def test_the_typed_value_refusal_masks_the_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...], secret: str
) -> None:
    from gate_cli import LLAMA3, gate_tp8, model_dir, reason_status, release_box

    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)
    doc = gate_tp8(release_box(tmp_path, "0.5.23", "9.0"), model_dir(tmp_path, "m", LLAMA3), *flags)
    assert reason_status(doc).get(flags[0]) == ("blocked", "crash"), reason_status(doc)  # still refused
    assert secret not in json.dumps(doc)


def test_a_usage_error_quoting_the_value_masks_it(capsys: pytest.CaptureFixture[str]) -> None:
    from gate_cli import H200_NEWEST

    from stackcheck.cli import main

    line = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "\x07" + TOKEN]
    assert main(["gate", "--facts", str(H200_NEWEST), "--dry-run", "--", *line]) == 2
    err = capsys.readouterr().err
    assert "--tp" in err and "ABCDEFGH12345678" not in err and "\x07" not in err, err
