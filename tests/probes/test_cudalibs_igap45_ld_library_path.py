"""igap45 (issue 16, loader item 1): one reading of LD_LIBRARY_PATH for every search that follows it
(stackcheck.probes.cudalibs.ld_library_path). glibc splits the value at ':' and ';', keeps an empty element (the
directory name "", the working directory) and a relative one as written, and drops trailing slashes but "/"'s
(elf/dl-load.c _dl_init_paths: fillin_rpath (llp_tmp, ..., ":;", "LD_LIBRARY_PATH", ...); fillin_rpath; glibc 2.26's
source). Three splitters read it three ways: the jit probe's bare NCCL name as glibc, but the cuda_libs probe and gate
--facts' launch loader path split at ':' only and passed relative elements over, so `LD_LIBRARY_PATH=/opt/a:lib`
(a launch started in a directory whose ./lib holds an older libnuma.so.1 or libcudart.so.12) was judged on the
system copy found after it: found, a false pass. Now a library not found before such an element is unknown where the
launch directory is not known, and read from that directory where it is (gate --cwd, `env -C`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, cli_json, model_dir, release_box
from probes.test_probe_issue16 import elf64

from stackcheck.launch.facts_loader_path import apply_launch_loader_path, launch_loader_path
from stackcheck.probes.cudalibs import probe_cuda_libs
from stackcheck.readers.fsview import HostView
from stackcheck.readers.ldpath import ld_library_path

SONAMES = ("libnuma.so.1", "libcudart.so.12")


@pytest.mark.parametrize(
    ("value", "cwd", "placed", "unplaced"),
    [
        ("/a:/b/", None, ["/a", "/b"], None),
        ("/a;/b", None, ["/a", "/b"], None),  # (before, in cudalibs: one directory "/a;/b")
        ("/a//:/", None, ["/a", "/"], None),
        ("/a::/b", None, ["/a"], ""),  # an empty element: the working directory
        ("/a:lib:/b", None, ["/a"], "lib"),
        ("/a:lib/:/b", "/srv/run", ["/a", "/srv/run/lib", "/b"], None),
        (":/b", "/srv/run/", ["/srv/run", "/b"], None),
        ("/a:$ORIGIN/../lib:/b", "/srv/run", ["/a"], "$ORIGIN/../lib"),
        ("/a:lib", "relative/dir", ["/a"], "lib"),  # (a launch directory must be absolute to place anything)
        ("", None, [], None),
        (None, None, [], None),
    ],
)
def test_the_one_splitter_reads_the_variable_as_glibc(
    value: str | None, cwd: str | None, placed: list[str], unplaced: str | None
) -> None:
    assert ld_library_path(value, cwd) == (placed, unplaced)


def _box(tmp_path: Path) -> tuple[HostView, Path]:
    """A root whose default directory holds both libraries and whose launch directory's lib/ holds an older
    libcudart.so.12; /opt/a holds libnuma.so.1."""
    root = tmp_path / "root"
    for soname in SONAMES:
        elf64(root / "usr/lib/x86_64-linux-gnu" / soname)
    elf64(root / "opt/a/libnuma.so.1")
    elf64(root / "srv/run/lib/libcudart.so.12")
    return HostView(str(root)), root


def test_a_relative_element_with_no_launch_directory_is_unknown_past_it(tmp_path: Path) -> None:
    # fails before: libcudart.so.12 was the default directory's copy (the element `lib` passed over)
    view, _root = _box(tmp_path)
    libs = probe_cuda_libs({"LD_LIBRARY_PATH": "/opt/a:lib"}, view, SONAMES)
    assert libs["libnuma.so.1"] == "/opt/a/libnuma.so.1"  # found before the element: the loader's answer
    assert libs["libcudart.so.12"] is None, libs
    why = libs["unreadable"]["libcudart.so.12"]
    assert "'lib'" in why and "working directory" in why and "gate --cwd" in why, why
    assert libs["ld_library_path"] == ["/opt/a"]


def test_a_relative_element_is_read_from_the_launch_directory(tmp_path: Path) -> None:
    # fails before: the default directory's copy, never the launch directory's
    view, _root = _box(tmp_path)
    libs = probe_cuda_libs({"LD_LIBRARY_PATH": "/opt/a;lib/"}, view, SONAMES, cwd="/srv/run")
    assert libs["libcudart.so.12"] == "/srv/run/lib/libcudart.so.12", libs
    assert libs["libnuma.so.1"] == "/opt/a/libnuma.so.1" and "unreadable" not in libs
    assert libs["ld_library_path"] == ["/opt/a", "/srv/run/lib"]
    # an element naming $ORIGIN (the loader expands it from the executable) is not read: unknown past it
    libs = probe_cuda_libs({"LD_LIBRARY_PATH": "$ORIGIN/lib:/opt/a"}, view, SONAMES, cwd="/srv/run")
    assert libs["libnuma.so.1"] is None and "dynamic string token" in libs["unreadable"]["libnuma.so.1"]


def test_the_launch_loader_path_is_read_with_the_same_splitter() -> None:
    mapping: dict[str, Any] = {}
    # fails before: `lib` dropped, the launch's directories were the facts' own: unchanged, the facts' answer taken
    assert launch_loader_path(["env", "LD_LIBRARY_PATH=/opt/a:lib", "x"], mapping, ["/opt/a"]) == (
        ["/opt/a", "lib"],
        True,
    )
    # fails before: "/opt/a;/opt/b" was one directory, another than the facts' two
    assert launch_loader_path(["env", "LD_LIBRARY_PATH=/opt/a;/opt/b/", "x"], mapping, ["/opt/a", "/opt/b"]) == (
        ["/opt/a", "/opt/b"],
        False,
    )
    # with the launch directory known, a relative element is a directory like another
    got = launch_loader_path(["env", "LD_LIBRARY_PATH=/opt/a:lib", "x"], mapping, ["/opt/a"], cwd="/srv/run")
    assert got == (["/opt/a", "/srv/run/lib"], True)
    libs: dict[str, Any] = {
        "libnuma.so.1": "/opt/a/libnuma.so.1",  # found before the element: it stands
        "libcurl.so.4": "/usr/lib/x86_64-linux-gnu/libcurl.so.4",  # found past it: not known
        "ld_cache": "file",
        "ld_library_path": ["/opt/a"],
    }
    facts: dict[str, Any] = {"cuda_libs": libs}
    assert apply_launch_loader_path(facts, ["env", "LD_LIBRARY_PATH=/opt/a:lib", "python3"], mapping) == [
        "libcurl.so.4"
    ]
    assert facts["cuda_libs"]["libnuma.so.1"] == "/opt/a/libnuma.so.1"


def test_gate_facts_refuses_to_judge_past_a_relative_launch_element(tmp_path: Path) -> None:
    """gate --facts of a Llama 3 prefill launch with mooncake-transfer-engine 0.3.13.post1, whose engine.so needs
    libibverbs, libnuma, libcurl and libmlx5 from the loader's path (check transfer-package)."""
    facts = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(facts.read_text())
    doc["facts"]["packages"]["mooncake-transfer-engine"] = {"installed": True, "version": "0.3.13.post1"}
    doc["facts"]["packages"]["torch"]["cuda"] = "12.8"
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", **MOONCAKE_SYSTEM_LIBS, "ld_library_path": ["/opt/cuda/lib64"]}
    facts.write_text(json.dumps(doc))
    line = ["env", "LD_LIBRARY_PATH=/opt/cuda/lib64:lib", "python3", "-m", "sglang.launch_server", "--model-path",
            str(model_dir(tmp_path, "m", LLAMA3)), "--tp", "8", "--disaggregation-mode", "prefill"]  # fmt: skip
    out = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    checks = [c for c in (out.get("preflight") or {}).get("checks") or [] if c.get("check") == "transfer-package"]
    assert checks and checks[0]["status"] == "unknown", checks  # fails before: ok
    assert out["decision"] != "allow"


def test_the_kernel_symbol_probe_reads_no_libcuda_where_the_loaders_is_not_known(tmp_path: Path) -> None:
    # fails before: the default directory's libcuda.so.1 was read as the driver's (the element `lib` passed over)
    from stackcheck.probes.kernel_symbols import LIBCUDA, find_libcuda

    view, root = _box(tmp_path)
    elf64(root / "usr/lib/x86_64-linux-gnu" / LIBCUDA)
    assert find_libcuda({"LD_LIBRARY_PATH": "/opt/a"}, view) == f"/usr/lib/x86_64-linux-gnu/{LIBCUDA}"
    assert find_libcuda({"LD_LIBRARY_PATH": "/opt/a:lib"}, view) is None


def test_a_rule_on_a_library_past_the_element_is_unknown_with_its_reason() -> None:
    from stackcheck.verdicts.context import Context, Unknown

    libs = {"libnuma.so.1": None, "unreadable": {"libnuma.so.1": "LD_LIBRARY_PATH's element 'lib', searched ..."}}
    ctx = Context(facts={"cuda_libs": libs}, manifests=None)  # type: ignore[arg-type]
    with pytest.raises(Unknown) as got:
        ctx.cuda_lib_found("numa.1", "cudalib.numa.1")
    assert "LD_LIBRARY_PATH's element 'lib'" in str(got.value) and "could not be read" not in str(got.value)
