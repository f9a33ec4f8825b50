"""The probes of issue 16 on filesystems built by the tests: the JIT toolchain (jit.py), the CUDA libraries the
loader finds (cudalibs.py) and the IOMMU / ACS state above the GPUs (pcie.py)."""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path
from typing import Any

import pytest
from readers.test_libs import _build_cache

from stackcheck.probes.cudalibs import CudaLibsProbe, box_machine, probe_cuda_libs
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.jit import JitProbe, probe_jit
from stackcheck.probes.pcie import PcieProbe, acs_control, probe_pcie
from stackcheck.readers.fsview import HostView


def touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_exe(path: Path, body: str) -> Path:
    touch(path, "#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def toolkit(path: str, version: str | None, source: str, active: bool = True) -> dict[str, Any]:
    return {"path": path, "version": version, "source": source, "nvcc": None, "active_for_build": active}


# ---- jit ------------------------------------------------------------------------------------------------


def elf(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF" + bytes(60))  # the compiler itself, not a wrapper script
    return path


def test_jit_reads_the_build_toolkit_and_its_headers(tmp_path: Path) -> None:
    elf(tmp_path / "usr/local/cuda-12.8/bin/nvcc")
    touch(tmp_path / "usr/local/cuda-12.8/include/cuda_fp8.h")  # no cuda_fp4.h: an incomplete toolkit
    facts = {
        "cuda_toolkits": [
            toolkit("/usr/local/cuda-13.0", "13.0.88", "/usr/local/cuda", active=False),
            toolkit("/usr/local/cuda-12.8", "12.8.93", "CUDA_HOME"),
        ]
    }
    jit = probe_jit(facts, {}, HostView(str(tmp_path)))
    assert jit["toolkit"] == "/usr/local/cuda-12.8" and jit["chosen_by"] == "CUDA_HOME"
    assert jit["nvcc"] == "/usr/local/cuda-12.8/bin/nvcc" and jit["nvcc_found"] is True
    assert jit["cuda"] == "12.8"
    assert jit["fp8_header"] is True and jit["fp4_header"] is False
    assert jit["curand_header"] is False  # no cuRAND headers in this toolkit either
    assert "error" not in jit
    # a split toolkit (conda, pip) keeps curand_kernel.h under targets/<arch>-linux/include
    touch(tmp_path / "usr/local/cuda-12.8/targets/x86_64-linux/include/curand_kernel.h")
    assert probe_jit(facts, {}, HostView(str(tmp_path)))["curand_header"] is True


def test_jit_reads_the_runtime_headers_cuda_version(tmp_path: Path) -> None:
    # a toolkit assembled from pip wheels: nvcc 13.3 (nvidia-cuda-nvcc) next to 13.0 runtime headers
    home = "opt/venv/nvidia/cu13"
    elf(tmp_path / home / "bin/nvcc")
    touch(tmp_path / home / "include/cuda_runtime_api.h", "/* header */\n#define CUDART_VERSION 13000\n")
    facts = {"cuda_toolkits": [toolkit("/" + home, "13.3.33", "CUDA_HOME")]}
    jit = probe_jit(facts, {}, HostView(str(tmp_path)))
    assert (jit["cuda"], jit["headers_cuda"]) == ("13.3", "13.0")
    touch(tmp_path / home / "include/cuda_runtime_api.h", "#define CUDART_VERSION  12090\n")
    assert probe_jit(facts, {}, HostView(str(tmp_path)))["headers_cuda"] == "12.9"
    (tmp_path / home / "include/cuda_runtime_api.h").unlink()  # no runtime headers: not known
    assert probe_jit(facts, {}, HostView(str(tmp_path)))["headers_cuda"] is None


def test_jit_distribution_nvcc_and_no_toolkit(tmp_path: Path) -> None:
    elf(tmp_path / "usr/bin/nvcc")  # /usr/bin/nvcc from the distribution: the toolkit is /usr
    jit = probe_jit({"cuda_toolkits": [toolkit("/usr", "11.5.119", "nvcc")]}, {}, HostView(str(tmp_path)))
    assert (jit["toolkit"], jit["cuda"], jit["nvcc_found"], jit["fp8_header"]) == ("/usr", "11.5", True, False)
    none = probe_jit({"cuda_toolkits": [toolkit("/usr/local/cuda-12.8", "12.8.1", "/usr/local/cuda", False)]}, {},
                     HostView(str(tmp_path)))  # fmt: skip
    assert none["chosen_by"] == "none" and none["nvcc_found"] is False and none["nvcc"] is None
    unknown = probe_jit({}, {}, HostView(str(tmp_path)))
    assert unknown["nvcc_found"] is None and "not probed" in unknown["error"]


def test_jit_rocm_home_as_tvm_ffi_finds_it(tmp_path: Path) -> None:
    """apache-tvm-ffi 0.1.9-0.1.12 (_find_rocm_home): ROCM_HOME or ROCM_PATH, else two levels above the hipcc on
    PATH (one more when that is hip/), else /opt/rocm when it exists; the key is left out when there is none."""
    facts = {"cuda_toolkits": [toolkit("/usr/local/cuda", "13.0.88", "/usr/local/cuda")]}
    view = HostView(str(tmp_path))
    assert "rocm_home" not in probe_jit(facts, {"PATH": "/usr/bin"}, view)
    (tmp_path / "opt/rocm").mkdir(parents=True)  # a stray /opt/rocm, no hipcc (sglang#30120)
    assert probe_jit(facts, {"PATH": "/usr/bin"}, view)["rocm_home"] == "/opt/rocm"
    assert probe_jit(facts, {"ROCM_PATH": "/srv/rocm-6.4"}, view)["rocm_home"] == "/srv/rocm-6.4"
    assert probe_jit(facts, {"ROCM_HOME": "/a", "ROCM_PATH": "/b"}, view)["rocm_home"] == "/a"
    make_exe(tmp_path / "opt/rocm-7.0/hip/bin/hipcc", "exit 0")
    assert probe_jit(facts, {"PATH": "/opt/rocm-7.0/hip/bin"}, view)["rocm_home"] == "/opt/rocm-7.0"
    make_exe(tmp_path / "opt/rocm-6.4/bin/hipcc", "exit 0")
    assert probe_jit(facts, {"PATH": "/usr/bin:/opt/rocm-6.4/bin"}, view)["rocm_home"] == "/opt/rocm-6.4"
    # no PATH in the environment: tvm-ffi's shutil.which falls back to os.defpath (/bin:/usr/bin), so a hipcc there
    make_exe(tmp_path / "usr/bin/hipcc", "exit 0")
    assert probe_jit(facts, {}, view)["rocm_home"] == "/usr"


def test_jit_ninja_on_the_path_the_server_runs_with(tmp_path: Path) -> None:
    """FlashInfer's run_ninja, tvm-ffi's build_ninja and SGLang 0.5.18+'s ninja.build run the bare name `ninja`:
    found only on the environment's PATH (a venv's bin directory off PATH hides its ninja wheel)."""
    facts = {"cuda_toolkits": [toolkit("/usr/local/cuda", "13.0.88", "/usr/local/cuda")]}
    view = HostView(str(tmp_path))
    venv_ninja = make_exe(tmp_path / "root/sglang-stock/bin/ninja", "exit 0")
    off = probe_jit(facts, {"PATH": "/usr/local/bin:/usr/bin"}, view)
    assert off["ninja_found"] is False and "ninja" not in off
    on = probe_jit(facts, {"PATH": "/usr/bin:/root/sglang-stock/bin"}, view)
    assert on["ninja_found"] is True and on["ninja"] == "/root/sglang-stock/bin/ninja"
    venv_ninja.chmod(0o644)  # not executable: subprocess cannot run it
    assert probe_jit(facts, {"PATH": "/root/sglang-stock/bin"}, view)["ninja_found"] is False
    make_exe(tmp_path / "usr/bin/ninja", "exit 0")  # no PATH at all: Python's default /bin:/usr/bin
    assert probe_jit(facts, {}, view)["ninja"] == "/usr/bin/ninja"
    # a relative entry is the build directory's (ninja starts there: jit.BUILD_DIR), not read: unknown (igap43)
    assert probe_jit(facts, {"PATH": "relative/bin"}, view)["ninja_found"] is None


def test_jit_probe_class_reads_ninja_on_the_target_env_path(tmp_path: Path) -> None:
    """The probe reads the target's environment (ctx.env: the launch's for `gate`), not this process's."""
    make_exe(tmp_path / "srv/venv/bin/ninja", "exit 0")
    facts = {"cuda_toolkits": [toolkit("/usr/local/cuda", "13.0.88", "/usr/local/cuda")]}
    view = HostView(str(tmp_path))
    with_it = ProbeContext(env={"PATH": "/srv/venv/bin:/usr/bin"}, view=view, facts=facts)
    assert JitProbe().run(with_it).facts["jit"]["ninja"] == "/srv/venv/bin/ninja"
    without = ProbeContext(env={"PATH": "/usr/bin"}, view=view, facts=facts)
    assert JitProbe().run(without).facts["jit"]["ninja_found"] is False


def test_jit_headers_of_a_wrapper_or_a_linked_nvcc(tmp_path: Path) -> None:
    # /usr/local/bin/nvcc as a wrapper script: its toolkit's headers are not known, so neither missing nor there
    touch(tmp_path / "usr/local/bin/nvcc", '#!/bin/sh\nexec /usr/local/cuda-13.0/bin/nvcc "$@"\n')
    wrapped = probe_jit({"cuda_toolkits": [toolkit("/usr/local", "13.0.88", "nvcc")]}, {}, HostView(str(tmp_path)))
    assert wrapped["nvcc_found"] is True and wrapped["fp8_header"] is None and "wrapper" in wrapped["headers_reason"]
    assert wrapped["curand_header"] is None
    # a link to the real compiler: nvcc adds its own toolkit's include directory, and so does the probe
    elf(tmp_path / "usr/local/cuda-13.0/bin/nvcc")
    touch(tmp_path / "usr/local/cuda-13.0/targets/x86_64-linux/include/cuda_fp8.h")
    (tmp_path / "opt/bin").mkdir(parents=True)
    (tmp_path / "opt/bin/nvcc").symlink_to(tmp_path / "usr/local/cuda-13.0/bin/nvcc")
    linked = probe_jit({"cuda_toolkits": [toolkit(str(tmp_path / "opt"), "13.0.88", "nvcc")]}, {}, HostView("/"))
    assert linked["fp8_header"] is True and linked["fp4_header"] is False


def test_jit_cuda_home_without_nvcc_and_a_bad_version(tmp_path: Path) -> None:
    (tmp_path / "opt/cuda/include").mkdir(parents=True)
    tk = toolkit("/opt/cuda", "weird", "CUDA_HOME")
    tk["error"] = "no version file"
    jit = probe_jit({"cuda_toolkits": [tk]}, {}, HostView(str(tmp_path)))
    assert jit["nvcc_found"] is False and jit["cuda"] is None and jit["error"] == "no version file"


def test_triton_ptxas_override_is_run_for_its_version(tmp_path: Path) -> None:
    ptxas = make_exe(tmp_path / "ptxas", "echo 'Cuda compilation tools, release 13.0, V13.0.88'")
    silent = make_exe(tmp_path / "silent", "exit 3")
    env = {"TRITON_PTXAS_PATH": str(ptxas), "TRITON_PTXAS_BLACKWELL_PATH": str(silent)}
    jit = probe_jit({"cuda_toolkits": []}, env, HostView("/"))
    assert jit["triton_ptxas"]["TRITON_PTXAS_PATH"] == {"path": str(ptxas), "version": "13.0.88"}
    bw = jit["triton_ptxas"]["TRITON_PTXAS_BLACKWELL_PATH"]
    assert bw["version"] is None and "exited 3" in bw["error"]
    missing = probe_jit({"cuda_toolkits": []}, {"TRITON_PTXAS_PATH": "/nonexistent/ptxas"}, HostView("/"))
    assert "does not exist" in missing["triton_ptxas"]["TRITON_PTXAS_PATH"]["error"]
    # another root's binary is never executed (it may not even be for this machine)
    (tmp_path / "r/bin").mkdir(parents=True)
    make_exe(tmp_path / "r/bin/ptxas", "echo 'Cuda compilation tools, release 13.0, V13.0.88'")
    other = probe_jit({"cuda_toolkits": []}, {"TRITON_PTXAS_PATH": "/bin/ptxas"}, HostView(str(tmp_path / "r")))
    assert other["triton_ptxas"]["TRITON_PTXAS_PATH"]["version"] is None
    assert "not run" in other["triton_ptxas"]["TRITON_PTXAS_PATH"]["error"]


def test_triton_ptxas_that_hangs_is_cut_off(tmp_path: Path) -> None:
    slow = make_exe(tmp_path / "ptxas", "sleep 30")
    jit = probe_jit({"cuda_toolkits": []}, {"TRITON_PTXAS_PATH": str(slow)}, HostView("/"), timeout_s=0.3)
    assert "timed out" in jit["triton_ptxas"]["TRITON_PTXAS_PATH"]["error"]


def test_jit_probe_class_needs_the_first_round(tmp_path: Path) -> None:
    ctx = ProbeContext(env={}, root=tmp_path)
    assert JitProbe().run(ctx).status == "skipped"
    elf(tmp_path / "cuda/bin/nvcc")
    ctx.facts = {"cuda_toolkits": [toolkit("/cuda", "13.0.88", "CUDA_HOME")]}
    result = JitProbe().run(ctx)
    assert result.status == "ok"  # missing headers are a finding for the checks, not a probe failure
    assert result.facts["jit"]["nvcc_found"] is True and result.facts["jit"]["fp8_header"] is False


# ---- cuda_libs ------------------------------------------------------------------------------------------


def elf64(path: Path, machine: int | None = None, elf_class: int = 2) -> Path:
    """A 64-byte ELF header of this box's machine (the loader's: the fake root has no /bin/sh, so this host's)."""
    head = bytearray(b"\x7fELF" + bytes([elf_class, 1, 1]) + bytes(57))
    head[18:20] = (box_machine(HostView("/nonexistent")) if machine is None else machine).to_bytes(2, "little")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(head))
    return path


def test_cuda_libs_from_ld_library_path_cache_and_defaults(tmp_path: Path) -> None:
    elf64(tmp_path / "opt/cuda12/lib/libcudart.so.12")
    elf64(tmp_path / "usr/lib/x86_64-linux-gnu/libnvrtc.so.13")
    elf64(tmp_path / "usr/local/cuda-12.8/lib64/libcublas.so.12")  # the cache's entry, with its file
    view = HostView(str(tmp_path))
    cache = _build_cache([("libcublas.so.12", "/usr/local/cuda-12.8/lib64/libcublas.so.12", 0x303)])
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/ld.so.cache").write_bytes(cache)
    # (a relative element after them: tests/probes/test_cudalibs_igap45_ld_library_path.py)
    libs = probe_cuda_libs({"LD_LIBRARY_PATH": "/opt/cuda12/lib:/opt/none/"}, view)
    assert libs["libcudart.so.12"] == "/opt/cuda12/lib/libcudart.so.12"
    assert libs["libnvrtc.so.13"] == "/usr/lib/x86_64-linux-gnu/libnvrtc.so.13"  # a default directory
    assert libs["libcublas.so.12"] == "/usr/local/cuda-12.8/lib64/libcublas.so.12"
    assert libs["libcudart.so.13"] is None and libs["ld_cache"] == "file"


def test_cuda_libs_cache_skips_a_32_bit_copy(tmp_path: Path) -> None:
    """The ld.so cache of a multiarch box lists the i386 library too; the 64-bit loader skips it. A box with only
    libnuma1:i386 has no libnuma.so.1 for sgl_kernel's common_ops (the libnuma rule must not pass); with both,
    the 64-bit one is the answer, whichever the cache's string table lists first."""
    i386 = "/usr/lib/i386-linux-gnu/libnuma.so.1"
    amd64 = "/usr/lib/x86_64-linux-gnu/libnuma.so.1"
    (tmp_path / "usr/lib/i386-linux-gnu").mkdir(parents=True)
    (tmp_path / i386.lstrip("/")).write_bytes(b"\x7fELF\x01\x01\x01" + bytes(57))  # ELFCLASS32
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/ld.so.cache").write_bytes(_build_cache([("libnuma.so.1", i386, 0x803)]))
    view = HostView(str(tmp_path))
    assert probe_cuda_libs({}, view)["libnuma.so.1"] is None
    (tmp_path / "usr/lib/x86_64-linux-gnu").mkdir(parents=True)
    elf64(tmp_path / amd64.lstrip("/"))
    (tmp_path / "etc/ld.so.cache").write_bytes(
        _build_cache([("libnuma.so.1", i386, 0x803), ("libnuma.so.1", amd64, 0x303)])
    )
    # (the default directory would find it too: moved out of them to see the cache's answer)
    moved = tmp_path / "opt/lib64/libnuma.so.1"
    moved.parent.mkdir(parents=True)
    (tmp_path / amd64.lstrip("/")).rename(moved)
    (tmp_path / "etc/ld.so.cache").write_bytes(
        _build_cache([("libnuma.so.1", i386, 0x803), ("libnuma.so.1", "/opt/lib64/libnuma.so.1", 0x303)])
    )
    assert probe_cuda_libs({}, view)["libnuma.so.1"] == "/opt/lib64/libnuma.so.1"


def test_cuda_libs_cache_entry_counts_only_with_a_library_behind_it(tmp_path: Path) -> None:
    """A stale ld.so cache entry (the library removed, ldconfig not run since) is not the loader's answer: glibc
    opens the file, fails, and tries the default directories; before, the entry alone counted as found (a false
    pass of every rule on cudalib.*: libnuma.so.1 found, the launch fails with 'cannot open shared object file').
    A file there that is no ELF library fails the load (no default directory tried); one of another machine or
    class is passed over for the next entry; one this process cannot read is unknown, not found."""
    opt = "/opt/numa/lib/libnuma.so.1"
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/ld.so.cache").write_bytes(_build_cache([("libnuma.so.1", opt, 0x303)]))
    view = HostView(str(tmp_path))
    assert probe_cuda_libs({}, view)["libnuma.so.1"] is None  # stale: no file behind the entry
    default = elf64(tmp_path / "usr/lib/x86_64-linux-gnu/libnuma.so.1")
    assert probe_cuda_libs({}, view)["libnuma.so.1"] == "/usr/lib/x86_64-linux-gnu/libnuma.so.1"
    touch(tmp_path / opt.lstrip("/"), "INPUT(-lnuma)\n")  # not ELF: "invalid ELF header", the load stops there
    assert probe_cuda_libs({}, view)["libnuma.so.1"] is None
    default.unlink()
    elf64(tmp_path / opt.lstrip("/"), machine=0xB7 if box_machine(view) != 0xB7 else 0x3E)  # another machine
    assert probe_cuda_libs({}, view)["libnuma.so.1"] is None
    elf64(tmp_path / opt.lstrip("/"))
    assert probe_cuda_libs({}, view)["libnuma.so.1"] == opt
    libs = probe_cuda_libs({}, _Unreadable(str(tmp_path), opt))
    assert libs["libnuma.so.1"] is None and "Permission denied" in libs["unreadable"]["libnuma.so.1"]


def test_cuda_libs_outside_the_cache_skip_a_32_bit_copy(tmp_path: Path) -> None:
    """On LD_LIBRARY_PATH and in the default directories the 64-bit loader passes over an ELF of another class
    (EI_CLASS 1, a 32-bit copy) or machine and looks in the next directory, as it does for the cache's entries
    (glibc's open_verify). Before, any file of the soname there counted as found: a box whose only libcudart.so.12
    is an i386 copy in /usr/lib passed the rules on cudalib.* while sgl_kernel fails with 'cannot open shared
    object file'. A file there that is no ELF library stops the search (the load fails on it); one this process
    cannot read is neither found nor absent."""
    i386 = elf64(tmp_path / "opt/cuda32/lib/libcudart.so.12", elf_class=1)
    elf64(tmp_path / "usr/lib/libcudart.so.12", elf_class=1)  # a default directory, 32-bit too
    view = HostView(str(tmp_path))
    env = {"LD_LIBRARY_PATH": "/opt/cuda32/lib"}
    libs = probe_cuda_libs(env, view)
    assert libs["libcudart.so.12"] is None and "unreadable" not in libs
    # another machine is passed over the same way
    other = 0xB7 if box_machine(view) != 0xB7 else 0x3E
    elf64(tmp_path / "usr/lib/libcudart.so.12", machine=other)
    assert probe_cuda_libs(env, view)["libcudart.so.12"] is None
    # a 64-bit copy further along the loader's order is the answer
    elf64(tmp_path / "usr/lib64/libcudart.so.12")
    assert probe_cuda_libs(env, view)["libcudart.so.12"] == "/usr/lib64/libcudart.so.12"
    elf64(i386)  # now the first directory's copy is a library of the box's class
    assert probe_cuda_libs(env, view)["libcudart.so.12"] == "/opt/cuda32/lib/libcudart.so.12"
    touch(i386, "not a library")  # no ELF: the load fails there, the search stops
    assert probe_cuda_libs(env, view)["libcudart.so.12"] is None
    elf64(i386)
    libs = probe_cuda_libs(env, _Unreadable(str(tmp_path), "/opt/cuda32/lib/libcudart.so.12"))
    assert libs["libcudart.so.12"] is None and "Permission denied" in libs["unreadable"]["libcudart.so.12"]


class _Unreadable(HostView):
    """This box with one file this process may not read (the tests run as root, which chmod cannot stop)."""

    def __init__(self, root: str, path: str) -> None:
        super().__init__(root)
        self.path = path

    def read_bytes(self, path: str, limit: int, offset: int = 0) -> bytes:
        if path == self.path:
            raise PermissionError(13, "Permission denied")
        return super().read_bytes(path, limit, offset)


def test_cuda_libs_without_or_with_a_broken_cache(tmp_path: Path) -> None:
    result = CudaLibsProbe().run(ProbeContext(env={}, root=tmp_path))
    assert result.status == "ok" and result.facts["cuda_libs"]["ld_cache"].startswith("unavailable")
    touch(tmp_path / "etc/ld.so.cache", "garbage" * 20)
    broken = CudaLibsProbe().run(ProbeContext(env={}, root=tmp_path))
    assert broken.status == "partial" and "not an ld.so cache" in str(broken.reason)


# ---- pcie -----------------------------------------------------------------------------------------------


def config_with_acs(control: int | None, size: int = 4096) -> bytes:
    data = bytearray(size)
    if size > 0x100:
        # one unrelated extended capability (AER, id 1) pointing at the ACS capability (id 0xD) at 0x150
        struct.pack_into("<I", data, 0x100, 0x0001 | (1 << 16) | (0x150 << 20))
        if control is not None:
            struct.pack_into("<I", data, 0x150, 0x000D | (1 << 16))
            struct.pack_into("<H", data, 0x156, control)
    return bytes(data)


def make_sys(root: Path, acs: dict[str, bytes], group_type: str | None = "DMA-FQ") -> None:
    """Two GPUs behind one PCIe switch: root port 00:01.0 -> switch 01:00.0 -> downstream 02:00.0 / 02:01.0."""
    devices = root / "sys/devices/pci0000:00"
    paths = {
        "0000:00:01.0": devices / "0000:00:01.0",
        "0000:01:00.0": devices / "0000:00:01.0/0000:01:00.0",
        "0000:02:00.0": devices / "0000:00:01.0/0000:01:00.0/0000:02:00.0",
        "0000:02:01.0": devices / "0000:00:01.0/0000:01:00.0/0000:02:01.0",
        "0000:03:00.0": devices / "0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0",
        "0000:04:00.0": devices / "0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0",
    }
    bus = root / "sys/bus/pci/devices"
    bus.mkdir(parents=True)
    for bdf, path in paths.items():
        path.mkdir(parents=True, exist_ok=True)
        (path / "config").write_bytes(acs.get(bdf, config_with_acs(None)))
        (bus / bdf).symlink_to(os.path.relpath(path, bus))
    drv = root / "sys/bus/pci/drivers/nvidia"
    drv.mkdir(parents=True)
    for n, gpu in enumerate(("0000:03:00.0", "0000:04:00.0")):
        (drv / gpu).symlink_to(os.path.relpath(paths[gpu], drv))
        if group_type is not None:
            group = root / f"sys/kernel/iommu_groups/{20 + n}"
            touch(group / "type", group_type + "\n")
            (paths[gpu] / "iommu_group").symlink_to(os.path.relpath(group, paths[gpu]))
    touch(drv / "new_id")  # not a device


def test_pcie_translated_iommu_and_acs_redirect(tmp_path: Path) -> None:
    make_sys(tmp_path, {"0000:02:00.0": config_with_acs(0x001D), "0000:02:01.0": config_with_acs(0x0001)})
    pcie = probe_pcie(HostView(str(tmp_path)))
    assert pcie["gpus"] == ["0000:03:00.0", "0000:04:00.0"]
    assert pcie["iommu"] == "translated"
    assert pcie["iommu_groups"]["0000:03:00.0"] == {"group": "20", "type": "DMA-FQ"}
    assert pcie["acs"] == "enabled" and pcie["acs_redirect"] == ["0000:02:00.0"]


def test_pcie_passthrough_and_no_redirect(tmp_path: Path) -> None:
    make_sys(tmp_path, {"0000:02:00.0": config_with_acs(0x0001)}, group_type="identity")
    pcie = probe_pcie(HostView(str(tmp_path)))
    assert (pcie["iommu"], pcie["acs"], pcie["acs_redirect"]) == ("passthrough", "disabled", [])


def test_pcie_iommu_off_and_acs_unreadable_without_root(tmp_path: Path) -> None:
    make_sys(tmp_path, {"0000:00:01.0": config_with_acs(0x001D, size=64)}, group_type=None)
    pcie = probe_pcie(HostView(str(tmp_path)))
    assert pcie["iommu"] == "off"
    assert pcie["acs"] == "unknown" and "needs root" in pcie["acs_reason"] and "64 of 4096" in pcie["acs_reason"]


def test_pcie_without_gpus_is_skipped(tmp_path: Path) -> None:
    result = PcieProbe().run(ProbeContext(env={}, root=tmp_path))
    assert result.status == "skipped" and result.facts["pcie"]["iommu"] is None


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (config_with_acs(0x000C), 0x000C),
        (config_with_acs(None), None),
        (b"\0" * 4096, None),  # an empty capability list
        (bytes(0x100) + struct.pack("<I", 0x0001 | (0x100 << 20)) + bytes(4096 - 0x104), None),  # a loop
    ],
)
def test_acs_control_walks_the_extended_capabilities(config: bytes, expected: int | None) -> None:
    assert acs_control(config) == expected
