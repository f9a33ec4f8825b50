"""SGLANG_NCCL_SO_PATH naming a library that exports ncclGetVersion but not every function pynccl binds (ifc41, the
forty-first fact-check sample's rows n1-n4; probe stackcheck/probes/jit.py nccl_so_path, rules symm-mem-nccl-so-path
and symm-mem-nccl-so-path-init-config).

SGLang's NCCLLibrary loads the file and binds every function of NCCLLibrary.exported_functions with getattr (sglang
0.5.1 and 0.5.5 pynccl_wrapper.py:156, 0.5.10 :158, 0.5.17 :229, 0.5.23 :232; bound at 0.5.4 :358-361, 0.5.23
:458-461): ncclGetErrorString, ncclGetVersion, ncclGetUniqueId, ncclCommInitRank, ncclAllReduce, ncclAllGather,
ncclReduce, ncclReduceScatter, ncclSend, ncclRecv, ncclBroadcast, ncclCommDestroy, ncclGroupStart, ncclGroupEnd, and
from 0.5.17 ncclCommInitRankConfig. A missing one raises AttributeError, which PyNcclCommunicator catches as a failed
load: pynccl disabled, and the symmetric-memory allocator then reads the disabled communicator (rule
symm-mem-nccl-so-path's crash). igap26 read ncclGetVersion alone, so the sample's own libraries (built with cc from
C files defining NCCL's names but not ncclReduce) were found and `--tp 8 --enable-symm-mem` allowed on 0.5.5-0.5.23.
The libraries here are small fakes (tests/elfwriter.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from elfwriter import write_so
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_FUNCTIONS_0517, nccl_so_path
from stackcheck.readers.fsview import HostView

#: the sample's "nccl-2.27-shape" library: NCCL's names as its draw script listed them, without ncclReduce
SAMPLE = [
    "ncclGetErrorString", "ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclAllReduce", "ncclAllGather",
    "ncclReduceScatter", "ncclSend", "ncclRecv", "ncclBroadcast", "ncclCommDestroy", "ncclGroupStart", "ncclGroupEnd",
    "ncclCommRegister", "ncclCommDeregister", "ncclCommWindowRegister", "ncclCommWindowDeregister", "ncclMemAlloc",
    "ncclMemFree",
]  # fmt: skip


def _probe(tmp_path: Path, defined: list[str], soname: str = "libnccl.so.2") -> dict[str, object]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    lib = write_so(tmp_path / soname, defined=defined, soname=soname)
    return nccl_so_path({"SGLANG_NCCL_SO_PATH": str(lib)}, HostView())


@pytest.mark.parametrize(
    ("defined", "missing"),
    [(SAMPLE, "ncclReduce"), (["ncclGetVersion"], "ncclGetErrorString"),
     (["ncclGetErrorString", "ncclGetVersion"], "ncclGetUniqueId")],
    ids=["sample-without-ncclReduce", "get-version-only", "two-functions"],
)  # fmt: skip
def test_a_library_missing_a_bound_function_is_not_found(tmp_path: Path, defined: list[str], missing: str) -> None:
    # fails on the parent: ncclGetVersion alone made it found (true)
    got = _probe(tmp_path, defined)
    assert got["nccl_so_path_found"] is False, got
    assert missing in str(got["nccl_so_path_reason"]) and "DT_SONAME libnccl.so.2" in str(got["nccl_so_path_reason"])


def test_every_bound_function_is_found_and_init_config_read(tmp_path: Path) -> None:
    got = _probe(tmp_path, list(PYNCCL_FUNCTIONS))
    assert (got["nccl_so_path_found"], got["nccl_so_path_init_config"]) == (True, False), got
    got = _probe(tmp_path / "b", [*PYNCCL_FUNCTIONS, *PYNCCL_FUNCTIONS_0517])
    assert (got["nccl_so_path_found"], got["nccl_so_path_init_config"]) == (True, True), got


def _gate(tmp_path: Path, release: str, defined: list[str]) -> tuple[int, dict[str, str]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, release, "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["jit"].update(_probe(tmp_path / f"lib-{len(defined)}", defined))
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
            "--tp", "8", "--enable-symm-mem"]  # fmt: skip
    rc, out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    return rc, {x.get("rule"): x.get("result") for r in out.get("reasons") or [] for x in r.get("reasons") or []}


@pytest.mark.parametrize("release", ["0.5.6", "0.5.13", "0.5.17"])
def test_the_gate_refuses_the_samples_library(tmp_path: Path, release: str) -> None:
    # fails on the parent: rows n1 (0.5.13), n3 (0.5.17), n4 (0.5.6) were allowed
    rc, results = _gate(tmp_path, release, SAMPLE)
    assert rc == 1 and results.get("symm-mem-nccl-so-path") == "fail", results


def test_init_config_is_needed_from_0517_only(tmp_path: Path) -> None:
    # fails on the parent: no rule read ncclCommInitRankConfig
    rc, results = _gate(tmp_path / "a", "0.5.17", list(PYNCCL_FUNCTIONS))
    assert rc == 1 and results.get("symm-mem-nccl-so-path-init-config") == "fail", results
    rc, results = _gate(tmp_path / "b", "0.5.16", list(PYNCCL_FUNCTIONS))
    assert "symm-mem-nccl-so-path-init-config" not in results and "symm-mem-nccl-so-path" not in results, results


def test_window_register_without_deregister_is_not_found(tmp_path: Path) -> None:
    # irev60: where the library exports ncclCommWindowRegister, pynccl binds the window functions too
    # (NCCLLibrary.exported_functions_symm_mem, ncclCommWindowRegister and ncclCommWindowDeregister in every release
    # read, 0.5.1 :307 to 0.5.20 :394; the hasattr test at 0.5.1 :358, 0.5.23 :458): one without the other was found
    defined = [*PYNCCL_FUNCTIONS, *PYNCCL_FUNCTIONS_0517, "ncclCommWindowRegister"]
    got = _probe(tmp_path, defined)
    assert got["nccl_so_path_found"] is False and "ncclCommWindowDeregister" in str(got["nccl_so_path_reason"]), got
    rc, results = _gate(tmp_path / "g", "0.5.17", defined)
    assert rc == 1 and results.get("symm-mem-nccl-so-path") == "fail", results
    got = _probe(tmp_path / "both", [*defined, "ncclCommWindowDeregister"])
    assert got["nccl_so_path_found"] is True, got
