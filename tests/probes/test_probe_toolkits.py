"""The CUDA toolkits probe on a fake filesystem root with fake toolkits and a fake nvcc."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.toolkits import ToolkitsProbe, parse_nvcc_version, read_toolkit_version
from stackcheck.readers.fsview import HostView

NVCC_13 = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n"


def make_exe(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    tk128 = root / "usr/local/cuda-12.8"
    tk128.mkdir(parents=True)
    (tk128 / "version.json").write_text(
        json.dumps({"cuda": {"name": "CUDA SDK", "version": "12.8.1"}, "cuda_nvcc": {"version": "12.8.93"}}),
        encoding="utf-8",
    )
    make_exe(tk128 / "bin/nvcc", "echo 'Cuda compilation tools, release 12.8, V12.8.93'")
    tk130 = root / "usr/local/cuda-13.0"
    (tk130 / "dist-info/nvidia_cuda_nvcc-13.0.88.dist-info").mkdir(parents=True)
    (tk130 / "dist-info/nvidia_cuda_runtime-13.0.96.dist-info").mkdir(parents=True)
    make_exe(tk130 / "bin/nvcc", f"cat <<'X'\n{NVCC_13}X")
    (root / "usr/local/cuda").symlink_to("cuda-13.0")
    old = root / "usr/local/cuda-11.0"
    old.mkdir()
    (old / "version.txt").write_text("CUDA Version 11.0.228\n", encoding="utf-8")
    return root


def by_path(entries: list[dict[str, object]]) -> dict[object, dict[str, object]]:
    return {e["path"]: e for e in entries}


def test_usr_local_trees(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    result = ToolkitsProbe().run(ProbeContext(env={"PATH": ""}, root=root, path_dirs=[]))
    assert result.status == "ok", result.reason
    tks = by_path(result.facts["cuda_toolkits"])
    # /usr/local/cuda and /usr/local/cuda-13.0 are one toolkit (deduplicated by real path)
    assert set(tks) == {"/usr/local/cuda", "/usr/local/cuda-11.0", "/usr/local/cuda-12.8"}
    assert tks["/usr/local/cuda"]["version"] == "13.0.88"
    assert tks["/usr/local/cuda"]["active_for_build"] is True
    assert tks["/usr/local/cuda"]["nvcc"] == "/usr/local/cuda/bin/nvcc"
    assert tks["/usr/local/cuda-12.8"]["version"] == "12.8.1"
    assert tks["/usr/local/cuda-12.8"]["active_for_build"] is False
    assert tks["/usr/local/cuda-11.0"]["version"] == "11.0.228"
    assert tks["/usr/local/cuda-11.0"]["nvcc"] is None


def test_cuda_home_wins(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    ctx = ProbeContext(env={"PATH": "", "CUDA_HOME": "/usr/local/cuda-12.8"}, root=root, path_dirs=[])
    tks = by_path(ToolkitsProbe().run(ctx).facts["cuda_toolkits"])
    assert tks["/usr/local/cuda-12.8"]["source"] == "CUDA_HOME"
    assert tks["/usr/local/cuda-12.8"]["active_for_build"] is True
    assert tks["/usr/local/cuda"]["active_for_build"] is False


def test_cuda_home_missing(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    ctx = ProbeContext(env={"PATH": "", "CUDA_HOME": "/opt/cuda-99"}, root=root, path_dirs=[])
    result = ToolkitsProbe().run(ctx)
    tks = by_path(result.facts["cuda_toolkits"])
    assert tks["/opt/cuda-99"]["error"] == "/opt/cuda-99 does not exist"
    assert tks["/opt/cuda-99"]["active_for_build"] is True  # a build would use it, and fail
    assert result.status == "partial"


def test_nvcc_on_path(tmp_path: Path) -> None:
    nvcc = tmp_path / "opt/cuda-x/bin/nvcc"
    make_exe(nvcc, f"cat <<'X'\n{NVCC_13}X")
    path = f"{nvcc.parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
    # the nvcc on PATH runs: only on the host view (root /), where its path is a host path
    tks = ToolkitsProbe().run(ProbeContext(env={"PATH": path}, root=Path("/"), path_dirs=[])).facts["cuda_toolkits"]
    first = tks[0]
    assert first["source"] == "nvcc"
    assert first["version"] == "13.0.88"  # from `nvcc --version`: no version file there
    assert first["active_for_build"] is True
    assert first["nvcc"] == str(nvcc)
    assert sum(1 for t in tks if t["active_for_build"]) == 1


def test_nvcc_hang_is_bounded(tmp_path: Path) -> None:
    nvcc = tmp_path / "opt/cuda-y/bin/nvcc"
    make_exe(nvcc, "sleep 30")
    path = f"{nvcc.parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
    ctx = ProbeContext(env={"PATH": path}, root=Path("/"), path_dirs=[], subprocess_timeout_s=0.3)
    result = ToolkitsProbe().run(ctx)
    assert result.status == "partial"
    assert result.reason == "nvcc timed out after 0.3s"


def test_pip_toolkits(tmp_path: Path) -> None:
    sp = tmp_path / "site-packages"
    info = sp / "nvidia_cuda_runtime_cu12-12.8.90.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-cuda-runtime-cu12\nVersion: 12.8.90\n")
    (sp / "nvidia/cuda_runtime").mkdir(parents=True)
    # a root view: the search path and the toolkit paths are box paths inside it
    ctx = ProbeContext(env={"PATH": ""}, root=tmp_path, path_dirs=["/site-packages"])
    tks = ToolkitsProbe().run(ctx).facts["cuda_toolkits"]
    assert tks == [
        {
            "path": "/site-packages/nvidia/cuda_runtime",
            "version": "12.8.90",
            "source": "pip",
            "nvcc": None,
            "active_for_build": False,
            "active_for_torch": False,
        }
    ]


def test_parsers(tmp_path: Path) -> None:
    assert parse_nvcc_version(NVCC_13) == "13.0.88"
    assert parse_nvcc_version("garbage") is None
    assert read_toolkit_version(HostView(), str(tmp_path)) is None


def test_nvcc_answer_is_kept_by_the_stamp_of_a_compiled_nvcc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21: `nvcc --version` (a toolkit without a version file) runs once per state of a compiled nvcc; a
    changed nvcc runs again; a wrapper script runs every time (its target can change without it)."""
    from stackcheck.probes import toolkits
    from stackcheck.readers import kept

    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setattr(kept, "RACY_NS", 0)  # (the files are made now: old enough for the test)
    ran: list[str] = []

    def fake_run(argv: list[str], timeout_s: float, env: object = None) -> tuple[int, str, str]:
        ran.append(argv[0])
        return 0, NVCC_13 if b"13" in Path(argv[0]).read_bytes() else NVCC_13.replace("13.0", "12.9"), ""

    monkeypatch.setattr(toolkits, "run_command", fake_run)
    nvcc = tmp_path / "opt/cuda-x/bin/nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_bytes(b"\x7fELF compiled nvcc 13")
    nvcc.chmod(0o755)
    path = f"{nvcc.parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
    ctx = ProbeContext(env={"PATH": path}, root=Path("/"), path_dirs=[], cache_dir=str(tmp_path / "cache"))

    def version() -> object:
        return ToolkitsProbe().run(ctx).facts["cuda_toolkits"][0]["version"]

    assert (version(), len(ran)) == ("13.0.88", 1)
    assert (version(), len(ran)) == ("13.0.88", 1)  # kept: not run again
    nvcc.write_bytes(b"\x7fELF compiled nvcc 12.9 (another size)")
    assert (version(), len(ran)) == ("12.9.88", 2)  # changed: run again
    assert (version(), len(ran)) == ("12.9.88", 2)
    nvcc.write_text('#!/bin/sh\nexec /opt/cuda-13/bin/nvcc "$@"\n', encoding="utf-8")  # a wrapper: never kept
    assert (version(), len(ran)) == ("13.0.88", 3)
    assert (version(), len(ran)) == ("13.0.88", 4)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")  # the caches off: run every time
    nvcc.write_bytes(b"\x7fELF compiled nvcc 13")
    assert (version(), version(), len(ran)) == ("13.0.88", "13.0.88", 6)


def test_prepare_runs_nvcc_early_and_run_takes_its_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21: prepare() (called by the runner beside the first wave) runs the $PATH nvcc's --version once; run()
    takes that answer, and the facts are those of a run without prepare."""
    from stackcheck.probes import toolkits

    ran: list[str] = []

    def fake_run(argv: list[str], timeout_s: float, env: object = None) -> tuple[int, str, str]:
        ran.append(argv[0])
        return 0, NVCC_13, ""

    monkeypatch.setattr(toolkits, "run_command", fake_run)
    nvcc = tmp_path / "opt/cuda-x/bin/nvcc"
    make_exe(nvcc, "exit 1")
    path = f"{nvcc.parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
    ctx = ProbeContext(env={"PATH": path}, root=Path("/"), path_dirs=[])
    plain = ToolkitsProbe().run(ctx)
    assert ran == [str(nvcc)]
    probe = ToolkitsProbe()
    probe.prepare(ctx)
    prepared = probe.run(ctx)
    assert ran == [str(nvcc)] * 2  # once by prepare, not again by run
    assert (prepared.facts, prepared.status, prepared.reason) == (plain.facts, plain.status, plain.reason)
    # a toolkit folder with a version file: nothing to run early
    (tmp_path / "opt/cuda-x/version.json").write_text(json.dumps({"cuda": {"version": "13.0.2"}}), encoding="utf-8")
    ToolkitsProbe().prepare(ctx)
    assert len(ran) == 2


def test_prepare_returns_at_once_and_a_hung_path_search_stays_inside_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner calls prepare() in its main thread, outside every probe's timeout: prepare must return at once even
    when the $PATH search hangs (a hung mount on $PATH), so that --timeout still bounds the audit (iperf11 searched
    $PATH and read the version files in the caller's thread); an error in its thread is no traceback, and run() then
    does the work itself."""
    import threading
    import time

    from stackcheck.probes import toolkits
    from stackcheck.probes.interface import Probe, ProbeResult
    from stackcheck.probes.runner import run_probes

    hung = threading.Event()
    real_which = getattr(toolkits, "which")  # noqa: B009  (imported there from fsview)

    def hanging_which(view: object, name: str, path: str) -> str | None:
        hung.wait(20)
        return None

    class QuickPython(Probe):
        name, sections = "python", ("python",)

        def run(self, ctx: ProbeContext) -> ProbeResult:
            return ProbeResult({"python": {}})

    monkeypatch.setattr(toolkits, "which", hanging_which)
    ctx = ProbeContext(env={"PATH": str(tmp_path)}, root=Path("/"), path_dirs=[])
    try:
        start = time.monotonic()
        ToolkitsProbe().prepare(ctx)
        assert time.monotonic() - start < 10  # the failure waits for the hung search (20 s)
        start = time.monotonic()
        registry: dict[str, type[Probe]] = {"python": QuickPython, "toolkits": ToolkitsProbe}
        _, outcomes = run_probes(["python", "toolkits"], ctx, budget_s=0.5, registry=registry)
        assert time.monotonic() - start < 5.0
        assert [o["status"] for o in outcomes] == ["ok", "timeout"]
    finally:
        hung.set()

    def failing_which(view: object, name: str, path: str) -> str | None:
        raise RuntimeError("a search that fails")

    ran: list[str] = []

    def fake_run(argv: list[str], timeout_s: float, env: object = None) -> tuple[int, str, str]:
        ran.append(argv[0])
        return 0, NVCC_13, ""

    monkeypatch.setattr(toolkits, "run_command", fake_run)
    nvcc = tmp_path / "opt/cuda-x/bin/nvcc"
    make_exe(nvcc, "exit 1")
    ctx = ProbeContext(env={"PATH": str(nvcc.parent)}, root=Path("/"), path_dirs=[])
    probe = ToolkitsProbe()
    monkeypatch.setattr(toolkits, "which", failing_which)
    probe.prepare(ctx)
    assert probe._early is not None and probe._early[0].wait(5)  # (the thread ended without a traceback)
    monkeypatch.setattr(toolkits, "which", real_which)
    assert probe.run(ctx).facts["cuda_toolkits"][0]["version"] == "13.0.88"
    assert ran == [str(nvcc)]


def test_a_compiled_wrapper_linked_as_nvcc_is_run_every_time_and_a_switched_link_is_a_new_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kept nvcc answer is the answer of the file itself: a compiled wrapper linked as nvcc (ccache's masquerade:
    `nvcc -> ccache`, which runs the next nvcc on $PATH) keeps the same stamp when that nvcc changes, so it is never
    kept (iperf11 kept it: the first toolkit's version was served after an upgrade); a /usr/local/cuda-style link
    switched to another toolkit's nvcc is a new stamp, so it is run again."""
    from stackcheck.probes import toolkits
    from stackcheck.readers import kept

    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setattr(kept, "RACY_NS", 0)
    answers = {"v": NVCC_13}
    ran: list[str] = []

    def fake_run(argv: list[str], timeout_s: float, env: object = None) -> tuple[int, str, str]:
        ran.append(argv[0])
        return 0, answers["v"], ""

    monkeypatch.setattr(toolkits, "run_command", fake_run)
    wrapper_dir = tmp_path / "usr/lib/ccache"
    wrapper_dir.mkdir(parents=True)
    (tmp_path / "usr/bin").mkdir(parents=True)
    ccache = tmp_path / "usr/bin/ccache"
    ccache.write_bytes(b"\x7fELF a compiler cache")
    ccache.chmod(0o755)
    (wrapper_dir / "nvcc").symlink_to(ccache)
    ctx = ProbeContext(env={"PATH": str(wrapper_dir)}, root=Path("/"), path_dirs=[], cache_dir=str(tmp_path / "cache"))

    def version() -> object:
        return ToolkitsProbe().run(ctx).facts["cuda_toolkits"][0]["version"]

    assert (version(), len(ran)) == ("13.0.88", 1)
    answers["v"] = NVCC_13.replace("13.0", "12.9")  # the nvcc after it on $PATH changed; ccache did not
    assert (version(), len(ran)) == ("12.9.88", 2)
    assert (version(), len(ran)) == ("12.9.88", 3)

    for release in ("13.0", "12.9"):
        real = tmp_path / f"opt/cuda-{release}/bin/nvcc"
        real.parent.mkdir(parents=True)
        real.write_bytes(b"\x7fELF compiled nvcc, same size")
        real.chmod(0o755)
        os.utime(real, ns=(1_000_000_000, 1_000_000_000))
    (tmp_path / "opt/cuda").symlink_to("cuda-13.0")
    ctx = ProbeContext(
        env={"PATH": str(tmp_path / "opt/cuda/bin")}, root=Path("/"), path_dirs=[], cache_dir=str(tmp_path / "cache")
    )
    answers["v"] = NVCC_13
    assert (version(), len(ran)) == ("13.0.88", 4)
    assert (version(), len(ran)) == ("13.0.88", 4)  # kept
    (tmp_path / "opt/cuda").unlink()
    (tmp_path / "opt/cuda").symlink_to("cuda-12.9")
    answers["v"] = NVCC_13.replace("13.0", "12.9")
    assert (version(), len(ran)) == ("12.9.88", 5)
