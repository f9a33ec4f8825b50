"""igap34 (issue 16, class 6: which CUDA runtime SGLang's symmetric-memory allocator is linked against): the rule
symm-mem-allocator-cudart-major compares the DT_SONAME of the libcudart.so torch's `-lcudart` takes with torch's CUDA
major, and the probe left the soname out (so the rule out, and `--tp 2 --enable-symm-mem` allowed) where that
libcudart.so is an ELF without DT_SONAME (the link then writes the name it found, libcudart.so, into the allocator's
DT_NEEDED, which torch's libcudart.so.13 does not answer) or a linker script (`INPUT(libcudart.so.12)`, as a
distribution may install in place of the link), which ld follows to another runtime.

The probe now follows a linker script as ld does to the files it names in the script's own directory and reads the
shared library's DT_SONAME there; where it cannot (a file elsewhere, another script, no DT_SONAME) it writes the soname
as null with why, and the rule is unknown: refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from elfwriter import write_so
from gate_cli import LLAMA3, allocator_box, gate_json, gnu_ld, model_dir, rule_results

from stackcheck.probes.jit import nccl_link
from stackcheck.readers.fsview import HostView

RULE = "symm-mem-allocator-cudart-major"


def _home(tmp_path: Path, script: str | None, soname: str | None = "libcudart.so.12") -> Path:
    """A CUDA home whose lib64 holds libcudart.so.12.8.90 (DT_SONAME `soname`, none where None), libcudart_static.a,
    and a libcudart.so that is the linker script `script` (its `{lib}` the lib64 directory), else a link to the
    library; and ../other/libcudart.so.13.0.96 beside it (DT_SONAME libcudart.so.13)."""
    lib = tmp_path / "cuda" / "lib64"
    lib.mkdir(parents=True)
    write_so(lib / "libcudart.so.12.8.90", defined=["cudaGetDeviceCount"], soname=soname)
    (lib / "libcudart_static.a").write_bytes(b"!<arch>\n")
    (tmp_path / "cuda" / "other").mkdir()
    write_so(tmp_path / "cuda/other/libcudart.so.13.0.96", defined=["cudaGetDeviceCount"], soname="libcudart.so.13")
    write_so(lib / "libcudart.so.13.0.96", defined=["cudaGetDeviceCount"], soname="libcudart.so.13")
    if script is None:
        (lib / "libcudart.so").symlink_to("libcudart.so.12.8.90")
    else:
        (lib / "libcudart.so").write_text(script.replace("{lib}", str(lib)))
    return lib.parent


def _probe(tmp_path: Path, script: str | None, soname: str | None = "libcudart.so.12") -> dict[str, Any]:
    home = _home(tmp_path, script, soname)
    gnu_ld(tmp_path / "bin/ld")  # (igap39: a bare name is followed only for binutils 2.37+'s ld)
    got = nccl_link({"PATH": str(tmp_path / "bin")}, HostView(), str(home), True, "x86_64")
    assert got["libcudart_so_found"] is True and got["libcudart_so"] == f"{home}/lib64/libcudart.so", got
    return got


@pytest.mark.parametrize(
    ("script", "soname"),
    [
        ("/* GNU ld script */\nINPUT(libcudart.so.12.8.90)\n", "libcudart.so.12"),
        ("GROUP ( {lib}/libcudart.so.12.8.90 libcudart_static.a AS_NEEDED ( libcudart.so.12.8.90 ) )",
         "libcudart.so.12"),
        ("INPUT(libcudart.so.13.0.96)", "libcudart.so.13"),
    ],
)  # fmt: skip
def test_a_linker_script_is_followed_to_the_library_it_names(tmp_path: Path, script: str, soname: str) -> None:
    # each was left out before (the file is no ELF): the rule did not apply
    got = _probe(tmp_path, script)
    assert got["libcudart_so_soname"] == soname and "libcudart_so_soname_reason" not in got, got


@pytest.mark.parametrize(
    ("script", "soname", "why"),
    [
        ("INPUT(../other/libcudart.so.13.0.96)", "libcudart.so.12", "outside its own directory"),
        ("INPUT(/usr/lib/x86_64-linux-gnu/libcudart.so.12)", "libcudart.so.12", "outside its own directory"),
        ("INPUT(-lcudart_real)", "libcudart.so.12", "outside its own directory"),
        ("INPUT(libcudart.so.12.9)", "libcudart.so.12", "no ELF shared library there"),
        ("INPUT(libcudart.so.12.8.90 libcudart.so.13.0.96)", "libcudart.so.12", "2 shared libraries"),
        ("INPUT(libcudart.so.12.8.90)", None, "without DT_SONAME"),
        (None, None, "without DT_SONAME"),
        ("SEARCH_DIR(/opt/cuda)", "libcudart.so.12", "no INPUT / GROUP linker script"),
    ],
)
def test_a_libcudart_so_whose_soname_is_not_read_is_null(tmp_path: Path, script: str, soname: str, why: str) -> None:
    got = _probe(tmp_path, script, soname)
    assert got["libcudart_so_soname"] is None and why in got["libcudart_so_soname_reason"], got


def _gate(tmp_path: Path, got: dict[str, Any], release: str = "0.5.23") -> dict[str, Any]:
    """`gate --dry-run` of `--tp 2 --enable-symm-mem` on h200-newest (torch 2.14.1+cu130) at `release`, its -lcudart
    taking the probe's libcudart.so (`got`'s keys)."""
    tmp_path.mkdir(parents=True)
    facts = allocator_box(tmp_path, release)
    doc = json.loads(facts.read_text())  # (the probe's keys as it wrote them: a null soname stays null)
    doc["facts"]["jit"].update({k: v for k, v in got.items() if k.startswith("libcudart_so")})
    facts.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    return gate_json(facts, "--model-path", str(model), "--tp", "2", "--enable-symm-mem", dry_run=True)


@pytest.mark.parametrize(
    ("script", "soname"),
    [
        ("INPUT(libcudart.so.12.8.90)", "libcudart.so.12"),
        ("INPUT(libcudart.so.12.8.90)", None),
        (None, None),
        ("INPUT(../other/libcudart.so.13.0.96)", "libcudart.so.12"),
    ],
)
def test_the_gate_refuses_what_it_cannot_read_or_another_major(tmp_path: Path, script: str, soname: str) -> None:
    # a linker script to a CUDA 12 runtime, a CUDA 12 runtime without DT_SONAME (through a script or a link), a script
    # naming a runtime out of its directory, beside torch cu130: allowed before (the rule left out)
    got = _probe(tmp_path / "probe", script, soname)
    doc = _gate(tmp_path / "gate", got)
    assert doc["decision"] == "refuse" and rule_results(doc, RULE) == [("unknown", "unknown")], doc.get("reasons")


def test_the_gate_allows_a_linker_script_to_torchs_major(tmp_path: Path) -> None:
    got = _probe(tmp_path / "probe", "INPUT(libcudart.so.13.0.96)")
    doc = _gate(tmp_path / "gate", got)
    assert rule_results(doc, RULE) == [] and doc["decision"] == "allow", doc.get("reasons")
