"""SGLANG_NCCL_SO_PATH naming an NCCL without the window functions, or without ncclMemAlloc / ncclMemFree (igap29,
issue 16 class 6; rules symm-mem-nccl-so-path-window, -window-comm and -mem-alloc, probe keys nccl_so_path_window and
nccl_so_path_mem_alloc).

pynccl binds the window functions only where hasattr(self.lib, "ncclCommWindowRegister") (sglang 0.5.4
pynccl_wrapper.py:358, 0.5.23 :458), so an NCCL older than 2.27 loads and nothing turns symmetric memory off:
0.5.1-0.5.4 then assert its version (pynccl_allocator.py:87-89, AssertionError: fail); 0.5.5 on hand the communicator
it made to the NCCL torch loads (unknown, refused). 0.5.23 binds ncclMemAlloc / ncclMemFree with the window functions
(pynccl_wrapper.py:412-419): a library with the window functions and without them fails to load, pynccl is disabled
and the allocator reads the disabled communicator. Before, all three were allowed (or, on 0.5.1-0.5.4, unknown).
The libraries are built here with gcc."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_FUNCTIONS_0517, PYNCCL_WINDOW, PYNCCL_WINDOW_0523
from stackcheck.probes.jit import nccl_so_path as probe
from stackcheck.readers.fsview import HostView

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

RULES = tuple(
    f"symm-mem-nccl-so-path{x}"
    for x in ("", "-version", "-window", "-window-comm", "-window-register", "-mem-alloc", "-init-config")
)
#: the functions of a 2.26-shaped NCCL (no window functions; 2.26.2 has ncclMemAlloc), of a 2.27-shaped one, and of
#: a library with the window functions but not ncclMemAlloc / ncclMemFree
OLD = [*PYNCCL_FUNCTIONS, *PYNCCL_FUNCTIONS_0517, *PYNCCL_WINDOW_0523]
NEW = [*OLD, *PYNCCL_WINDOW]
NO_MEM = [*PYNCCL_FUNCTIONS, *PYNCCL_FUNCTIONS_0517, *PYNCCL_WINDOW]


def _library(tmp_path: Path, names: list[str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "nccl.c").write_text("".join(f"int {n}(void) {{ return 0; }}\n" for n in names))
    out = tmp_path / "libnccl.so.2"
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libnccl.so.2", "-o", str(out), str(tmp_path / "nccl.c")],
                   check=True, capture_output=True)  # fmt: skip
    return out


def _gate(tmp_path: Path, release: str, names: list[str]) -> tuple[int, dict[str, str], dict[str, object]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, release, "9.0")
    doc = json.loads(box.read_text())
    facts = probe({"SGLANG_NCCL_SO_PATH": str(_library(tmp_path / "lib", names))}, HostView())
    doc["facts"]["jit"].update(facts)
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
            "--tp", "8", "--enable-symm-mem"]  # fmt: skip
    rc, out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    results = {
        str(x.get("rule")): str(x.get("result"))
        for r in out.get("reasons") or []
        for x in r.get("reasons") or []
        if x.get("rule") in RULES
    }
    return rc, results, facts


def test_the_probe_reads_the_window_and_mem_alloc_functions(tmp_path: Path) -> None:
    _, _, old = _gate(tmp_path / "old", "0.5.23", OLD)
    assert old["nccl_so_path_found"] is True and old["nccl_so_path_window"] is False, old
    assert "nccl_so_path_mem_alloc" not in old  # (not bound where the window is not found)
    _, _, new = _gate(tmp_path / "new", "0.5.23", NEW)
    assert (new["nccl_so_path_window"], new["nccl_so_path_mem_alloc"]) == (True, True), new
    _, _, bare = _gate(tmp_path / "bare", "0.5.23", NO_MEM)
    assert (bare["nccl_so_path_window"], bare["nccl_so_path_mem_alloc"]) == (True, False), bare


@pytest.mark.parametrize("release", ["0.5.2", "0.5.4"])
def test_an_nccl_without_window_functions_fails_the_assertion_before_055(tmp_path: Path, release: str) -> None:
    # fails on the parent: unknown (symm-mem-nccl-so-path-version), the window not read
    rc, results, _ = _gate(tmp_path, release, OLD)
    assert rc == 1 and results == {"symm-mem-nccl-so-path-window": "fail"}, results
    rc, results, _ = _gate(tmp_path / "new", release, NEW)  # the version of one with them is not read: unknown
    assert rc == 1 and results == {"symm-mem-nccl-so-path-version": "unknown"}, results


@pytest.mark.parametrize(
    ("release", "rule", "result"),
    [
        ("0.5.5", "symm-mem-nccl-so-path-window-comm", "unknown"),
        ("0.5.7", "symm-mem-nccl-so-path-window-comm", "unknown"),
        # (ifc42: from 0.5.8 the allocator acts on the registration's result: a crash, inferred)
        ("0.5.17", "symm-mem-nccl-so-path-window-register", "fail"),
        ("0.5.23", "symm-mem-nccl-so-path-window-register", "fail"),
    ],
)
def test_an_nccl_without_window_functions_is_refused_from_055(tmp_path: Path, release: str, rule: str,
                                                              result: str) -> None:  # fmt: skip
    # fails on the parent: allowed (the library loads, symmetric memory stays on)
    rc, results, _ = _gate(tmp_path, release, OLD)
    assert rc == 1 and results == {rule: result}, results
    _, results, _ = _gate(tmp_path / "new", release, NEW)  # (the box may refuse for other reasons at this release)
    assert results == {}, results


def test_mem_alloc_is_needed_from_0523_where_the_window_is_there(tmp_path: Path) -> None:
    # fails on the parent: allowed (ncclMemAlloc / ncclMemFree were "not required, inferred")
    rc, results, _ = _gate(tmp_path / "a", "0.5.23", NO_MEM)
    assert rc == 1 and results == {"symm-mem-nccl-so-path-mem-alloc": "fail"}, results
    _, results, _ = _gate(tmp_path / "b", "0.5.22", NO_MEM)
    assert results == {}, results


def test_an_nccl_of_another_architecture_is_not_found(tmp_path: Path) -> None:
    # irev62: an aarch64 libnccl (e_machine 183) named on an x86_64 box was read for its symbols and found; dlopen
    # refuses it (pynccl's load fails), so symm-mem-nccl-so-path fails as for a file without NCCL's functions
    lib = _library(tmp_path / "lib", NEW)
    raw = bytearray(lib.read_bytes())
    raw[18:20] = (183).to_bytes(2, "little")
    lib.write_bytes(bytes(raw))
    facts = probe({"SGLANG_NCCL_SO_PATH": str(lib)}, HostView(), "x86_64")
    assert facts["nccl_so_path_found"] is False and "aarch64" in str(facts["nccl_so_path_reason"]), facts
    assert probe({"SGLANG_NCCL_SO_PATH": str(lib)}, HostView(), "aarch64")["nccl_so_path_found"] is True
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["jit"].update(facts)
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
            "--tp", "8", "--enable-symm-mem"]  # fmt: skip
    rc, out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    results = {str(x.get("rule")): str(x.get("result")) for r in out["reasons"] for x in r.get("reasons") or []}
    assert rc == 1 and results.get("symm-mem-nccl-so-path") == "fail", out["reasons"]
