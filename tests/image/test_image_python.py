"""The image's Python: found on the config's PATH, its sys.path derived statically (no .pth import runs)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from imagebuild import docker_save, layer_tar

from stackcheck.image import NoPython, find_python, open_image
from stackcheck.readers.fsview import HostView

EXE = b"\x7fELF"


def _open(tmp_path: Path, layers: Sequence[Sequence[tuple[object, ...]]], env: list[str]):  # type: ignore[no-untyped-def]
    image = docker_save(tmp_path / "py.tar", [layer_tar(x) for x in layers], env=env)
    return open_image(image)


def test_debian_system_python_uses_dist_packages(tmp_path: Path) -> None:
    base = [
        ("file", "etc/debian_version", b"12.5\n"),
        ("file", "usr/bin/python3.12", EXE, 0o755),
        ("symlink", "usr/bin/python3", "python3.12"),
        ("file", "usr/lib/python3.12/os.py", b""),
        ("dir", "usr/lib/python3.12/lib-dynload"),
        ("dir", "usr/lib/python3/dist-packages"),
        ("file", "usr/lib/python3/dist-packages/apt.pth", b"# comment\n\n"),
    ]
    pip_layer = [
        ("dir", "usr/local/lib/python3.12/dist-packages/torch"),
        ("file", "usr/local/lib/python3.12/dist-packages/extra.pth", b"/opt/extra\nimport os; os.system('x')\n"),
        ("dir", "opt/extra"),
    ]
    with _open(tmp_path, [base, pip_layer], ["PATH=/usr/local/bin:/usr/bin:/bin"]) as view:
        py = find_python(view, view.info.raw_env)
        assert py.executable == "/usr/bin/python3"
        assert py.real_executable == "/usr/bin/python3.12"
        assert py.version == "3.12" and py.prefix == "/usr" and not py.venv
        assert py.site_packages == ["/usr/local/lib/python3.12/dist-packages", "/usr/lib/python3/dist-packages"]
        assert py.sys_path == [
            "/usr/lib/python312.zip",
            "/usr/lib/python3.12",
            "/usr/lib/python3.12/lib-dynload",
            "/usr/local/lib/python3.12/dist-packages",
            "/opt/extra",
            "/usr/lib/python3/dist-packages",
        ]
        assert any("1 .pth import line(s) not executed" in n for n in py.notes)
        assert py.chosen_by == "python3 on the image's PATH"
        assert py.to_facts()["learned"] == "static" and py.kind == "system"


def test_venv_on_path_first_and_pythonpath(tmp_path: Path) -> None:
    base = [
        ("file", "usr/local/bin/python3.11", EXE, 0o755),
        ("symlink", "usr/local/bin/python3", "python3.11"),
        ("file", "usr/local/lib/python3.11/os.py", b""),
        ("dir", "usr/local/lib/python3.11/site-packages/pip"),
    ]
    venv = [
        (
            "file",
            "opt/serve/pyvenv.cfg",
            b"home = /usr/local/bin\ninclude-system-site-packages = false\nversion = 3.11.9\n",
        ),
        ("symlink", "opt/serve/bin/python", "/usr/local/bin/python3.11"),
        ("symlink", "opt/serve/bin/python3", "python"),
        ("dir", "opt/serve/lib/python3.11/site-packages/sglang"),
        ("symlink", "opt/serve/lib64", "lib"),
        ("dir", "work/src"),
    ]
    env = ["PATH=/opt/serve/bin:/usr/local/bin:/usr/bin", "PYTHONPATH=/work/src:relative/ignored"]
    with _open(tmp_path, [base, venv], env) as view:
        py = find_python(view, view.info.raw_env)
        assert py.executable == "/opt/serve/bin/python3"
        assert py.venv and py.prefix == "/opt/serve" and py.base_prefix == "/usr/local"
        assert py.version == "3.11.9"  # pyvenv.cfg states the full version
        assert py.site_packages == ["/opt/serve/lib/python3.11/site-packages"]  # lib64 -> lib listed once
        assert py.sys_path[0] == "/work/src"
        assert "/usr/local/lib/python3.11/site-packages" not in py.sys_path  # system site excluded


def test_conda_prefix_and_user_site(tmp_path: Path) -> None:
    layer = [
        ("file", "etc/passwd", b"root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n"),
        ("dir", "opt/conda/conda-meta"),
        ("file", "opt/conda/bin/python3.10", EXE, 0o755),
        ("symlink", "opt/conda/bin/python", "python3.10"),
        ("file", "opt/conda/lib/python3.10/os.py", b""),
        ("dir", "opt/conda/lib/python3.10/site-packages/torch"),
        ("dir", "root/.local/lib/python3.10/site-packages"),
    ]
    with _open(tmp_path, [layer], ["PATH=/opt/conda/bin:/usr/bin"]) as view:
        py = find_python(view, view.info.raw_env)
        assert py.executable == "/opt/conda/bin/python"  # no python3 anywhere: python
        assert py.prefix == "/opt/conda" and py.kind == "conda"
        assert py.chosen_by == "python on the image's PATH"
        # HOME is not in the Env: root's home from the image's /etc/passwd, as runc sets it
        assert py.site_packages == [
            "/root/.local/lib/python3.10/site-packages",
            "/opt/conda/lib/python3.10/site-packages",
        ]
        # another User: its own home (no .local there: not on the path)
        assert find_python(view, view.info.raw_env, "app:app").site_packages == [
            "/opt/conda/lib/python3.10/site-packages"
        ]


def test_home_follows_the_runtime_rules(tmp_path: Path) -> None:
    from stackcheck.image.view import home_of, runtime_environment

    layer = [("file", "etc/passwd", b"root:x:0:0:root:/root:/bin/sh\nsvc:x:999:999::/srv/svc:/bin/false\nbad\n")]
    with _open(tmp_path, [layer], []) as view:
        assert home_of(view, None) == "/root" and home_of(view, "") == "/root"
        assert home_of(view, "svc") == "/srv/svc" and home_of(view, "999:999") == "/srv/svc"
        assert home_of(view, "4242") == "/"  # a uid without an entry: runc's default
        env = runtime_environment(view, {"HOME": "/data"}, "svc")
        assert env["HOME"] == "/data" and env["PATH"].startswith("/usr/local/sbin")  # docker's default PATH
    empty = docker_save(tmp_path / "nopasswd.tar", [layer_tar([("dir", "opt")])])
    with open_image(empty) as view:
        assert home_of(view, None) == "/"  # no /etc/passwd: "/" (runc), so no /root/.local user site


def test_no_python_is_a_reason(tmp_path: Path) -> None:
    view = _open(tmp_path, [[("file", "usr/bin/python3", b"not executable", 0o644)]], [])
    with view, pytest.raises(NoPython, match="no python3 or python on the image's PATH"):
        find_python(view, view.info.raw_env)


def test_same_derivation_on_a_root_directory(tmp_path: Path) -> None:
    (tmp_path / "usr/bin").mkdir(parents=True)
    exe = tmp_path / "usr/bin/python3.12"
    exe.write_bytes(EXE)
    exe.chmod(0o755)
    (tmp_path / "usr/bin/python3").symlink_to("python3.12")
    (tmp_path / "usr/lib/python3.12").mkdir(parents=True)
    (tmp_path / "usr/lib/python3.12/os.py").write_text("")
    (tmp_path / "usr/lib/python3.12/site-packages").mkdir()
    py = find_python(HostView(str(tmp_path)), {"PATH": "/usr/bin"})
    assert py.prefix == "/usr" and py.site_packages == ["/usr/lib/python3.12/site-packages"]
