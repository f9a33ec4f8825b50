"""Nothing secret or terminal-driving from a probed box leaves it, whatever the verb and format.

tests/test_secrets_every_verb.py feeds saved documents back; here the probes read a fake box live, with a secret
(marker SEKRIT) and an escape sequence planted in every input such a box can carry: the environment (allow-listed
variables, by value), a package's METADATA (its version, read and quoted by a reason), a path (the site directory
that holds a broken dist-info, which a probe's reason names), the driver (a pynvml whose start fails with a message,
then an nvidia-smi whose GPU name holds them) and a server log (triage). Every output of every verb and format,
stdout, stderr and the files written (--output, --plan-facts), must hold none of them.

Before stackcheck.redact.public_document was applied in stackcheck.render's registries, the probe's reasons and
the facts quoted the secrets as read (audit json: 56 lines)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OSC = "\x1b]0;PWN\x07\u202e\x9b"
CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e")
SECRETS = ("SEKRIT",)


def _fake_box(tmp: Path) -> tuple[dict[str, str], Path]:
    """The environment of a process that audits the fake box, and a server log from it."""
    site = tmp / "hf_SEKRITpath0123" / "site"
    (site / "sglang-0.5.9.dist-info").mkdir(parents=True)  # no METADATA: the reason names this path
    torch = site / "torch-2.9.1.dist-info"
    torch.mkdir()
    (torch / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: torch\nVersion: 2.9.1{OSC}+ghp_SEKRITmeta0123456\n", encoding="utf-8"
    )
    fake = tmp / "fakenvml"
    fake.mkdir()
    (fake / "pynvml.py").write_text(  # NVML cannot start, and says so with a secret and an escape
        "class NVMLError(Exception):\n    value = 999\n\n\n"
        "def nvmlInit(*args, **kwargs):\n"
        "    raise NVMLError("
        "'driver/library mismatch: api_key=SEKRITnvml \\x1b]0;PWN\\x07 ghp_SEKRITnvml0123456')\n\n\n"
        "nvmlInitWithFlags = nvmlInit\n",
        encoding="utf-8",
    )
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(  # the fallback: one GPU whose name carries a token and an escape sequence
        "#!/bin/sh\n"
        "printf '0, NVIDIA H200 ghp_SEKRITgpu0123456 \\033]0;PWN\\007, GPU-1, 00000000:18:00.0, 9.0, 143771, "
        "Enabled, 580.95.05\\n'\n",
        encoding="utf-8",
    )
    smi.chmod(0o755)
    log = tmp / "server.log"
    log.write_text(
        "[2026-12-01] server_args=ServerArgs(model_path='m', api_key='SEKRITlogkey', hf_token='hf_SEKRITlog0123')\n"
        f"launch: python -m sglang.launch_server --api-key SEKRITflag --model-path https://u:SEKRITurl@h/m {OSC}\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
        encoding="utf-8",
    )
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "STACKCHECK_", "NCCL_"))}
    env = {
        **base,
        "PATH": f"{bin_dir}{os.pathsep}{base.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(fake), str(site)]),
        "STACKCHECK_CACHE_DIR": str(tmp / "cache"),
        "HF_TOKEN": "hf_SEKRITenv0123",
        "NCCL_DEBUG": f"INFO{OSC} https://u:SEKRITenvurl@mirror.example/",
        "NCCL_SOCKET_IFNAME": f"eth0{OSC}",
        "SGLANG_HOST_IP": "sk-SEKRITenvvalue0123",
    }
    return env, log


def _clean(data: bytes, where: str) -> None:
    text = data.decode("utf-8", errors="backslashreplace")
    for secret in SECRETS:
        i = text.find(secret)
        assert i < 0, (where, text[max(0, i - 200) : i + 40])
    for raw in CONTROLS:
        i = text.find(raw)
        assert i < 0, (where, repr(raw), text[max(0, i - 100) : i + 20])


LAUNCH = ["--", "python", "-m", "sglang.launch_server", "--model-path", "m", "--api-key", "SEKRITgatekey"]
VERBS = [
    *(["audit", "--format", fmt] for fmt in ("text", "json", "markdown", "prometheus", "nfd")),
    *(["probe", "--format", fmt] for fmt in ("text", "json", "markdown")),
    *(["plan", "--format", fmt] for fmt in ("text", "json", "markdown")),
    *(["gate", "--dry-run", "--format", fmt, *LAUNCH] for fmt in ("text", "json")),
    *(["recommend", "--format", fmt, "--plan-facts", "{tmp}/after.json"] for fmt in ("text", "json", "shell")),
    ["audit", "--strict", "--format", "json"],  # a failed probe: exit 3, its reasons on stderr
    ["triage", "{log}"],
    ["triage", "--format", "json", "{log}"],
]


def _verb_id(verb: list[str]) -> str:
    return "-".join(w.strip("-") for w in verb[:4] if w.strip("-") and not w.startswith("{"))


@pytest.mark.parametrize("verb", VERBS, ids=_verb_id)
def test_a_probed_box_never_shows_its_secrets_or_controls(tmp_path: Path, verb: list[str]) -> None:
    env, log = _fake_box(tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)).replace("{log}", str(log)) for a in verb]
    written = [tmp_path / "out.txt"]
    if verb[0] not in ("gate", "triage"):
        args += ["--output", str(written[0])]
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", *args], capture_output=True, timeout=240, env=env, cwd=tmp_path
    )
    assert proc.returncode in (0, 1, 3), proc.stderr.decode(errors="replace")[-2000:]
    assert b"Traceback" not in proc.stderr
    _clean(proc.stdout, "stdout")
    _clean(proc.stderr, "stderr")
    written += [tmp_path / "after.json"] if "--plan-facts" in verb else []
    for path in written:
        if path.exists():
            _clean(path.read_bytes(), str(path))
    if verb[0] in ("audit", "probe") and verb[-1] in ("text", "json"):
        shown = written[0].read_text(encoding="utf-8")
        # the inputs were read (the test plants where the probes look), and shown masked
        assert "hf_***" in shown and "ghp_***" in shown, shown[:2000]
