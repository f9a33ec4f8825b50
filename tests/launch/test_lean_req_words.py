"""lean_req's marker literals: a word is compared as a string exactly when packaging.version cannot read it (the
gate's dependency check reads it with stackcheck.facts.pep440, so that a healthy check imports no packaging.version
and, through it, no typing)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

from stackcheck.launch.preflight import lean_req

ROOT = Path(__file__).resolve().parents[2]
FIXED = ["linux", "win32", "darwin", "x86_64", "aarch64", "cpython", "posix", "v", "V", "v1", "V1.0", "v1.0a1",
         "v1.0.post1.dev2", "v1.0-1", "v1_0", "v1.0-rc.2", "v1.0.RC2", "vv1", "v1e", "v1!2.0", "v1.0+abc",
         "v1.0.dev", "v1..2", "v.1", "v1.", "version", "v2024.1", "v1.0alpha", "v1.0-preview-3", "v1.0r", "a1",
         "rc1"]  # fmt: skip


def write_dist(site: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    d = site / f"{name.replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True)
    body = "".join(f"Requires-Dist: {r}\n" for r in requires)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{body}\nbody\n")


def _packaging_says_not_a_version(word: str) -> bool:
    if not lean_req._WORD.fullmatch(word):
        return False
    try:
        Version(word)
    except InvalidVersion:
        return True
    return False


def _words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    parts = ["v", "V", "1", "0", "12", ".", "-", "_", "a", "b", "rc", "c", "post", "dev", "r", "rev", "pre", "x", "z"]
    out = []
    for _ in range(n):
        head = rng.choice(["v", "V", "v", "l", "rc", "a"])
        out.append(head + "".join(rng.choice(parts) for _ in range(rng.randint(0, 7))))
    return out


def test_words_read_as_packaging_reads_them() -> None:
    for word in [*FIXED, *_words(6000, 20261203)]:
        assert lean_req._not_a_version(word) == _packaging_says_not_a_version(word), word


def test_the_gate_of_a_healthy_target_imports_no_packaging_version(tmp_path: Path) -> None:
    """`gate --python VENV` with a healthy SGLang whose Requires-Dist has string markers (sys_platform, extra):
    answered ok without importing packaging.version (or typing through it) anywhere in the process."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python3*/site-packages"))
    lines = ("plain-ok", "linux-only; sys_platform == 'linux'", "extra-only; extra == 'test'")
    write_dist(site, "sglang", "0.5.9", lines)
    write_dist(site, "plain-ok", "1")
    write_dist(site, "linux-only", "2")
    argv = ["gate", "--dry-run", "--format", "json", "--python", str(venv / "bin" / "python"), "--",
            "python", "-m", "sglang.launch_server", "--model-path", "x"]  # fmt: skip
    code = (
        "import sys, io, contextlib\n"
        "from stackcheck.cli import main\n"
        "out = io.StringIO()\n"
        f"with contextlib.redirect_stdout(out): main({argv!r})\n"
        "print(out.getvalue())\n"
        "print('packaging.version' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    *doc, imported = run.stdout.rstrip("\n").split("\n")
    (dep,) = [c for c in json.loads("\n".join(doc))["preflight"]["checks"] if c["check"] == "dependencies"]
    expected = 2 if sys.platform == "linux" else 1
    assert dep["status"] == "ok" and dep["observed"] == {"requirements_checked": expected}, dep
    assert imported == "False", run.stderr
