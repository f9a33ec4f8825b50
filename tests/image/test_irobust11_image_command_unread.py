"""irobust11: `gate --image` judged a command the container does not run. An Entrypoint that is not a list of strings
([1]) was dropped with a warning and the Cmd judged alone; a Cmd longer than 4096 words was cut there, so a flag
after its 4096th word (one SGLang refuses: the server exits) was never seen. The command a container runs is not
known then: the gate stops with a one-line bad-input error (exit 2); so does an Env with an entry that is not a
string (["PATH=...", 5], dropped before). A gated command replaces the Cmd, so a Cmd not read does not matter to
it. Images written here with tests/imagebuild.py (no upstream file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import clean_env, run_stackcheck, scrubbed_environ
from imagebuild import docker_save, layer_tar

from stackcheck.image import read_image_info

__all__ = ["scrubbed_environ"]

SITE = "opt/serve/lib/python3.12/site-packages"
HOST = ["--assume-gpu", "9.0x8", "--assume-driver", "580.95.05"]
LAUNCH = ["/opt/serve/bin/python", "-m", "sglang.launch_server", "--model-path", "/models/m", "--tp", "8"]
# 4096 words that SGLang reads, then one it refuses
LONG = [*LAUNCH, "--trust-remote-code", *(["--tp", "8"] * 2044), "--no-such-flag"]


def _image(tmp: Path, container: dict[str, Any], env: list[Any] | None = None) -> Path:
    files: list[tuple[Any, ...]] = [
        ("file", "etc/debian_version", b"12.5\n"),
        ("file", "usr/bin/python3.12", b"\x7fELF", 0o755),
        ("symlink", "opt/serve/bin/python", "/usr/bin/python3.12"),
        ("file", "opt/serve/pyvenv.cfg", b"home = /usr/bin\nversion = 3.12.3\n"),
        ("file", f"{SITE}/sglang-0.5.9.dist-info/METADATA", b"Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.9\n"),
    ]
    return docker_save(tmp / "serve.tar", [layer_tar(files)], env=env or ["PATH=/usr/bin:/bin"], container=container)


def _gate(image: Path, *command: str) -> Any:
    return run_stackcheck("gate", "--format", "json", *HOST, "--image", str(image), *(["--", *command] if command
                          else []), env=clean_env("VIRTUAL_ENV", "CONDA_PREFIX"), timeout=180)  # fmt: skip


@pytest.mark.parametrize(
    ("container", "key"),
    [
        ({"Entrypoint": [1], "Cmd": LAUNCH}, "Entrypoint"),
        ({"Entrypoint": ["/bin/sh", None], "Cmd": LAUNCH}, "Entrypoint"),
        ({"Entrypoint": None, "Cmd": LONG}, "Cmd"),
        ({"Entrypoint": LONG, "Cmd": None}, "Entrypoint"),
        ({"Entrypoint": ["/usr/bin/env"], "Cmd": {"a": 1}}, "Cmd"),
    ],
    ids=["entry-number", "entry-null", "cmd-long", "entry-long", "cmd-object"],
)
def test_a_command_not_read_whole_is_bad_input(tmp_path: Path, container: dict[str, Any], key: str) -> None:
    image = _image(tmp_path, container)
    assert key in read_image_info(str(image)).unread
    r = _gate(image)
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"config: {key}" in lines[0] and "Traceback" not in r.stderr, r.stderr


def test_a_cmd_the_gated_command_replaces_is_not_needed(tmp_path: Path) -> None:
    image = _image(tmp_path, {"Entrypoint": None, "Cmd": LONG})
    r = _gate(image, *LAUNCH)
    assert r.returncode in (0, 1), r.stderr
    assert json.loads(r.stdout)["decision"] in ("allow", "refuse")


def test_a_command_of_4096_words_is_read_whole(tmp_path: Path) -> None:
    image = _image(tmp_path, {"Entrypoint": None, "Cmd": LONG[:-1]})
    assert read_image_info(str(image)).unread == {}


def test_an_env_with_an_entry_not_a_string_is_bad_input_even_with_a_command(tmp_path: Path) -> None:
    image = _image(tmp_path, {"Entrypoint": None, "Cmd": LAUNCH}, env=["PATH=/usr/bin:/bin", 5])
    assert "Env" in read_image_info(str(image)).unread
    r = _gate(image, *LAUNCH)
    assert r.returncode == 2 and "config: Env" in r.stderr and "Traceback" not in r.stderr, r.stderr
