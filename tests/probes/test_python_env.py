"""Learning the target interpreter's sys.path: running it once (-S, fixed one-liner, its environment, a
timeout), the cache, and the static derivation when it cannot run. Real venvs made by the tests."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stackcheck.assembly.target import Target
from stackcheck.probes.python_env import (
    ONELINER,
    NotPython,
    cache_key,
    derive_static,
    learn,
    parse_answer,
)
from stackcheck.readers.fsview import HostView

HOST = HostView()
XY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def make_venv(path: Path, system_site: bool = False) -> Path:
    args = [sys.executable, "-m", "venv", "--without-pip", str(path)]
    if system_site:
        args.insert(4, "--system-site-packages")
    subprocess.run(args, check=True, capture_output=True, timeout=120)
    return path


def site_of(venv: Path) -> Path:
    return venv / "lib" / f"python{XY}" / "site-packages"


def add_dist(site: Path, name: str, version: str) -> None:
    info = site / f"{name.replace('-', '_')}-{version.split('+', maxsplit=1)[0]}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nLong text.\n")


def target(exe: Path | str, env: dict[str, str] | None = None, **kw: object) -> Target:
    return Target(str(exe), "--python", env if env is not None else {"PATH": "/usr/bin:/bin"}, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    v = make_venv(tmp_path_factory.mktemp("serve") / "venv")
    add_dist(site_of(v), "sglang", "0.5.9")
    return v


def test_run_learns_the_venvs_sys_path_and_the_cache_answers_next(venv: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    facts, status, reason = learn(target(venv / "bin/python"), HOST, str(cache), 10)
    assert status == "ok", reason
    assert facts["learned"] == "ran" and facts["kind"] == "venv" and facts["prefix"] == str(venv)
    assert facts["version"] == ".".join(map(str, sys.version_info[:3]))
    assert str(site_of(venv)) in facts["sys_path"]
    assert "" not in facts["sys_path"]
    assert sys.prefix + f"/lib/python{XY}/site-packages" not in facts["sys_path"]  # not the runner's own
    (entry,) = list(cache.iterdir())
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    again, status, _ = learn(target(venv / "bin/python"), HOST, str(cache), 10)
    assert again["learned"] == "cache" and again["sys_path"] == facts["sys_path"]
    # PYTHONPATH of the command's environment counts, and is part of the cache key
    extra = tmp_path / "extra"
    extra.mkdir()
    with_pp, _, _ = learn(target(venv / "bin/python", {"PYTHONPATH": str(extra)}), HOST, str(cache), 10)
    assert with_pp["learned"] == "ran" and with_pp["sys_path"][0] == str(extra)


def test_system_site_packages_and_user_site(tmp_path: Path) -> None:
    v = make_venv(tmp_path / "v", system_site=True)
    home = tmp_path / "home"
    user_site = home / ".local" / "lib" / f"python{XY}" / "site-packages"
    user_site.mkdir(parents=True)
    facts, _, _ = learn(target(v / "bin/python", {"HOME": str(home)}), HOST, "", 10)
    order = facts["sys_path"]
    assert order.index(str(site_of(v))) < order.index(str(user_site))  # venv first, then the user site
    closed = make_venv(tmp_path / "closed")
    facts, _, _ = learn(target(closed / "bin/python", {"HOME": str(home)}), HOST, "", 10)
    assert str(user_site) not in facts["sys_path"]  # a venv without system site packages has no user site


def test_pth_path_lines_followed_and_import_lines_never_executed(venv: Path, tmp_path: Path) -> None:
    marker = tmp_path / "CREATED"
    extra = tmp_path / "src"
    extra.mkdir()
    site = site_of(venv)
    (site / "zz_evil.pth").write_text(
        f"# a comment\n{extra}\nimport os; open({str(marker)!r}, 'w').write('ran')\nimport\tos\n../../../nowhere\n"
    )
    try:
        for mode in ("ran", "static"):
            if mode == "ran":
                facts, _, _ = learn(target(venv / "bin/python"), HOST, "", 10)
            else:
                answer = derive_static(HOST, str(venv / "bin/python"), {})
                from stackcheck.probes.python_env import compose_sys_path

                sys_path, notes = compose_sys_path(HOST, answer)
                facts = {"sys_path": sys_path, "notes": notes, "learned": "static"}
            assert str(extra) in facts["sys_path"], mode
            assert facts["sys_path"].index(str(extra)) > facts["sys_path"].index(str(site))
            assert not any("nowhere" in p for p in facts["sys_path"])
            assert any("2 .pth import line(s) not executed" in n for n in facts["notes"]), facts["notes"]
            assert not marker.exists(), f"a .pth import line ran ({mode})"
    finally:
        (site / "zz_evil.pth").unlink()


def test_a_file_that_cannot_run_is_read_statically(venv: Path, tmp_path: Path) -> None:
    # a copy of the venv whose interpreter is a text file (no execute bit): the layout is read instead
    fake = tmp_path / "fake"
    (fake / "bin").mkdir(parents=True)
    (fake / "bin" / "python").write_text("not a program")
    (fake / "pyvenv.cfg").write_text((venv / "pyvenv.cfg").read_text())
    add_dist(site_of(fake), "torch", "2.9.1")
    facts, status, reason = learn(target(fake / "bin/python"), HOST, "", 5)
    assert status == "partial" and "cannot run" in str(reason)
    assert facts["learned"] == "static" and facts["kind"] == "venv"
    assert str(site_of(fake)) in facts["sys_path"]
    # another architecture: an aarch64 (or x86-64) ELF header, executable, that the kernel refuses
    other = tmp_path / "other"
    (other / "bin").mkdir(parents=True)
    machine = 183 if os.uname().machine == "x86_64" else 62
    elf = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + (2).to_bytes(2, "little") + machine.to_bytes(2, "little") + b"\0" * 44
    (other / "bin" / f"python{XY}").write_bytes(elf)
    (other / "bin" / f"python{XY}").chmod(0o755)
    (other / "bin" / "python3").symlink_to(f"python{XY}")
    (other / "pyvenv.cfg").write_text(f"home = /usr/bin\nversion = {XY}.1\n")
    add_dist(site_of(other), "sglang", "0.5.9")
    facts, status, reason = learn(target(other / "bin/python3"), HOST, "", 5)
    assert facts["learned"] == "static" and status == "partial"
    assert facts["version"] == f"{XY}.1" and str(site_of(other)) in facts["sys_path"]


def test_hanging_and_garbage_interpreters(tmp_path: Path) -> None:
    for name, body, expect in (
        ("hang", "#!/bin/sh\nexec sleep 30\n", "did not answer within 0.5s"),
        ("garbage", "#!/bin/sh\necho hello world\n", "printed 'hello world'"),
        ("lying", '#!/bin/sh\necho \'{"stackcheck": 1, "version": 3}\'\n', "answer without a string"),
        ("failing", "#!/bin/sh\necho boom >&2\nexit 3\n", "exited 3: boom"),
    ):
        prefix = tmp_path / name
        py = prefix / "bin" / f"python{XY}"
        py.parent.mkdir(parents=True)
        py.write_text(body)
        py.chmod(0o755)
        (prefix / "lib" / f"python{XY}" / "site-packages").mkdir(parents=True)
        start = time.monotonic()
        facts, status, reason = learn(target(py), HOST, "", 0.5)
        assert time.monotonic() - start < 5
        assert status == "partial" and expect in str(reason), (name, reason)
        assert facts["learned"] == "static" and facts["sys_path"]


def test_not_an_interpreter_and_a_removed_base(tmp_path: Path) -> None:
    junk = tmp_path / "bin" / "notpython"
    junk.parent.mkdir(parents=True)
    junk.write_text("#!/bin/sh\nexit 0\n")
    junk.chmod(0o755)
    facts, status, reason = learn(target(junk), HOST, "", 2)
    assert status == "failed" and facts["sys_path"] is None
    assert "printed nothing" in str(reason) and "not a Python interpreter" in str(reason)
    with pytest.raises(NotPython):
        derive_static(HOST, "/etc/passwd", {})
    # a venv whose base interpreter was removed: its packages are read, and the error says it cannot start
    gone = tmp_path / "gone"
    (gone / "bin").mkdir(parents=True)
    (gone / "bin" / "python").symlink_to(tmp_path / "removed" / "bin" / f"python{XY}")
    (gone / "pyvenv.cfg").write_text(f"home = {tmp_path / 'removed' / 'bin'}\nversion = {XY}.4\n")
    add_dist(site_of(gone), "sglang", "0.5.9")
    facts, status, reason = learn(target(gone / "bin/python"), HOST, "", 2)
    assert status == "partial" and "base interpreter" in str(reason) and "cannot start" in str(reason)
    assert str(site_of(gone)) in facts["sys_path"] and facts["error"] == reason


def test_parse_answer_checks_every_field() -> None:
    good = {
        "stackcheck": 1,
        "executable": "/x",
        "version": "3.12.3",
        "implementation": "cpython",
        "prefix": "/x",
        "base_prefix": "/x",
        "path": ["/a"],
        "platlibdir": "lib",
        "base_site": [],
        "user_site": None,
        "no_user_site": False,
    }
    assert parse_answer("noise\n" + json.dumps(good) + "\n")["version"] == "3.12.3"
    for key, bad in (("path", "/a"), ("version", "three"), ("base_site", [1]), ("no_user_site", "no")):
        with pytest.raises(ValueError):
            parse_answer(json.dumps({**good, key: bad}))
    with pytest.raises(ValueError, match="printed nothing"):
        parse_answer("  \n")
    assert ONELINER.startswith("import sys;") and "-S" not in ONELINER


def test_cache_key_and_bad_cache_files(venv: Path, tmp_path: Path) -> None:
    exe = str(venv / "bin/python")
    k1 = cache_key(exe, {})
    assert k1 and k1 == cache_key(exe, {"UNRELATED": "1"})
    assert cache_key(exe, {"PYTHONPATH": "/x"}) != k1
    assert cache_key(str(tmp_path / "missing"), {}) is None
    os.mkfifo(tmp_path / "python3.99")
    start = time.monotonic()
    assert cache_key(str(tmp_path / "python3.99"), {}) is None  # a FIFO is never opened
    facts, status, _ = learn(target(tmp_path / "python3.99", {}), HOST, str(tmp_path / "c"), 2)
    assert status == "failed" and time.monotonic() - start < 5
    shim = tmp_path / "python3"  # a wrapper script (a pyenv shim) picks its interpreter at run time: no cache
    shim.write_text(f'#!/bin/sh\nexec {exe} "$@"\n')
    shim.chmod(0o755)
    assert cache_key(str(shim), {}) is None
    facts, status, _ = learn(target(shim, {}), HOST, str(tmp_path / "shim-cache"), 10)
    assert status == "ok" and facts["learned"] == "ran"
    assert facts["kind"] == "venv" and facts["prefix"] == str(venv) and str(site_of(venv)) in facts["sys_path"]
    assert not (tmp_path / "shim-cache").exists()
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / f"python-{k1}.json").write_text("{not json")
    facts, _, _ = learn(target(exe, {}), HOST, str(cache), 10)
    assert facts["learned"] == "ran"  # a garbage cache file is ignored and replaced
    assert json.loads((cache / f"python-{k1}.json").read_text())["stackcheck"] == 1
    os.chown(cache / f"python-{k1}.json", 65534, 65534) if os.geteuid() == 0 else None
    if os.geteuid() == 0:  # another user's file is not trusted
        facts, _, _ = learn(target(exe, {}), HOST, str(cache), 10)
        assert facts["learned"] == "ran"
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache directory should be")
    facts, status, _ = learn(target(exe, {}), HOST, str(blocked), 10)
    assert status == "ok" and any("answer not cached" in n for n in facts["notes"])
