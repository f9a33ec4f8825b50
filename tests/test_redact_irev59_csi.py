"""irev59 (review of the sixth 2026-12-05 session, hunting leaks): a token right after a terminal colour sequence
(`\\x1b[31mhf_...`, a coloured log line; `\\x1b[1;31m`, `\\x1b[38;5;196m`) was not masked. The credential shapes start
where no letter or digit comes before, and a colour sequence ends in a letter ('m'), so `stackcheck triage` printed the
token whole in the root cause of a log whose line coloured it (text and JSON), and redact_text left it in any message.
Each test fails before: a token after such a sequence, raw or as terminal_safe and repr() write it, is masked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackcheck.cli import main
from stackcheck.redact import looks_secret, redact_text, terminal_safe

TOKEN = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


@pytest.mark.parametrize("sgr", ["\x1b[31m", "\x1b[1;31m", "\x1b[38;5;196m", "\x1b[0m", "\x9b31m"])
def test_a_token_after_a_colour_sequence_is_masked(sgr: str) -> None:
    for text in (f"{sgr}{TOKEN}\x1b[0m", terminal_safe(f"key {sgr}{TOKEN}"), repr(f"{sgr}{TOKEN}")):
        out = redact_text(text)
        assert TOKEN not in out and "hf_***" in out, (text, out)
    assert looks_secret(f"{sgr}{TOKEN}")


def test_the_sequences_and_the_words_around_them_are_kept() -> None:
    assert redact_text("\x1b[31mhf_quant_config.json\x1b[0m ok") == "\x1b[31mhf_quant_config.json\x1b[0m ok"
    assert redact_text(f"\x1b[1;32mINFO\x1b[0m {TOKEN}") == "\x1b[1;32mINFO\x1b[0m hf_***"


def test_triage_of_a_coloured_log_masks_the_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "INFO starting\n"
        f"/usr/bin/ld: cannot find -lcudart: No such file or directory \x1b[31m{TOKEN}\x1b[0m\n"
        "collect2: error: ld returned 1 exit status\n"
    )
    for fmt in ("text", "json"):
        assert main(["triage", str(log), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert TOKEN not in out and "link-no-libcudart-so" in out, out
    doc = json.loads(out)
    assert "hf_***" in doc["root_cause"]["exception"]
