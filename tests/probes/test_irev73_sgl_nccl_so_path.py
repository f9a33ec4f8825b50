"""irev73: SGLang 0.5.3rc2 and later copy SGL_NCCL_SO_PATH over SGLANG_NCCL_SO_PATH when sglang.srt.environ is
imported (facts/sgl_prefix.py), before pynccl's find_nccl_library reads os.environ["SGLANG_NCCL_SO_PATH"] (0.5.23
pynccl_wrapper.py:48). The jit probe read SGLANG_NCCL_SO_PATH alone: `SGL_NCCL_SO_PATH=/missing/libnccl.so.2`
reported no named NCCL, and the rules on it (symm-mem-nccl-so-path: a file that is not there leaves pynccl
disabled) never applied."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView


def _no_tools(argv: Sequence[str], timeout_s: float, env: Mapping[str, str] | None = None) -> tuple[int, str, str]:
    raise OSError("no tools in this test")


def _probe(env: dict[str, str], release: str | None) -> dict[str, Any]:
    packages = {"sglang": {"installed": True, "version": release}} if release else {}
    return probe_jit({"packages": packages}, env, HostView(), runner=_no_tools)


@pytest.mark.parametrize("release", ["0.5.3", "0.5.23"])
def test_the_sgl_spelling_names_the_nccl_pynccl_opens(tmp_path: Path, release: str) -> None:
    missing = str(tmp_path / "nccl" / "libnccl.so.2")
    # fails before the fix: no nccl_so_path key (the variable not read)
    got = _probe({"SGL_NCCL_SO_PATH": missing, "SGLANG_NCCL_SO_PATH": ""}, release)
    assert got.get("nccl_so_path") == missing and got.get("nccl_so_path_found") is False, got


def test_a_release_without_the_copy_reads_its_own_name(tmp_path: Path) -> None:
    got = _probe({"SGL_NCCL_SO_PATH": str(tmp_path / "libnccl.so.2")}, "0.5.2")
    assert "nccl_so_path" not in got


def test_a_release_not_known_is_not_read_as_either(tmp_path: Path) -> None:
    # the SGL_ twin differs from SGLANG_NCCL_SO_PATH and the release is not known: the path pynccl opens is not known
    got = _probe({"SGL_NCCL_SO_PATH": str(tmp_path / "libnccl.so.2")}, None)
    assert got.get("nccl_so_path_found") is None and "SGL_NCCL_SO_PATH" in str(got.get("nccl_so_path_reason")), got


@pytest.mark.parametrize(
    "command",
    [
        ["env", "SGL_NCCL_SO_PATH=/opt/old-nccl/libnccl.so.2", "python3", "-m", "sglang.launch_server"],
        ["bash", "-c", "export SGL_NCCL_SO_PATH=/opt/old-nccl/libnccl.so.2; python3 -m sglang.launch_server"],
    ],
)
def test_a_launch_setting_the_sgl_spelling_leaves_the_facts_jit_reading_unknown(command: list[str]) -> None:
    # fails before the fix: the facts' jit section kept (SGL_NCCL_SO_PATH is no JIT_ENV variable)
    from stackcheck.knowledge.loader import load
    from stackcheck.launch.facts_loader_path import _launch_jit_env

    facts: dict[str, Any] = {"system": {"env": {}}, "jit": {"toolkit": "/usr/local/cuda", "nvcc_found": True}}
    _launch_jit_env(facts, command, load([], env={}).launch)
    assert "SGL_NCCL_SO_PATH" in str(facts["jit"].get("error")), facts["jit"]


def test_the_facts_own_sgl_spelling_is_no_change() -> None:
    from stackcheck.knowledge.loader import load
    from stackcheck.launch.facts_loader_path import _launch_jit_env

    jit = {"toolkit": "/usr/local/cuda", "nccl_so_path": "/opt/n/libnccl.so.2", "nccl_so_path_found": True}
    facts: dict[str, Any] = {"system": {"env": {"SGL_NCCL_SO_PATH": "/opt/n/libnccl.so.2"}}, "jit": dict(jit)}
    _launch_jit_env(facts, ["python3", "-m", "sglang.launch_server"], load([], env={}).launch)
    assert facts["jit"] == jit
