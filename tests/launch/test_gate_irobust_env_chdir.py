"""`env -C DIR` (and GNU env's options that change nothing the gate reads: -v / --debug, the signal options) before
the server command (irobust, an adversarial pass over igap38's --cwd). GNU env (coreutils 9.1 `env --help`: "-C,
--chdir=DIR change working directory to DIR"; run here: `env -C d pwd`, `env -Cd pwd`, `env --chdir d pwd` and `env
--chdir=d pwd` each print d) runs the command in DIR with the assignments after its options. Before, any of these
options ended the gate's reading of the prefix: the assignments after it were not seen (`env -C /srv
SGLANG_NCCL_SO_PATH=/missing.so python -m sglang.launch_server --tp 2 --enable-symm-mem` lost rule
symm-mem-nccl-so-path's fail: a false pass where the allocator's other hops are fine), and a checkout's ./sglang in
DIR was not read (judged as the installed release). Each case runs the real `python -m stackcheck gate`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import clean_env, run_stackcheck

XY = f"{sys.version_info[0]}.{sys.version_info[1]}"
DRY = ["--dry-run", "--format", "json", "--assume-gpu", "9.0x2", "--assume-driver", "580.95.05"]


def _venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    info = venv / "lib" / f"python{XY}" / "site-packages" / "sglang-0.5.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.9\n")
    return venv


def _checkout(directory: Path) -> Path:
    (directory / "sglang").mkdir(parents=True)
    (directory / "sglang/__init__.py").write_text("")
    (directory / "sglang/_version.py").write_text("__version__ = version = '0.5.3'\n")
    return directory


def _gate(tmp_path: Path, prefix: list[str], *tail: str) -> dict[str, object]:
    venv = tmp_path / "venv"
    line = ["env", *prefix, *tail, str(venv / "bin/python"), "-m", "sglang.launch_server", "--model-path", "m",
            "--tp", "2", "--enable-symm-mem"]  # fmt: skip
    env = clean_env("VIRTUAL_ENV", "CONDA_PREFIX", XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = run_stackcheck("gate", *DRY, "--", *line, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def _rules(doc: dict[str, object]) -> dict[str, str]:
    return {str(r.get("rule")): str(r.get("result")) for b in doc.get("reasons") or [] for r in b.get("reasons") or []}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "prefix", [["-C", "co"], ["-Cco"], ["--chdir", "co"], ["--chdir=co"], ["-v"], ["--debug"], ["--block-signal=PIPE"]]
)
def test_assignments_after_an_env_option_are_read(tmp_path: Path, prefix: list[str]) -> None:
    _venv(tmp_path)
    _checkout(tmp_path / "co")
    missing = f"SGLANG_NCCL_SO_PATH={tmp_path}/missing/libnccl.so.2"
    plain = _rules(_gate(tmp_path, [], missing))
    assert plain.get("symm-mem-nccl-so-path") == "fail", plain  # (the parent's answer without the option)
    got = _gate(tmp_path, prefix, missing)
    assert _rules(got).get("symm-mem-nccl-so-path") == "fail", _rules(got)  # missing before
    if "co" in "".join(prefix):  # the checkout in DIR is the one Python imports
        assert got["sglang"] == "0.5.3", got.get("sglang")
        shadowed = got["shadowed"]
        assert isinstance(shadowed, list) and len(shadowed) == 1, shadowed
        assert str(shadowed[0]).startswith(f"sglang is imported from {tmp_path}/co/sglang"), shadowed
    else:
        assert got["sglang"] == "0.5.9" and not got.get("shadowed"), got.get("shadowed")


def test_a_relative_nccl_so_path_is_read_from_env_chdirs_directory(tmp_path: Path) -> None:
    """`gate --cwd A -- env -C B SGLANG_NCCL_SO_PATH=lib/x.so ...`: the server opens A/B/lib/x.so (dlopen of a name with
    a slash, from the working directory env -C chose); a file at A/lib/x.so is not the one it loads."""
    _venv(tmp_path)
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "lib").mkdir()
    (tmp_path / "a" / "lib" / "x.so").write_bytes(b"")  # where the parent looked (then: found, not an ELF: unknown)
    venv = tmp_path / "venv"
    line = ["env", "-C", "b", "SGLANG_NCCL_SO_PATH=lib/x.so", str(venv / "bin/python"), "-m", "sglang.launch_server",
            "--model-path", "m", "--tp", "2", "--enable-symm-mem"]  # fmt: skip
    env = clean_env("VIRTUAL_ENV", "CONDA_PREFIX", XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = run_stackcheck("gate", *DRY, "--cwd", "a", "--", *line, env=env, cwd=tmp_path, timeout=120)
    doc = json.loads(proc.stdout)
    assert _rules(doc).get("symm-mem-nccl-so-path") == "fail", (_rules(doc), proc.stderr[-300:])


@pytest.mark.parametrize("form", ["-S", "-S{}", "--split-string", "--split-string={}"])
def test_env_split_string_is_read_as_env_reads_it(tmp_path: Path, form: str) -> None:
    """`env -S 'A=1 python -m sglang.launch_server --tp 2 ...'` (a shebang line's way to pass several words): env splits
    the string and reads on (coreutils 9.1 `env --help`: "process and split S into separate arguments"). Before, the
    string was one word: the launch was taken for a wrapper, its flags (--tp 2 --enable-symm-mem) and assignment
    unread, so the symmetric-memory and SGLANG_NCCL_SO_PATH rules were not required."""
    venv = _venv(tmp_path)
    text = (f"SGLANG_NCCL_SO_PATH={tmp_path}/missing/libnccl.so.2 {venv}/bin/python -m sglang.launch_server "
            "--model-path m --tp 2 --enable-symm-mem")  # fmt: skip
    words = [form.format(text)] if "{}" in form else [form, text]
    env = clean_env("VIRTUAL_ENV", "CONDA_PREFIX", XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = run_stackcheck("gate", *DRY, "--", "env", *words, env=env, cwd=tmp_path, timeout=120)
    doc = json.loads(proc.stdout)
    derived = doc["derived"]
    assert derived["entrypoint"] == "launch-server" and derived["launch"].get("tp") == 2, derived
    assert doc["sglang"] == "0.5.9" and _rules(doc).get("symm-mem-nccl-so-path") == "fail", _rules(doc)


def test_env_split_string_with_escapes_is_not_split(tmp_path: Path) -> None:
    """A string with `$`, a backslash or `#` (env's own expansions, escapes and comments) is not split here: the
    interpreter stays unknown and sglang is not seen (refused), as before."""
    venv = _venv(tmp_path)
    text = f"SGLANG_NCCL_SO_PATH=$HOME/x.so {venv}/bin/python -m sglang.launch_server --tp 2"
    env = clean_env("VIRTUAL_ENV", "CONDA_PREFIX", XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = run_stackcheck("gate", *DRY, "--", "env", "-S", text, env=env, cwd=tmp_path, timeout=120)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["decision"] == "refuse" and doc.get("sglang") is None, doc.get("sglang")
