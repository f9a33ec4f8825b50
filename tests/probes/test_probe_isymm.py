"""The jit probe's look for the libnccl.so that SGLang's symmetric-memory allocator links (`--enable-symm-mem`:
torch's load_inline with -lnccl): the directories that link searches, read through a FileView below tmp_path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.jit import DEFAULT_LINK_DIRS, JitProbe, probe_jit
from stackcheck.readers.fsview import HostView

SITE = "opt/venv/lib/python3.12/site-packages"


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF")
    return path


def _facts(home: str = "/usr/local/cuda-13.0") -> dict[str, Any]:
    tk = {"path": home, "version": "13.0.88", "source": "/usr/local/cuda", "nvcc": None, "active_for_build": True}
    torch = {"installed": True, "version": "2.9.1", "location": f"/{SITE}", "editable": False, "copies": 1}
    return {"cuda_toolkits": [tk], "packages": {"torch": torch}}


def _pip_only(root: Path) -> None:
    """A CUDA toolkit (no NCCL in it) and the nvidia-nccl wheel's one library, libnccl.so.2."""
    _touch(root / "usr/local/cuda-13.0/lib64/libcudart.so")
    _touch(root / SITE / "nvidia/nccl/lib/libnccl.so.2")
    _touch(root / "usr/lib/x86_64-linux-gnu/libc.so.6")


def test_pip_only_box_has_no_libnccl_so_for_the_link(tmp_path: Path) -> None:
    _pip_only(tmp_path)
    jit = probe_jit(_facts(), {"PATH": "/usr/bin"}, HostView(str(tmp_path)))
    assert jit["libnccl_so_found"] is False and "libnccl_so" not in jit and "libnccl_so_reason" not in jit
    # torch's lib and the toolkit's lib64 come first, as torch's _prepare_ldflags passes them; then ld's own
    assert jit["libnccl_so_dirs"][:2] == [f"/{SITE}/torch/lib", "/usr/local/cuda-13.0/lib64"]
    assert "/usr/lib/x86_64-linux-gnu" in jit["libnccl_so_dirs"]
    assert [d for d in jit["libnccl_so_dirs"] if "site-packages" in d] == [f"/{SITE}/torch/lib"]


def test_the_system_nccl_development_library_is_found(tmp_path: Path) -> None:
    _pip_only(tmp_path)
    real = _touch(tmp_path / "usr/lib/x86_64-linux-gnu/libnccl.so.2")
    (tmp_path / "usr/lib/x86_64-linux-gnu/libnccl.so").symlink_to(real.name)
    jit = probe_jit(_facts(), {}, HostView(str(tmp_path)))
    assert jit["libnccl_so_found"] is True and jit["libnccl_so"] == "/usr/lib/x86_64-linux-gnu/libnccl.so"


def test_a_dangling_libnccl_so_link_is_not_found(tmp_path: Path) -> None:
    """libnccl-dev's link without the runtime package: ld cannot open it either."""
    _pip_only(tmp_path)
    (tmp_path / "usr/lib/x86_64-linux-gnu/libnccl.so").symlink_to("libnccl.so.2")
    assert probe_jit(_facts(), {}, HostView(str(tmp_path)))["libnccl_so_found"] is False


def test_library_path_cuda_home_lib_and_gcc_dirs(tmp_path: Path) -> None:
    _pip_only(tmp_path)
    view = HostView(str(tmp_path))
    _touch(tmp_path / "srv/nccl/lib/libnccl.so")
    on = probe_jit(_facts(), {"LIBRARY_PATH": "/srv/nccl/lib"}, view)
    assert on["libnccl_so_found"] is True and on["libnccl_so"] == "/srv/nccl/lib/libnccl.so"
    # a toolkit with lib/ and no lib64/: torch passes -L<home>/lib
    _touch(tmp_path / "opt/cuda/lib/libnccl.so")
    lib = probe_jit(_facts("/opt/cuda"), {}, view)
    assert lib["libnccl_so_found"] is True and lib["libnccl_so"] == "/opt/cuda/lib/libnccl.so"
    # GCC's own directory, one per installed version; the static archive is what -lnccl takes too
    _touch(tmp_path / "usr/lib/gcc/x86_64-linux-gnu/12/libnccl.a")
    gcc = probe_jit(_facts(), {}, view)
    assert gcc["libnccl_so"] == "/usr/lib/gcc/x86_64-linux-gnu/12/libnccl.a"
    # $CUDNN_HOME/lib64 is on the link line when set
    _touch(tmp_path / "opt/cudnn/lib64/libnccl.so")
    assert probe_jit(_facts(), {"CUDNN_HOME": "/opt/cudnn"}, view)["libnccl_so"] == "/opt/cudnn/lib64/libnccl.so"


def test_not_known_where_a_searched_directory_cannot_be_read(tmp_path: Path) -> None:
    _pip_only(tmp_path)
    view = HostView(str(tmp_path))
    relative = probe_jit(_facts(), {"LIBRARY_PATH": "libs"}, view)
    assert relative["libnccl_so_found"] is None and "'libs'" in relative["libnccl_so_reason"]
    conda = probe_jit(_facts(), {"CXX": "/opt/conda/bin/x86_64-conda-linux-gnu-c++"}, view)
    assert conda["libnccl_so_found"] is None and "CXX" in conda["libnccl_so_reason"]
    assert probe_jit(_facts(), {"CXX": "/usr/bin/g++-12"}, view)["libnccl_so_found"] is False
    unprobed = probe_jit({}, {}, view)
    assert unprobed["libnccl_so_found"] is None and "cuda_toolkits" in unprobed["libnccl_so_reason"]
    # found elsewhere, the unread directory does not matter
    _touch(tmp_path / "usr/local/lib/libnccl.so")
    assert probe_jit({}, {"LIBRARY_PATH": "libs"}, view)["libnccl_so_found"] is True


def test_the_default_directories_are_the_linkers(tmp_path: Path) -> None:
    """GNU ld's SEARCH_DIRs as `ld --verbose` lists them on x86_64 Debian/Ubuntu are all read (where ld runs)."""
    for d in ("/usr/local/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
              "/usr/lib64", "/usr/local/lib", "/lib", "/usr/lib", "/usr/x86_64-linux-gnu/lib"):  # fmt: skip
        assert d in DEFAULT_LINK_DIRS


def test_probe_class_reads_the_target_environment(tmp_path: Path) -> None:
    _pip_only(tmp_path)
    _touch(tmp_path / "srv/nccl/lib/libnccl.so")
    view = HostView(str(tmp_path))
    ctx = ProbeContext(env={"LIBRARY_PATH": "/srv/nccl/lib"}, view=view, facts=_facts())
    assert JitProbe().run(ctx).facts["jit"]["libnccl_so_found"] is True
    assert JitProbe().run(ProbeContext(env={}, view=view, facts=_facts())).facts["jit"]["libnccl_so_found"] is False


def test_a_relative_cudnn_home_is_not_read_from_stackchecks_directory(tmp_path: Path) -> None:
    """irev50: torch's -L$CUDNN_HOME/lib64 with a relative CUDNN_HOME is read from the extension's build directory.
    Before: it was looked up relative to the audit's own directory (here: a libnccl.so there said found)."""
    _pip_only(tmp_path)
    _touch(tmp_path / "cudnn/lib64/libnccl.so")
    jit = probe_jit(_facts(), {"CUDNN_HOME": "cudnn"}, HostView(str(tmp_path)))
    assert jit["libnccl_so_found"] is None and "CUDNN_HOME" in jit["libnccl_so_reason"]


def test_a_libnccl_so_of_the_other_architecture_is_not_found(tmp_path: Path) -> None:
    """ld's search for x86_64 skips an aarch64 libnccl.so (multiarch cross packages) as incompatible: only a hit in a
    directory of the link's own architecture, or of none, counts."""
    _pip_only(tmp_path)
    _touch(tmp_path / "usr/lib/aarch64-linux-gnu/libnccl.so")
    facts = {**_facts(), "system": {"machine": "x86_64"}}
    jit = probe_jit(facts, {}, HostView(str(tmp_path)))
    assert jit["libnccl_so_found"] is False and "libnccl_so" not in jit
    facts["system"] = {"machine": "aarch64"}
    jit = probe_jit(facts, {}, HostView(str(tmp_path)))
    assert jit["libnccl_so_found"] is True and jit["libnccl_so"] == "/usr/lib/aarch64-linux-gnu/libnccl.so"
    _touch(tmp_path / "usr/lib64/libnccl.so")  # a directory of no triplet counts for any architecture
    facts["system"] = {"machine": "x86_64"}
    assert probe_jit(facts, {}, HostView(str(tmp_path)))["libnccl_so"] == "/usr/lib64/libnccl.so"


def test_the_other_architectures_libnccl_so_is_unknown_where_the_machine_is_not_read(tmp_path: Path) -> None:
    from stackcheck.probes.jit import nccl_link

    _pip_only(tmp_path)
    _touch(tmp_path / "usr/lib/aarch64-linux-gnu/libnccl.so")
    out = nccl_link({}, HostView(str(tmp_path)), "/usr/local/cuda-13.0", True, None)
    assert out["libnccl_so_found"] is None and "aarch64" in out["libnccl_so_reason"]
