"""irev55: a gcc newer than the toolkit's nvcc takes. The toolkit's include/crt/host_config.h stops every nvcc compile
whose host compiler is a gcc newer than it names ('#if __GNUC__ > 14' then '#error -- unsupported GNU version!' in
CUDA 12.8.93, nvidia-cuda-nvcc-cu12 12.8.93 wheel, nvidia/cuda_nvcc/include/crt/host_config.h:141-145), unless nvcc is
given -allow-unsupported-compiler, which SGLang 0.5.23's JIT flags and apache-tvm-ffi 0.1.9 do not pass (no such string
in either wheel). A box whose gcc is 15 beside CUDA 12.8 passed sglang-jit-nvcc-host and failed at its first JIT build.
The probe now reads the limit from the toolkit's own header and the gcc's major from its program directory or name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gate_cli import (
    CUDA_128_HOME,
    LLAMA3,
    cli_json,
    gcc_driver,
    model_dir,
    release_box,
    rule_results,
    toolkit_128_facts,
    touch_exe,
)

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = CUDA_128_HOME
RULE = "sglang-jit-nvcc-host-version"
HEADER = (
    "#if defined(__GNUC__)\n\n#if __GNUC__ > 14\n\n#error -- unsupported GNU version! gcc versions later than 14 are "
    "not supported!\n\n#endif /* __GNUC__ > 14 */\n"
)


def _box(root: Path, major: str, *, header: bool = True) -> HostView:
    touch_exe(root / HOME.lstrip("/") / "bin/nvcc")
    if header:
        (root / HOME.lstrip("/") / "include/crt").mkdir(parents=True, exist_ok=True)
        (root / HOME.lstrip("/") / "include/crt/host_config.h").write_text(HEADER)
    touch_exe(root / "usr/bin/c++")
    touch_exe(root / "usr/bin/gcc", gcc_driver(major))  # (igap34: a driver that says its major; a stub is not read)
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"usr/lib/gcc/x86_64-linux-gnu/{major}/{name}")
    return HostView(str(root))


ENV = {"PATH": "/usr/bin"}


def test_gcc_15_beside_cuda_12_8_is_unsupported(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), ENV, _box(tmp_path, "15"))
    assert jit["nvcc_host_gnu_major"] == 15 and jit["nvcc_host_gnu_max"] == 14, jit
    assert jit["nvcc_host_gnu_supported"] is False, jit


def test_gcc_14_supported_and_unknowns_not_judged(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), ENV, _box(tmp_path / "a", "14"))
    assert jit["nvcc_host_gnu_supported"] is True, jit
    # no header: not judged
    assert "nvcc_host_gnu_supported" not in probe_jit(
        toolkit_128_facts(), ENV, _box(tmp_path / "b", "15", header=False)
    )
    # -allow-unsupported-compiler given to every nvcc command: not judged
    env = {**ENV, "NVCC_APPEND_FLAGS": "-allow-unsupported-compiler"}
    assert "nvcc_host_gnu_supported" not in probe_jit(toolkit_128_facts(), env, _box(tmp_path / "c", "15"))
    # two gcc versions and a gcc whose name does not say which: not judged (null, unknown: irev58; it was left out,
    # which the version rule's `exists` skipped, a pass)
    root = tmp_path / "d"
    _box(root, "15")
    touch_exe(root / "usr/bin/gcc", b"\x7fELF")  # (a driver whose binary is not read: igap34)
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"usr/lib/gcc/x86_64-linux-gnu/13/{name}")
    unread = probe_jit(toolkit_128_facts(), ENV, HostView(str(root)))
    assert "nvcc_host_gnu_supported" in unread and unread["nvcc_host_gnu_supported"] is None, unread
    # ... unless the resolved gcc's name does (Debian: /usr/bin/gcc -> gcc-15)
    (root / "usr/bin/gcc").unlink()
    touch_exe(root / "usr/bin/gcc-15")
    (root / "usr/bin/gcc").symlink_to("gcc-15")
    assert probe_jit(toolkit_128_facts(), ENV, HostView(str(root)))["nvcc_host_gnu_supported"] is False


def _gate(tmp_path: Path, release: str, supported: Any) -> dict[str, Any]:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    jit = doc["facts"]["jit"]
    jit.update(cxx_found=True, cxx="/usr/bin/c++", nvcc_host_found=True, nvcc_host="/usr/bin/gcc")
    if supported is not None:
        jit.update(nvcc_host_gnu_major=15, nvcc_host_gnu_max=14, nvcc_host_gnu_supported=supported)
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


def test_the_gate_refuses_a_gcc_too_new_for_nvcc(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", False)
    assert doc["decision"] == "refuse" and ("blocked", "fail") in rule_results(doc, RULE), doc.get("reasons")


def test_supported_or_unread_allows(tmp_path: Path) -> None:
    for supported in (True, None):
        doc = _gate(tmp_path, "0.5.23", supported)
        assert doc["decision"] == "allow" and rule_results(doc, RULE) == [], (supported, doc.get("reasons"))
