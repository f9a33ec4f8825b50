"""`gate --image IMAGE -- COMMAND` judges the command where the image's containers start it: the config's WorkingDir
(irobust, found while trying `gate --cwd` against the other targets).

The OCI image spec's config.md: WorkingDir "Sets the current working directory of the entrypoint process in the
container. This value acts as a default and may be replaced by a working directory specified when creating a
container": a command given in place of Entrypoint + Cmd (`docker run IMAGE python -m sglang.launch_server`) starts
there too. The gate used WorkingDir only for the image's own command and took "/" for a given one, so an SGLang
checkout in WorkingDir (/srv/sglang, first on sys.path for `python -m`) was missed and the launch was judged as the
installed release. `--cwd` names a directory of this host, which the container does not see: with --image it is a
usage error (exit 2, one line), as with --root."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import clean_env, run_stackcheck
from imagebuild import docker_save, layer_tar

SITE = "opt/serve/lib/python3.12/site-packages"
HOST = ["--assume-gpu", "9.0x8", "--assume-driver", "580.95.05"]
LAUNCH = ["/opt/serve/bin/python", "-m", "sglang.launch_server", "--model-path", "/models/m"]


def run_cli(*args: str) -> Any:
    return run_stackcheck(*args, env=clean_env("VIRTUAL_ENV", "CONDA_PREFIX"), timeout=180)


def _image(tmp_path: Path) -> Path:
    """A Debian base with Python 3.12, a venv at /opt/serve with SGLang 0.5.9 installed, and a 0.5.3 source tree's
    sglang/ in WorkingDir /srv (the image tests' shapes: tests/image/test_image_cli.py)."""
    base = [
        ("file", "etc/debian_version", b"12.5\n"),
        ("file", "etc/os-release", b'ID=debian\nVERSION_ID="12"\n'),
        ("file", "usr/bin/python3.12", b"\x7fELF", 0o755),
        ("symlink", "usr/bin/python3", "python3.12"),
        ("file", "usr/lib/python3.12/os.py", b""),
    ]
    meta = b"Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.9\n"
    serve = [
        ("file", "opt/serve/pyvenv.cfg", b"home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n"),
        ("symlink", "opt/serve/bin/python", "/usr/bin/python3.12"),
        ("file", f"{SITE}/sglang-0.5.9.dist-info/METADATA", meta),
        ("file", "srv/sglang/__init__.py", b""),
        ("file", "srv/sglang/_version.py", b"__version__ = version = '0.5.3'\n"),
    ]
    container = {"Entrypoint": LAUNCH[:3], "Cmd": LAUNCH[3:], "WorkingDir": "/srv"}
    layers = [layer_tar(base), layer_tar(serve)]
    return docker_save(tmp_path / "shadow.tar", layers, env=["PATH=/usr/local/bin:/usr/bin:/bin"], container=container)


def _decision(*args: str) -> dict[str, object]:
    proc = run_cli("gate", "--format", "json", *HOST, *args)
    assert proc.returncode in (0, 1), proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def test_a_given_command_starts_in_the_images_workdir(tmp_path: Path) -> None:
    image = _image(tmp_path)
    own = _decision("--image", str(image))  # the image's own command: WorkingDir (as before)
    assert own["sglang"] == "0.5.3" and "/srv/sglang" in str(own["shadowed"]), own.get("shadowed")
    # the same launch given after `--`: judged as 0.5.9 from "/" before
    given = _decision("--image", str(image), "--", *LAUNCH)
    assert given["sglang"] == "0.5.3", given.get("sglang")
    shadowed = given["shadowed"]
    assert isinstance(shadowed, list) and len(shadowed) == 1, shadowed
    shadow = str(shadowed[0])
    assert shadow.startswith("sglang is imported from /srv/sglang") and "not the installed 0.5.9" in shadow


def test_cwd_with_image_is_one_line_and_exit_2(tmp_path: Path) -> None:
    image = _image(tmp_path)
    here = tmp_path / "here"
    here.mkdir()
    proc = run_cli("gate", "--image", str(image), "--cwd", str(here), "--format", "json", *HOST, "--", *LAUNCH)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and proc.stdout == "", (proc.returncode, proc.stdout[:300])
    assert len(lines) == 1 and "--cwd with --image" in lines[0] and "Traceback" not in proc.stderr, lines
