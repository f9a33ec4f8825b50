"""ifc43 row g1 (issue 16, class 2: which compiler a JIT build really runs): a GCC driver binary copied out of its
installation (this machine's gcc driver as /opt/gcc/bin/gcc, beside a lib/gcc/TRIPLET/M of start files only) was read
as gcc M from its .rodata (igap31) and judged supported, so `NVCC_CCBIN=/opt/gcc/bin/gcc` (SGLang 0.5.9+'s JIT) and
`CC=/opt/gcc/bin/gcc` (FlashInfer's -ccbin $CC) were allowed. The driver looks for cc1plus only relative to where it
lies (gcc/gcc.cc process_command: the configured-in /usr/lib/gcc is searched only where the driver is not relocated),
so it runs none and nvcc's host compile stops with 'cannot execute cc1plus': the first test runs that on this machine.

The gcc tests copy this machine's real gcc driver (its major taken from `gcc -dumpversion`) into a temporary box."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from gate_cli import CUDA_128_HOME, jit_host_gate, judged_rules, real_gcc, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = CUDA_128_HOME.lstrip("/")
TRIPLET = "x86_64-linux-gnu"
PATH = {"PATH": "/usr/local/bin:/usr/bin"}


def _box(root: Path, major: int, *, cc1plus_in: int | None = None, link: bool = False) -> HostView:
    """A CUDA 12.8 home taking gcc `major` (host_config.h's shape, written here); Debian's gcc `major` in /usr (its
    driver a stub, cc1 / cc1plus in lib/gcc/TRIPLET/MAJOR); /opt/gcc/bin/gcc a copy of this machine's gcc driver (a
    link to it where `link`) with start files in /opt/gcc/lib/gcc/TRIPLET/MAJOR, and cc1plus there under version
    `cc1plus_in` where given."""
    real, _ = real_gcc()
    touch_exe(root / HOME / "bin/nvcc")
    (root / HOME / "include/crt").mkdir(parents=True, exist_ok=True)
    header = f"#if defined(__GNUC__)\n#if __GNUC__ > {major}\n#error -- unsupported GNU version! later than {major}\n"
    (root / HOME / "include/crt/host_config.h").write_text(header + "#endif\n#endif\n")
    touch_exe(root / f"usr/bin/{TRIPLET}-gcc-{major}")
    (root / f"usr/bin/gcc-{major}").symlink_to(f"{TRIPLET}-gcc-{major}")
    (root / "usr/bin/gcc").symlink_to(f"gcc-{major}")
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"usr/lib/gcc/{TRIPLET}/{major}/{name}")
    touch_exe(root / "usr/bin/c++")
    (root / "opt/gcc/bin").mkdir(parents=True)
    if link:
        shutil.copy2(real, root / f"usr/bin/{TRIPLET}-gcc-{major}")
        (root / "opt/gcc/bin/gcc").symlink_to(f"/usr/bin/gcc-{major}")
    else:
        shutil.copy2(real, root / "opt/gcc/bin/gcc")
    touch_exe(root / f"opt/gcc/lib/gcc/{TRIPLET}/{major}/crtbegin.o")
    if cc1plus_in is not None:
        touch_exe(root / f"opt/gcc/lib/gcc/{TRIPLET}/{cc1plus_in}/cc1plus")
    return HostView(str(root))


def test_a_gcc_driver_copied_out_of_its_installation_runs_no_compiler(tmp_path: Path) -> None:
    # the premise, run: the driver copied to another bin finds no cc1plus (and with one beside it, compiles)
    real, major = real_gcc()
    (tmp_path / "opt/gcc/bin").mkdir(parents=True)
    shutil.copy2(real, tmp_path / "opt/gcc/bin/gcc")
    touch_exe(tmp_path / f"opt/gcc/lib/gcc/{TRIPLET}/{major}/crtbegin.o")
    run = [str(tmp_path / "opt/gcc/bin/gcc"), "-x", "c++", "-c", "-o", str(tmp_path / "a.o"), "-"]
    proc = subprocess.run(run, input="int f() { return 0; }\n", capture_output=True, text=True, check=False)
    assert proc.returncode != 0 and "cc1plus" in proc.stderr, proc.stderr
    own = subprocess.run([str(real), "-print-prog-name=cc1plus"], capture_output=True, text=True, check=True).stdout
    if not Path(own.strip()).is_file():
        pytest.skip("no cc1plus beside this machine's gcc (g++ not installed)")
    (tmp_path / f"opt/gcc/lib/gcc/{TRIPLET}/{major}/cc1plus").symlink_to(own.strip())
    proc = subprocess.run(run, input="int f() { return 0; }\n", capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_nvcc_ccbin_naming_a_copied_driver_is_not_found(tmp_path: Path) -> None:
    # fails on the parent: nvcc_host_found true, nvcc_host_gnu_major M, supported
    _, major = real_gcc()
    jit = probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": "/opt/gcc/bin/gcc"}, _box(tmp_path, major))
    assert jit["nvcc_host_found"] is False and "nvcc_host_gnu_supported" not in jit, jit
    reason = jit["nvcc_host_reason"]
    assert f"GCC {major}'s driver binary" in reason and "cannot execute cc1plus" in reason, reason


def test_cc_naming_a_copied_driver_is_not_found(tmp_path: Path) -> None:
    _, major = real_gcc()
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, major))
    assert jit["cc_host_found"] is False and "cc_host_gnu_supported" not in jit, jit
    assert "no cc1plus of version" in jit["cc_host_reason"], jit


def test_a_cc1plus_of_another_major_in_the_prefix_is_none_for_the_driver(tmp_path: Path) -> None:
    _, major = real_gcc()
    view = _box(tmp_path, major, cc1plus_in=major + 1)
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, view)
    assert jit["cc_host_found"] is False, jit


def test_the_driver_with_its_own_cc1plus_in_the_prefix_is_read_as_before(tmp_path: Path) -> None:
    _, major = real_gcc()
    view = _box(tmp_path, major, cc1plus_in=major)
    jit = probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": "/opt/gcc/bin/gcc"}, view)
    assert jit["nvcc_host_found"] is True and jit["nvcc_host_gnu_major"] == major, jit
    assert jit["nvcc_host_gnu_supported"] is True, jit


def test_a_link_to_the_installed_driver_is_read_as_before(tmp_path: Path) -> None:
    # a symbolic link resolves to the driver's own bin (make_relative_prefix follows links): its compilers are there
    _, major = real_gcc()
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, major, link=True))
    assert jit["cc_host_found"] is True and jit["cc_host_gnu_major"] == major, jit


@pytest.mark.parametrize("name", ["GCC_EXEC_PREFIX", "COMPILER_PATH"])
def test_an_environment_that_sends_the_driver_elsewhere_is_not_read(tmp_path: Path, name: str) -> None:
    _, major = real_gcc()
    env = {**PATH, "CC": "/opt/gcc/bin/gcc", name: f"/usr/lib/gcc/{TRIPLET}/{major}/"}
    jit = probe_jit(toolkit_128_facts(), env, _box(tmp_path, major))
    assert jit["cc_host_found"] is None and name in jit["cc_host_reason"], jit


def _host_rules(doc: dict[str, Any]) -> dict[str, str]:
    return judged_rules(doc, lambda rule: "host" in rule)


def test_the_gate_refuses_a_copied_driver(tmp_path: Path) -> None:
    _, major = real_gcc()
    view = _box(tmp_path / "box", major)
    jit = probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": "/opt/gcc/bin/gcc"}, view)
    doc = jit_host_gate(tmp_path / "a", jit, "0.5.12")
    assert doc["decision"] == "refuse" and _host_rules(doc).get("sglang-jit-nvcc-host") == "fail", doc.get("reasons")
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, view)
    doc = jit_host_gate(tmp_path / "b", jit)
    assert doc["decision"] == "refuse", doc.get("reasons")
    assert "fail" in {v for k, v in _host_rules(doc).items() if k.startswith("flashinfer-jit-cc")}, doc.get("reasons")
    # the same driver with its own cc1plus in the prefix: allowed
    good = _box(tmp_path / "good", major, cc1plus_in=major)
    jit = probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": "/opt/gcc/bin/gcc"}, good)
    doc = jit_host_gate(tmp_path / "c", jit, "0.5.12")
    assert doc["decision"] == "allow", (doc.get("reasons"), doc.get("warnings"))
