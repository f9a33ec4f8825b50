"""SGLANG_NCCL_SO_PATH naming an NCCL without the window functions under `--enable-symm-mem` (ifc42, the forty-second
fact-check sample's row s3: the real nvidia-nccl-cu12 2.26.2 libnccl.so.2 beside SGLang 0.5.22 was allowed; probe
stackcheck/probes/jit.py nccl_so_path, rule symm-mem-nccl-so-path-window-register).

pynccl builds its communicator with the library that variable names and binds the window functions only where that
library exports ncclCommWindowRegister (pynccl_wrapper.py, sglang 0.5.21 :445-446); the symmetric-memory allocator,
built with `-lnccl`, registers every segment with `ncclCommWindowRegister(comm, ...)` of the NCCL its libnccl.so.2
entry resolves to, the one torch loaded, on pynccl's comm (pynccl_allocator.py: 0.5.8-0.5.11 NCCLCHECK in the
allocation, 0.5.8 :58, 0.5.11 :66, returning NULL; 0.5.12-0.5.23 the register function's result asserted, 0.5.22
:132-136 and :325, 0.5.23 :208 and :420; 0.5.5-0.5.7 ignore it, :49). A library without ncclCommWindowRegister is
another NCCL than the one that registers: its comm is not that NCCL's object (inferred: NCCL's CommCheck rejects a
comm whose magic words are not where its own struct has them). The libraries here are small fakes
(tests/elfwriter.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from elfwriter import write_so
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_FUNCTIONS_0517, PYNCCL_WINDOW, nccl_so_path
from stackcheck.readers.fsview import HostView

#: NCCL 2.26's shape: every function pynccl binds, ncclCommInitRankConfig, no window functions
NO_WINDOW = [*PYNCCL_FUNCTIONS, *PYNCCL_FUNCTIONS_0517, "ncclCommRegister", "ncclMemAlloc", "ncclMemFree"]
WINDOW = [*NO_WINDOW, *PYNCCL_WINDOW]


def _probe(tmp_path: Path, defined: list[str]) -> dict[str, object]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    lib = write_so(tmp_path / "libnccl.so.2", defined=defined, soname="libnccl.so.2")
    return nccl_so_path({"SGLANG_NCCL_SO_PATH": str(lib)}, HostView())


def test_the_probe_reads_whether_the_window_functions_are_there(tmp_path: Path) -> None:
    got = _probe(tmp_path / "a", NO_WINDOW)
    assert (got["nccl_so_path_found"], got.get("nccl_so_path_window")) == (True, False), got
    got = _probe(tmp_path / "b", WINDOW)
    assert (got["nccl_so_path_found"], got.get("nccl_so_path_window")) == (True, True), got


def _gate(tmp_path: Path, release: str, defined: list[str]) -> tuple[int, dict[str, str]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, release, "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["jit"].update(_probe(tmp_path / "lib", defined))
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
            "--tp", "8", "--enable-symm-mem"]  # fmt: skip
    rc, out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    return rc, {x.get("rule"): x.get("result") for r in out.get("reasons") or [] for x in r.get("reasons") or []}


@pytest.mark.parametrize("release", ["0.5.8", "0.5.12", "0.5.22", "0.5.23"])
def test_no_window_functions_refused_where_the_registration_is_checked(tmp_path: Path, release: str) -> None:
    # fails on the parent: row s3 (0.5.22) was allowed
    rc, results = _gate(tmp_path, release, NO_WINDOW)
    assert rc == 1 and results.get("symm-mem-nccl-so-path-window-register") == "fail", results


@pytest.mark.parametrize("release", ["0.5.5", "0.5.7"])
def test_releases_that_ignore_the_registration_are_not_judged(tmp_path: Path, release: str) -> None:
    _, results = _gate(tmp_path, release, NO_WINDOW)
    assert "symm-mem-nccl-so-path-window-register" not in results, results


def test_a_library_with_the_window_functions_passes(tmp_path: Path) -> None:
    _, results = _gate(tmp_path, "0.5.22", WINDOW)
    assert "symm-mem-nccl-so-path-window-register" not in results and "symm-mem-nccl-so-path" not in results, results
