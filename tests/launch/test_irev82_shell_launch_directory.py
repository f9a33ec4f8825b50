"""irev82: a launch inside a shell's command string is read by the gate's find_launch, which follows the string's `cd`
and exports; the python and packages probes were handed the directory, first sys.path entry and environment of the
target reader (assembly/target.py), which stops at the shell. So `bash -c "cd /srv && python -m sglang.launch_server
..."` (or `bash -c "python -m ..."` run from /srv) was judged on the venv's installed sglang while the server imports
/srv's ./sglang checkout, and `bash -c "export PYTHONPATH=/x && python -m ..."` on a sys.path without /x (irev81's
probe in the launch's directory met imend12's shell strings: the same launch as `env -C /srv python -m ...` was read
right). Now unknown, subject python, where the directories or path variables differ in what the server imports. The
venvs and checkouts are this test's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import clean_env, run_stackcheck

XY = f"{sys.version_info[0]}.{sys.version_info[1]}"
LAUNCH = "python -m sglang.launch_server --model-path m"


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("irev82-shell-dir")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(top / "venv")], check=True, timeout=120)
    info = top / "venv" / "lib" / f"python{XY}" / "site-packages" / "sglang-0.5.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.9\n")
    (top / "srv" / "sglang").mkdir(parents=True)  # a checkout: imported first by `python -m` run there
    (top / "srv" / "sglang" / "__init__.py").write_text("")
    (top / "plain").mkdir()
    (top / "home").mkdir()
    return top


def _python(box: Path, where: str, *words: str) -> list[str]:
    env = clean_env("CONDA_PREFIX", "PYTHONSAFEPATH", VIRTUAL_ENV=str(box / "venv"), HOME=str(box / "home"),
                    XDG_CACHE_HOME=str(box / "cache"), PATH=f"{box / 'venv' / 'bin'}:/usr/bin:/bin")  # fmt: skip
    dry = ["--dry-run", "--format", "json", "--assume-gpu", "9.0x1", "--assume-driver", "580.95.05"]
    proc = run_stackcheck("gate", *dry, "--", *words, env=env, cwd=box / where, timeout=180)
    assert proc.returncode in (0, 1), proc.stderr[-400:]
    doc = json.loads(proc.stdout)
    return [str(r.get("message")) for f in doc.get("reasons") or [] if f.get("feature") == "python"
            for r in f.get("reasons") or []]  # fmt: skip


@pytest.mark.parametrize(
    ("where", "string", "said"),
    [("plain", f"cd {{srv}} && {LAUNCH}", "holds sglang"), ("srv", LAUNCH, "holds sglang"),
     ("plain", f"export PYTHONPATH={{srv}} && {LAUNCH}", "set PYTHONPATH"),
     ("plain", f"cd {{srv}} && PYTHONPATH=lib {LAUNCH}", "set PYTHONPATH")],
    ids=["cd to a checkout", "run from a checkout", "exported PYTHONPATH", "relative PYTHONPATH after cd"],
)  # fmt: skip
def test_what_the_shell_string_imports_unread_is_unknown(box: Path, where: str, string: str, said: str) -> None:
    got = _python(box, where, "bash", "-c", string.format(srv=box / "srv"))
    assert len(got) == 1 and said in got[0] and "shell's command string" in got[0], got  # (fails before: [])


@pytest.mark.parametrize(
    ("where", "string"),
    [("plain", f"cd {{plain}} && {LAUNCH}"), ("plain", LAUNCH), ("srv", "python -I -m sglang.launch_server"),
     ("srv", "python -P -m sglang.launch_server")],
    ids=["cd without a checkout", "no cd", "isolated", "safe path"],
)  # fmt: skip
def test_a_shell_string_whose_directory_imports_nothing_of_the_stack_is_read_as_before(
    box: Path, where: str, string: str
) -> None:
    assert _python(box, where, "bash", "-c", string.format(plain=box / "plain")) == []


def test_env_c_is_the_probes_own_directory(box: Path) -> None:
    # (the target reader follows `env -C`: the probe reads the checkout itself, no problem of this check)
    assert _python(box, "plain", "env", "-C", str(box / "srv"), *LAUNCH.split()) == []
