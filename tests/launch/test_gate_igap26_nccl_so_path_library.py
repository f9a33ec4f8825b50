"""SGLANG_NCCL_SO_PATH naming a file that is no NCCL (igap26, issue 16 item 5). The jit probe counted any file there
as found, so `--enable-symm-mem` at tp > 1 was allowed with the variable naming, say, libcudart.so.12 or a text file.
SGLang's NCCLLibrary loads the file with ctypes.CDLL and then looks each NCCL function up in it
(getattr(self.lib, func.name): sglang 0.5.4 pynccl_wrapper.py:158-160, :361; 0.5.23 :234-236, :461); a missing one
raises AttributeError, which PyNcclCommunicator catches as a failed load, leaving pynccl disabled, and the symmetric-
memory allocator then crashes as for a missing file (rule symm-mem-nccl-so-path). Now a file that exports no
ncclGetVersion is not found (false, with its DT_SONAME in the reason); one not read as an ELF shared library is null
(unknown). The libraries written here are small fakes (tests/elfwriter.py)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from elfwriter import write_so
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.probes.jit import nccl_so_path
from stackcheck.readers.fsview import HostView


def test_a_library_without_nccl_functions_is_not_found(tmp_path: Path) -> None:
    # fails on the parent: any file there was found (true)
    cudart = write_so(tmp_path / "libcudart.so.12", defined=["cudaMalloc"], soname="libcudart.so.12")
    got = nccl_so_path({"SGLANG_NCCL_SO_PATH": str(cudart)}, HostView())
    assert got["nccl_so_path_found"] is False and "DT_SONAME libcudart.so.12" in got["nccl_so_path_reason"]


def test_a_file_that_is_no_elf_library_is_unknown(tmp_path: Path) -> None:
    # fails on the parent: true
    text = tmp_path / "libnccl.so.2"
    text.write_text("INPUT(libnccl.so.2.27.7)\n")
    got = nccl_so_path({"SGLANG_NCCL_SO_PATH": str(text)}, HostView())
    assert got["nccl_so_path_found"] is None and "not read as a shared library" in got["nccl_so_path_reason"]


def test_nccl_through_a_link_is_found(tmp_path: Path) -> None:
    from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_FUNCTIONS_0517

    real = write_so(tmp_path / "libnccl.so.2.27.7", defined=[*PYNCCL_FUNCTIONS, *PYNCCL_FUNCTIONS_0517],
                    soname="libnccl.so.2")  # fmt: skip
    (tmp_path / "libnccl.so.2").symlink_to(real.name)
    got = nccl_so_path({"SGLANG_NCCL_SO_PATH": str(tmp_path / "libnccl.so.2")}, HostView())
    got.pop("nccl_so_path_version_reason")  # igap36: no version string in this library
    assert got == {"nccl_so_path": str(tmp_path / "libnccl.so.2"), "nccl_so_path_found": True,
                   "nccl_so_path_init_config": True, "nccl_so_path_window": False,
                   "nccl_so_path_version": None}  # fmt: skip


def test_the_gate_refuses_symm_mem_with_a_library_that_is_no_nccl(tmp_path: Path) -> None:
    # fails on the parent: the probe's true let the rule pass
    cudart = write_so(tmp_path / "libcudart.so.12", defined=["cudaMalloc"], soname="libcudart.so.12")
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["jit"].update(nccl_so_path({"SGLANG_NCCL_SO_PATH": str(cudart)}, HostView()))
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
            "--tp", "2", "--enable-symm-mem"]  # fmt: skip
    rc, out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    results = {x.get("rule"): x.get("result") for r in out.get("reasons") or [] for x in r.get("reasons") or []}
    assert rc == 1 and results.get("symm-mem-nccl-so-path") == "fail", results
