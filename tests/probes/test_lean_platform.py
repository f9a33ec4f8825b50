"""The system and python probes read what platform would tell them (python_version, machine, release) without
importing platform: its import, with the regular expressions it compiles, was ~2 ms of every live audit and
gate (issue 21). Each reading is checked against platform's own."""

from __future__ import annotations

import platform
import sys

import pytest

from stackcheck.probes.python_env import own_python_version, python_version_of
from stackcheck.probes.system import uname_field

_SAMPLES = [
    ("3.11.7 (main, Dec  2 2026, 10:00:00) [GCC 11.4.0]", (3, 11, 7, "final", 0), "cpython"),
    ("3.12.1 (main, Jan  1 2024, 00:00:00) [Clang 15.0.0 (clang-1500.1.0.2.5)]", (3, 12, 1, "final", 0), "cpython"),
    ("3.10.0 (default, Oct  4 2021, 00:00:00) \n[GCC 10.2.1 20210110]", (3, 10, 0, "final", 0), "cpython"),
    ("3.13.0 experimental free-threading build (main, Oct  7 2024, 00:00:00) [GCC 13.2.0]", (3, 13, 0, "final", 0),
     "cpython"),
    ("3.13.0rc1 (main, Aug  1 2024, 00:00:00) [GCC 13.2.0]", (3, 13, 0, "candidate", 1), "cpython"),
    ("3.11.7+ (heads/3.11:abcdef, Jan  1 2024, 00:00:00) [GCC 11.4.0]", (3, 11, 7, "final", 0), "cpython"),
    ("3.9.7 |Anaconda, Inc.| (default, Sep 16 2021, 13:09:58) \n[GCC 7.5.0]", (3, 9, 7, "final", 0), "cpython"),
    ("3.10.12 (af44d0b8114c, Jun 15 2023, 15:59:43)\n[PyPy 7.3.12 with GCC 12.2.0]", (3, 10, 12, "final", 0), "pypy"),
]  # fmt: skip


@pytest.mark.parametrize(("version", "info", "implementation"), _SAMPLES)
def test_the_lean_python_version_is_platforms_or_defers_to_it(
    version: str, info: tuple[object, ...], implementation: str
) -> None:
    lean = python_version_of(version, info, implementation)
    if lean is not None:
        assert lean == platform._sys_version(version)[1]  # type: ignore[attr-defined]


def test_a_plain_cpython_release_is_read_without_platform() -> None:
    assert python_version_of(*_SAMPLES[0]) == "3.11.7"
    assert python_version_of(*_SAMPLES[4]) is None  # a release candidate: platform reads it


def test_this_process_reads_as_platform_reads_it() -> None:
    assert own_python_version() == platform.python_version()
    assert uname_field("machine") == platform.machine()
    assert uname_field("release") == platform.release()


def test_unknown_uname_fields_read_as_platform_blanks_them(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    fake = os.uname_result(("Linux", "box", "unknown", "#1", "unknown"))
    monkeypatch.setattr(os, "uname", lambda: fake)
    assert uname_field("machine") == "" and uname_field("release") == ""


def test_the_probes_import_no_platform() -> None:
    import subprocess

    code = (
        "import sys\n"
        "import stackcheck.probes.system, stackcheck.probes.python_env\n"
        "from stackcheck.probes.python_env import own_facts\n"
        "from stackcheck.probes.system import uname_field\n"
        "own_facts(None), uname_field('machine'), uname_field('release')\n"
        "print('platform' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": ":".join(p for p in sys.path if p)})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "False\n"
