"""SGLANG_NCCL_SO_PATH naming a library whose NCCL names are not functions dlsym returns (igap29, issue 16 class 5;
probe stackcheck/probes/jit.py nccl_so_path, rule symm-mem-nccl-so-path).

pynccl binds each function of NCCLLibrary.exported_functions with getattr(self.lib, name) (sglang 0.5.23
pynccl_wrapper.py:458-461), ctypes' dlsym. The probe asked `defines`, which took any defined global symbol of the
name: a data object (which ctypes binds, and a call then runs data as code) and a name present only as a hidden
version (`name@OLD`, which dlsym does not return: AttributeError, pynccl disabled) both counted, so `--tp 8
--enable-symm-mem` was allowed. The libraries are built here with gcc (and a version script)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_FUNCTIONS_0517, nccl_so_path
from stackcheck.readers.fsview import HostView

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

NAMES = [*PYNCCL_FUNCTIONS, *PYNCCL_FUNCTIONS_0517]


def _library(tmp_path: Path, data: tuple[str, ...] = (), hidden: tuple[str, ...] = ()) -> Path:
    """A libnccl.so.2 of our own: every name of NAMES a function, except `data` (an array of that name) and
    `hidden` (a function there only as name@NCCL_OLD, a non-default version)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    lines = []
    for name in NAMES:
        if name in data:
            lines.append(f"char {name}[16];")
        elif name in hidden:
            lines.append(f'int {name}_old(void) {{ return 0; }}\n__asm__(".symver {name}_old,{name}@NCCL_OLD");')
        else:
            lines.append(f"int {name}(void) {{ return 0; }}")
    (tmp_path / "nccl.c").write_text("\n".join(lines) + "\n")
    (tmp_path / "v.map").write_text(
        f"NCCL_OLD {{ global: {'; '.join(NAMES)}; local: *; }};\nNCCL_NEW {{ }} NCCL_OLD;\n"
    )
    out = tmp_path / "libnccl.so.2"
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libnccl.so.2", f"-Wl,--version-script={tmp_path / 'v.map'}",
                    "-o", str(out), str(tmp_path / "nccl.c")], check=True, capture_output=True)  # fmt: skip
    return out


def _gate(tmp_path: Path, lib: Path) -> tuple[int, dict[str, str], dict[str, object]]:
    box = release_box(tmp_path, "0.5.17", "9.0")
    doc = json.loads(box.read_text())
    facts = nccl_so_path({"SGLANG_NCCL_SO_PATH": str(lib)}, HostView())
    doc["facts"]["jit"].update(facts)
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
            "--tp", "8", "--enable-symm-mem"]  # fmt: skip
    rc, out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    results = {x.get("rule"): x.get("result") for r in out.get("reasons") or [] for x in r.get("reasons") or []}
    return rc, results, facts


@pytest.mark.parametrize(
    ("data", "hidden", "named"),
    [(("ncclAllReduce",), (), "ncclAllReduce"), ((), ("ncclGetUniqueId",), "ncclGetUniqueId"),
     (("ncclCommInitRank",), ("ncclSend",), "ncclCommInitRank")],
    ids=["data-object", "hidden-version", "both"],
)  # fmt: skip
def test_names_dlsym_does_not_return_as_functions_are_not_found(
    tmp_path: Path, data: tuple[str, ...], hidden: tuple[str, ...], named: str
) -> None:
    # fails on the parent: `defines` counted the data object and the hidden version, nccl_so_path_found was true
    rc, results, facts = _gate(tmp_path, _library(tmp_path / "lib", data, hidden))
    assert facts["nccl_so_path_found"] is False, facts
    reason = str(facts["nccl_so_path_reason"])
    assert named in reason and "dlsym" in reason and "DT_SONAME libnccl.so.2" in reason, reason
    assert rc == 1 and results.get("symm-mem-nccl-so-path") == "fail", results


def test_every_name_a_function_is_found(tmp_path: Path) -> None:
    _, results, facts = _gate(tmp_path, _library(tmp_path / "lib"))
    assert facts["nccl_so_path_found"] is True and facts["nccl_so_path_init_config"] is True, facts
    assert facts["nccl_so_path_window"] is False and "nccl_so_path_mem_alloc" not in facts, facts
    assert results.get("symm-mem-nccl-so-path") != "fail", results


def test_init_config_as_data_is_not_read_as_bound(tmp_path: Path) -> None:
    # ncclCommInitRankConfig, bound from 0.5.17 (rule symm-mem-nccl-so-path-init-config), counted as data too
    rc, results, facts = _gate(tmp_path, _library(tmp_path / "lib", data=("ncclCommInitRankConfig",)))
    assert facts["nccl_so_path_found"] is True and facts["nccl_so_path_init_config"] is False, facts
    assert rc == 1 and results.get("symm-mem-nccl-so-path-init-config") == "fail", results
