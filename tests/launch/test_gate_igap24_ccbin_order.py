"""igap24 (issue 16): NVCC_CCBIN and CC together. SGLang's JIT kernels pass nvcc no -ccbin and read no CC (sglang
0.5.9-0.5.23 jit_kernel / kernels/jit: none; apache-tvm-ffi 0.1.11 reads CC only for .c sources), so nvcc takes
NVCC_CCBIN there; FlashInfer passes -ccbin $CC on the command line, which wins over NVCC_CCBIN and over a -ccbin in
NVCC_PREPEND_FLAGS, and loses to one in NVCC_APPEND_FLAGS (nvcc 13.0.88 run on the helper's box: of two -ccbin 'the
last value of this option was used'; NVCC_CCBIN naming no file with -ccbin gcc on the line compiled on). The jit probe
judges each build's own compiler: jit.nvcc_host_* (SGLang's) and jit.cc_host_* (FlashInfer's). Before: a -ccbin in
NVCC_PREPEND_FLAGS left FlashInfer's CC unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gate_cli import CUDA_128_HOME, LLAMA3, cli_json, model_dir, release_box, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

PATH = {"PATH": "/usr/bin"}
GOOD, BAD = "/usr/bin/gcc-13", "/opt/none/bin/gcc"


def _box(root: Path) -> HostView:
    """A CUDA 12.8 toolkit, /usr/bin/gcc-13 with g++ (cc1, cc1plus), no gcc on the PATH otherwise, and c++."""
    touch_exe(root / CUDA_128_HOME.lstrip("/") / "bin/nvcc")
    touch_exe(root / "usr/bin/gcc-13")
    touch_exe(root / "usr/bin/c++")
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"usr/lib/gcc/x86_64-linux-gnu/13/{name}")
    return HostView(str(root))


def test_each_build_reads_its_own_compiler(tmp_path: Path) -> None:
    view = _box(tmp_path)
    # CC good, NVCC_CCBIN names nothing: FlashInfer's build is fine, SGLang's nvcc host compile is not
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": GOOD, "NVCC_CCBIN": BAD}, view)
    assert jit["flashinfer_host"] == "cc" and jit["cc_host_found"] is True, jit
    assert jit["nvcc_host_found"] is False, jit
    # the other way round
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": BAD, "NVCC_CCBIN": GOOD}, view)
    assert jit["cc_host_found"] is False and jit["nvcc_host_found"] is True, jit


def test_a_prepended_ccbin_loses_to_cc_an_appended_one_wins(tmp_path: Path) -> None:
    view = _box(tmp_path)
    before = probe_jit(toolkit_128_facts(), {**PATH, "CC": GOOD, "NVCC_PREPEND_FLAGS": f"-ccbin {BAD}"}, view)
    assert before["cc_host_found"] is True and before["cc_host"] == GOOD, before
    after = probe_jit(toolkit_128_facts(), {**PATH, "CC": GOOD, "NVCC_APPEND_FLAGS": f"--compiler-bindir={BAD}"}, view)
    assert after["cc_host_found"] is None and "NVCC_APPEND_FLAGS" in after["cc_host_reason"], after


def _gate(tmp_path: Path, env: dict[str, str]) -> dict[str, Any]:
    """gate of a Llama 3 launch on tests/cases/h200-newest (SGLang 0.5.23: its own JIT kernels; FlashInfer 0.7.2, no
    flashinfer-jit-cache: FlashInfer's JIT) with the probe's host-compiler keys for `env`, --allow-unknown."""
    host = probe_jit(toolkit_128_facts(), {**PATH, **env}, _box(tmp_path / "box"))
    path = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(path.read_text())
    keys = ("nvcc_host", "flashinfer_host", "flashinfer_allow_unsupported", "cc_host")
    doc["facts"]["jit"].update({k: v for k, v in host.items() if k.startswith(keys)})
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--allow-unknown", "--format", "json", "--", *line])[1]


def _failing(doc: dict[str, Any]) -> set[str]:
    return {
        str(x.get("rule"))
        for r in doc.get("reasons") or []
        if r.get("feature") == "jit-toolchain"
        for x in r.get("reasons") or []
        if x.get("result") == "fail"
    }


def test_the_gate_refuses_by_the_build_that_fails(tmp_path: Path) -> None:
    sglang_bad = _gate(tmp_path / "a", {"CC": GOOD, "NVCC_CCBIN": BAD})
    assert sglang_bad["decision"] == "refuse", sglang_bad.get("reasons")
    assert "sglang-jit-nvcc-host" in _failing(sglang_bad) and "flashinfer-jit-cc-host" not in _failing(sglang_bad)
    flashinfer_bad = _gate(tmp_path / "b", {"CC": BAD, "NVCC_CCBIN": GOOD})
    assert flashinfer_bad["decision"] == "refuse", flashinfer_bad.get("reasons")
    failing = _failing(flashinfer_bad)
    assert "flashinfer-jit-cc-host" in failing and "sglang-jit-nvcc-host" not in failing, failing
