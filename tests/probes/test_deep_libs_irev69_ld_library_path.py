"""irev69: the --deep libs probe read LD_LIBRARY_PATH by its own splitter (readers/libs.py expand_dirs: ':' only, an
empty element dropped, a relative one kept relative), not igap45's one glibc reading (cudalibs.ld_library_path: ':'
and ';', an empty or relative element from the server's directory where known, unknown past one not placed), which
the cuda_libs probe, the bare NCCL name, gate --facts' loader path and DeepEP's NVSHMEM lookup share. So
`LD_LIBRARY_PATH=/opt/old/lib;/usr/local/cuda/lib64` searched neither directory (one name '/opt/old/lib;/usr/...'),
and `lib:/usr/local/cuda/lib64` searched 'lib' from the audit's own directory, or, with an empty element, none at
all: a library the server's loader takes from there (an older libstdc++ whose GLIBCXX version a module needs) was
resolved past it and the shared-libs check passed. Now the probe hands probe_libs the placed directories, and where
an element is not placed the section says so (`launch_loader_path`): check shared-libs is unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes.deep import LibsProbe
from stackcheck.probes.interface import ProbeContext
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import builtin_shared_libs


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, cwd: str | None) -> tuple[str, dict[str, Any]]:
    seen: list[str] = []

    def fake(facts: Any, env: Any, **_: Any) -> dict[str, Any]:
        seen.append(env["LD_LIBRARY_PATH"])
        return {"packages": {}, "ld_cache": "file", "warnings": []}

    monkeypatch.setattr("stackcheck.readers.libs.probe_libs", fake)
    ctx = ProbeContext(env={"LD_LIBRARY_PATH": value}, root=tmp_path, path_dirs=[], launch_cwd=cwd)
    section = LibsProbe().run(ctx).facts["libs"]
    return seen[0], section


def test_a_semicolon_separates_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # fails before: '/opt/old/lib;/usr/local/cuda/lib64' handed on as one element
    value, section = _run(tmp_path, monkeypatch, "/opt/old/lib;/usr/local/cuda/lib64/", None)
    assert value == "/opt/old/lib:/usr/local/cuda/lib64"
    assert "launch_loader_path" not in section


def test_a_relative_element_is_read_from_the_launch_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    value, section = _run(tmp_path, monkeypatch, "lib::/usr/local/cuda/lib64", "/srv/run")
    assert value == "/srv/run/lib:/srv/run:/usr/local/cuda/lib64"
    assert "launch_loader_path" not in section


@pytest.mark.parametrize("given", ["lib:/usr/local/cuda/lib64", "/usr/local/cuda/lib64:", "$ORIGIN/../lib"])
def test_an_element_not_placed_leaves_shared_libs_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    # fails before: the element passed over (or read from the audit's directory), shared-libs judged on the rest
    value, section = _run(tmp_path, monkeypatch, given, None)
    assert "$" not in value and not any(d and not d.startswith("/") for d in value.split(":")), value
    assert "LD_LIBRARY_PATH's element" in str(section.get("launch_loader_path")), section
    ctx = Context(facts={"libs": section}, manifests=None)  # type: ignore[arg-type]
    reasons = builtin_shared_libs(ctx)
    assert [r["result"] for r in reasons] == ["unknown"], reasons
