"""igap39 (issue 16, class 6): a libcudart.so that is a linker script naming a file without a directory
(`INPUT(libcudart.so.13.0.96)`) was followed to that file in the script's own directory, as binutils 2.37 and later
look there first. GNU ld before 2.37 opens such a name in the link's working directory first (the extension's build
directory, which the probe does not read) and then searches the library path: there the reading could be another
file's, and `--enable-symm-mem` was allowed (a false pass where the runtime found is another major's). The probe now
reads the binutils version of the ld the link runs (the PATH's GNU ld, its --version strings) and follows a bare name
only for 2.37+; before 2.37, or where that version is not read, the soname is null (unknown, refused). Absolute names
are followed as before. The ld programs are minimal ELF files in GNU ld's string shape, written here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from elfwriter import build_so, write_so
from gate_cli import LLAMA3, allocator_box, gate_json, gnu_ld, model_dir, rule_results, touch_exe

from stackcheck.probes.jit import gnu_ld_version, nccl_link
from stackcheck.readers.fsview import HostView

RULE = "symm-mem-allocator-cudart-major"
HOME = "/usr/local/cuda"


def _box(root: Path, script: str, ld: str | None) -> HostView:
    """A box whose CUDA home's lib64 holds libcudart.so.13.0.96 (DT_SONAME libcudart.so.13) and the linker script
    libcudart.so (`script`, {lib} its directory); /usr/bin/ld binutils `ld`'s GNU ld ("gold": gold's shape, no GNU
    ld strings; None: no ld)."""
    lib = root / HOME.lstrip("/") / "lib64"
    lib.mkdir(parents=True)
    write_so(lib / "libcudart.so.13.0.96", defined=["cudaGetDeviceCount"], soname="libcudart.so.13")
    (lib / "libcudart.so").write_text(script.replace("{lib}", f"{HOME}/lib64"))
    if ld == "gold":
        touch_exe(root / "usr/bin/ld", build_so(needed=["libc.so.6"]) + b"\0GNU gold (GNU Binutils 2.40) 1.16\0")
    elif ld is not None:
        package = "version" if ld.startswith("2.35") else "(GNU Binutils)"  # (RHEL 9's "version 2.35.2-43.el9")
        gnu_ld(root / "usr/bin/ld", ld, package)
    return HostView(str(root))


def _link(root: Path, script: str, ld: str | None) -> dict[str, Any]:
    got = nccl_link({"PATH": "/usr/local/bin:/usr/bin"}, _box(root, script, ld), HOME, True, "x86_64")
    assert got["libcudart_so"] == f"{HOME}/lib64/libcudart.so", got
    return got


@pytest.mark.parametrize(("ld", "version"), [("2.40", (2, 40)), ("2.37", (2, 37)), ("2.35.2-43.el9", (2, 35))])
def test_the_links_gnu_ld_version_is_read(tmp_path: Path, ld: str, version: tuple[int, int]) -> None:
    view = _box(tmp_path, "INPUT(libcudart.so.13.0.96)", ld)
    assert gnu_ld_version({"PATH": "/usr/bin"}, view) == (version, "")


@pytest.mark.parametrize("ld", ["2.40", "2.37"])
def test_a_bare_name_is_followed_for_binutils_2_37_and_later(tmp_path: Path, ld: str) -> None:
    got = _link(tmp_path, "INPUT(libcudart.so.13.0.96)", ld)
    assert got["libcudart_so_soname"] == "libcudart.so.13" and "libcudart_so_soname_reason" not in got, got


@pytest.mark.parametrize(("ld", "why"), [("2.35.2-43.el9", "binutils 2.35's ld opens"),
                                         ("2.36.1", "binutils 2.36's ld opens"),
                                         (None, "no ld on the server's PATH"),
                                         ("gold", "no GNU ld")])  # fmt: skip
def test_a_bare_name_is_unknown_before_2_37_or_where_the_version_is_not_read(
    tmp_path: Path, ld: str | None, why: str
) -> None:
    got = _link(tmp_path, "INPUT(libcudart.so.13.0.96)", ld)
    assert got["libcudart_so_soname"] is None, got
    assert why in got["libcudart_so_soname_reason"] and "working directory first" in got["libcudart_so_soname_reason"]


def test_an_absolute_name_is_followed_whatever_the_ld(tmp_path: Path) -> None:
    for ld in ("2.35.2-43.el9", None):
        got = _link(tmp_path / str(ld), "GROUP ( {lib}/libcudart.so.13.0.96 )", ld)
        assert got["libcudart_so_soname"] == "libcudart.so.13", (ld, got)


def test_a_linker_in_gccs_own_program_directory_is_not_read(tmp_path: Path) -> None:
    # collect2 runs a real-ld / collect-ld / ld of the compiler's own directories before the PATH's
    view = _box(tmp_path, "INPUT(libcudart.so.13.0.96)", "2.40")
    touch_exe(tmp_path / "usr/lib/gcc/x86_64-linux-gnu/12/real-ld")
    version, why = gnu_ld_version({"PATH": "/usr/bin"}, view)
    assert version is None and "real-ld" in why, why


def test_the_gate_refuses_an_old_lds_bare_name(tmp_path: Path) -> None:
    # the script names torch's own major: allowed under binutils 2.40, refused as unknown under 2.35 (allowed before)
    for ld, decision, results in (("2.40", "allow", []), ("2.35.2-43.el9", "refuse", [("unknown", "unknown")])):
        got = _link(tmp_path / ld / "probe", "INPUT(libcudart.so.13.0.96)", ld)
        (tmp_path / ld / "gate").mkdir(parents=True)
        facts = allocator_box(tmp_path / ld / "gate", "0.5.23")
        doc = json.loads(facts.read_text())
        doc["facts"]["jit"].update({k: v for k, v in got.items() if k.startswith("libcudart_so")})
        doc["facts"]["jit"]["libcudart_so"] = "/usr/local/cuda-13.0/lib64/libcudart.so"
        facts.write_text(json.dumps(doc))
        model = model_dir(tmp_path / ld / "gate", "llama3", LLAMA3)
        out = gate_json(facts, "--model-path", str(model), "--tp", "2", "--enable-symm-mem", dry_run=True)
        assert out["decision"] == decision and rule_results(out, RULE) == results, (ld, out.get("reasons"))
