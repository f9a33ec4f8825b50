"""irobust5: secrets that left through the masking (redact.redact_text, which every verb's output goes through).

- a private key printed on one line (its newlines written `\\n`, as a JSON dump of a service-account file or a config
  writes them, or joined by spaces): only its `-----BEGIN ... PRIVATE KEY-----` marker was masked, the key's body was
  shown; now everything up to its END marker (or the end of the text) is masked;
- Azure connection strings (`AccountKey=...;`, `SharedAccessKey=...`): their keys are camel case, with no `_key` the
  assignment pattern reads; now masked.
Test values are made up here (random letters), never real credentials."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import run_stackcheck

from stackcheck.redact import redact_text

BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Qx9Zr"
AZURE = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3A="


@pytest.mark.parametrize(
    "text",
    [f"key -----BEGIN PRIVATE KEY-----\\n{BODY}\\nAbCd\\n-----END PRIVATE KEY-----\\n",
     f"-----BEGIN RSA PRIVATE KEY----- {BODY} -----END RSA PRIVATE KEY-----",
     f"-----BEGIN OPENSSH PRIVATE KEY-----\n{BODY}\n-----END OPENSSH PRIVATE KEY-----\n",
     f"-----BEGIN EC PRIVATE KEY----- {BODY}",
     f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURE};EndpointSuffix=core.windows.net",
     f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={AZURE}"],
)  # fmt: skip
def test_the_secret_is_masked(text: str) -> None:
    # fails before: the key's body and the Azure keys were kept
    out = redact_text(text)
    assert BODY[:16] not in out and AZURE[:16] not in out, out


def test_what_is_around_them_is_kept() -> None:
    out = redact_text(f"a -----BEGIN PRIVATE KEY-----\\n{BODY}\\n-----END PRIVATE KEY----- b")
    assert out.startswith("a -----BEGIN") and out.endswith(" b"), out
    assert redact_text("-----BEGIN CERTIFICATE----- MIIBxyz") == "-----BEGIN CERTIFICATE----- MIIBxyz"
    assert "SharedAccessKeyName=Root" in redact_text("SharedAccessKeyName=Root;x=1")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_triage_does_not_show_them(tmp_path: Path, fmt: str) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "/srv/sglang/srt/entrypoints/http_server.py", line 10, in <module>\n'
        f"RuntimeError: CUDA error: out of memory; config -----BEGIN PRIVATE KEY-----\\n{BODY}\\n "
        f"AccountKey={AZURE};\n"
    )
    proc = run_stackcheck("triage", str(log), "--format", fmt, timeout=120)
    assert proc.returncode == 0 and "out of memory" in proc.stdout, proc.stderr[-300:]
    assert BODY[:16] not in proc.stdout + proc.stderr and AZURE[:16] not in proc.stdout + proc.stderr


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_triage_masks_the_body_lines_of_a_key_in_an_exception_message(tmp_path: Path, fmt: str) -> None:
    # an exception whose message quotes a key over several lines: each body line was kept (json "message"), since
    # none of them alone is a secret to the masking (fails before: both body lines in the json document)
    second = "Kx7Lm2Np9Qr4St6Uv8Wx1Yz3Ab5Cd7Ef9Gh1Ij3Kl5Mn7Op9Qr1St3Uv5Wx7Yz9Ab"
    log = tmp_path / "server.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "/srv/sglang/srt/entrypoints/http_server.py", line 10, in <module>\n'
        f"ValueError: could not parse key -----BEGIN PRIVATE KEY-----\n{BODY}\n{second}\n-----END PRIVATE KEY-----\n"
        "after the key\n"
    )
    proc = run_stackcheck("triage", str(log), "--format", fmt, timeout=120)
    assert proc.returncode == 0 and "could not parse key" in proc.stdout, proc.stderr[-300:]
    assert BODY[:16] not in proc.stdout and second[:16] not in proc.stdout, proc.stdout
    if fmt == "json":
        assert "after the key" in proc.stdout
