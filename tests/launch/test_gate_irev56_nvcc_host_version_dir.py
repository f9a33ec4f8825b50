"""irev56: the gcc nvcc runs compiles C++ only with the cc1plus of its own version. The gcc driver looks for its
compilers proper in PREFIX/lib(exec)/gcc/TRIPLET/VERSION of its own VERSION (Debian 12 dpkg -S: g++-12 owns
/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus, cpp-12 owns .../12/cc1), so a box where /usr/bin/gcc -> gcc-14 (gcc-14
installed, g++-14 not) beside a g++-13 fails every nvcc host compile ('gcc: fatal error: cannot execute cc1plus'):
g++-13's cc1plus is not gcc-14's. irev55's probe counted a cc1plus of any version as the found gcc's, so
jit.nvcc_host_found stayed true, sglang-jit-nvcc-host passed, and with CUDA 12.8 (host_config.h takes gcc 14,
nvidia-cuda-nvcc-cu12 12.8.93 include/crt/host_config.h:141-145) sglang-jit-nvcc-host-version passed too: the gate
allowed a launch whose first JIT build fails (a false pass). Now, where the resolved gcc's name says its major
(gcc-N), only that major's program directories count; a gcc whose name says none is read as before."""

from __future__ import annotations

import json
from pathlib import Path

from gate_cli import CUDA_128_HOME, LLAMA3, cli_json, model_dir, release_box, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = CUDA_128_HOME
HEADER = (
    "#if defined(__GNUC__)\n\n#if __GNUC__ > 14\n\n#error -- unsupported GNU version! gcc versions later than 14 are "
    "not supported!\n\n#endif\n"
)
ENV = {"PATH": "/usr/bin"}


def _box(root: Path, gcc: str, dirs: dict[str, bool], base: str = "usr/lib/gcc/x86_64-linux-gnu") -> HostView:
    """A toolkit with CUDA 12.8's header, /usr/bin/gcc -> `gcc`, and per version directory whether it has cc1plus."""
    touch_exe(root / HOME.lstrip("/") / "bin/nvcc")
    (root / HOME.lstrip("/") / "include/crt").mkdir(parents=True, exist_ok=True)
    (root / HOME.lstrip("/") / "include/crt/host_config.h").write_text(HEADER)
    touch_exe(root / "usr/bin" / gcc)
    if gcc != "gcc":
        (root / "usr/bin/gcc").symlink_to(gcc)
    for version, cc1plus in dirs.items():
        touch_exe(root / base / version / "cc1")
        if cc1plus:
            touch_exe(root / base / version / "cc1plus")
    return HostView(str(root))


def test_gcc_14_without_its_g_plus_plus_beside_g_plus_plus_13_is_no_host_compiler(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), ENV, _box(tmp_path, "x86_64-linux-gnu-gcc-14", {"13": True, "14": False}))
    assert jit["nvcc_host_found"] is False, jit
    assert "cc1plus" in jit["nvcc_host_reason"] and "/14" in jit["nvcc_host_reason"], jit
    assert "nvcc_host_gnu_supported" not in jit, jit


def test_rhel_layout_and_a_full_version_directory(tmp_path: Path) -> None:
    # gcc-toolset style libexec, a version directory named N.M.P (a source build): still that major's
    view = _box(tmp_path, "gcc-14", {"13.2.0": True, "14.2.0": False}, "usr/libexec/gcc/x86_64-redhat-linux")
    assert probe_jit(toolkit_128_facts(), ENV, view)["nvcc_host_found"] is False


def test_the_gate_refuses_on_the_probed_facts(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), ENV, _box(tmp_path / "box", "gcc-14", {"13": True, "14": False}))
    path = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["jit"].update(cxx_found=True, cxx="/usr/bin/c++", **{k: v for k, v in jit.items() if "nvcc_host" in k})
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    out = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]
    rules = {x.get("rule") for r in out.get("reasons") or [] for x in r.get("reasons") or []}
    assert out["decision"] == "refuse" and "sglang-jit-nvcc-host" in rules, out.get("reasons")


def test_controls_its_own_cc1plus_or_a_name_without_a_version(tmp_path: Path) -> None:
    # gcc-14 with g++-14 beside a gcc-13 without g++: found, and judged against the header
    jit = probe_jit(toolkit_128_facts(), ENV, _box(tmp_path / "a", "gcc-14", {"13": False, "14": True}))
    assert jit["nvcc_host_found"] is True and jit["nvcc_host_gnu_supported"] is True, jit
    # gcc-15 with its g++: found, and refused by the version rule (not this one)
    jit = probe_jit(toolkit_128_facts(), ENV, _box(tmp_path / "b", "gcc-15", {"14": True, "15": True}))
    assert jit["nvcc_host_found"] is True and jit["nvcc_host_gnu_supported"] is False, jit
    # a gcc whose name says no version: any cc1plus counts, as before (which one it runs is not read)
    jit = probe_jit(toolkit_128_facts(), ENV, _box(tmp_path / "c", "gcc", {"13": True, "14": False}))
    assert jit["nvcc_host_found"] is True, jit
    # gcc-14 (tests/gate_cli.touch_exe writes a GCC 14 driver for that name, igap34) with no program directory of its
    # own version: that driver finds no cc1plus of its own, so no host compiler (ifc43's _driver_without_compiler)
    jit = probe_jit(toolkit_128_facts(), ENV, _box(tmp_path / "d", "gcc-14", {"13": True}))
    assert jit["nvcc_host_found"] is False and "no cc1plus of version 14" in jit["nvcc_host_reason"], jit


def test_a_version_directory_named_by_a_non_ascii_digit_is_not_read(tmp_path: Path) -> None:
    # '²'.isdigit() is true and int('²') raises: the jit probe failed as a whole (its section lost, every jit rule
    # guarded by `exists` then not applied); a directory name that is not an ASCII number says no major
    jit = probe_jit(toolkit_128_facts(), ENV, _box(tmp_path, "gcc", {"\u00b2": True}))
    assert jit["nvcc_host_found"] is True and jit.get("nvcc_host_gnu_supported") is None, jit  # (null: irev58)
