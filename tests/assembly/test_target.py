"""Choosing the environment to audit: flags, the gated command (python, console scripts, uv run, conda run),
an active VIRTUAL_ENV / CONDA_PREFIX, a root's PATH, stackcheck's own interpreter; the view factory."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from stackcheck.assembly.options import Options
from stackcheck.assembly.target import choose_target, interpreter_of_command, open_view, script_interpreter
from stackcheck.errors import UsageError
from stackcheck.readers.fsview import HostView

HOST = HostView()


def exe(path: Path, body: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def prefix(root: Path, name: str = "python3") -> Path:
    """A prefix with bin/python3 (a stub: choosing runs nothing)."""
    exe(root / "bin" / name)
    return root


def test_explicit_flags_win_and_bad_paths_are_usage_errors(tmp_path: Path) -> None:
    p = prefix(tmp_path / "serve")
    env = {"PATH": "/usr/bin", "VIRTUAL_ENV": str(prefix(tmp_path / "other"))}
    t = choose_target(HOST, env, python=str(p / "bin/python3"), command=["python3", "-m", "x"])
    assert (t.executable, t.chosen_by, t.explicit) == (str(p / "bin/python3"), "--python", True)
    t = choose_target(HOST, env, env_dir=str(p))
    assert (t.executable, t.chosen_by) == (str(p / "bin/python3"), "--env")
    t = choose_target(HOST, env, stackcheck_python=str(p / "bin/python3"))
    assert t.chosen_by == "STACKCHECK_PYTHON" and t.explicit
    with pytest.raises(UsageError, match=r"--python .*/nope: no such file"):
        choose_target(HOST, env, python=str(tmp_path / "nope"))
    with pytest.raises(UsageError, match=r"is a directory .*--env DIR"):
        choose_target(HOST, env, python=str(p))
    with pytest.raises(UsageError, match="not a venv or conda prefix"):
        choose_target(HOST, env, env_dir=str(tmp_path))
    with pytest.raises(UsageError, match="give one of them"):
        choose_target(HOST, env, python=str(p / "bin/python3"), env_dir=str(p))
    with pytest.raises(UsageError, match="STACKCHECK_PYTHON nope-python: not found on PATH"):
        choose_target(HOST, {"PATH": str(tmp_path)}, stackcheck_python="nope-python")
    # a name is looked up on PATH
    t = choose_target(HOST, {"PATH": str(p / "bin")}, python="python3")
    assert t.executable == str(p / "bin/python3")


def test_gated_python_is_resolved_on_the_commands_path(tmp_path: Path) -> None:
    p = prefix(tmp_path / "opt/serve")
    env = {"PATH": f"{p / 'bin'}:/usr/bin", "VIRTUAL_ENV": str(prefix(tmp_path / "active"))}
    t = choose_target(HOST, env, command=["python3", "-m", "sglang.launch_server", "--tp", "8"])
    assert (t.executable, t.chosen_by) == (str(p / "bin/python3"), "the gated command")
    t = choose_target(HOST, env, command=[str(p / "bin/python3"), "-m", "sglang.launch_server"])
    assert t.executable == str(p / "bin/python3")
    # env NAME=VALUE in front: followed, and the assignment is part of the interpreter's environment
    t = choose_target(HOST, env, command=["env", "PYTHONPATH=/src", "python3", "-m", "x"])
    assert t.executable == str(p / "bin/python3") and t.env["PYTHONPATH"] == "/src"
    t = choose_target(HOST, env, command=["nohup", "env", "-u", "PATH", f"PATH={p / 'bin'}", "python3"])
    assert t.executable == str(p / "bin/python3")
    # a python the PATH does not have: the next rule (the active venv), with a note
    t = choose_target(HOST, {**env, "PATH": "/nonexistent"}, command=["python3.99", "-m", "x"])
    assert t.chosen_by == "VIRTUAL_ENV"
    assert any("python3.99: not found" in n for n in t.notes)


def test_console_scripts_through_their_shebang(tmp_path: Path) -> None:
    p = prefix(tmp_path / "opt/serve")
    py = str(p / "bin/python3")
    bindir = tmp_path / "bin"
    exe(bindir / "sglang", f"#!{py}\nimport sys\n")
    exe(bindir / "torchrun", "#!/usr/bin/env python3\n")
    long = f"#!/bin/sh\n'''exec' \"{py}\" \"$0\" \"$@\"\n' '''\nimport sys\n"
    exe(bindir / "launcher", long)
    exe(bindir / "wrapper", '#!/bin/bash\nexec /opt/x/bin/python -m sglang "$@"\n')
    env = {"PATH": f"{bindir}:{p / 'bin'}"}
    t = choose_target(HOST, env, command=["sglang", "serve", "--model-path", "m"])
    assert t.executable == py and t.chosen_by == f"the gated command's script ({bindir / 'sglang'})"
    assert script_interpreter(HOST, str(bindir / "torchrun"), env) == py
    assert script_interpreter(HOST, str(bindir / "launcher"), env) == py
    t = choose_target(HOST, env, command=["wrapper", "--tp", "2"])
    assert t.own and any("does not name a Python interpreter" in n for n in t.notes)


def test_uv_run_forms(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / "sub").mkdir(parents=True)
    (proj / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    venv = prefix(proj / ".venv")
    env = {"PATH": "/usr/bin"}
    found = interpreter_of_command(["uv", "run", "python", "-m", "sglang.launch_server"], env, HOST, str(proj / "sub"))
    assert found is not None and found[0] == str(venv / "bin/python3") and found[1].startswith("uv run (project")
    found = interpreter_of_command(["uv", "run", "--directory", str(proj), "sglang", "serve"], env, HOST, "/")
    assert found is not None and found[0] == str(venv / "bin/python3")
    # a workspace root above the member owns the .venv
    ws = tmp_path / "ws"
    (ws / "members/a").mkdir(parents=True)
    (ws / "pyproject.toml").write_text("[tool.uv.workspace]\nmembers = ['members/*']\n")
    (ws / "members/a/pyproject.toml").write_text("[project]\nname = 'a'\n")
    wvenv = prefix(ws / ".venv")
    found = interpreter_of_command(["uv", "run", "--project", "members/a", "python"], env, HOST, str(ws))
    assert found is not None and found[0] == str(wvenv / "bin/python3")
    # UV_PROJECT_ENVIRONMENT and --python PATH
    other = prefix(tmp_path / "elsewhere")
    uv_env = {**env, "UV_PROJECT_ENVIRONMENT": str(other)}
    found = interpreter_of_command(["uv", "run", "python"], uv_env, HOST, str(proj))
    assert found is not None and found[0] == str(other / "bin/python3")
    found = interpreter_of_command(["uv", "run", "-p", str(other / "bin/python3"), "python"], env, HOST, "/")
    assert found is not None and found[1] == "uv run --python"
    # environments uv makes when it runs cannot be named: a note, and None
    notes: list[str] = []
    assert interpreter_of_command(["uv", "run", "--isolated", "python"], env, HOST, str(proj), notes) is None
    assert "--isolated" in notes[-1]
    assert interpreter_of_command(["uv", "run", "--with", "x", "python"], env, HOST, str(proj), notes) is None
    assert interpreter_of_command(["uv", "pip", "list"], env, HOST, str(proj), notes) is None
    # no project: a .venv in the working directory or above
    loose = tmp_path / "loose"
    lvenv = prefix(loose / ".venv")
    (loose / "deep/er").mkdir(parents=True)
    found = interpreter_of_command(["uv", "run", "python"], env, HOST, str(loose / "deep/er"))
    assert found is not None and found[0] == str(lvenv / "bin/python3")


def test_conda_run_forms(tmp_path: Path) -> None:
    root = tmp_path / "miniconda3"
    conda = exe(root / "bin/conda")
    serve = prefix(root / "envs/serve")
    base_py = prefix(root)
    home = tmp_path / "home"
    txt_env = prefix(tmp_path / "custom/place/train")
    (home / ".conda").mkdir(parents=True)
    (home / ".conda/environments.txt").write_text(f"{txt_env}\n")
    env = {"PATH": f"{root / 'bin'}:/usr/bin", "HOME": str(home)}
    found = interpreter_of_command(["conda", "run", "-n", "serve", "python", "-m", "x"], env, HOST)
    assert found is not None and found[0] == str(serve / "bin/python3") and found[1] == "conda run -n serve"
    found = interpreter_of_command([str(conda), "run", "--no-capture-output", "--name=serve", "python"], env, HOST)
    assert found is not None and found[0] == str(serve / "bin/python3")
    found = interpreter_of_command(["conda", "run", "-n", "base", "python"], env, HOST)
    assert found is not None and found[0] == str(base_py / "bin/python3")
    found = interpreter_of_command(["conda", "run", "-n", "train", "python"], env, HOST)
    assert found is not None and found[0] == str(txt_env / "bin/python3")
    found = interpreter_of_command(["conda", "run", "-p", str(serve), "python"], env, HOST)
    assert found is not None and found[1] == f"conda run -p {serve}"
    notes: list[str] = []
    assert interpreter_of_command(["conda", "run", "-n", "nope", "python"], env, HOST, None, notes) is None
    assert "no such environment" in notes[-1]
    # micromamba: MAMBA_ROOT_PREFIX/envs
    mroot = tmp_path / "mm"
    menv = prefix(mroot / "envs/serve")
    exe(tmp_path / "mbin/micromamba")
    menv_vars = {"PATH": str(tmp_path / "mbin"), "MAMBA_ROOT_PREFIX": str(mroot)}
    found = interpreter_of_command(["micromamba", "run", "-n", "serve", "python"], menv_vars, HOST)
    assert found is not None and found[0] == str(menv / "bin/python3") and found[1] == "micromamba run -n serve"


def test_active_environments_and_own(tmp_path: Path) -> None:
    venv = prefix(tmp_path / "venv")
    conda = prefix(tmp_path / "conda")
    t = choose_target(HOST, {"VIRTUAL_ENV": str(venv), "CONDA_PREFIX": str(conda)})
    assert (t.executable, t.chosen_by) == (str(venv / "bin/python3"), "VIRTUAL_ENV")
    t = choose_target(HOST, {"VIRTUAL_ENV": str(tmp_path / "gone"), "CONDA_PREFIX": str(conda)})
    assert t.chosen_by == "CONDA_PREFIX" and "no bin/python there" in t.notes[0]
    # stackcheck's own venv activated: not "another" environment
    t = choose_target(HOST, {"VIRTUAL_ENV": sys.prefix})
    assert t.own and t.chosen_by == "stackcheck's own interpreter" and t.executable == sys.executable
    # the gated command runs stackcheck's own interpreter with the same path variables: own, nothing to run
    same = {k: v for k, v in os.environ.items() if k.startswith("PYTHON")}
    t = choose_target(HOST, same, command=[sys.executable, "-m", "sglang.launch_server"])
    assert t.own and t.chosen_by == "the gated command"
    t = choose_target(HOST, {**same, "PYTHONPATH": "/elsewhere"}, command=[sys.executable, "-m", "x"])
    assert not t.own  # another PYTHONPATH: another sys.path, learned by running it


def test_root_view_uses_its_path(tmp_path: Path) -> None:
    exe(tmp_path / "usr/bin/python3")
    view = HostView(str(tmp_path))
    t = choose_target(view, {"PATH": "/usr/local/bin:/usr/bin"})
    assert (t.executable, t.chosen_by, t.own) == ("/usr/bin/python3", "python3 on the root's PATH", False)
    t = choose_target(HostView(str(tmp_path / "usr/bin")), {})
    assert t.executable is None and "no python3" in t.notes[-1]
    with pytest.raises(UsageError, match="absolute path"):
        choose_target(view, {}, python="usr/bin/python3")


def test_open_view(tmp_path: Path) -> None:
    assert open_view(Options()).description == "this host"
    assert open_view(Options(root=str(tmp_path))).description == f"root {tmp_path}"
    with pytest.raises(UsageError, match="not a directory"):
        open_view(Options(root=str(tmp_path / "nope")))
    with pytest.raises(UsageError, match="give one of them"):
        open_view(Options(root=str(tmp_path), image="x.tar"))
    try:
        import stackcheck.image  # noqa: F401
    except ImportError:
        with pytest.raises(UsageError, match="image support is not installed"):
            open_view(Options(image=str(tmp_path / "x.tar")))


@pytest.mark.parametrize(
    ("entry", "where"), [(".venv/bin", ".venv/bin"), ("", "."), ("./", "."), ("sub/../bin2", "bin2")]
)
def test_a_relative_path_entry_is_the_launch_directorys(tmp_path: Path, entry: str, where: str) -> None:
    # irev66: execvp joins a relative (or empty) PATH entry to the name and the kernel resolves it from the server's
    # directory (gate --cwd DIR, else the gate's own), so `PATH=.venv/bin:/opt/serve/bin python3 -m ...` runs
    # DIR/.venv/bin/python3; the entry was passed over and /opt/serve/bin/python3 audited (a false pass)
    p = prefix(tmp_path / "opt/serve")
    launch = tmp_path / "launch"
    (launch / "sub").mkdir(parents=True)
    local = exe(launch / where / "python3")
    env = {"PATH": f"{entry}:{p / 'bin'}"}
    t = choose_target(HOST, env, command=["python3", "-m", "sglang.launch_server"], cwd=str(launch))
    # (joined as the kernel resolves it, through a link: sub/../bin2 is not normalised)
    assert isinstance(t.executable, str) and t.executable.startswith(f"{launch}/"), t
    assert os.path.realpath(t.executable) == os.path.realpath(local)
    # an entry without the program: the next one
    exe(p / "bin" / "python3.12")
    t = choose_target(HOST, env, command=["python3.12", "-m", "x"], cwd=str(launch))
    assert t.executable == str(p / "bin" / "python3.12")


def test_a_relative_path_entry_of_a_root_is_passed_over(tmp_path: Path) -> None:
    # (a root's launch directory is not known: `bin` is not taken for the root's /bin)
    root = tmp_path / "root"
    exe(root / "bin" / "python3")
    exe(root / "opt" / "py" / "bin" / "python3")
    t = interpreter_of_command(["python3", "-m", "x"], {"PATH": "bin:/opt/py/bin"}, HostView(str(root)))
    assert t is not None and t[0] == "/opt/py/bin/python3"


def test_a_console_scripts_env_python_takes_a_relative_entry_too(tmp_path: Path) -> None:
    # `#!/usr/bin/env python3`: env's execvp runs in the server's directory as well
    p = prefix(tmp_path / "opt/serve")
    exe(tmp_path / "bin" / "torchrun", "#!/usr/bin/env python3\n")
    launch = tmp_path / "launch"
    local = exe(launch / ".venv" / "bin" / "python3")
    env = {"PATH": f".venv/bin:{tmp_path / 'bin'}:{p / 'bin'}"}
    t = choose_target(HOST, env, command=["torchrun", "-m", "sglang.launch_server"], cwd=str(launch))
    assert t.executable == str(local)
