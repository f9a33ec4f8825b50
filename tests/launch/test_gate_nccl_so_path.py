"""SGLANG_NCCL_SO_PATH under --enable-symm-mem (igap23; checks.json nccl rules symm-mem-nccl-so-path and
symm-mem-nccl-so-path-version, the jit probe's nccl_so_path keys).

SGLang 0.5.1-0.5.23's pynccl loads the file that variable names instead of libnccl.so.2 (pynccl_wrapper.py
find_nccl_library); the symmetric-memory allocator's load_inline link (-lnccl) never reads it. A named file that is
not there leaves pynccl disabled, and the allocator then reads the disabled communicator (AttributeError): refused.
On 0.5.1-0.5.4 the version the allocator asserts is that file's, not the nvidia-nccl wheel's: unknown (it was
judged by the wheel, a false pass where the wheel is new and the named NCCL old). Without the variable nothing
changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

RULES = (
    "symm-mem-nccl-so-path",
    "symm-mem-nccl-so-path-version",
    "symm-mem-nccl-wheel-cu12",
    "symm-mem-nccl-wheel-cu13",
    "symm-mem-nccl-system",
    "symm-mem-nccl-unread",
)


def _box(tmp_path: Path, release: str, so_path: str | None, found: bool | None, nccl: str = "2.30.7") -> Path:
    """tests/cases/h200-newest at `release` with every hop of the allocator's build in place, its nvidia-nccl-cu13
    wheel at `nccl` (torch 2.14.1+cu130's pin 2.30.7 unless given: ifc46), and the jit probe's reading of
    SGLANG_NCCL_SO_PATH (None: not set)."""
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    section = doc["facts"]["jit"]
    section.update(libnccl_so_found=True, libnccl_so="/usr/lib/x86_64-linux-gnu/libnccl.so", cxx_found=True,
                   cxx="/usr/bin/c++", cxx_cuda_runtime_h_found=True, cxx_nccl_h_found=True,
                   libcudart_so_found=True)  # fmt: skip
    if so_path is not None:
        section.update(nccl_so_path=so_path, nccl_so_path_found=found)
    doc["facts"]["packages"]["nvidia-nccl-cu13"].update(version=nccl, dist_version=nccl)
    path = tmp_path / f"facts-{release}-{found}-{nccl}.json"
    path.write_text(json.dumps(doc))
    return path


def _gate(tmp_path: Path, facts: Path, *flags: str) -> dict[str, Any]:
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), *flags]
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _rules(doc: dict[str, Any]) -> dict[str, str]:
    """{rule: result} for the NCCL version and path rules the decision names."""
    return {
        str(x["rule"]): str(x.get("result"))
        for r in doc.get("reasons") or []
        for x in r.get("reasons") or []
        if x.get("rule") in RULES
    }


@pytest.mark.parametrize("release", ["0.5.2", "0.5.10", "0.5.23"])
def test_a_named_file_that_is_not_there_is_refused_under_symm_mem(tmp_path: Path, release: str) -> None:
    facts = _box(tmp_path, release, "/opt/nccl/lib/libnccl.so.2", False)
    doc = _gate(tmp_path, facts, "--tp", "2", "--enable-symm-mem")
    assert doc["decision"] == "refuse" and _rules(doc).get("symm-mem-nccl-so-path") == "fail", doc.get("reasons")
    reason = next(x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == "symm-mem-nccl-so-path")
    assert reason["effect"] == "crash" and "AttributeError" in reason["message"], reason
    # without the flag, or at tp 1 from 0.5.5, no allocator reads pynccl: the rule does not apply
    assert "symm-mem-nccl-so-path" not in _rules(_gate(tmp_path, facts, "--tp", "2"))
    if release != "0.5.2":
        assert "symm-mem-nccl-so-path" not in _rules(_gate(tmp_path, facts, "--enable-symm-mem"))


def test_a_named_file_there_passes_from_055(tmp_path: Path) -> None:
    # igap36: where its NCCL version is torch's wheel's (2.30.7 here); a version not read is
    # symm-mem-nccl-so-path-same-nccl's unknown (tests/launch/test_gate_igap36_nccl_so_path_same_nccl.py); igap40:
    # and its CUDA build the wheel's CUDA major (13 beside nvidia-nccl-cu13; facts without it are unknown)
    box = _box(tmp_path, "0.5.23", "/opt/nccl/lib/libnccl.so.2", True)
    doc = json.loads(box.read_text())
    doc["facts"]["jit"].update(nccl_so_path_window=True, nccl_so_path_version="2.30.7", nccl_so_path_cuda="13.0",
                               nccl_so_path_cuda_major=13)  # fmt: skip
    box.write_text(json.dumps(doc))
    doc = _gate(tmp_path, box, "--tp", "2", "--enable-symm-mem")
    assert doc["decision"] == "allow" and _rules(doc) == {}, doc.get("reasons")


def test_a_name_not_read_is_unknown(tmp_path: Path) -> None:
    doc = _gate(tmp_path, _box(tmp_path, "0.5.23", "nccl/libnccl.so.2", None), "--tp", "2", "--enable-symm-mem")
    assert doc["decision"] == "refuse" and _rules(doc) == {"symm-mem-nccl-so-path": "unknown"}, doc.get("reasons")


@pytest.mark.parametrize("wheel", ["2.30.7", "2.26.2"])
def test_054_asserts_the_named_nccl_not_the_wheel(tmp_path: Path, wheel: str) -> None:
    """0.5.2 with the variable naming a file that is there: the assertion reads that NCCL, not read, so unknown
    whatever the wheel (a new wheel passed, an old one was refused, both for the wrong library); without the
    variable the wheel decides as before."""
    named = _gate(tmp_path, _box(tmp_path, "0.5.2", "/opt/nccl/lib/libnccl.so.2", True, wheel), "--tp", "2",
                  "--enable-symm-mem")  # fmt: skip
    if wheel == "2.30.7":
        assert _rules(named) == {"symm-mem-nccl-so-path-version": "unknown"}, named.get("reasons")
    else:  # ifc46: below torch 2.14.1's pin `import torch` fails first (the check's fail hides the unknown)
        assert "torch-nccl-wheel-pin-cu13" in json.dumps(named.get("reasons")), named.get("reasons")
    assert named["decision"] == "refuse"
    plain = _gate(tmp_path, _box(tmp_path, "0.5.2", None, None, wheel), "--tp", "2", "--enable-symm-mem")
    assert _rules(plain) == ({} if wheel == "2.30.7" else {"symm-mem-nccl-wheel-cu13": "fail"}), plain.get("reasons")


def test_the_jit_probe_reads_the_variable(tmp_path: Path) -> None:
    from elfwriter import write_so

    from stackcheck.probes.jit import PYNCCL_FUNCTIONS, nccl_so_path
    from stackcheck.readers.fsview import HostView

    # (igap26: an ELF; ifc41: with every function pynccl binds)
    lib = write_so(tmp_path / "libnccl.so.2", defined=list(PYNCCL_FUNCTIONS), soname="libnccl.so.2")
    view = HostView()
    assert nccl_so_path({}, view) == {} and nccl_so_path({"SGLANG_NCCL_SO_PATH": ""}, view) == {}
    assert nccl_so_path({"SGLANG_NCCL_SO_PATH": str(lib)}, view) == {
        "nccl_so_path": str(lib),
        "nccl_so_path_found": True,
        "nccl_so_path_init_config": False,
        "nccl_so_path_window": False,
        "nccl_so_path_version": None,  # igap36: no "NCCL version X.Y.Z+cudaA.B" string in this library
        "nccl_so_path_version_reason": "no 'NCCL version X.Y.Z+cudaA.B' string (NCCL's init.cc VERSION_STRING) in "
        "its .rodata",
    }
    gone = str(tmp_path / "none" / "libnccl.so.2")
    assert nccl_so_path({"SGLANG_NCCL_SO_PATH": gone}, view)["nccl_so_path_found"] is False
    assert nccl_so_path({"SGLANG_NCCL_SO_PATH": str(tmp_path)}, view)["nccl_so_path_found"] is False  # a directory
    assert nccl_so_path({"SGLANG_NCCL_SO_PATH": "lib/libnccl.so.2"}, view)["nccl_so_path_found"] is None
    assert nccl_so_path({"SGLANG_NCCL_SO_PATH": "libnccl.so.2"}, view)["nccl_so_path_found"] is True


WRAPPER = "sglang/srt/distributed/device_communicators/pynccl_wrapper.py"
PYNCCL = "sglang/srt/distributed/device_communicators/pynccl.py"
ALLOCATOR = "sglang/srt/distributed/device_communicators/pynccl_allocator.py"


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.1", "0.5.4", "0.5.5", "0.5.9", "0.5.17", "0.5.23"])
def test_the_variable_is_read_by_pynccl_only(version: str) -> None:
    """The reading behind the rules, in the real wheels: pynccl's find_nccl_library takes the variable as it is,
    PyNcclCommunicator catches the library's load failure and returns disabled before it sets nccl_version or comm,
    and the allocator (whose link is -lnccl and reads no such variable) reads one of those."""
    from registry_wheels import fetch_wheel, read_texts

    texts = read_texts(fetch_wheel("sglang", version), lambda n: n in (WRAPPER, PYNCCL, ALLOCATOR))
    assert 'so_file = os.environ.get("SGLANG_NCCL_SO_PATH", None)' in texts[WRAPPER], version
    init = texts[PYNCCL]
    caught = init.index("self.nccl = NCCLLibrary(library_path)")
    assert "except Exception:" in init[caught : caught + 200] and "return" in init[caught : caught + 400], version
    assert init.index("self.disabled = True", caught) < init.index("self.nccl_version =", caught), version
    allocator = texts[ALLOCATOR]
    assert "SGLANG_NCCL_SO_PATH" not in allocator and 'extra_ldflags=["-lnccl"]' in allocator, version
    assert "pynccl_comm.comm" in allocator or "pynccl_comm.nccl_version" in allocator, version
