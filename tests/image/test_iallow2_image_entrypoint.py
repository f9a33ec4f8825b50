"""iallow2: `stackcheck gate --image IMG -- COMMAND` judged COMMAND alone, as if the container ran it, but `docker run
IMG COMMAND` runs the image's Entrypoint with COMMAND as its arguments (docker run(1): COMMAND overrides CMD, never
ENTRYPOINT). An image whose Entrypoint is `python -m sglang.launch_server` gated with `-- --model-path M --tp 4` read
no launch at all (allowed on nothing), and one whose Entrypoint is a start script the gate cannot read was judged as
if the script were not there. Now the Entrypoint goes first (an NVIDIA wrapper script is read as before; any other
script stays unknown), and _image_launch takes an Entrypoint that replaces the image's as `docker run
--entrypoint` does ('' drops it; the command line has no such option yet)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import clean_env, run_stackcheck
from imagebuild import docker_save, layer_tar

SITE = "opt/serve/lib/python3.12/site-packages"
HOST = ["--assume-gpu", "9.0x8", "--assume-driver", "580.95.05"]
PYTHON = "/opt/serve/bin/python"
START = b'#!/bin/bash\nset -e\ncd /srv && ./prepare\nexec "$@"\n'  # (a start script of no shape the gate reads)


def _image(tmp_path: Path, name: str, entrypoint: list[str], cmd: list[str]) -> Path:
    files: list[tuple[Any, ...]] = [
        ("file", "etc/debian_version", b"12.5\n"),
        ("file", "usr/bin/python3.12", b"\x7fELF", 0o755),
        ("symlink", "usr/bin/python3", "python3.12"),
        ("file", "usr/lib/python3.12/os.py", b""),
        ("file", "opt/serve/pyvenv.cfg", b"home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n"),
        ("symlink", "opt/serve/bin/python", "/usr/bin/python3.12"),
        ("file", f"{SITE}/sglang-0.5.9.dist-info/METADATA", b"Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.9\n"),
        ("file", "srv/start.sh", START, 0o755),
    ]
    container = {"Entrypoint": entrypoint, "Cmd": cmd}
    return docker_save(tmp_path / name, [layer_tar(files)], env=["PATH=/usr/bin:/bin"], container=container)


def _gate(image: Path, *rest: str) -> tuple[int, dict[str, Any], str]:
    proc = run_stackcheck("gate", "--format", "json", *HOST, "--image", str(image), *rest,
                          env=clean_env("VIRTUAL_ENV", "CONDA_PREFIX"), timeout=180)  # fmt: skip
    doc: dict[str, Any] = json.loads(proc.stdout) if proc.returncode in (0, 1) else {}
    return proc.returncode, doc, proc.stderr


def _problems(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p.get("subject"), p.get("status")) for p in doc["derived"].get("problems") or []]


def test_the_given_command_runs_as_the_entrypoints_arguments(tmp_path: Path) -> None:
    image = _image(tmp_path, "serve.tar", [PYTHON, "-m", "sglang.launch_server"], ["--model-path", "/models/m"])
    rc, doc, err = _gate(image, "--", "--model-path", "/models/m", "--tp", "4")
    assert rc in (0, 1), err
    # fails before: no launch read (the command `--model-path ...` alone), entrypoint None
    assert doc["derived"]["entrypoint"] == "launch-server" and doc["derived"]["launch"]["tp"] == 4, doc["derived"]
    assert "arguments of the image's Entrypoint" in doc.get("note", ""), doc.get("note")


def test_a_start_script_entrypoint_before_the_given_command_is_unknown(tmp_path: Path) -> None:
    image = _image(tmp_path, "script.tar", ["/srv/start.sh"], ["bash"])
    launch = [PYTHON, "-m", "sglang.launch_server", "--model-path", "/models/m", "--tp", "8"]
    rc, doc, err = _gate(image, "--", *launch)
    assert rc == 1, err
    assert ("start.sh", "unknown") in _problems(doc), _problems(doc)  # fails before: judged as if it were absent


def test_image_launch_replaces_the_entrypoint_as_docker_does(tmp_path: Path) -> None:
    # (`docker run --entrypoint PROG IMG ARGS`: PROG then ARGS, the image's Cmd dropped; `--entrypoint ''`: ARGS alone;
    # the gate's parser has no --entrypoint yet: _image_launch takes it, for the command line to hand it in)
    from stackcheck.commands.gate import _image_launch

    image = _image(tmp_path, "other.tar", ["/srv/start.sh"], ["bash"])
    assert _image_launch(str(image), None)[1] == ["/srv/start.sh", "bash"]
    assert _image_launch(str(image), None, ["python3", "x"])[1] == ["/srv/start.sh", "python3", "x"]
    assert _image_launch(str(image), None, ["-m", "x"], PYTHON)[1] == [PYTHON, "-m", "x"]
    assert _image_launch(str(image), None, ["python3", "x"], "")[1] == ["python3", "x"]
    assert _image_launch(str(image), None, None, PYTHON)[1] == [PYTHON]
