"""JIT toolchain probe: the CUDA toolkit that a just-in-time kernel build on this box would use, and what
it can do.

FlashInfer's JIT (`flashinfer/jit/cpp_ext.py`: `get_cuda_path`), SGLang's JIT kernels, DeepGEMM and
torch.utils.cpp_extension all pick the toolkit the same way: $CUDA_HOME (or $CUDA_PATH), else the parent of
the `bin/` holding the `nvcc` on $PATH (a distribution's /usr/bin/nvcc means /usr, often CUDA 11.5), else
/usr/local/cuda. The toolkits probe already records that choice (`active_for_build`) with the toolkit's
version, so this probe runs in the second wave and reads it from the first round's facts: it runs nothing
for the toolkit itself. It adds what a JIT compile of FlashInfer needs from that toolkit and the Triton
assembler that a user put in place of Triton's bundled one:

- `nvcc`: the compiler (`<toolkit>/bin/nvcc`), null when the toolkit has none (the build fails), and
  `nvcc_found` (true/false: null would read as "not probed");
- `cuda`: the toolkit's CUDA version, major.minor (what `nvcc --version` reports, which FlashInfer reads to
  decide whether SM 12.x can be compiled for: it needs 12.9);
- `fp8_header` / `fp4_header`: whether `cuda_fp8.h` and `cuda_fp4.h` are in the toolkit's include
  directories (FlashInfer's `vec_dtypes.cuh` includes cuda_fp8.h always and cuda_fp4.h when the toolkit is
  CUDA 12.8 or newer; a toolkit assembled from pip wheels or conda packages can lack them); null when nvcc is
  a wrapper script whose real toolkit is not known (`headers_reason`);
- `curand_header`: the same for `curand_kernel.h` (FlashInfer's `sampling.cuh` and CUTLASS's `tensor_fill.h`,
  reached through `cutlass_utils.cuh`, include it; a conda or pip toolkit without the cuRAND headers lacks it);
- `headers_cuda`: the CUDA version, major.minor, of the runtime headers a JIT compile includes: CUDART_VERSION
  of the first `cuda_runtime_api.h` in those include directories (`<toolkit>/include` comes first, as FlashInfer
  passes it). CCCL (vendored by FlashInfer from 0.6.10, and the toolkit's own) stops a compile whose nvcc
  major.minor differs from it ("CUDA compiler and CUDA toolkit headers are incompatible"), which a toolkit
  assembled from pip wheels of different CUDA releases (nvidia-cuda-nvcc 13.3, nvidia-cuda-runtime 13.0) has;
  null where `fp8_header` is;
- `triton_ptxas`: for each of TRITON_PTXAS_PATH / TRITON_PTXAS_BLACKWELL_PATH that is set, the file and its
  `--version` (run with the probe's timeout, only on this host's own filesystem);
- `rocm_home`: the ROCm home that apache-tvm-ffi's `_find_rocm_home` finds on this box: $ROCM_HOME or
  $ROCM_PATH, else two levels above the `hipcc` on PATH (its real path; one more when that is `hip/`), else
  /opt/rocm when anything is there (tvm-ffi 0.1.9-0.1.12, tvm_ffi/cpp/extension.py). Those releases take any
  ROCm home for a ROCm install and JIT-build with `<home>/bin/hipcc` and HIP flags, even on an NVIDIA box with
  a CUDA torch (apache/tvm-ffi#651, fixed in 0.1.13 by PR #652), and SGLang's JIT kernels are built through
  them. The key is left out when there is none (a rule reads it with `exists`; null would read as unknown); null
  (`rocm_home_reason`) where a relative or empty PATH entry comes before any hipcc and the server's working directory,
  where tvm-ffi's shutil.which looks it up, is not known (gate --cwd names it: that entry is then read there; igap43);
- `ninja_found` / `ninja`: whether a `ninja` executable is on the PATH the server runs with (the target's
  environment: the launch's for `gate`; Python's default /bin:/usr/bin when it sets no PATH, as subprocess
  does), and its path (left out when there is none). FlashInfer's `run_ninja` (flashinfer/jit/cpp_ext.py),
  apache-tvm-ffi's `build_ninja` (tvm_ffi/cpp/extension.py, SGLang 0.5.9-0.5.17's JIT kernels) and SGLang
  0.5.18+'s own `ninja.build` run the bare name `ninja`, so a ninja wheel installed into a venv whose bin
  directory is not on that PATH is not found either (FileNotFoundError: 'ninja'). These builds start ninja in their
  build directory, and the programs it runs (c++, nvcc's gcc, CC, PYTORCH_NVCC, collect2's ld) look themselves up from
  there: a relative or empty PATH entry before the program found is that directory's, not read, and the key is null
  with its `_reason` (BUILD_DIR, which_known; igap43: the next program on the PATH was taken);
- `libnccl_so_found` / `libnccl_so` / `libnccl_so_dirs`: whether the link of SGLang's symmetric-memory allocator
  (`--enable-symm-mem`: pynccl_allocator.py builds it with torch.utils.cpp_extension.load_inline and
  `extra_ldflags=["-lnccl"]`) finds an unversioned `libnccl.so` (or `libnccl.a`): in the directories that link
  searches, in its order: torch's own lib directory (`<torch location>/torch/lib` of the packages probe's torch:
  the first -L of torch's _prepare_ldflags in every release read, 2.8.0-2.14.1; a conda or NGC build of torch may
  keep a libnccl.so there), `<CUDA home>/lib64` (`lib` where only that exists: torch's _prepare_ldflags, with the
  toolkit the toolkits probe chose as torch's _find_cuda_home does), `$CUDNN_HOME/lib64` (or $CUDNN_PATH), each
  absolute `LIBRARY_PATH` entry (gcc passes them to ld), then GNU ld's built-in SEARCH_DIRs and GCC's own
  `/usr/lib/gcc/<triplet>/<version>` directories (a fixed list, `DEFAULT_LINK_DIRS`: Debian/Ubuntu multiarch
  and the lib64 layout, x86_64 and aarch64). The pip wheel nvidia-nccl-cu12/cu13 ships only
  `nvidia/nccl/lib/libnccl.so.2`, which `-lnccl` never finds. `libnccl_so` is the first file found (left out
  when none), `libnccl_so_dirs` the directories read. null (`libnccl_so_reason`) when not found and some
  directory could not be read: the toolkit not probed, torch's location not read, a relative or empty
  LIBRARY_PATH entry, or a CXX that is no plain c++/g++/clang++ (its own default directories are not known).
  A file of the name that is an ELF of another class, byte order or machine than the link's (a 32-bit or aarch64
  library on an x86_64 box) is passed over, as ld skips it ('skipping incompatible'), and the search goes on;
  one that is no ELF (a linker script, an archive) is taken. null where an ELF is found for an architecture
  other than x86_64 / aarch64 (not read).
- `libcudart_so_found` / `libcudart_so`: the same look, in the same directories, for the `-lcudart` torch's
  _prepare_ldflags adds to every with_cuda link (after `-L<CUDA home>/lib64`, or `lib`): an unversioned
  `libcudart.so` (or `libcudart.a`). A CUDA home assembled from pip wheels has headers but only
  `lib/libcudart.so.12` (nvidia-cuda-runtime-cu12) or `lib/libcudart.so.13` (nvidia-cuda-runtime, nvidia/cu13), and a
  toolkit without its development package (cuda-cudart-dev) has only libcudart.so.N too: 'cannot find -lcudart'.
  null with `libcudart_so_reason` as for libnccl.so. `libcudart_so_soname`: that libcudart.so's DT_SONAME
  (libcudart.so.12, .13), the name the link writes into the allocator's DT_NEEDED where it keeps the library; left
  out for libcudart.a; a linker script (INPUT / GROUP) followed as ld follows it to the library it names in its own
  directory (a name without a directory only where the link's GNU ld is binutils 2.37+, which looks in the script's
  directory before the working directory: gnu_ld_version, igap39); null with `libcudart_so_soname_reason` where
  there is no DT_SONAME or the script is not followed (igap34: left out, so the rule was).
- `cxx_found` / `cxx`: whether the C++ compiler torch's load_inline builds with (`$CXX`, else `c++`) is found on
  the server's PATH (/bin/sh's default where it has none: ninja runs the command through /bin/sh -c), and its path
  (left out when none); null with `cxx_reason` where CXX is a command with arguments or a relative path (then
  `cxx_quoted_found`: whether one program named by the whole value is found, as SGLang 0.5.18+ run it, and
  `cxx_split_found`: whether the shell's split of it runs a compiler that is there, as torch 2.8-2.12 run it: cxx_split,
  igap31). A slim
  image without g++ has none: the allocator's build fails ('c++: not found', 'Error building extension').
- `cxx_cuda_runtime_h_found` / `cxx_nccl_h_found`: whether that compile finds `cuda_runtime.h` (SGLang 0.5.5 on
  include it) and `nccl.h` (0.5.1-0.5.4 include it; it includes cuda_runtime.h) in the directories it searches:
  torch's include_paths('cuda') (`<torch>/include`, `<CUDA home>/include`, $CUDA_INC_PATH, $CUDNN_HOME/include),
  CPATH / CPLUS_INCLUDE_PATH, then the compiler's own (`DEFAULT_INCLUDE_DIRS`); null (`cxx_headers_reason`) when
  not found and a directory was not read. The nvidia-nccl wheel's nvidia/nccl/include/nccl.h is on no such path.
- `nccl_so_path` / `nccl_so_path_found`: `$SGLANG_NCCL_SO_PATH` of the server's environment where it is set (left out
  otherwise), and whether that file exists and exports every function SGLang's pynccl binds in it (PYNCCL_FUNCTIONS:
  ncclGetVersion, ncclReduce, ...; false, with `nccl_so_path_reason` where the file is there: no NCCL for pynccl;
  null, with the reason, for a relative path, which ctypes.CDLL opens from the server's working directory, not
  known (but for `gate --cwd DIR`, which names that directory: the relative path is read from there, igap38), for a
  bare name the loader's path does not hold (a bare name is looked up on LD_LIBRARY_PATH, in the ld.so cache and the
  default directories, as the dynamic loader would, and the file found read: igap40; LD_LIBRARY_PATH split at ':'
  and ';', an empty or relative element searched from the server's working directory where gate --cwd or `env -C`
  names it, the name unknown where such an element, or one with $ORIGIN, comes before the copy found: irev67), and
  for a file not read as an ELF shared library; true for libnccl.so.2 itself, which glibc's dlopen answers with the
  libnccl.so.2 torch loaded, as for the default). SGLang 0.5.1-0.5.23's pynccl loads that file instead of libnccl.so.2
  (pynccl_wrapper.py find_nccl_library); the symmetric-memory allocator's `-lnccl` link does not read it.
  `nccl_so_path_init_config`: whether that ELF file also exports ncclCommInitRankConfig, which pynccl binds too from
  SGLang 0.5.17 (left out where the file was not read as one). "Exports a function" is what ctypes' getattr finds
  through dlsym and can call: a defined global or weak STT_FUNC / STT_GNU_IFUNC symbol of the default version or none
  (DynamicSymbols.defines_function; igap29: a data object, a hidden `name@VER` or a hidden-visibility symbol of that
  name counted). `nccl_so_path_window`: whether dlsym finds ncclCommWindowRegister there (pynccl's hasattr test; an
  NCCL older than 2.27 has none); `nccl_so_path_mem_alloc`: where it does, whether ncclMemAlloc and ncclMemFree are
  functions there too, which SGLang 0.5.23 binds with the window functions (left out where the window is not found).
  `nccl_so_path_version`: where the file exports those functions, the NCCL version it was built as, read from its
  .rodata without loading it (NCCL's init.cc VERSION_STRING, "NCCL version X.Y.Z+cudaA.B": nccl_library_version;
  igap36), X.Y.Z to compare with the nvidia-nccl wheel's version; null with `nccl_so_path_version_reason` where not
  read (no such string, two of them, too large, a patch of more than one digit: NCCL_SUFFIX follows NCCL_PATCH
  without a separator, so "2.27.20" may be 2.27.2 with the suffix "0"; igap40) and for libnccl.so.2 itself (dlopen
  returns torch's own NCCL). `nccl_so_path_cuda` / `nccl_so_path_cuda_major`: the CUDA version that string says
  the library was built with ("13.0" / 13; left out where the string is not read): its CUDA runtime, which the
  nvidia-nccl wheels link statically (no libcudart in their DT_NEEDED), needs a driver of that CUDA major (igap40).
- `nvcc_host_found` / `nvcc_host`: whether the host compiler nvcc runs for SGLang's JIT kernels (they pass no -ccbin)
  is found: nvcc's default, gcc, on the server's PATH, then the toolkit's bin and nvvm/bin (nvcc.profile's PATH +=),
  or the gcc / g++ NVCC_CCBIN names (a file, DIR/gcc for a directory, a bare name on that PATH: _ccbin_host; false
  where it is missing); left out with `nvcc_host_reason` where NVCC_CCBIN names another kind of compiler, a -ccbin in
  NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS, the toolkit's nvcc.profile or a wrapper nvcc may name another
  (nvcc_host_compiler; an NVCC_CCBIN naming clang is read, igap28); false too where that gcc's program directory (of
  its own major, where its name says it) holds cc1 and no cc1plus (gcc without g++: nvcc compiles the host code as
  C++), and where a GCC driver binary has no cc1plus of its own major under its own prefix (a driver copied out of
  its installation looks for its compilers only relative to where it lies: _driver_without_compiler, ifc43; null
  where GCC_EXEC_PREFIX or COMPILER_PATH is set).
- `nvcc_host_gnu_major`: that gcc's major (the version its driver binary carries, else its resolved name gcc-N / g++-N,
  else its one program directory, else the one GCC version directory of its prefix: _layout_major; a name that
  disagrees with the binary, an ELF in GCC's name that is no GCC driver, and a script's name say nothing: igap31,
  _gcc_driver_major), absent where none says it; `nvcc_host_gnu_max` /
  `nvcc_host_gnu_supported`: the newest major the toolkit's
  include/crt/host_config.h takes, and whether the gcc is within it (_gnu_support); absent where the header is not
  read or NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS hold -allow-unsupported-compiler.
- `flashinfer_host` / `flashinfer_allow_unsupported` / `cc_host_found` / `cc_host` / `cc_host_gnu_*`: the host
  compiler of FlashInfer's own JIT nvcc commands (flashinfer_host_compiler): "cc" where CC is set (FlashInfer passes
  -ccbin $CC; the `cc_host*` keys judge that compiler as the `nvcc_host*` keys judge gcc, null where it is not one
  program or another -ccbin competes), "nvcc-default" where not (the `nvcc_host*` keys describe it), null with
  `flashinfer_host_reason` where FLASHINFER_NVCC or a -ccbin in FLASHINFER_EXTRA_CUDAFLAGS names another.
  `cc_host_one_program` (where CC is set): whether the shell that runs FlashInfer's ninja command leaves $CC one word
  (false where a second word is no option, CC='ccache gcc': nvcc takes it for a second input file; cc_one_program).
- `nvcc_host_asan_header_found` / `cc_host_asan_header_found`: whether that gcc's compile finds
  <sanitizer/asan_interface.h>, which FlashInfer 0.5.0-0.7.4's memoryUtils.cu includes unconditionally
  (gcc_asan_header): in CPATH / CPLUS_INCLUDE_PATH, the toolkit's include, the gcc's own include directory of its
  major (PREFIX/lib/gcc/TRIPLET/N/include: where GCC keeps the sanitizer headers; Fedora ships them with libasan,
  not gcc-c++) or the default system directories; null where a directory of that list is not known (no version
  directory of the gcc's major under its prefix, a relative CPATH entry, an -I / -isystem in the nvcc or FlashInfer
  flag variables); absent where the gcc's major is not read.
- `nvcc_host_clang_*` / `cc_host_clang_*`: for a clang NVCC_CCBIN or CC names (igap28: found, never judged), its major
  (`_major`: clang-N, the libclang-cpp.so.N / libLLVM.so.N it needs (a shared-libraries build's libclangBasic.so.N /
  libLLVMSupport.so.N and kin where one of clang's own is among them: igap39), the version string a static clang's
  .rodata carries, an llvm-N directory, the one PREFIX/lib/clang/N, which must agree: igap31; the binary must say one
  of the first two: igap34), the newest the toolkit's host_config.h takes
  (`_max`) and whether it is within it (`_supported`: null where the major is not read; _clang_host).
- `pytorch_nvcc` / `pytorch_nvcc_found` / `pytorch_nvcc_same`: PYTORCH_NVCC, the nvcc FlashInfer before 0.4.0rc4
  compiles with in place of the toolkit's bin/nvcc (pytorch_nvcc).

Files are read through a FileView (stackcheck/readers/fsview.py) with box paths; nothing is imported.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar

from stackcheck.digits import whole_number
from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lazy_re import lazy_bytes as _lazy_bytes
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import CommandTimeout, Probe, ProbeContext, ProbeResult, run_command, view_of
from stackcheck.readers.fsview import FileView, HostView, is_dir, is_file, kind_of, listdir_or_empty, which_known

if TYPE_CHECKING:
    import re
    from typing import Any, ClassVar

#: the environment variables through which Triton takes another ptxas than its bundled one (knobs.py:
#: TRITON_PTXAS_PATH for every release; TRITON_PTXAS_BLACKWELL_PATH for the ptxas-blackwell of 3.6+)
TRITON_PTXAS_ENV = ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH")
HEADERS = {"fp8_header": "cuda_fp8.h", "fp4_header": "cuda_fp4.h", "curand_header": "curand_kernel.h"}
_RELEASE = _lazy(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_CUDART_VERSION = _lazy_bytes(rb"#define\s+CUDART_VERSION\s+(\d{4,6})\b")
#: how much of cuda_runtime_api.h is read for its CUDART_VERSION (defined in its first few kilobytes)
_CUDART_READ = 1 << 16

#: GNU ld's built-in SEARCH_DIRs (binutils on Debian 12, `ld --verbose`; the same list with the other triplet
#: on aarch64) and the lib64 directories of RHEL-like systems: where a link finds `-lnccl` without any -L
_TRIPLETS = ("x86_64-linux-gnu", "aarch64-linux-gnu")
DEFAULT_LINK_DIRS = (
    *(f"/usr/local/lib/{t}" for t in _TRIPLETS),
    *(f"/lib/{t}" for t in _TRIPLETS),
    *(f"/usr/lib/{t}" for t in _TRIPLETS),
    "/usr/local/lib64",
    "/lib64",
    "/usr/lib64",
    "/usr/local/lib",
    "/lib",
    "/usr/lib",
    *(f"/usr/{t}/lib64" for t in _TRIPLETS),
    *(f"/usr/{t}/lib" for t in _TRIPLETS),
)
#: GCC's own library directories (`gcc -print-search-dirs`: /usr/lib/gcc/<triplet>/<version>/), one per version
GCC_LIB_ROOTS = (
    "/usr/lib/gcc/x86_64-linux-gnu",
    "/usr/lib/gcc/x86_64-redhat-linux",
    "/usr/lib/gcc/aarch64-linux-gnu",
    "/usr/lib/gcc/aarch64-redhat-linux",
)
#: the architecture whose libraries a triplet directory holds: ld's search for one architecture skips another's
#: libnccl.so there as incompatible, so a hit in such a directory counts only for its own architecture
_TRIPLET_ARCH = {
    "x86_64-linux-gnu": "x86_64",
    "x86_64-redhat-linux": "x86_64",
    "aarch64-linux-gnu": "aarch64",
    "aarch64-redhat-linux": "aarch64",
}
#: what `-lnccl` takes in a directory: the shared library, else the static archive of that name
NCCL_LINK_NAMES = ("libnccl.so", "libnccl.a")
#: what torch's `-lcudart` (every with_cuda link) takes: a toolkit's libcudart.so (cuda-cudart-dev); the runtime
#: package and the pip wheels (nvidia-cuda-runtime-cu12 12.8.90: nvidia/cuda_runtime/lib/libcudart.so.12;
#: nvidia-cuda-runtime 13.0.96: nvidia/cu13/lib/libcudart.so.13 and libcudart_static.a) have none of these names
CUDART_LINK_NAMES = ("libcudart.so", "libcudart.a")
#: a CXX whose default library directories are the system's (torch's get_cxx_compiler: $CXX, else c++)
_PLAIN_CXX = _lazy(r"(?:c\+\+|g\+\+|gcc|cc|clang\+\+|clang)(?:-\d+(?:\.\d+)*)?")

Runner = Callable[[Sequence[str], float, Mapping[str, str] | None], tuple[int, str, str]]


def _major_minor(version: Any) -> str | None:
    if not isinstance(version, str):
        return None
    numbers = [whole_number(p) for p in version.split(".")[:2]]
    if len(numbers) < 2 or numbers[0] is None or numbers[1] is None:
        return None
    return f"{numbers[0]}.{numbers[1]}"


def _is_elf(view: FileView, path: str) -> bool:
    try:
        return view.read_bytes(path, 4) == b"\x7fELF"
    except OSError:
        return False


def _include_dirs(view: FileView, home: str, nvcc: str | None) -> list[str]:
    """Where a JIT compile finds the CUDA headers: <home>/include (what FlashInfer passes with -I), and nvcc's
    own toolkit, which nvcc adds itself (nvcc.profile): the real location of the nvcc binary, so a
    /usr/local/bin/nvcc that links into /usr/local/cuda-13.0 still finds that toolkit's headers; plus the
    targets/<arch>-linux/include of either, where split toolkits (conda, pip) keep them."""
    homes = [home]
    if nvcc is not None:
        try:
            real = view.realpath(nvcc)
        except OSError:
            real = nvcc
        real_home = real.rsplit("/", 2)[0] if real.count("/") >= 2 else home
        if real_home and real_home not in homes:
            homes.append(real_home)
    out: list[str] = []
    for h in homes:
        out += [f"{h}/include", f"{h}/targets/x86_64-linux/include", f"{h}/targets/sbsa-linux/include"]
    return out


def headers_cuda(view: FileView, includes: Sequence[str]) -> str | None:
    """major.minor of CUDART_VERSION in the first cuda_runtime_api.h of `includes` (the one a compile takes)."""
    for d in includes:
        path = f"{d}/cuda_runtime_api.h"
        if not is_file(view, path):
            continue
        try:
            head = view.read_bytes(path, _CUDART_READ)
        except OSError:
            return None
        m = _CUDART_VERSION.search(head)
        if m is None:
            return None
        n = int(m.group(1))
        return f"{n // 1000}.{n % 1000 // 10}"
    return None


def build_toolkit(facts: Mapping[str, Any]) -> dict[str, Any] | None:
    """The toolkit entry marked `active_for_build` by the toolkits probe, or None."""
    for tk in facts.get("cuda_toolkits") or []:
        if isinstance(tk, dict) and tk.get("active_for_build"):
            return tk
    return None


def ptxas_version(
    path: str, view: FileView, env: Mapping[str, str], timeout_s: float, runner: Runner = run_command
) -> tuple[str | None, str | None]:
    """(version, why not): `ptxas --version` of a file a user pointed Triton at."""
    st = view.stat(path)
    if st is None:
        return None, f"{path} does not exist"
    if st.kind != "file":
        return None, f"{path} is not a file"
    if not isinstance(view, HostView) or view.root != "/":
        return None, f"{path}: not run (not this host's own filesystem)"
    try:
        rc, out, err = runner([path, "--version"], timeout_s, env)
    except CommandTimeout as exc:
        return None, str(exc)
    except OSError as exc:
        return None, f"{path}: cannot run: {exc.strerror or exc}"
    m = _RELEASE.search(out) or _RELEASE.search(err)
    if m is None:
        return None, f"{path} --version: exited {rc}, no 'release X.Y, VX.Y.Z' in its output"
    return m.group(2), None


def rocm_home(env: Mapping[str, str], view: FileView, cwd: str | None = None) -> tuple[str | None, str]:
    """(the ROCm home apache-tvm-ffi 0.1.9-0.1.12 finds (`_find_rocm_home`), as a box path, or None; why that is not
    known, or ""). Its shutil.which("hipcc") runs in the server's own process (tvm_ffi/cpp/extension.py:212 in 0.1.9),
    so a relative PATH entry is the server's working directory's (`cwd`; Path.resolve() makes the home absolute):
    looked up there where it is known, else the home is not known where such an entry comes before any hipcc."""
    for var in ("ROCM_HOME", "ROCM_PATH"):
        value = env.get(var)
        if value:
            return value, ""
    # (shutil.which's default PATH, as tvm-ffi runs it)
    hipcc, why = which_known(view, "hipcc", env.get("PATH", posixpath.defpath), cwd, LAUNCH_DIR)
    if why:
        return None, why
    if hipcc is not None:
        try:
            real = view.realpath(hipcc)
        except OSError:
            real = hipcc
        home = posixpath.dirname(posixpath.dirname(real))
        return (posixpath.dirname(home) if posixpath.basename(home) == "hip" else home), ""
    return ("/opt/rocm" if kind_of(view, "/opt/rocm") is not None else None), ""


def ninja_on_path(env: Mapping[str, str], view: FileView) -> tuple[str | None, str]:
    """(the `ninja` a JIT build's subprocess finds on the environment's PATH (os.defpath when it has none), or None;
    why that is not known, or ""): the subprocess starts in the build directory (BUILD_DIR), where a relative PATH
    entry is looked up."""
    path_value = env.get("PATH", posixpath.defpath)
    return which_known(view, "ninja", path_value, None, BUILD_DIR)


#: the PATH /bin/sh searches when the environment has none (dash and bash: the same six directories); ninja runs
#: each build command through /bin/sh -c, so a compiler named without a slash is looked up there
SH_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: where a JIT build's programs are looked up from: torch's _run_ninja_build runs ninja with subprocess.run(cwd=
#: build_directory) (torch 2.8.0 torch/utils/cpp_extension.py:2595-2601), FlashInfer's run_ninja with cwd=workdir
#: (0.6.18 flashinfer/jit/cpp_ext.py:370-374), apache-tvm-ffi's build_ninja with cwd=build_dir (0.1.9
#: tvm_ffi/cpp/extension.py:531-533), SGLang 0.5.23's own with cwd=build_dir (kernels/jit/utils/compile/ninja.py:160-
#: 162); ninja runs each command through /bin/sh -c there, and nvcc and collect2 start from it. A relative PATH entry is
#: then a directory under the build directory, not the server's (run with Python 3.11.7, 2026-12-06: subprocess.run(
#: ['tool'], cwd=B, env={'PATH': 'rel'}) and /bin/sh -c tool ran B/rel/tool): not read, so such an entry before the
#: program found makes its key unknown (which_known; igap43, issue 16)
BUILD_DIR = "the JIT build's own directory (ninja and the commands it runs start there)"
#: where a program the server's own process looks up (shutil.which) is found for a relative PATH entry
LAUNCH_DIR = "the server's working directory (gate --cwd names it)"


def cxx_compiler(env: Mapping[str, str], view: FileView) -> dict[str, Any]:
    """The `cxx*` keys of the jit section: the C++ compiler torch's load_inline compiles and links with
    (get_cxx_compiler: $CXX, else `c++`), written into build.ninja as `cxx = ...` and run by ninja through /bin/sh
    in the extension's build directory, with the server's PATH. `cxx_found` null (`cxx_reason`) where CXX has more
    than one word (a launcher such as ccache, whose own lookup is not read) or a relative path; with more than one
    word, `cxx_quoted_found`: whether one program is named by the whole value, as SGLang 0.5.18+ run it (ninja.py:
    shlex.quote)."""
    value = env.get("CXX", "c++")
    words = value.split()
    out: dict[str, Any] = {"cxx_found": None}
    if any(c.isspace() and c not in " \t" for c in value):  # (str.split() cuts there, the shell and ninja do not)
        out["cxx_reason"] = f"CXX={value!r}: a space other than blank or tab (a newline, a carriage return), not read"
    elif not words:
        out["cxx_found"] = False
        out["cxx_reason"] = "CXX is set and empty: the build command has no compiler"
    elif len(words) > 1:
        out["cxx_reason"] = f"CXX={value!r}: a command with arguments; what it runs is not read"
        # SGLang 0.5.18+ write CXX into their ninja file as one shell-quoted word: one program of the whole name
        # (a relative one names a file in a fresh staging directory: none)
        relative = "/" in value and not value.startswith("/")
        whole, why = (None, "") if relative else which_known(view, value, env.get("PATH", SH_DEFAULT_PATH), None,
                                                              BUILD_DIR)  # fmt: skip
        out["cxx_quoted_found"] = None if why else whole is not None
        if why:
            out["cxx_quoted_reason"] = why
        out.update(cxx_split(view, value, env.get("PATH", SH_DEFAULT_PATH)))
    elif "/" in words[0] and not words[0].startswith("/"):
        out["cxx_reason"] = f"CXX={value!r} is relative to the extension's build directory"
    else:
        found, why = which_known(view, words[0], env.get("PATH", SH_DEFAULT_PATH), None, BUILD_DIR)
        if why:
            out["cxx_reason"] = why
            return out
        out["cxx_found"] = found is not None
        if found is not None:
            out["cxx"] = found
    return out


#: the compiler launchers a CXX of several words may start with, which run the next word as the compiler, looked up on
#: the PATH (ccache / sccache: CXX='ccache g++')
_CXX_LAUNCHERS = ("ccache", "sccache")


def cxx_split(view: FileView, value: str, path_value: str) -> dict[str, Any]:
    """`cxx_split_found` (with `cxx_split_reason` where it is not true) for a CXX of several words, as a ninja file that
    writes it unquoted runs it: torch 2.8.0-2.12.0's load_inline (cpp_extension.py _write_ninja_file `cxx = {compiler}`,
    compiler = get_cxx_compiler(): os.environ.get('CXX', 'c++'); rule compile `$cxx -MMD ... -c $in` and rule link
    `$cxx $in $ldflags -o $out`), whose command ninja hands to /bin/sh -c, so the shell splits the value: its first word
    is the program. True where that program is on the server's PATH and the rest are options (CXX='g++ -O2'), or it is
    ccache / sccache and the next word is a compiler on that PATH followed by options only (CXX='ccache g++': ccache
    runs that compiler, looked up on the PATH; inferred from how these launchers are documented to run); false where
    the first word, or the launcher's compiler, is not found (/bin/sh: not found, or the launcher's own error); null
    for other shapes (another program with a second word that is no option, a relative path, shell syntax the shell
    would expand)."""
    out: dict[str, Any] = {"cxx_split_found": None}
    if any(c.isspace() and c not in " \t" for c in value):
        # (irev62: str.split() cut at a newline or carriage return, which the ninja file and the shell do not treat as
        # a space between arguments: 'g++\r -O2' runs a program 'g++\r', a newline ends ninja's `cxx = ` line)
        out["cxx_split_reason"] = f"CXX={value!r}: a space other than blank or tab, which the shell does not split at"
        return out
    words = value.replace("\t", " ").split(" ")
    words = [w for w in words if w]
    if any(c in value for c in "$`*?[\"'\\;&|<>(){}~#!"):
        out["cxx_split_reason"] = f"CXX={value!r}: shell syntax the build's /bin/sh reads, not read here"
        return out
    if "=" in words[0]:  # (a leading NAME=VALUE is an assignment to the shell, not the program: irev62)
        out["cxx_split_reason"] = f"CXX={value!r}: starts with an assignment the shell makes, not read here"
        return out
    programs = words[:2] if words[0] in _CXX_LAUNCHERS else words[:1]
    rest = words[len(programs) :]
    if any(not w.startswith("-") for w in rest):
        out["cxx_split_reason"] = f"CXX={value!r}: a word after the compiler that is no option, not read"
        return out
    for program in programs:
        if "/" in program and not program.startswith("/"):
            out["cxx_split_reason"] = f"CXX={value!r}: {program} is relative to the build directory, not read"
            return out
        found, why = which_known(view, program, path_value, None, BUILD_DIR)
        if why:
            out["cxx_split_reason"] = f"CXX={value!r}: {why}"
            return out
        if found is None:
            out["cxx_split_found"] = False
            out["cxx_split_reason"] = f"CXX={value!r}: no program {program} on the server's PATH"
            return out
    out["cxx_split_found"] = True
    return out


#: the environment variables through which nvcc takes another host compiler than its default (NVCC_CCBIN; a -ccbin /
#: --compiler-bindir that NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS add to every nvcc command line)
NVCC_HOST_ENV = ("NVCC_CCBIN", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS")
_NVCC_HOST_OPTION = _lazy(r"(?:^|\s)(?:-ccbin|--compiler-bindir)(?:[=\s]|$)")
#: nvcc's own default host compiler on Linux, looked up on the PATH it runs with (inferred from NVIDIA's nvcc
#: documentation of --compiler-bindir; sccache PR #1747: 'requires gcc to be on the path or -ccbin')
NVCC_DEFAULT_HOST = "gcc"


def nvcc_host_compiler(env: Mapping[str, str], view: FileView, nvcc: str | None, real_nvcc: bool) -> dict[str, Any]:
    """The `nvcc_host*` keys of the jit section: whether the host compiler nvcc runs for a .cu file with no -ccbin on
    its command line (SGLang's JIT builds pass none: apache-tvm-ffi 0.1.9 extension.py:437-444, SGLang 0.5.23
    kernels/jit/utils/compile/ninja.py:112-114) is found: gcc on the server's PATH followed by the toolkit's bin and
    nvvm/bin (nvcc.profile's PATH +=), or the compiler NVCC_CCBIN names (_ccbin_host). Left out (`nvcc_host_reason`)
    where something else may name it: a -ccbin in NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS, a compiler-bindir in the
    toolkit's nvcc.profile, an nvcc that is a wrapper script, an NVCC_CCBIN that names no gcc / g++; nothing where
    there is no nvcc (nvcc_found judges that). A gcc whose program directory holds cc1 and no cc1plus (no g++
    installed) is no host compiler: nvcc hands it the host code as C++."""
    if nvcc is None:
        return {}
    named = [
        name
        for name in NVCC_HOST_ENV
        if env.get(name) and (name == "NVCC_CCBIN" or _NVCC_HOST_OPTION.search(env[name]))
    ]
    if named and named != ["NVCC_CCBIN"]:
        return {"nvcc_host_reason": f"{', '.join(named)} names nvcc's host compiler: not read"}
    if not real_nvcc:
        why = f"{nvcc} is not the compiler itself (a wrapper script?): its host compiler is not read"
        return {"nvcc_host_reason": why}
    bin_dir = posixpath.dirname(nvcc)
    profile = f"{bin_dir}/nvcc.profile"
    try:
        text = view.read_bytes(profile, 1 << 16).decode("utf-8", "replace") if is_file(view, profile) else ""
    except OSError:
        return {"nvcc_host_reason": f"{profile} could not be read"}
    if "compiler-bindir" in text or "ccbin" in text:
        return {"nvcc_host_reason": f"{profile} names a host compiler: not read"}
    path_value = env.get("PATH", SH_DEFAULT_PATH)
    toolkit = posixpath.dirname(bin_dir)
    search = f"{path_value}:{toolkit}/nvvm/bin:{bin_dir}"
    if named:
        value = env["NVCC_CCBIN"].strip()
        found, unread = _ccbin_host(view, value, search)
        if unread is not None:
            return {"nvcc_host_reason": unread}
    else:
        found, why = which_known(view, NVCC_DEFAULT_HOST, search, None, BUILD_DIR)
        if why:
            return {"nvcc_host_found": None, "nvcc_host_reason": why}
    out: dict[str, Any] = {"nvcc_host_found": found is not None}
    if found is None and named:
        out["nvcc_host_reason"] = (
            f"NVCC_CCBIN={value!r} names no compiler on the box: nvcc stops before compiling ('nvcc fatal : Failed to "
            "preprocess host compiler properties')"
        )
    if found is not None:
        out["nvcc_host"] = found
        allowed = any(_ALLOW_UNSUPPORTED.search(env.get(name) or "") for name in NVCC_HOST_ENV)
        if named and _is_clang(view, found):  # (igap28: NVCC_CCBIN naming clang was left out, its rules unjudged)
            out.update(_clang_host(view, found, toolkit, allowed, "nvcc_host", found))
        else:
            out.update(_gcc_host(view, found, toolkit, allowed, "nvcc_host", found, env))
    return out


def _gcc_host(
    view: FileView, gcc: str, toolkit: str, allowed: bool, key: str, label: str, env: Mapping[str, str]
) -> dict[str, Any]:
    """The gcc checks of a host compiler nvcc runs (`key` "nvcc_host" or "cc_host"): `KEY_found` false with
    `KEY_reason` where the program directory of its own major holds cc1 and no cc1plus (no g++ installed: nvcc hands
    it the host code as C++), or where a GCC driver binary has no cc1plus of its own major under its own prefix
    (_driver_without_compiler); else `KEY_gnu_major` where its major is known, and where -allow-unsupported-compiler
    does not reach nvcc, `KEY_gnu_max` / `KEY_gnu_supported` (the toolkit's host_config.h, _gnu_support)."""
    driver, lie, script = _gcc_driver_major(view, gcc)
    programs = _own_version(view, gcc, _gcc_program_dirs(view, gcc), driver)
    if programs and not any(is_file(view, f"{d}/cc1plus") for d in programs):
        return {
            f"{key}_found": False,
            f"{key}_reason": (
                f"{label} has no C++ compiler (cc1 but no cc1plus in {', '.join(programs)}): the g++ package is not "
                "installed, and nvcc compiles the host code as C++"
            ),
        }
    if driver is not None:
        missing = _driver_without_compiler(view, gcc, driver, programs, env)
        if missing is not None:
            return {f"{key}_found": missing[0], f"{key}_reason": f"{label} {missing[1]}"}
    why = lie
    major = driver  # (None where the binary and its name disagree: `lie`)
    if major is None and lie is None and not script:
        major = _gnu_major(view, gcc, programs)
    # (no program directory with cc1 or cc1plus: the prefix's layout, igap28; a script: only its prefix's layout and
    # what it execs say which gcc it runs, never its name or its directory's programs, igap31)
    if major is None and lie is None and (script or not programs):
        major, why = _layout_major(view, gcc)
        if major is None and why is None and script:
            why = f"resolves to {_resolved(view, gcc)}, a script (a wrapper) whose name does not say which gcc it runs"
    if major is None:
        return _gnu_unread(view, gcc, toolkit, allowed, key, label, why)
    out: dict[str, Any] = {f"{key}_gnu_major": major}
    if not allowed:
        out.update({f"{key}_gnu_{k.rsplit('_', 1)[1]}": v for k, v in _gnu_support(view, major, toolkit).items()})
    return out


def _driver_without_compiler(
    view: FileView, gcc: str, driver: int, programs: list[str], env: Mapping[str, str]
) -> tuple[bool | None, str] | None:
    """(KEY_found, why) where `gcc` resolves to a GCC driver binary of major `driver` (_gcc_driver_major) and no
    program directory of that major under its own prefix (PREFIX/lib/gcc/TRIPLET/VERSION or
    PREFIX/libexec/gcc/TRIPLET/VERSION, PREFIX above the resolved driver's bin: `programs`) holds cc1plus; None
    otherwise (ifc43 row g1). The driver finds its compilers relative to where it lies: gcc/gcc.cc process_command
    sets gcc_exec_prefix / gcc_libexec_prefix from make_relative_prefix(argv[0], bindir, exec / libexec prefix) and
    adds the configured-in standard_libexec_prefix only where that is null ('If we don't know where the toolchain
    has been installed, use the configured-in locations'), so a driver copied into another bin (a /opt/gcc/bin/gcc
    beside a lib/gcc/TRIPLET/12 of start files only) runs no cc1plus at all: Debian 12's gcc 12.2.0 driver copied so
    prints -print-search-dirs programs only below the copy's prefix and stops with 'cannot execute cc1plus' for
    -x c++ (run here, 2026-12-05); a symbolic link resolves to the driver's own bin (make_relative_prefix follows
    links). False then; null (not read) where the server's environment sets GCC_EXEC_PREFIX or COMPILER_PATH,
    which send the driver elsewhere (GCC manual, Environment Variables)."""
    if any(is_file(view, f"{d}/cc1plus") for d in programs if _version_major(posixpath.basename(d)) == driver):
        return None
    try:
        real = view.realpath(gcc)
    except (OSError, ValueError):
        return None
    prefix = posixpath.dirname(posixpath.dirname(real))
    where = f"{prefix}/lib/gcc/*/{driver}* or {prefix}/libexec/gcc/*/{driver}*"
    named = [name for name in ("GCC_EXEC_PREFIX", "COMPILER_PATH") if env.get(name)]
    if named:
        return None, (
            f"resolves to {real}, GCC {driver}'s driver binary, with no cc1plus of version {driver} in {where}, and "
            f"{', '.join(named)} in the server's environment names where it looks instead: not read"
        )
    return False, (
        f"resolves to {real}, GCC {driver}'s driver binary, and no cc1plus of version {driver} lies in {where}: "
        "the driver looks for its compilers relative to where it lies (a driver copied out of its installation), so "
        "nvcc's host compile stops with 'cannot execute cc1plus'"
    )


#: a compiler name NVCC_CCBIN may give that is GCC's own driver: gcc / g++, with a target prefix
#: (x86_64-linux-gnu-gcc-12) or a version suffix (gcc-13, g++-12.2)
_CCBIN_GNU = _lazy(r"(?:[\w.+-]+-)?(?:gcc|g\+\+)(?:-\d+(?:\.\d+)*)?")


def _ccbin_host(view: FileView, value: str, search: str) -> tuple[str | None, str | None]:
    """(the compiler NVCC_CCBIN makes nvcc run, or None where there is none; why it is not read, or None). nvcc 13.0.88
    (nvidia-cuda-nvcc wheel, run with -dryrun, 2026-12-05) runs a file NVCC_CCBIN names, DIR/gcc for a directory,
    and a bare name looked up on its PATH, and stops ('Failed to preprocess host compiler properties') where that
    is missing. Read only for GCC's own drivers (gcc, g++): clang and other compilers are not read."""
    if not value or ("/" in value and not value.startswith("/")):
        return None, f"NVCC_CCBIN={value!r} is empty or relative to a working directory: not read"
    if value.startswith("/") and kind_of(view, value) == "dir":
        value = posixpath.join(value, NVCC_DEFAULT_HOST)
    name = posixpath.basename(value.rstrip("/"))
    if not _CCBIN_GNU.fullmatch(name) and not _CLANG_DRIVER.fullmatch(name):
        return None, f"NVCC_CCBIN={value!r} names a host compiler other than gcc / g++ / clang: not read"
    found, why = which_known(view, value, search, None, BUILD_DIR)
    return (None, f"NVCC_CCBIN={value!r}: {why}") if why else (found, None)


_ALLOW_UNSUPPORTED = _lazy(r"(?:^|\s)-?-allow-unsupported-compiler(?:\s|$)")
_GNU_LIMIT = _lazy(r"#if __GNUC__ > (\d{1,9})\s+#error -- unsupported GNU version")
_GCC_NAME_MAJOR = _lazy(r"(?:gcc|g\+\+)-(\d{1,9})")


def _gnu_unread(
    view: FileView, gcc: str, toolkit: str, allowed: bool, key: str, label: str, why: str | None = None
) -> dict[str, Any]:
    """`KEY_gnu_supported` null, with why, where the toolkit's host_config.h limits the gcc major and the major of the
    gcc nvcc runs is not read (irev58): a name in GCC's that resolves to another program (a ccache or distcc
    masquerade link, /usr/lib/ccache/gcc -> /usr/bin/ccache: the compiler it runs in turn is not read), or a gcc
    whose name and program directories do not say its major. Before, nothing was written and the version rules,
    which test that the key exists, were skipped: a pass. Nothing where -allow-unsupported-compiler reaches nvcc or
    the header's limit is not read (the version is not judged there either)."""
    if allowed:
        return {}
    limit = _gnu_support(view, 0, toolkit).get("nvcc_host_gnu_max")
    if not isinstance(limit, int):
        return {}
    try:
        real = view.realpath(gcc)
    except (OSError, ValueError):
        real = gcc
    if why is not None and why.startswith("resolves to "):  # (_gcc_driver_major's: the binary read, igap31)
        what = f"{why}: the gcc it is"
    elif not _GCC_DRIVER.fullmatch(posixpath.basename(real)):
        what = f"resolves to {real}, not GCC's driver (a ccache or distcc masquerade link, or a wrapper): the compiler "
        what += "it runs"
    elif why:
        what = f"names no major, and {why}: its version"
    else:
        what = "names no major, and its program directories do not tell one: its version"
    return {
        f"{key}_gnu_max": limit,
        f"{key}_gnu_supported": None,
        f"{key}_gnu_supported_reason": f"{label} {what} is not read, and {toolkit}/include/crt/host_config.h takes "
        f"gcc {limit} at most",
    }


#: a compiler name that is clang's driver (clang, clang++, clang-19, x86_64-linux-gnu-clang++-18)
_CLANG_DRIVER = _lazy(r"(?:[\w.+-]+-)?clang(?:\+\+)?(?:-\d+(?:\.\d+)*)?")
_CLANG_NAME_MAJOR = _lazy(r"clang(?:\+\+)?-(\d{1,9})")
_LLVM_DIR = _lazy(r"llvm-(\d{1,9})")
#: the toolkit's host_config.h test of a (non-Apple, non-Grace, non-HOS) clang's major: '#if (__clang_major__ >= N) ...'
#: then '#error -- unsupported clang version!' (nvidia-cuda-nvcc-cu12 12.8.93 include/crt/host_config.h:156-157, N 20;
#: nvidia-cuda-crt 13.0.88 nvidia/cu13/include/crt/host_config.h:150-151, N 21)
_CLANG_LIMIT = _lazy(r"#if \(__clang_major__ >= (\d{1,9})\)[^\n]*\n#error -- unsupported clang version")


def _is_clang(view: FileView, compiler: str) -> bool:
    """Whether a found compiler is clang's driver by its name or by the name it resolves to."""
    try:
        real = posixpath.basename(view.realpath(compiler))
    except (OSError, ValueError):
        real = ""
    return bool(_CLANG_DRIVER.fullmatch(posixpath.basename(compiler)) or _CLANG_DRIVER.fullmatch(real))


def _clang_major(view: FileView, clang: str) -> tuple[int | None, str]:
    """(a clang's major, why not), from every reading there is, which must agree: its resolved name clang-N / clang++-N,
    the LLVM libraries its binary is linked against (DT_NEEDED libclang-cpp.so.N / libLLVM.so.N / libLLVM-N.so:
    Debian 12's clang-19 1:19.1.7 /usr/lib/llvm-19/bin/clang needs libclang-cpp.so.19.1 and libLLVM.so.19.1, where its
    compiler lives; a BUILD_SHARED_LIBS clang's libclangBasic.so.N / libLLVMSupport.so.N and kin: _LLVM_COMPONENT,
    igap39), an llvm-N directory on its resolved path (Debian / Ubuntu: /usr/lib/llvm-N/bin/clang), the one
    version directory of PREFIX/lib/clang (its resource directory, found relative to the binary); None with why where
    none says it, or where two say different majors (igap31: a clang-19 that is clang 20's binary, or a clang-19
    linked against libclang-cpp.so.20, was read as 19). Only an ELF clang is read (irev60: a script named clang
    beside lib/clang/19 that execs a clang 20 was read as 19; igap31: a script named clang-19, by its name), and only
    where its binary says a major: the version string a static clang carries (_clang_binary) or an LLVM library it
    needs; an ELF with neither (a static clang was read by its name alone; a copy of another program, a truncated
    file), one not read as an ELF object, and NVIDIA's Grace clang are unknown whatever their name (igap34)."""
    try:
        real = view.realpath(clang)
    except (OSError, ValueError):
        return None, f"{clang} could not be resolved"
    name = posixpath.basename(real)
    if not _CLANG_DRIVER.fullmatch(name):
        return None, f"{clang} resolves to {real}, not clang's driver (a ccache masquerade link or a wrapper)"
    if not _is_elf(view, real):  # (a wrapper script: the clang it runs is neither its name's nor its directories')
        return None, f"{clang} resolves to {real}, no ELF program (a wrapper script): the clang it runs"
    needed, strings, unread = _clang_binary(view, real)
    if unread is not None:
        return None, f"{clang} resolves to {real}, {unread}"
    readings: dict[int, list[str]] = {}
    for major, said in strings:
        readings.setdefault(major, []).append(f"its version string {said!r}")
    for library in needed:
        linked = _CLANG_LIBRARY.fullmatch(library)
        if linked is not None:
            readings.setdefault(int(linked.group(1) or linked.group(2)), []).append(f"its DT_NEEDED {library}")
    # (igap39: a clang built with shared libraries needs libclangBasic.so.N, libLLVMSupport.so.N and their kin, and
    # no libclang-cpp / libLLVM: unknown; read only where one of clang's own libraries is among them, so an LLVM tool
    # copied into clang's name, which needs libLLVM* components alone, says nothing)
    parts = [(hit, library) for library in needed if (hit := _LLVM_COMPONENT.fullmatch(library)) is not None]
    if any(hit.group(1) == "clang" for hit, _ in parts):
        for hit, library in parts:
            readings.setdefault(int(hit.group(2)), []).append(f"its DT_NEEDED {library}")
    if not readings:  # (igap34: a static clang, or any ELF in clang's name, was read by its name alone)
        return None, (
            f"{clang} resolves to {real}, an ELF program with neither clang's version string nor an LLVM library it "
            "needs (no clang binary, or one not read): its version"
        )
    named = _CLANG_NAME_MAJOR.search(name)
    if named is not None and named.end() == len(name):
        readings.setdefault(int(named.group(1)), []).append(f"its name {name}")
    for part in real.split("/"):
        llvm = _LLVM_DIR.fullmatch(part)
        if llvm is not None:
            readings.setdefault(int(llvm.group(1)), []).append(f"its directory {part}")
    several = ""
    if posixpath.basename(posixpath.dirname(real)) == "bin":
        base = posixpath.join(posixpath.dirname(posixpath.dirname(real)), "lib/clang")
        majors = {m for v in listdir_or_empty(view, base) if (m := _version_major(v)) is not None}
        if len(majors) == 1:
            readings.setdefault(next(iter(majors)), []).append(f"its resource directory {base}")
        elif majors:
            several = f"{clang}'s prefix holds clang resource directories of {len(majors)} majors ({base})"
    if len(readings) > 1:
        said = "; ".join(f"{major} by {', '.join(how)}" for major, how in sorted(readings.items()))
        return None, f"{clang} resolves to {real}, whose readings of its major disagree ({said})"
    if readings and not any(_CLANG_LIBRARY.fullmatch(library) for library in needed):
        # ifc44 row g1: a static clang (its version string, no LLVM library) finds its own headers (stddef.h ...)
        # only in the resource directory beside its binary, PREFIX/lib/clang/MAJOR (clang/lib/Driver/Driver.cpp
        # GetResourcesPath: the binary's directory's sibling lib/clang); a binary copied out of its installation
        # has none there, and every host compile stops at 'stddef.h' file not found. irev65: so does a clang built
        # with shared component libraries (igap39's libclangBasic.so.N reading), whose driver code is the same
        kind = "a static clang" if strings else "a clang built with shared libraries"
        how = "its version string, no LLVM library" if strings else "its libclang*.so.N, no libclang-cpp / libLLVM"
        major = next(iter(readings))
        prefix = posixpath.dirname(posixpath.dirname(real))
        base = posixpath.join(prefix, "lib/clang")
        here = [v for v in listdir_or_empty(view, base) if _version_major(v) == major]
        if not any(is_dir(view, posixpath.join(base, v, "include")) for v in here):
            return None, (
                f"{clang} resolves to {real}, {kind} {major} ({how}) with no "
                f"resource directory {base}/{major}/include beside it (a binary copied out of its installation: its "
                "own headers such as stddef.h are not found)"
            )
    if readings:
        return next(iter(readings)), ""
    return None, several or f"{clang} names no major, and no llvm-N directory or resource directory tells one"


#: an LLVM library a clang binary is linked against, and its major (libclang-cpp.so.19.1, libLLVM.so.19.1: Debian 12's
#: clang-19; libLLVM-17.so: LLVM 17 and before)
_CLANG_LIBRARY = _lazy(r"lib(?:clang-cpp|LLVM)(?:\.so\.(\d{1,9})(?:\.\d{1,9})*|-(\d{1,9})(?:\.\d{1,9})*\.so)")
#: one library of a clang built with BUILD_SHARED_LIBS (libclangBasic.so.19, libLLVMSupport.so.19,
#: libLLVMSupport.so.20git), and its major: LLVM's llvm/cmake/modules/AddLLVM.cmake llvm_add_library gives each
#: shared library without an explicit SONAME `SOVERSION ${LLVM_VERSION_MAJOR}${LLVM_VERSION_SUFFIX}` ("Since 4.0.0,
#: the ABI version is indicated by the major version"; llvm/llvm-project eb92f627), and
#: clang/tools/driver/CMakeLists.txt:56-64 links the clang driver against clangBasic, clangCodeGen, clangDriver,
#: clangFrontend, clangFrontendTool and clangSerialization (llvm/llvm-project 01a805cd); libclang-cpp / libLLVM (the
#: dylibs, _CLANG_LIBRARY) have no component after the name
_LLVM_COMPONENT = _lazy(r"lib(clang|LLVM)[A-Z][A-Za-z0-9]{0,63}\.so\.(\d{1,9})(?:git|rc\d{1,3})?(?:\.\d{1,9}){0,2}")


#: the version strings clang's own code puts in its binary's .rodata, NUL-delimited (the linker may merge one into the
#: tail of a longer string): clang/lib/Basic/Version.cpp getClangToolFullVersion's `" version " CLANG_VERSION_STRING`
#: (the tool's name, and CLANG_VENDOR before it, are written at run time: "clang version X.Y.Z" is never one literal)
#: and getClangFullCPPVersion's `"Clang " CLANG_VERSION_STRING`; "clang -cc1 version X.Y.Z" holds the first as its
#: tail. Read in the clang-format 23.1.5 wheel's static binary (clang_format/data/bin/clang-format: " version 23.1.5"
#: in .rodata) and the ziglang 0.17.1 wheel's zig, which links clang in ("clang -cc1 version 22.1.8", "Clang 22.1.8").
#: CLANG_VERSION_STRING is what __clang_major__ is made from (CLANG_VERSION_MAJOR), whatever the vendor's name: AMD's
#: ROCm and AOCC clangs keep upstream LLVM's numbering there. `.comment`'s "clang version X" (the compiler that BUILT
#: the binary: zig's) is not in .rodata and is not read.
_CLANG_VERSION_STRING = _lazy_bytes(
    rb"(?<=\x00)(?:clang -cc1)? version (\d{1,4})\.\d{1,4}\.\d{1,4}(?:git|rc\d{1,3})?(?=\x00)"
    rb"|(?<=\x00)Clang (\d{1,4})\.\d{1,4}\.\d{1,4}(?:git|rc\d{1,3})?(?=\x00)"
)
#: the macro NVIDIA's clang for Grace predefines (the toolkit's host_config.h judges it by its own range, 16 to 19 in
#: CUDA 12.8.93 include/crt/host_config.h:116-121, and skips the clang test of :154-161); a binary that carries the
#: name is taken for one (inferred: clang's predefined macros are string literals in its binary)
_GRACE_CLANG_MARK = b"__GRCO_CLANG_COMPILER__"
#: the most of a clang binary's .rodata read (clang-format 23.1.5: 1.2 MB; zig 0.17.1, clang and LLVM inside: 66 MB)
_CLANG_RODATA_MAX = 1 << 27


def _clang_binary(view: FileView, real: str) -> tuple[list[str], list[tuple[int, str]], str | None]:
    """(the DT_NEEDED names of a clang binary, (major, string) for each version string in its .rodata
    (_CLANG_VERSION_STRING; the whole file where there is no section table), why the binary is not read): a file not
    read as an ELF object (truncated: an ELF's first bytes, which do not run), strings too large to read, or the
    mark of NVIDIA's Grace clang, which host_config.h judges by another range (igap34)."""
    from stackcheck.readers.elf import ElfError, ElfFile

    try:
        with ElfFile(real, view) as elf:
            needed = list(elf.dynamic().needed)
            rodata = elf.section(".rodata")
            size = rodata.size if rodata is not None else elf.size
            if size > _CLANG_RODATA_MAX:
                return needed, [], f"whose {size} bytes of strings are not read: its version"
            data = elf.read_section(rodata) if rodata is not None else elf.read_at(0, size, "the file")
    except (ElfError, OSError, ValueError):
        return [], [], "not read as an ELF program (truncated, or an ELF's first bytes only: it does not run)"
    if _GRACE_CLANG_MARK in data:
        return needed, [], "NVIDIA's clang for Grace (it carries __GRCO_CLANG_COMPILER__), whose range is not read"
    strings = [
        (int(m.group(1) or m.group(2)), m.group(0).decode("ascii")) for m in _CLANG_VERSION_STRING.finditer(data)
    ]
    return needed, strings, None


def _clang_host(view: FileView, clang: str, toolkit: str, allowed: bool, key: str, label: str) -> dict[str, Any]:
    """`KEY_clang_major` / `KEY_clang_max` / `KEY_clang_supported` (igap28): a clang nvcc runs as its host compiler,
    against the newest clang major the toolkit's include/crt/host_config.h takes (_CLANG_LIMIT: N - 1). Nothing where
    -allow-unsupported-compiler reaches nvcc or the header's clang test is not read; `KEY_clang_supported` null, with
    `KEY_clang_supported_reason`, where the clang's major is not read (never ok without a reading). NVIDIA's Grace
    clang (__GRCO_CLANG_COMPILER__, its own range) is not told apart: judged as clang."""
    major, why = _clang_major(view, clang)
    out: dict[str, Any] = {}
    if major is not None:
        out[f"{key}_clang_major"] = major
    if allowed:
        return out
    try:
        header = view.read_bytes(f"{toolkit}/include/crt/host_config.h", 1 << 17).decode("utf-8", "replace")
    except (OSError, ValueError):
        return out
    limit = _CLANG_LIMIT.search(header)
    if limit is None:
        return out
    most = int(limit.group(1)) - 1
    out[f"{key}_clang_max"] = most
    out[f"{key}_clang_supported"] = None if major is None else major <= most
    if major is None:
        out[f"{key}_clang_supported_reason"] = (
            f"{label}: {why}, and {toolkit}/include/crt/host_config.h takes clang {most} at most"
        )
    return out


#: what a GCC version directory of an installation holds (PREFIX/lib/gcc/TRIPLET/VERSION: the start files and libgcc;
#: PREFIX/libexec/gcc/TRIPLET/VERSION: the compilers proper): a directory of a version name without any of these is
#: not counted (a leftover)
_GCC_VERSION_FILES = ("cc1", "cc1plus", "crtbegin.o", "libgcc.a", "include/stddef.h")
_VERSION_NAME = _lazy(r"(\d{1,9})(?:\.\d{1,9}){0,2}")
#: in a wrapper script's text: the program it execs (an absolute path), and the GCC majors it names (a version
#: directory PREFIX/lib/gcc/TRIPLET/N, libstdc++'s include/c++/N, a gcc-N / g++-N program)
#: where a shell command starts in a line (irev60: an `exec` after `&&`, `||`, `;` or `then` was not read as one)
#: (irev61: a backtick's command substitution, `echo `/usr/bin/gcc "$@"`; exit`, ran a program inside a quiet word)
_SCRIPT_SEPARATOR = _lazy(r"&&|\|\||(?<![<>])&|[;|(){}`]")  # (not the & of a redirection: 2>&1, >&2)
#: the interpreters whose language _script_programs reads (a POSIX shell; irev61: a `#!/usr/bin/perl` script was
#: read as shell), named by the #! line's program or the one word after /usr/bin/env
#: the environment variables by which a wrapper script may send the driver to another GCC's programs (irev61)
_SCRIPT_GCC_ENV = _lazy(r"\b(?:GCC_EXEC_PREFIX|COMPILER_PATH)\b")
#: in a wrapper script's text (or CXX's words): what changes which linker collect2 runs for a driver that is read
#: (ifc47): -fuse-ld=NAME (collect2 then runs ld.NAME: GCC's manual, Link Options) and a PATH the script sets
#: (collect2 searches the PATH after the driver's program directories; LD_LIBRARY_PATH= and COMPILER_PATH= are not it)
_SCRIPT_LINKER_CHANGE = _lazy(r"(?<![\w-])-fuse-ld=|(?<![\w.$/-])PATH=")
_SCRIPT_SHELLS = frozenset(("sh", "bash", "dash", "ash", "ksh", "mksh", "zsh"))
#: the shell words a command of a wrapper script may start with that run no program: a script whose every other
#: command is `exec` of a program in the prefix is read (irev60: `/usr/bin/gcc "$@"` without exec, and a bare name
#: looked up on the PATH, ran a compiler the prefix's major was taken for)
_SCRIPT_QUIET = frozenset(
    ("if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "[", "[[", "test", "exit", "set",
     "export", "unset", "shift", "true", "false", ":", "echo", "printf", "return", "local", "readonly")
)  # fmt: skip
#: the words that open a compound command in a wrapper script: an exec after one may not run
_SCRIPT_COMPOUND = frozenset(("if", "while", "until", "for", "case", "select", "function"))
#: the most of a wrapper script read (a longer one is not read: its rest may run another compiler)
_SCRIPT_MAX = 1 << 16
_SCRIPT_MAJORS = _lazy(r"/gcc/[\w.+-]+/(\d{1,9})(?:\.\d+)*/|/c\+\+/(\d{1,9})\b|\b(?:gcc|g\+\+)-(\d{1,9})\b")


def _layout_major(view: FileView, gcc: str) -> tuple[int | None, str | None]:
    """(the major of a GCC driver whose name says none and whose prefix has no program directory with cc1 / cc1plus;
    why not, where not). The driver finds its own files relative to where it lies (gcc/gcc.cc process_command:
    gcc_exec_prefix and gcc_libexec_prefix from make_relative_prefix(argv[0], bindir, exec / libexec prefix), then
    VERSION below TRIPLET), so the one version directory PREFIX/lib/gcc/TRIPLET/VERSION or
    PREFIX/libexec/gcc/TRIPLET/VERSION (named N or N.M.P; holding start files, libgcc or a compiler) beside
    PREFIX/bin/gcc says its major (inferred from that layout; nothing is run). None, with why, where two majors
    sit there. A driver binary never comes here (irev60: a gcc 15 driver copied beside a lib/gcc/TRIPLET/13 was read
    as 13): _gcc_driver_major reads every ELF first and gives its own major (then its prefix's cc1plus of that major
    decides: _driver_without_compiler) or why not, and the caller asks the layout only where neither came back
    (igap39: the binary branch here was unreachable and is gone; an ELF asked directly is no script: no major). A
    driver that is a script (the lent H100's /opt/gcc/bin/gcc: `exec
    /opt/gcc/bin/gcc-real -B... "$@"`, whose -B names the prefix's compilers) counts
    only where every program it execs lies in that prefix and every major its text names is the same (igap28:
    the major of CC=/opt/gcc/bin/gcc was not read, so FlashInfer's JIT on SGLang < 0.5.9 was refused as unknown); every
    command of it is read, not only a line's first, and a program counts as in the prefix once `..` and links are
    resolved; a script with another command that runs a program, or longer than _SCRIPT_MAX, is not read (irev60)."""
    try:
        real = view.realpath(gcc)
    except (OSError, ValueError):
        return None, None
    bin_dir = posixpath.dirname(real)
    if not _GCC_DRIVER.fullmatch(posixpath.basename(real)) or posixpath.basename(bin_dir) != "bin":
        return None, None
    prefix = posixpath.dirname(bin_dir)
    found: dict[int, list[str]] = {}
    for version, d in _gcc_version_dirs(view, prefix):
        named = _version_major(version)
        if named is not None and any(is_file(view, f"{d}/{f}") for f in _GCC_VERSION_FILES):
            found.setdefault(named, []).append(d)
    if not found:
        return None, None
    if len(found) > 1:
        dirs = ", ".join(d for major in sorted(found) for d in found[major])
        return None, f"GCC version directories of {len(found)} majors sit in its prefix ({dirs}): which it runs"
    major = next(iter(found))
    text, targets, why = _wrapper_targets(view, real, prefix)
    if why is not None and why[0] == "unreadable":
        return None, f"{real} is no ELF program and could not be read"
    if why is not None and why[0] == "long":
        return None, f"{real} is no ELF program and is longer than {_SCRIPT_MAX} bytes: the programs it runs"
    if why is not None and why[0] == "unread":
        return None, f"{real} is a wrapper script not read ({why[1]}): the programs it runs"
    outside = why[1] if why is not None else None
    if not text.startswith("#!") or not targets or outside is not None:
        # (the command quoted at most 120 characters: a script's word may be of any length)
        runs = (
            f"{outside[:120]!r} among its commands" if outside is not None else "no program named by an absolute path"
        )
        return None, f"{real} is a wrapper (it runs {runs}, not only programs of {prefix} by exec)"
    named_majors = {int(next(g for g in m if g)) for m in _SCRIPT_MAJORS.findall(text)}
    for target in targets:
        tail = _GCC_NAME_MAJOR.search(posixpath.basename(target))
        if tail is not None and tail.end() == len(posixpath.basename(target)):
            named_majors.add(int(tail.group(1)))
    if named_majors - {major}:
        others = ", ".join(str(m) for m in sorted(named_majors))
        return None, f"its wrapper script {real} names gcc {others} beside its prefix's {major}"
    return major, None


def _wrapper_targets(view: FileView, script: str, prefix: str) -> tuple[str, list[str], tuple[str, str] | None]:
    """The one reading of a compiler wrapper script that _layout_major and _wrapper_link_driver share: (its text; the
    programs and -BDIR prefixes its exec commands name, _script_programs; why it is not read as a wrapper of `prefix`'s
    own programs, or None). The why is (kind, detail), each caller saying it in its own words: "unreadable" (no
    read), "long" (past _SCRIPT_MAX), "unread" (_script_unread's reason), "outside" (the first command that is not
    an exec of `prefix`'s programs, or a program or -B prefix it names that is not one: _exec_unread)."""
    try:
        data = view.read_bytes(script, _SCRIPT_MAX + 1)
    except (OSError, ValueError):
        return "", [], ("unreadable", "")
    if len(data) > _SCRIPT_MAX:
        return "", [], ("long", "")
    text = data.decode("utf-8", "replace")
    unread = _script_unread(text)
    if unread is not None:
        return text, [], ("unread", unread)
    targets, other = _script_programs(text)
    outside = other or next((why for t in targets if (why := _exec_unread(view, prefix, t)) is not None), None)
    return text, targets, (None if outside is None else ("outside", outside))


def _exec_unread(view: FileView, prefix: str, target: str) -> str | None:
    """Why a program (or -BDIR) a wrapper script execs does not keep the script read as its prefix's gcc, or None:
    it resolves outside the prefix, or (a program, not a -B directory) it is no file there or no ELF program (irev63:
    `exec /opt/gcc/bin/gcc-real` where gcc-real is itself a script running /usr/bin/gcc-15 was read as the prefix's
    13; what a second script runs is not read)."""
    real = _resolved(view, target.removeprefix("-B"))
    if not real.startswith(prefix + "/"):
        return f"{target} -> {real}"
    if target.startswith("-B"):
        return None
    if not is_file(view, real):
        return f"{target} (no such file)"
    return None if _is_elf(view, real) else f"{target} (no ELF program: a script's programs are not read)"


def _script_programs(text: str) -> tuple[list[str], str | None]:
    """(the programs a wrapper script's `exec` commands name by an absolute path, the first command that is not read
    as one: an exec of anything else (an option, a relative path, a word with `$` or a quote inside), or a command
    that runs a program without exec (not in _SCRIPT_QUIET)); comment lines are skipped. Each -B directory an exec
    gives the driver is returned too, as -BDIR, and an exec with -wrapper is not read (irev61). Shell syntax is not
    parsed: a separator inside quotes makes a command not read, never one read as harmless. An `exit` or `return`
    is read only after an exec that runs whatever came before (a line of that exec alone, before any line with a
    separator or a compound command): one before it may end the script without compiling (igap34: `exit 0` then the
    exec was read as the prefix's compiler, where nvcc's host compile then finds no output)."""
    targets: list[str] = []
    opened = ran = False  # (a separator or a compound command seen; an exec that always runs seen)
    lines = _script_lines(text)
    skipped = _uncalled_function_lines(text, lines)
    for at, (line, quoted) in enumerate(lines):
        if at in skipped or (not quoted and line.lstrip().startswith("#")):
            continue
        commands = _SCRIPT_SEPARATOR.split(line)
        for command in commands:
            words = _shell_words(command)
            if words is None:  # (a quote left open: a separator inside it cut the command)
                return targets, command.strip()[:80]
            while words and ("=" in words[0] and not words[0].startswith(("=", "-", "/", "'", '"'))):
                words = words[1:]  # (VAR=value before a command, or an assignment alone)
            opened = opened or len(commands) > 1 or bool(words and words[0] in _SCRIPT_COMPOUND)
            while words and words[0] in ("if", "then", "else", "elif", "do", "while", "until", "!"):
                words = words[1:]
            if words and words[0] in ("exit", "return") and not ran:
                return targets, f"{' '.join(words)[:40]} before the exec of its compiler"
            if not words or (words[0] in _SCRIPT_QUIET and words[0] != "exec"):
                continue
            ran = ran or (words[0] == "exec" and not opened)
            if words[0] != "exec":
                return targets, words[0]
            target = words[1] if len(words) > 1 else ""
            if not target.startswith("/") or any(c in target for c in "$`'\"\\*?"):
                return targets, f"exec {words[1] if len(words) > 1 else ''}".strip()
            targets.append(target)
            rest = words[2:]
            for i, word in enumerate(rest):
                # (irev61: the driver looks for cc1plus under each -B directory first, and runs its programs under a
                # -wrapper: a -B outside the prefix ran another GCC's compiler; a -B in it is read as a program)
                if word.startswith(("-wrapper", "--wrapper")):
                    return targets, f"exec {target} {word}"
                if word.startswith("-B"):
                    where = word[2:] or (rest[i + 1] if i + 1 < len(rest) else "")
                    if not where.startswith("/") or any(c in where for c in "$`'\"\\*?"):
                        return targets, f"exec {target} -B{where}"
                    targets.append(f"-B{where}")  # (a directory: in the prefix, whether there or not)
    return targets, None


def _shell_words(command: str) -> list[str] | None:
    """A simple command's words as a POSIX shell splits them, quotes and backslashes removed (shlex in POSIX mode), up
    to a `#` that starts a word outside quotes (a comment, as _script_lines follows it); None where a quote is left
    open (on this line). irobust3: the words were cut at blanks and each stripped of its quotes, so `exec g++-real
    "-B/opt/gcc/my dir/"` gave the driver the prefix `/opt/gcc/my` and never the directory whose ld collect2 runs
    first. `$` and the other expansions stay in the words (the callers leave a word holding one unread)."""
    if not any(c in command for c in "'\"\\"):
        return command.split()
    _, comment = _quote_scan(command, "")
    if comment is not None:
        command = command[:comment]
    import shlex

    try:
        return shlex.split(command, comments=False, posix=True)
    except ValueError:
        return None


#: a wrapper script's line that opens a shell function's body: `NAME() {` or `function NAME {` / `function NAME() {`
#: alone on its line (POSIX's function definition command; bash's `function` keyword)
#: (the blanks before `()` inside its optional group: two runs of \s* side by side made a line of `function f` and
#: 60,000 blanks take 6 s to fail, past the jit probe's 4 s, irobust2)
_SCRIPT_FUNCTION = _lazy(r"\s*(?:function\s+([A-Za-z_]\w*)(?:\s*\(\s*\))?|([A-Za-z_]\w*)\s*\(\s*\))\s*\{\s*")


#: the functions a shell calls by their name alone, never named by a call in the script: bash's
#: command_not_found_handle (bash(1), COMMAND EXECUTION), zsh's command_not_found_handler, its hook functions and
#: TRAPNAL functions (zshmisc(1), SPECIAL FUNCTIONS; TRAP* is matched by prefix)
_SHELL_HOOKS = frozenset(
    ("command_not_found_handle", "command_not_found_handler", "chpwd", "periodic", "precmd", "preexec",
     "zshaddhistory", "zshexit")
)  # fmt: skip


def _uncalled_function_lines(text: str, lines: list[tuple[str, bool]]) -> set[int]:
    """The indices of `lines` (_script_lines) that define a shell function the script never names again: its
    `NAME() {` line, the body and the closing `}` line. The shell runs a body only where NAME is called (POSIX
    Shell Command Language, 2.9.5 Function Definition Command: "When the function is declared, none of the commands
    specified within the compound-command shall be executed"), so an `exit` there ends nothing (igap42: a usage()
    with `exit 1`, never called, made the wrapper unknown). Read only in the plainest shape, every other one left to
    be read as commands (unknown, as before): the opening line alone and unquoted, the body's lines without a brace,
    a quote left open or a here-document, closed by a line that is `}` alone; and NAME appears nowhere else in the
    script as a word, outside its own definition (in a string, a trap, an eval, a variable's value, another
    function: any mention counts as a possible call)."""
    if "<<" in text:
        return set()
    # (each line looked at a bounded number of times: a 64 KB wrapper of some 5,000 functions took ~30 s to read
    # when every definition joined and searched the rest of the script, and the jit probe timed out, irobust2)
    close_at = _next_line(lines, lambda line, quoted: line.strip() == "}")
    brace_at = _next_line(lines, lambda line, quoted: quoted or "{" in line or "}" in line)
    words = _SCRIPT_WORD.findall(text)
    counts: dict[str, int] = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    out: set[int] = set()
    at = 0
    while at < len(lines):
        line, quoted = lines[at]
        named = None if quoted else _SCRIPT_FUNCTION.fullmatch(line)
        if named is None:
            at += 1
            continue
        name = named.group(1) or named.group(2)
        if name in _SHELL_HOOKS or name.startswith("TRAP"):  # (the shell calls these itself, unnamed)
            at += 1
            continue
        end = close_at[at + 1]
        if end is None or lines[end][1] or (end + 1 < len(lines) and lines[end + 1][1]):
            at += 1
            continue
        if brace_at[at + 1] != end:  # (a body line with a brace or inside a quote)
            at += 1
            continue
        # (a mention in its own body runs only once it is called; NAME is word characters alone, so a mention of it
        # as a word, as the shell splits none, is a whole run of _SCRIPT_WORD)
        own = sum(_SCRIPT_WORD.findall(lines[i][0]).count(name) for i in range(at, end + 1))
        if counts.get(name, 0) == own:
            out.update(range(at, end + 1))
        at = end + 1
    return out


#: a run of word characters and hyphens: a function's name is mentioned where it is one such run whole
_SCRIPT_WORD = _lazy(r"[\w-]+")


def _next_line(lines: list[tuple[str, bool]], test: Callable[[str, bool], bool]) -> list[int | None]:
    """For each index i of `lines` (and len(lines)), the first index j >= i whose line passes `test`, or None."""
    out: list[int | None] = [None] * (len(lines) + 1)
    found: int | None = None
    for i in range(len(lines) - 1, -1, -1):
        if test(*lines[i]):
            found = i
        out[i] = found
    return out


def _script_unread(text: str) -> str | None:
    """Why a wrapper script's text is not read as _script_programs reads it (irev61), or None: its #! names no POSIX
    shell (_SCRIPT_SHELLS); it holds a character the shell reads otherwise than Python's str.splitlines / str.split
    (a carriage return, which also ends the #! line's interpreter name, so the script does not run; a vertical tab,
    a form feed, a NUL or another control character; a non-ASCII space or line separator); or a line other than a
    comment ends in a backslash (the shell joins it with the next, which may then be no comment)."""
    first = text.split("\n", 1)[0]
    named = _SCRIPT_GCC_ENV.search(text)
    if named is not None:  # (the driver looks for its programs there first: gcc's Environment Variables)
        return f"it names {named.group(0)}, which tells the driver where to find its compilers"
    for c in text:
        if (c < " " and c not in "\t\n") or c == "\x7f" or (c.isspace() and c not in " \t\n"):
            return f"it holds the character {c!r}, which the shell does not read as Python splits lines and words"
    words = first[2:].split() if first.startswith("#!") else []
    shell = posixpath.basename(words[0]) if words else ""
    if shell == "env" and len(words) > 1:
        shell = words[1]
    if shell not in _SCRIPT_SHELLS:
        return f"its #! line names {first[:80]!r}, no POSIX shell"
    for line, quoted in _script_lines(text):
        if not (not quoted and line.lstrip().startswith("#")) and line.endswith("\\"):
            return "a line ends in a backslash: the shell joins it with the next"
    return None


def _script_lines(text: str) -> list[tuple[str, bool]]:
    """Each line of a wrapper script (split at "\\n" only, as the shell does) with whether it starts inside a quote
    that an earlier line opened (irev61: `echo "x` then `#"; /usr/bin/gcc "$@"; exit` ran gcc 15 from a line that was
    skipped as a comment). Quotes are followed as the shell does outside a here-document: a backslash escapes the
    next character outside single quotes, a `#` after a blank or at a line's start ends the line's words; a line that
    starts quoted is read as commands (so a quote mis-followed makes more of the script read, never less)."""
    out: list[tuple[str, bool]] = []
    state = ""
    for line in text.split("\n"):
        out.append((line, state != ""))
        if not state and line.lstrip().startswith("#"):
            continue
        state, _ = _quote_scan(line, state)
    return out


def _quote_scan(line: str, state: str) -> tuple[str, int | None]:
    """One line's quotes followed as the shell follows them from `state` ("", "'" or '"': a quote an earlier line
    opened): a backslash escapes the next character outside single quotes, and a `#` after a blank or at the line's
    start, outside quotes, starts a comment. (the quote open at the line's end, or the state where a comment starts;
    the comment's index, or None). One scanner for _script_lines and _shell_words, which each had a copy."""
    i = 0
    while i < len(line):
        c = line[i]
        if state == "'":
            state = "" if c == "'" else state
        elif c == "\\":
            i += 1
        elif state == '"':
            state = "" if c == '"' else state
        elif c in "'\"":
            state = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return state, i
        i += 1
    return state, None


def _resolved(view: FileView, program: str) -> str:
    """`program` (an absolute path) with `..` and links resolved; "not resolved" where it cannot be."""
    try:
        return view.realpath(posixpath.normpath(program))
    except (OSError, ValueError):
        return "not resolved"


def _gnu_major(view: FileView, gcc: str, programs: list[str]) -> int | None:
    """The found gcc's major: its resolved name's (gcc-N, g++-N), else the one program directory with cc1plus, named
    N or N.M.P; None where neither says it."""
    try:
        real = view.realpath(gcc)
    except (OSError, ValueError):
        return None
    named = _GCC_NAME_MAJOR.search(posixpath.basename(real))
    if named is not None and named.end() == len(posixpath.basename(real)):
        return int(named.group(1))
    majors = {posixpath.basename(d).split(".")[0] for d in programs if is_file(view, f"{d}/cc1plus")}
    only = majors.pop() if len(majors) == 1 else ""
    return whole_number(only, ascii_only=True)  # ('²' (irev56), and 5,000 digits (igap26): None)


def _gnu_support(view: FileView, major: int, toolkit: str) -> dict[str, Any]:
    """`nvcc_host_gnu_max` / `_supported`: the newest gcc major the toolkit's include/crt/host_config.h lets through
    ('#if __GNUC__ > N' then '#error -- unsupported GNU version': CUDA 12.8.93 and 12.9.86 :141-145, N 14; 13.0.88
    and 13.1.115 :135-139, N 15) against the found gcc's. Nothing where the header is not read."""
    try:
        header = view.read_bytes(f"{toolkit}/include/crt/host_config.h", 1 << 17).decode("utf-8", "replace")
    except (OSError, ValueError):
        return {}
    limit = _GNU_LIMIT.search(header)
    if limit is None:
        return {}
    most = int(limit.group(1))
    return {"nvcc_host_gnu_max": most, "nvcc_host_gnu_supported": major <= most}


def _own_version(view: FileView, gcc: str, programs: list[str], driver: int | None = None) -> list[str]:
    """The program directories of `programs` the gcc driver itself searches, where its major is known (`driver`: the
    version the driver binary carries, _gcc_driver_major; else its resolved name's, gcc-N, x86_64-linux-gnu-gcc-N):
    those of that major (named N or N.M.P). The driver looks for cc1plus under its own version only, so g++-13's
    cc1plus is no C++ compiler for gcc-14 (irev56). All of them where neither says one, or where no directory is of
    that major (a layout not read)."""
    if driver is not None:
        major = str(driver)
    else:
        try:
            name = posixpath.basename(view.realpath(gcc))
        except (OSError, ValueError):
            return programs
        named = _GCC_NAME_MAJOR.search(name)
        if named is None or named.end() != len(name):
            return programs
        major = named.group(1)
    own = [d for d in programs if posixpath.basename(d).split(".")[0] == major]
    return own or programs


#: the strings only GCC's driver carries beside its version (gcc/gcc.cc print_configuration, what `gcc -v` prints:
#: "Configured with: %s\n" and "gcc version %s %s\n"; read in Debian 12's gcc 12.2.0 and gcc 11.3.0 drivers, whose
#: gcov-11, another GCC program with the same version string, has neither)
_GCC_DRIVER_MARKS = (b"Configured with: %s\n", b"gcc version %s %s\n")
#: GCC's version_string, NUL-delimited in the driver's .rodata (gcc/version.cc: BASEVER DATESTAMP DEVPHASE REVISION:
#: "12.2.0" in a release, "15.0.1 20250315 (experimental)" in a snapshot, a vendor's "(Red Hat 11.4.1-3)" after it;
#: Debian 12's x86_64-linux-gnu-gcc-12 holds "12.2.0" once, gcc-11 11.3.0's "11.3.0" twice, no other X.Y.Z string)
_GCC_VERSION_STRING = _lazy_bytes(
    rb"\x00(\d{1,4})\.\d{1,4}\.\d{1,4}(?: \d{8})?(?: \([^\x00()]{1,80}\))?(?: \[[^\x00\[\]]{1,200}\])?(?=\x00)"
)
#: the first dot of an X.Y.Z: where _version_strings looks for _GCC_VERSION_STRING (a dot is rare in a driver's
#: .rodata, a NUL is not: Debian 12's gcc 12 driver holds 2,632 dots and 217,901 NULs in its 539,024 bytes)
_FIRST_DOT = _lazy_bytes(rb"\.\d{1,4}\.\d")
#: the most of a driver's .rodata read (Debian 12's gcc 12 driver: 539,024 bytes)
_DRIVER_RODATA_MAX = 16 << 20


def _version_strings(data: bytes) -> list[re.Match[bytes]]:
    """_GCC_VERSION_STRING.finditer(data), the same matches in the same order, without trying the pattern at every NUL
    (issue 21, iperf32: that search was ~4 ms of the jit probe's ~6 ms CPU, the last probe of a probed audit). A match
    is a whole NUL-delimited string (no NUL inside it: it begins at a NUL and stops before the next), and its first dot
    lies 2 to 5 bytes after its NUL, behind one to four digits; so the pattern is tried only at the last NUL within 5
    bytes before each `.D{1,4}.D` (_FIRST_DOT, which no earlier match of itself can swallow: that would cross a NUL or
    the digits before the dot), each such NUL once, in order: every NUL where the pattern matches is among them, and
    matches at distinct NULs never overlap, so finditer's left-to-right scan finds exactly these.
    tests/probes/test_jit_version_strings.py holds the two equal on generated strings."""
    out: list[re.Match[bytes]] = []
    last = -1
    for dot in _FIRST_DOT.finditer(data):
        at = dot.start()
        nul = data.rfind(b"\0", max(0, at - 5), at)
        if nul > last:
            last = nul
            match = _GCC_VERSION_STRING.match(data, nul)
            if match is not None:
                out.append(match)
    return out


#: the one SARIF version GCC 13 and later link into the driver as an X.Y.Z string (gcc/diagnostic-format-sarif.cc:
#: `#define SARIF_VERSION "2.1.0"` in 13 (the "version" value in make_top_level_object, beside the "$schema" value
#: SARIF_SCHEMA, ".../Schemata/sarif-schema-2.1.0.json"); sarif_version_to_property's "2.1.0" (and "2.2", no X.Y.Z)
#: in 15, beside sarif_version_to_url's ".../errata01/os/schemas/sarif-schema-2.1.0.json" (read in the stored
#: gcc-mirror sources, igap39))
_SARIF_VERSION = b"2.1.0"
#: SARIF's own strings, read wherever they lie (the linker orders merged strings as it likes): the schema file name of
#: SARIF 2.1.0 (every release's URL ends in it) and the log's "$schema" key, NUL-delimited
_SARIF_MARKS = (b"sarif-schema-2.1.0.json", b"\0$schema\0")


def _sarif_version(data: bytes, match: re.Match[bytes]) -> bool:
    """Whether a version-string candidate of a GCC driver's .rodata is the SARIF format's version that GCC 13 and
    later link into the driver (_SARIF_VERSION), not GCC's own: Ubuntu 24.04's x86_64-linux-gnu-gcc-13 (13.3.0) holds
    the NUL-delimited strings "$schema", "2.1.0", "informationUri" beside "13.3.0" (read on the lent H100,
    2026-12-06), which was read as two majors and so as no version (every JIT build judged unknown there). A candidate
    is the SARIF one where it is exactly "2.1.0" (no GCC release carries that version string with SARIF's code) and
    the data holds one of SARIF's own strings anywhere (_SARIF_MARKS: igap39, "2.1.0" was taken only right after
    "$schema", so another string order was unknown); any other X.Y.Z is a GCC version (igap39: a "sarif-schema-V.json"
    string made any V SARIF's, so a driver carrying GCC 13 and 14 strings and such a name was read as one major)."""
    return match.group(0)[1:] == _SARIF_VERSION and any(mark in data for mark in _SARIF_MARKS)


def _gcc_driver_major(view: FileView, gcc: str) -> tuple[int | None, str | None, bool]:
    """(the major the gcc driver's own binary carries; why the gcc's major is not to be read (its name and its
    binary disagree, or the program in GCC's name is no GCC driver); whether it is a script) (igap31: a gcc-N / g++-N
    name was trusted, so a gcc-12 that is gcc 14's driver (a copy, a hard link) or a script named gcc-12 that runs
    another gcc was judged as 12). An ELF program is read without running it: the major of GCC's version_string in
    its .rodata (_GCC_VERSION_STRING, one major among them), where it holds the driver's own strings
    (_GCC_DRIVER_MARKS); an ELF without them is not GCC's driver (a ccache binary copied into gcc's name), and a name
    gcc-N of another N than the binary's is a lie: both unknown. A script's name says nothing (the caller reads its
    prefix and what it execs: _layout_major). A file that starts as an ELF and is not read as one (a truncated file, a
    stub of an ELF's first bytes, which runs nothing) is unknown (igap34: it was read by its name and program
    directories, supported); a file that is neither ELF nor script: (None, None, False), its name and program
    directories read as before. Where there is no section table, the whole file is searched."""
    try:
        real = view.realpath(gcc)
    except (OSError, ValueError):
        return None, None, False
    if not _is_elf(view, real):
        try:
            script = view.read_bytes(real, 2) == b"#!"
        except (OSError, ValueError):
            script = False
        return None, None, script
    kept, stamp = _kept_drivers(view, real)
    if kept is not None:
        from stackcheck.readers.kept import MISS

        got = kept.get(real, stamp)
        if got is not MISS and _is_driver_answer(got):
            return got[0], got[1], False
    answer = _read_driver(view, real)
    if answer is None:  # (igap34: read by its name and directories before, though it never runs)
        return None, f"resolves to {real}, not read as an ELF program (truncated, or an ELF's first bytes only)", False
    if kept is not None:
        kept.put(real, stamp, list(answer))
        kept.save()
    return answer[0], answer[1], False


def _read_driver(view: FileView, real: str) -> tuple[int | None, str | None] | None:
    """_gcc_driver_major's answer for the ELF program at `real` (its real path), read from its bytes: (major, None) or
    (None, why); None where it could not be read as an ELF (an error, never kept)."""
    from stackcheck.readers.elf import ElfError, ElfFile

    try:
        with ElfFile(real, view) as elf:
            rodata = elf.section(".rodata")
            size = rodata.size if rodata is not None else elf.size  # (no section table: the whole file)
            if size > _DRIVER_RODATA_MAX:
                return None, f"resolves to {real}, whose {size} bytes of strings are not read"
            data = elf.read_section(rodata) if rodata is not None else elf.read_at(0, size, "the file")
    except (ElfError, OSError, ValueError):
        return None
    if not all(mark in data for mark in _GCC_DRIVER_MARKS):
        why = f"resolves to {real}, an ELF program without GCC's driver strings (a ccache binary or another program"
        return None, why + " in its name, not GCC's driver)"
    majors = {int(m.group(1)) for m in _version_strings(data) if not _sarif_version(data, m)}
    if len(majors) != 1:
        return None, f"resolves to {real}, a GCC driver carrying {len(majors)} majors of version string"
    major = majors.pop()
    name = posixpath.basename(real)
    named = _GCC_NAME_MAJOR.search(name)
    if named is not None and named.end() == len(name) and int(named.group(1)) != major:
        return (
            None,
            (
                f"resolves to {real}, named gcc {named.group(1)}, whose driver binary carries GCC {major}'s version "
                "string (a copy or link of another gcc under that name)"
            ),
        )
    return major, None


#: the probes' cache directory while the jit probe's run reads (ProbeContext.cache_dir: None the user cache directory,
#: "" nothing kept, the default of every other caller of probe_jit): where _gcc_driver_major keeps what it read
_KEEP_DIR: ContextVar[str | None] = ContextVar("stackcheck_jit_keep_dir", default="")
#: the code whose answer _gcc_driver_major keeps (readers.kept's key): this module and the ELF reader
_DRIVER_READERS = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), *parts)
    for parts in (("probes", "jit.py"), ("readers", "elf.py"), ("readers", "elferror.py"))
)


def _kept_drivers(view: FileView, real: str) -> tuple[Any, list[int] | None]:
    """The GCC drivers' kept answers (stackcheck.readers.kept) and the stamp of the driver's real file, taken before it
    is read, or (None, None): not this host's file, the caches off (_KEEP_DIR), no stamp (issue 21, iperf32: every
    audit and gate read the same driver's ~0.5 MB of .rodata and searched it, ~1-3 ms of the jit probe's CPU under the
    interpreter lock; a driver's answer depends only on its bytes and its real path's name, as cudalibs keeps the
    interpreter's DT_RPATH)."""
    from stackcheck.readers.fsview import is_host

    cache_dir = _KEEP_DIR.get()
    if cache_dir == "" or not is_host(view):
        return None, None
    from stackcheck.readers.kept import Kept, directory, file_stamp

    where = directory(cache_dir)
    stamp = file_stamp(real) if where is not None else None
    if where is None or stamp is None:
        return None, None
    return Kept("gcc_driver", where, _DRIVER_READERS), stamp


def _is_driver_answer(got: Any) -> bool:
    """A kept answer of _read_driver's shape: [major, null] or [null, why], nothing else."""
    if type(got) is not list or len(got) != 2:
        return False
    major, why = got
    return (type(major) is int and major >= 0 and why is None) or (major is None and type(why) is str and why != "")


def _gcc_program_dirs(view: FileView, gcc: str) -> list[str]:
    """The program directories of the GCC installation `gcc` belongs to that hold its C compiler proper (cc1):
    PREFIX/lib/gcc/TRIPLET/VERSION (Debian) and PREFIX/libexec/gcc/TRIPLET/VERSION (RHEL, GCC's own default), PREFIX
    the directory above the resolved gcc's bin. cc1plus, the C++ one, is packaged apart (Debian 12: cpp-12 owns
    cc1, g++-12 cc1plus; dpkg -S). Empty where the layout is not that one (not read)."""
    try:
        real = view.realpath(gcc)
    except (OSError, ValueError):
        return []
    bin_dir = posixpath.dirname(real)
    if posixpath.basename(bin_dir) != "bin":
        return []
    return [
        d
        for _, d in _gcc_version_dirs(view, posixpath.dirname(bin_dir))
        if is_file(view, f"{d}/cc1") or is_file(view, f"{d}/cc1plus")
    ]


def _gcc_version_dirs(view: FileView, prefix: str) -> list[tuple[str, str]]:
    """(VERSION, its directory) for each PREFIX/lib/gcc/TRIPLET/VERSION and PREFIX/libexec/gcc/TRIPLET/VERSION, in
    that order: where a GCC installation keeps its files of one version (_gcc_program_dirs, _layout_major)."""
    out: list[tuple[str, str]] = []
    for sub in ("lib/gcc", "libexec/gcc"):
        base = posixpath.join(prefix, sub)
        for triplet in listdir_or_empty(view, base):
            out.extend(
                (version, f"{base}/{triplet}/{version}") for version in listdir_or_empty(view, f"{base}/{triplet}")
            )
    return out


def _version_major(name: str) -> int | None:
    """The major of a version directory's name (N, N.M or N.M.P, ASCII digits: _VERSION_NAME); None for another name.
    The one reading of a GCC version directory (_layout_major) and a clang resource directory (_clang_major)."""
    named = _VERSION_NAME.fullmatch(name) if name.isascii() else None
    return int(named.group(1)) if named is not None else None


#: the header FlashInfer's nv_internal/cpp/common/memoryUtils.cu includes unconditionally (flashinfer-python 0.5.0-0.7.4
#: wheels, line 18; used only under TLLM_HAS_ASAN): GCC installs it in its own include directory
#: (PREFIX/lib/gcc/TRIPLET/N/include/sanitizer/), with the sanitizer runtime's package on Fedora (libasan,
#: flashinfer#4662)
ASAN_HEADER = "sanitizer/asan_interface.h"
#: the variables whose flags reach a FlashInfer nvcc command line and could add an include directory not read here
_INCLUDE_FLAG_ENV = ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "FLASHINFER_EXTRA_CUDAFLAGS")
_INCLUDE_FLAG = _lazy(r"(?:^|[\s,=])-(?:I|isystem|idirafter|iquote)")


def gcc_asan_header(
    env: Mapping[str, str], view: FileView, gcc: str, major: int, toolkit: str | None, machine: str | None
) -> tuple[bool | None, str | None]:
    """(whether the host compile by `gcc`, of GCC major `major`, finds ASAN_HEADER; why not known): the directories
    gcc searches for an #include <...> that a FlashInfer JIT command can reach, as gcc orders them (CPATH and
    CPLUS_INCLUDE_PATH, GCC's own PREFIX/lib/gcc/TRIPLET/VERSION/include of its major, DEFAULT_INCLUDE_DIRS) with the
    toolkit's include that nvcc adds. FlashInfer's own -isystem directories (its data/include, csrc, cutlass, tvm_ffi
    and Python's include) are not read: they ship no sanitizer/ directory (flashinfer-python 0.6.15.post1 and 0.7.2
    wheels, unzip -l). True where one holds the header; None where one of them is not known; else False."""
    gaps: list[str] = []
    dirs: list[str] = []
    for var in ("CPATH", "CPLUS_INCLUDE_PATH"):
        for entry in env.get(var, "").split(":") if var in env else ():
            if entry.startswith("/"):
                dirs.append(entry)
            else:
                gaps.append(f"{var} entry {entry!r} is relative to the build directory")
    flagged = [name for name in _INCLUDE_FLAG_ENV if _INCLUDE_FLAG.search(env.get(name) or "")]
    if flagged:
        gaps.append(f"{', '.join(flagged)} adds an include directory: not read")
    if toolkit:
        dirs.append(posixpath.join(toolkit.rstrip("/") or "/", "include"))
    try:
        real = view.realpath(gcc)
    except (OSError, ValueError):
        real = gcc
    bin_dir = posixpath.dirname(real)
    own: list[str] = []
    if posixpath.basename(bin_dir) == "bin":
        prefix = posixpath.dirname(bin_dir)
        for version, d in _gcc_version_dirs(view, prefix):
            arch = _dir_arch(d)
            if "/lib/gcc/" in d and _version_major(version) == major and (arch is None or machine in (None, arch)):
                own.append(f"{d}/include")
    if not own:
        gaps.append(f"{gcc}: no GCC {major} version directory with an include directory under its prefix was read")
    dirs += own
    dirs += [d for d in DEFAULT_INCLUDE_DIRS if machine is None or _dir_arch(d) in (None, machine)]
    for d in dict.fromkeys(dirs):
        if is_file(view, f"{d}/{ASAN_HEADER}"):
            return True, None
    return (None, "; ".join(gaps)) if gaps else (False, None)


#: the environment variables FlashInfer's JIT reads for its nvcc command beside nvcc's own (flashinfer-python 0.5.0
#: flashinfer/jit/cpp_ext.py:193 and :198, 0.7.2 :245 and :289; FLASHINFER_NVCC from 0.4.0rc4, sdist :192, and in
#: 0.4.0 and 0.4.1 :193, igap31): FLASHINFER_NVCC replaces the toolkit's bin/nvcc,
#: FLASHINFER_EXTRA_CUDAFLAGS is added to every nvcc command line
FLASHINFER_NVCC_ENV = "FLASHINFER_NVCC"
FLASHINFER_CUDAFLAGS_ENV = "FLASHINFER_EXTRA_CUDAFLAGS"
#: a resolved compiler name that is GCC's driver (gcc, gcc-14, x86_64-linux-gnu-gcc-12, g++-15: the target prefix
#: has hyphens of its own, and g++ is GCC's C++ driver, which nvcc's host compile runs as it does gcc): only there do
#: GCC's program directories (cc1plus) and its version name say what nvcc's host compile runs (ifc39: CC=g++-15
#: beside CUDA 12.8 was found, never judged; irev57: a prefix without hyphens missed Debian / Ubuntu's
#: x86_64-linux-gnu-gcc-N, to which gcc-N resolves)
_GCC_DRIVER = _lazy(r"(?:[\w.+-]+-)?(?:gcc|g\+\+)(?:-\d+(?:\.\d+)*)?")


def flashinfer_host_compiler(
    env: Mapping[str, str], view: FileView, nvcc: str | None, real_nvcc: bool
) -> dict[str, Any]:
    """The `flashinfer_host*` and `cc_host*` keys of the jit section: the host compiler of FlashInfer's JIT nvcc
    commands. FlashInfer passes `-ccbin $CC` where CC is set (flashinfer-python 0.5.0 flashinfer/jit/cpp_ext.py:138-140
    through 0.7.2 :207-209) and nothing otherwise, so `flashinfer_host` is "cc" (the `cc_host*` keys judge $CC) or
    "nvcc-default" (nvcc's default, which the `nvcc_host*` keys judge); null with `flashinfer_host_reason` where
    FLASHINFER_NVCC names another nvcc or FLASHINFER_EXTRA_CUDAFLAGS a -ccbin. `flashinfer_allow_unsupported`:
    whether -allow-unsupported-compiler reaches those commands (NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS or
    FLASHINFER_EXTRA_CUDAFLAGS). Nothing where there is no nvcc (nvcc_found judges that)."""
    if nvcc is None:
        return {}
    extra = env.get(FLASHINFER_CUDAFLAGS_ENV) or ""
    allowed = any(_ALLOW_UNSUPPORTED.search(env.get(name) or "") for name in (*NVCC_HOST_ENV, FLASHINFER_CUDAFLAGS_ENV))
    out: dict[str, Any] = {"flashinfer_host": None, "flashinfer_allow_unsupported": allowed}
    if FLASHINFER_NVCC_ENV in env:  # (set and empty: FlashInfer's ninja file gets `nvcc = `, no compiler; irev57)
        named = "names another nvcc" if env[FLASHINFER_NVCC_ENV] else "is set and empty (its build names no nvcc)"
        out["flashinfer_host_reason"] = f"{FLASHINFER_NVCC_ENV} {named}: its host compiler is not read"
        return out
    if _NVCC_HOST_OPTION.search(extra):
        out["flashinfer_host_reason"] = f"{FLASHINFER_CUDAFLAGS_ENV} names nvcc's host compiler: not read"
        return out
    if "CC" not in env:
        out["flashinfer_host"] = "nvcc-default"
        return out
    out["flashinfer_host"] = "cc"
    out.update(_cc_host(env, view, nvcc, real_nvcc, allowed))
    return out


#: the environment variable through which FlashInfer's own JIT before 0.4.0rc4 (flashinfer-python 0.2.11 sdist
#: flashinfer/jit/cpp_ext.py:116, 0.2.14 :140, 0.3.0 :144, 0.3.1 :175, 0.4.0rc1 :190, 0.4.0rc2 :190, 0.4.0rc3 :191:
#: `nvcc = os.environ.get("PYTORCH_NVCC", "$cuda_home/bin/nvcc")`) and torch's cpp_extension (_write_ninja_file: torch
#: 2.8.0 :2840, 2.9.1 :2842, 2.10.0 :2948, 2.11.0 :3029, 2.12.0 :3037, 2.13.0 :3148, 2.14.1 :3161) take another nvcc
PYTORCH_NVCC_ENV = "PYTORCH_NVCC"
#: the compiler launchers a PYTORCH_NVCC of two words may start with (ccache / sccache NVCC: the shell splits the
#: ninja file's unquoted `nvcc = ...` line, and the launcher runs the second word, looked up on the PATH)
_NVCC_LAUNCHERS = ("ccache", "sccache")


def pytorch_nvcc(env: Mapping[str, str], view: FileView, nvcc: str | None) -> dict[str, Any]:
    """The `pytorch_nvcc*` keys of the jit section, where PYTORCH_NVCC is in the server's environment (even empty):
    FlashInfer before 0.4.0rc4 writes its value, unquoted, as the `nvcc` of its JIT ninja file in place of
    `$cuda_home/bin/nvcc` (the toolkit the other jit keys read), and ninja runs it through /bin/sh -c.
    `pytorch_nvcc_found`: whether the program it names is there (one program, or ccache / sccache and one program,
    each looked up on the server's PATH); false where it is empty (the command then starts with nvcc's first flag) or
    a program is missing; null with `pytorch_nvcc_reason` where it is not read (other words, a relative path, shell
    syntax). `pytorch_nvcc_same`: true where that program is the JIT toolkit's own bin/nvcc (the same file once links
    are resolved), so that the toolkit's readings (nvcc_found, cuda, the headers, the host compiler) judge the nvcc
    FlashInfer runs; null with the reason otherwise (another nvcc, not read). Absent where `pytorch_nvcc_found` is
    not true (igap28)."""
    if PYTORCH_NVCC_ENV not in env:
        return {}
    value = env[PYTORCH_NVCC_ENV]
    out: dict[str, Any] = {"pytorch_nvcc": value, "pytorch_nvcc_found": None}
    words = value.split()
    path_value = env.get("PATH", SH_DEFAULT_PATH)
    if any(c in value for c in "$`*?[\"'\\;&|<>()"):
        out["pytorch_nvcc_reason"] = f"PYTORCH_NVCC={value!r}: shell syntax the build's /bin/sh reads, not read here"
        return out
    if not words:
        out["pytorch_nvcc_found"] = False
        out["pytorch_nvcc_reason"] = (
            "PYTORCH_NVCC is set and empty: FlashInfer's ninja file gets an empty nvcc, and the shell runs the "
            "first flag of the command as a program"
        )
        return out
    if len(words) == 2 and words[0] in _NVCC_LAUNCHERS:
        launcher, why = which_known(view, words[0], path_value, None, BUILD_DIR)
        if why:
            out["pytorch_nvcc_reason"] = f"PYTORCH_NVCC={value!r}: {why}"
            return out
        if launcher is None:
            out["pytorch_nvcc_found"] = False
            out["pytorch_nvcc_reason"] = f"PYTORCH_NVCC={value!r}: no {words[0]} on the server's PATH"
            return out
        program = words[1]
    elif len(words) == 1:
        program = words[0]
    else:
        out["pytorch_nvcc_reason"] = f"PYTORCH_NVCC={value!r}: a command of several words, not read"
        return out
    if "/" in program and not program.startswith("/"):
        out["pytorch_nvcc_reason"] = f"PYTORCH_NVCC={value!r} is relative to the JIT build's directory: not read"
        return out
    found, why = which_known(view, program, path_value, None, BUILD_DIR)
    if why:
        out["pytorch_nvcc_reason"] = f"PYTORCH_NVCC={value!r}: {why}"
        return out
    if found is None:
        out["pytorch_nvcc_found"] = False
        out["pytorch_nvcc_reason"] = f"PYTORCH_NVCC={value!r}: no program {program} on the server's PATH"
        return out
    out["pytorch_nvcc_found"] = True
    out["pytorch_nvcc_same"] = None
    try:
        same = nvcc is not None and view.realpath(found) == view.realpath(nvcc)
    except (OSError, ValueError):
        same = False
    if same:
        out["pytorch_nvcc_same"] = True
    else:
        toolkit = nvcc if nvcc is not None else "no toolkit nvcc"
        out["pytorch_nvcc_reason"] = (
            f"PYTORCH_NVCC={value!r} runs {found}, not the JIT toolkit's nvcc ({toolkit}) that the toolkit checks read "
            "(its version, headers and host compiler are not read)"
        )
    return out


def cc_one_program(value: str) -> bool | None:
    """`cc_host_one_program`: whether `-ccbin $CC` reaches nvcc as one program. FlashInfer writes CC into its ninja
    file unquoted (cpp_ext.py join_multiline; 0.5.0 :91 and :210, 0.7.2 :128 and :306) and ninja runs the command
    through /bin/sh -c, so the shell splits it: the first word is -ccbin's, and a second word that is no option is a
    second input file to nvcc, which stops ('nvcc fatal : A single input file is required for a non-link phase when
    an outputfile is specified': nvcc 13.0.88 run with `-ccbin ccache gcc ... -c x.cu -o x.o`). True for one word;
    False where the second word is no option (CC='ccache gcc'); None where the rest are options nvcc may take
    (CC='gcc -m64' passed nvcc's parsing in that run; others are not read), where CC is empty, or where the shell or
    ninja would expand or fail to parse it ($, backquotes, glob characters, an open quote)."""
    import shlex

    if any(c in value for c in "$`*?["):
        return None
    try:
        words = shlex.split(value)
    except ValueError:
        return None
    if not words:
        return None
    if len(words) == 1:
        return True
    return None if words[1].startswith("-") else False


def _cc_host(env: Mapping[str, str], view: FileView, nvcc: str, real_nvcc: bool, allowed: bool) -> dict[str, Any]:
    """`cc_host_found` / `cc_host` / `cc_host_gnu_*`: the compiler `-ccbin $CC` names, looked up as nvcc looks up a
    name without a slash (the server's PATH, then the toolkit's nvvm/bin and bin), with the gcc checks of
    nvcc_host_compiler (cc1plus of its own major, host_config.h's newest GNU) where it resolves to GCC's driver.
    `cc_host_found` null (`cc_host_reason`) where the value is not one program or a -ccbin in NVCC_APPEND_FLAGS comes
    after it (NVCC_CCBIN and a -ccbin in NVCC_PREPEND_FLAGS lose to the command line's -ccbin $CC)."""
    value = env.get("CC", "")
    words = value.split()
    unread: str | None = None
    # nvcc reads NVCC_PREPEND_FLAGS, its command line, then NVCC_APPEND_FLAGS, and of two -ccbin the last is used
    # ("incompatible redefinition for option 'compiler-bindir', the last value of this option was used"), and a -ccbin
    # on the command line wins over NVCC_CCBIN (both run with nvcc 13.0.88, igap24): only an appended one competes
    competing = [name for name in ("NVCC_APPEND_FLAGS",) if _NVCC_HOST_OPTION.search(env.get(name) or "")]
    if not real_nvcc:
        unread = f"{nvcc} is not the compiler itself (a wrapper script?): its host compiler is not read"
    elif competing:
        unread = f"{', '.join(competing)} gives nvcc another -ccbin beside CC's: not read"
    elif len(words) != 1:
        unread = f"CC={value!r}: not one program (-ccbin takes one word; the rest is not read)"
    elif "/" in value and not value.startswith("/"):
        unread = f"CC={value!r} is relative to the JIT build's directory: not read"
    elif value.startswith("/") and kind_of(view, value) == "dir":
        unread = f"CC={value!r} is a directory (nvcc looks for its default compiler there): not read"
    words_ok = cc_one_program(value) if real_nvcc else None
    if unread is not None:
        return {"cc_host_found": None, "cc_host_reason": unread, "cc_host_one_program": words_ok}
    bin_dir = posixpath.dirname(nvcc)
    toolkit = posixpath.dirname(bin_dir)
    path_value = env.get("PATH", SH_DEFAULT_PATH)
    found, why = which_known(view, value, f"{path_value}:{toolkit}/nvvm/bin:{bin_dir}", None, BUILD_DIR)
    if why:
        return {"cc_host_found": None, "cc_host_reason": f"CC={value!r}: {why}", "cc_host_one_program": words_ok}
    out: dict[str, Any] = {"cc_host_found": found is not None, "cc_host_one_program": words_ok}
    if found is None:
        out["cc_host_reason"] = f"CC={value!r}: no such program on the server's PATH"
        return out
    out["cc_host"] = found
    try:
        real = posixpath.basename(view.realpath(found))
    except (OSError, ValueError):
        return out
    if _is_clang(view, found):  # clang, or a link in clang's name (igap28: it was found and never judged)
        out.update(_clang_host(view, found, toolkit, allowed, "cc_host", f"CC={value!r} ({found})"))
        return out
    if not _GCC_DRIVER.fullmatch(real):
        if _GCC_DRIVER.fullmatch(posixpath.basename(found)):  # a link in GCC's name to another program (ccache)
            out.update(_gnu_unread(view, found, toolkit, allowed, "cc_host", f"CC={value!r} ({found})"))
        return out  # a name that does not say: its C++ part and version are not read
    out.update(_gcc_host(view, found, toolkit, allowed, "cc_host", f"CC={value!r} ({found})", env))
    return out


#: the C++ compiler's own include directories, searched after the -isystem ones and CPATH / CPLUS_INCLUDE_PATH
#: (`c++ -E -v`, gcc 12 on Debian 12: GCC's own include directory holds only its builtin headers; RHEL-like systems
#: have no triplet directory); a triplet directory counts only for its own architecture, as for the libraries
DEFAULT_INCLUDE_DIRS = ("/usr/local/include", *(f"/usr/include/{t}" for t in _TRIPLETS), "/usr/include")
#: the headers the allocator's C++ compile needs from those directories: cuda_runtime.h (0.5.5 on include it; nccl.h
#: includes it too) and nccl.h (0.5.1-0.5.4 include it); the key of each in the jit section
CXX_HEADERS = {"cxx_cuda_runtime_h_found": "cuda_runtime.h", "cxx_nccl_h_found": "nccl.h"}


def cxx_include_dirs(
    env: Mapping[str, str], home: str | None, home_known: bool, torch_lib: str | None, torch_gap: str | None
) -> tuple[list[str], list[str]]:
    """(the directories the C++ compile of torch's load_inline (with_cuda=True) searches for a header, in order; why
    that list is not complete): torch's include_paths('cuda') as -isystem (<torch>/include and its csrc/api/include,
    <CUDA home>/include unless that is /usr/include, $CUDA_INC_PATH, $CUDNN_HOME/include), CPATH and
    CPLUS_INCLUDE_PATH, then the compiler's own. Python's include directory (-isystem too) is not read: it holds
    Python's headers, not these."""
    dirs: list[str] = []
    gaps: list[str] = []
    if torch_lib is not None:
        torch_dir = posixpath.dirname(torch_lib)
        dirs += [f"{torch_dir}/include", f"{torch_dir}/include/torch/csrc/api/include"]
    elif torch_gap is not None:
        gaps.append(torch_gap)
    if home is not None:
        dirs.append(posixpath.join(home.rstrip("/") or "/", "include"))
    elif not home_known:
        gaps.append("the CUDA home was not probed (cuda_toolkits)")
    for var, sub in (("CUDA_INC_PATH", ""), ("CUDNN_HOME", "include")):
        value = env.get(var) or (env.get("CUDNN_PATH") if var == "CUDNN_HOME" else None)
        if not value:
            continue
        if value.startswith("/"):
            dirs.append(posixpath.join(value, sub) if sub else value)
        else:
            gaps.append(f"{var} {value!r} is relative to the build directory")
    for var in ("CPATH", "CPLUS_INCLUDE_PATH"):
        if var not in env:
            continue
        for entry in env[var].split(":"):
            if entry.startswith("/"):
                dirs.append(entry)
            else:  # an empty entry is the compile's working directory (the build directory), as a relative one
                gaps.append(f"{var} entry {entry!r} is relative to the build directory")
    cxx = env.get("CXX")
    if cxx and not _PLAIN_CXX.fullmatch(posixpath.basename(cxx.split()[0] if cxx.split() else cxx)):
        gaps.append(f"CXX={cxx}: that compiler's own include directories are not known")
    dirs += DEFAULT_INCLUDE_DIRS
    return list(dict.fromkeys(dirs)), gaps


def cxx_headers(
    env: Mapping[str, str],
    view: FileView,
    home: str | None,
    home_known: bool,
    machine: str | None,
    torch_lib: str | None,
    torch_gap: str | None,
) -> dict[str, Any]:
    """The `cxx_*_h_found` keys of the jit section: whether the allocator's compile finds each of CXX_HEADERS (null
    with `cxx_headers_reason` where it is not found and a directory was not read)."""
    dirs, gaps = cxx_include_dirs(env, home, home_known, torch_lib, torch_gap)
    out: dict[str, Any] = {}
    reasons: list[str] = []
    for key, header in CXX_HEADERS.items():
        found = False
        unread = list(gaps)
        for d in dirs:
            arch = _dir_arch(d)
            if arch is not None and arch != machine:
                if machine is None and is_file(view, f"{d}/{header}"):
                    unread.append(f"{d} holds a {header} for {arch}, and the compile's architecture was not read")
                continue
            if is_file(view, f"{d}/{header}"):
                found = True
                break
        out[key] = True if found else (None if unread else False)
        if not found and unread:
            reasons.append(f"{header}: " + "; ".join(unread))
    if reasons:
        out["cxx_headers_reason"] = " | ".join(reasons)
    return out


def _cuda_lib_dir(view: FileView, home: str) -> str:
    """torch's _prepare_ldflags: <home>/lib64, or <home>/lib where lib64 does not exist and lib does."""
    lib64 = f"{home}/lib64"
    if kind_of(view, lib64) is None and kind_of(view, f"{home}/lib") is not None:
        return f"{home}/lib"
    return lib64


def torch_lib_dir(facts: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(torch's own lib directory, the first -L of a load_inline link: `<location>/torch/lib` of the torch the packages
    probe found first on the target's path; why it is not known). (None, None) where torch is not installed."""
    packages = facts.get("packages")
    torch = packages.get("torch") if isinstance(packages, Mapping) else None
    if not isinstance(torch, Mapping):
        return None, "torch's location was not read (packages not probed)"
    if torch.get("installed") is False:
        return None, None
    location = torch.get("location")
    if torch.get("installed") is not True or not isinstance(location, str) or not location.startswith("/"):
        return None, "torch's location was not read" + (f" ({torch['error']})" if torch.get("error") else "")
    return posixpath.join(location, "torch", "lib"), None


def nccl_link_dirs(
    env: Mapping[str, str],
    view: FileView,
    home: str | None,
    home_known: bool,
    torch_lib: str | None = None,
    torch_gap: str | None = None,
) -> tuple[list[str], list[str]]:
    """(the directories a `-lnccl` link of torch's load_inline searches, in order; why that list is not complete).
    `home`: the CUDA home torch picks (None: none, so load_inline fails before linking); `home_known`: whether the
    toolkits were probed at all; `torch_lib` / `torch_gap`: torch_lib_dir's answer."""
    dirs: list[str] = []
    gaps: list[str] = []
    if torch_lib is not None:
        dirs.append(torch_lib)
    elif torch_gap is not None:
        gaps.append(torch_gap)
    if home is not None:
        dirs.append(_cuda_lib_dir(view, home.rstrip("/") or "/"))
    elif not home_known:
        gaps.append("the CUDA home was not probed (cuda_toolkits)")
    cudnn = env.get("CUDNN_HOME") or env.get("CUDNN_PATH")
    if cudnn and cudnn.startswith("/"):
        dirs.append(posixpath.join(cudnn, "lib64"))
    elif cudnn:  # (read from the extension's build directory, as a relative LIBRARY_PATH entry)
        gaps.append(f"CUDNN_HOME/CUDNN_PATH {cudnn!r} is relative to the build directory")
    for entry in (env.get("LIBRARY_PATH") or "").split(":") if "LIBRARY_PATH" in env else []:
        if entry.startswith("/"):
            dirs.append(entry)
        else:
            gaps.append(f"LIBRARY_PATH entry {entry!r} is relative to the build directory")
    cxx = env.get("CXX")
    if cxx and not _PLAIN_CXX.fullmatch(posixpath.basename(cxx.split()[0] if cxx.split() else cxx)):
        gaps.append(f"CXX={cxx}: that compiler's own default library directories are not known")
    dirs += DEFAULT_LINK_DIRS
    for root in GCC_LIB_ROOTS:
        for version in sorted(listdir_or_empty(view, root)):
            dirs.append(f"{root}/{version}")
    return list(dict.fromkeys(dirs)), gaps


def _dir_arch(directory: str) -> str | None:
    """The architecture a directory's path names by its triplet (/usr/lib/aarch64-linux-gnu: aarch64), else None."""
    parts = directory.split("/")
    return next((arch for triplet, arch in _TRIPLET_ARCH.items() if triplet in parts), None)


#: the e_machine of a 64-bit little-endian ELF ld links for each architecture a link is for
_LINK_ELF_MACHINES = {62: "x86_64", 183: "aarch64"}


def _link_elf_arch(view: FileView, path: str) -> str | None:
    """What GNU ld makes of a library file found for a `-l`: None where it takes it (not an ELF: a linker script, an
    ar archive, an empty file, which ld 2.40 links as an empty script; or a file not readable here, counted as
    taken, as before), else the architecture an ELF is for ("x86_64", "aarch64"; "32-bit" or "other" for an ELF of
    another class, byte order or machine), which a link for another architecture skips as incompatible (ld 2.40,
    run 2026-12-05 (ifc40) on an i386 shared object and an aarch64 ELF header in a -L directory: 'skipping
    incompatible ... when searching for -lcudart', then 'cannot find -lcudart' where no other directory has one)."""
    try:
        head = view.read_bytes(path, 20)
    except (OSError, ValueError):
        return None
    if len(head) < 20 or head[:4] != b"\x7fELF" or head[4] not in (1, 2):
        return None  # (an ELF of no class: ld takes it and stops, 'file format not recognized'; not judged here)
    if head[4] != 2 or head[5] != 1:
        return "32-bit" if head[4] == 1 else "other"
    return _LINK_ELF_MACHINES.get(int.from_bytes(head[18:20], "little"), "other")


def _link_lookup(
    view: FileView, dirs: Sequence[str], gaps: Sequence[str], machine: str | None, names: Sequence[str], key: str
) -> dict[str, Any]:
    """`{key}_found` / `{key}` / `{key}_reason` for one `-l` of the link: the first of `names` (the shared library,
    then the static archive, as GNU ld takes them in each directory) in `dirs`, in order; a directory of another
    architecture's triplet counts for nothing (ld skips its library as incompatible), and where the link's own
    architecture is not known a library there leaves a miss unknown."""
    unread = list(gaps)
    stem = posixpath.splitext(names[0])[0]
    out: dict[str, Any] = {f"{key}_found": None}
    for d in dirs:
        arch = _dir_arch(d)
        if arch is not None and arch != machine:
            if machine is None and any(is_file(view, f"{d}/{name}") for name in names):
                unread.append(f"{d} holds a {stem} for {arch}, and the link's architecture was not read")
            continue
        for name in names:
            if is_file(view, f"{d}/{name}"):
                elf = _link_elf_arch(view, f"{d}/{name}")
                if elf is None or elf == machine:
                    out[f"{key}_found"] = True
                    out[key] = f"{d}/{name}"
                    return out
                if machine not in _LINK_ELF_MACHINES.values():
                    unread.append(f"{d}/{name} is an ELF for {elf}, and the link's architecture ({machine}) is not "
                                  "one read")  # fmt: skip
                # else ld skips it ('skipping incompatible ... when searching for -l...') and searches on
    if unread:
        out[f"{key}_reason"] = "; ".join(unread)
    else:
        out[f"{key}_found"] = False
    return out


def nccl_link(
    env: Mapping[str, str],
    view: FileView,
    home: str | None,
    home_known: bool,
    machine: str | None = None,
    torch_lib: str | None = None,
    torch_gap: str | None = None,
) -> dict[str, Any]:
    """The `libnccl_so*` and `libcudart_so*` keys of the jit section (see the module docstring): the allocator's
    `-lnccl` and torch's own `-lcudart` (with_cuda) are looked up in the same directories, those of one link.
    `machine`: the architecture the link is for (None: not known, so a library in another triplet's directory decides
    nothing); `torch_lib` / `torch_gap`: torch_lib_dir's answer."""
    dirs, gaps = nccl_link_dirs(env, view, home, home_known, torch_lib, torch_gap)
    out = _link_lookup(view, dirs, gaps, machine, NCCL_LINK_NAMES, "libnccl_so")
    out["libnccl_so_dirs"] = dirs
    out.update(_link_lookup(view, dirs, gaps, machine, CUDART_LINK_NAMES, "libcudart_so"))
    path = out.get("libcudart_so")
    if isinstance(path, str) and path.endswith(".so"):  # (libcudart.a: linked in, no DT_NEEDED; nothing to judge)
        soname, why = _cudart_soname(view, path, env)
        out["libcudart_so_soname"] = soname
        if soname is None:
            out["libcudart_so_soname_reason"] = why
    return out


#: the words of a GNU ld linker script that name no file (INPUT / GROUP and AS_NEEDED's lists: ld's manual, File
#: Commands); /* comments */ are dropped before
_LINKER_SCRIPT_WORD = _lazy(r"[^\s(),]+")
_LINKER_SCRIPT_KEYWORDS = frozenset(("INPUT", "GROUP", "AS_NEEDED", "OUTPUT_FORMAT", "OUTPUT_ARCH"))
_LINKER_SCRIPT_MAX = 1 << 12


def _cudart_soname(view: FileView, path: str, env: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """(the DT_SONAME of the libcudart.so a `-lcudart` link takes, which the link writes into the extension's DT_NEEDED
    where it keeps the library (igap29: a CUDA 12 toolkit's libcudart.so.12 beside a CUDA 13 torch); else None and
    why). A linker script in its place (text "INPUT(...)" / "GROUP(...)") is followed as ld follows it to the files it
    names, where each is in the script's own directory (a bare name: binutils 2.37+ look there first, ld's manual, File
    Commands; an absolute path there), and read there: one ELF shared library's DT_SONAME among them, archives beside
    it. None (igap34: the rule was left out, its gate allowed) where the file is no ELF shared library and no such
    script, where the script names a file elsewhere, another script, `-l` or no shared library, and where the
    library has no DT_SONAME (the link then writes the name it found, libcudart.so, which torch's runtime does not
    answer: inferred from ld's --soname description, not run). A bare name is followed only where the GNU ld the link
    runs (by the server's environment `env`) is read as binutils 2.37 or later (gnu_ld_version, read only then;
    igap39): before 2.37 ld opens it in the link's working directory first (the extension's build directory, not
    read), and where the version is not read that lookup could change the answer (_LD_SCRIPT_DIR_FIRST)."""
    try:
        real = view.realpath(path)
        head = view.read_bytes(real, _LINKER_SCRIPT_MAX + 1)
    except (OSError, ValueError):
        return None, f"{path} could not be read"
    if head[:4] == b"\x7fELF":
        return _elf_soname(view, path, real)
    text = head.decode("ascii", "replace")
    if len(head) > _LINKER_SCRIPT_MAX or "\ufffd" in text:
        return None, f"{path} is no ELF shared library and no short linker script"
    words = _LINKER_SCRIPT_WORD.findall(_without_comments(text))
    files = [w for w in words if w not in _LINKER_SCRIPT_KEYWORDS]
    if not words or words[0] not in ("INPUT", "GROUP") or not files:
        return None, f"{path} is no ELF shared library and no INPUT / GROUP linker script"
    directory = posixpath.dirname(path)
    sonames: list[str] = []
    for name in files:
        target = name if name.startswith("/") else f"{directory}/{name}"
        if name.startswith("-") or posixpath.dirname(posixpath.normpath(target)) != directory:
            return None, f"{path} is a linker script naming {name[:120]!r}, outside its own directory: not followed"
        old_ld = None if name.startswith("/") else _ld_looks_in_cwd_first(env or {}, view)
        if old_ld is not None:
            return None, (
                f"{path} is a linker script naming {name[:120]!r} with no directory, which {old_ld} in the link's "
                "working directory first (the extension's build directory, not read): not followed"
            )
        if name.endswith(".a") and is_file(view, target):
            continue
        try:
            target_real = view.realpath(target)
            elf = view.read_bytes(target_real, 4) == b"\x7fELF"
        except (OSError, ValueError):
            elf = False
        if not elf:
            return None, f"{path} is a linker script naming {target}, no ELF shared library there: not followed"
        soname, why = _elf_soname(view, target, target_real)
        if soname is None:
            return None, f"{path} is a linker script naming {why}"
        sonames.append(soname)
    if len(set(sonames)) != 1:
        return None, f"{path} is a linker script naming {len(set(sonames))} shared libraries' sonames"
    return sonames[0], ""


#: the first binutils whose ld opens a linker script's INPUT / GROUP file of a relative name in the script's own
#: directory before the working directory: ld/ldfile.c ldfile_open_file, "If extra_search_path is set,
#: entry->filename is a relative path. Search the directory of the current linker script before searching other
#: paths" (bminor/binutils-gdb 0381901e), and the manual's File Commands: 2.37's "the linker will try to open the file
#: in the directory containing the linker script. If it is not found the linker will then search the current
#: directory" against 2.27's "Otherwise, the linker will try to open the file in the current directory. If it is not
#: found, the linker will search through the archive library search path" (sourceware.org/binutils/docs-2.37 and
#: docs-2.27, ld/File-Commands.html; ldfile_open_file_search tries the bare name, relative to the working directory,
#: before the search directories). 2.36's manual was not read: the first release is the 2.37 the brief names.
_LD_SCRIPT_DIR_FIRST = (2, 37)
#: GNU ld's --version line (ld/ldver.c: "GNU ld %s\n" with BFD_VERSION_STRING, Debian 12's x86_64-linux-gnu-ld.bfd:
#: the NUL-delimited "(GNU Binutils for Debian) 2.40", read here with strings, 2026-12-06), and that version string:
#: PKGVERSION in parentheses (or RHEL's "version") then the binutils version
_GNU_LD_MARK = b"GNU ld %s\n"
_BFD_VERSION = _lazy_bytes(
    rb"(?<=\x00)(?:\([^\x00()]{1,80}\)|version) (\d{1,3})\.(\d{1,3})(?:\.[\w.+~-]{1,40})?(?=\x00)"
)
#: the most of an ld binary's .rodata read (Debian 12's ld.bfd: under 1 MB)
_LD_RODATA_MAX = 16 << 20
#: the names gcc's collect2 takes for the linker in the compiler's own program directories before the PATH's `ld`
#: (gcc/collect2.cc main: real-ld, collect-ld, then ld in the compiler path; inferred from that search, not run).
#: The compiler path is the server's COMPILER_PATH and the driver's program directories (Debian 12's gcc 12
#: -print-search-dirs: /usr/lib/gcc/x86_64-linux-gnu/12/, /usr/lib/gcc/x86_64-linux-gnu/ and the tooldir
#: /usr/lib/gcc/x86_64-linux-gnu/12/../../../../x86_64-linux-gnu/bin/); run on that box (irev65): COMPILER_PATH=DIR
#: with a failing DIR/ld made `gcc t.c` run DIR/ld, and `gcc -print-prog-name=ld` print it
_COLLECT2_LINKERS = ("real-ld", "collect-ld", "ld")


#: a resolved C++ compiler name whose linker search is GCC's driver's (gcc, g++, c++, cc, with a target prefix and a
#: version suffix: Debian's x86_64-linux-gnu-g++-12, RHEL's c++ (a hard link of g++), conda's
#: x86_64-conda-linux-gnu-c++)
_GCC_LINK_DRIVER = _lazy(r"(?:[\w.+-]+-)?(?:gcc|g\+\+|c\+\+|cc)(?:-\d+(?:\.\d+)*)?")


def _link_driver_prefix(env: Mapping[str, str], view: FileView) -> tuple[str | None, str, str | None, tuple[str, ...]]:
    """(PREFIX of the GCC installation whose driver runs a torch extension's link, or None; why the linker it runs is
    not to be read, or ""; the linker it was configured with, where collect2 runs that one; the -B directories a
    wrapper script in GCC's name hands that driver: _wrapper_link_driver). The link is
    `$cxx $in $ldflags -o $out` (torch's _write_ninja_file, cxx = $CXX else c++;
    ccache / sccache run the next word), looked up on the server's PATH. GCC's driver finds its own directories from
    where its binary really is, not where it was configured: gcc/gcc.cc process_command, gcc_exec_prefix =
    get_relative_prefix (argv[0], standard_bindir_prefix, standard_exec_prefix), which follows symbolic links
    (libiberty make-relative-prefix.c: make_relative_prefix resolves them, -no-canonical-prefixes aside), so PREFIX
    is the directory above the resolved driver's bin/ (gcc-toolset-13's /opt/rh/gcc-toolset-13/root/usr, a conda
    environment). (None, "") where no compiler is found (the link does not run: cxx_found says so); unknown for a
    compiler that is not GCC's driver by name (clang searches its own directory and its GCC installation's for ld:
    not read here) or one not in a bin/ directory."""
    value = env.get("CXX", "c++")
    words = value.split()
    if words and words[0] in _CXX_LAUNCHERS:
        words = words[1:]
    if not words:
        return None, "", None, ()
    fuse = next((w for w in words[1:] if w.startswith("-fuse-ld=")), None)
    if fuse is not None:  # (torch's ninja file runs CXX as written: collect2 runs ld.NAME, not read here)
        return None, f"the link's compiler is given {fuse[:40]!r}: the linker collect2 runs is not read", None, ()
    if "/" in words[0] and not words[0].startswith("/"):
        return (
            None,
            f"the link's compiler {words[0]!r} is relative to the build directory: its linker not read",
            None,
            (),
        )
    found, why = which_known(view, words[0], env.get("PATH", SH_DEFAULT_PATH), None, BUILD_DIR)
    if why:
        return None, f"the link's compiler: {why}: its linker not read", None, ()
    if found is None:
        return None, "", None, ()
    try:
        real = view.realpath(found)
    except (OSError, ValueError):
        return None, f"the link's compiler {found} could not be resolved: its linker not read", None, ()
    name, bin_dir = posixpath.basename(real), posixpath.dirname(real)
    if not _GCC_LINK_DRIVER.fullmatch(name):
        return (
            None,
            f"the link's compiler {found} resolves to {real}, not GCC's driver: its linker search not read",
            None,
            (),
        )
    if posixpath.basename(bin_dir) != "bin":
        return (
            None,
            f"the link's compiler {found} resolves to {real}, outside a bin directory: its linker not read",
            None,
            (),
        )
    try:
        script = view.read_bytes(real, 2) == b"#!"
    except (OSError, ValueError):
        script = False
    prefix = posixpath.dirname(bin_dir) or "/"
    if script:  # (a wrapper in GCC's name: read where it execs one GCC driver of its own prefix, else not)
        driver, why, bdirs = _wrapper_link_driver(view, real, prefix)
        if driver is None:
            return None, f"the link's compiler {found} resolves to {real}, a wrapper script: {why}", None, ()
        real = driver
    else:
        bdirs = ()
    linker, unread = _configured_linker(view, real)
    if unread:  # (irobust2: a configured linker not read was passed over, and the PATH's ld read in its place)
        return None, f"the link's compiler {found} resolves to {real}, {unread}: its linker not read", None, ()
    if linker is not None:  # (collect2 runs it where it is executable, else searches as below: access (X_OK))
        st = view.stat(linker) if linker.startswith("/") else None
        if st is not None and st.kind == "file" and st.mode & 0o111:
            return None, "", linker, bdirs
    return prefix, "", None, bdirs


def _wrapper_link_driver(view: FileView, script: str, prefix: str) -> tuple[str | None, str, tuple[str, ...]]:
    """(the GCC driver a wrapper script in GCC's name runs for a link, or None; why not; the -B prefixes it hands that
    driver, each ending in "/" where it names a directory, which the driver hands collect2 first in COMPILER_PATH:
    gcc.cc, -B adds to exec_prefixes, a directory given a trailing slash). Read by the reading _layout_major uses
    (_wrapper_targets: every command an exec of a program or a -B prefix of the same prefix, nothing else run), and
    only where it execs one ELF program that reads as GCC's driver (_gcc_driver_major). gnu_ld_version looks for a
    linker under the -B prefixes before the prefix's own program directories. Seen on the lent H100 (2026-12-06):
    /opt/gcc/bin/g++ is `exec /opt/gcc/bin/g++-real -B/opt/gcc/bin/ -B/opt/gcc/lib/gcc/x86_64-linux-gnu/13/ ... "$@"`,
    its link's COMPILER_PATH (`-v`) was those two prefixes, and `-Wl,--version` printed /usr/bin/ld's banner (GNU
    Binutils for Ubuntu 2.42), as read here."""
    text, targets, unread = _wrapper_targets(view, script, prefix)
    changed = _SCRIPT_LINKER_CHANGE.search(text) if unread is None or unread[0] == "outside" else None
    if changed is not None:
        return None, f"it passes or sets {changed.group(0)[:-1]}, which changes the linker collect2 runs: not read", ()
    if unread is not None:
        kind, detail = unread
        said = {
            "unreadable": "it could not be read",
            "long": f"it is longer than {_SCRIPT_MAX} bytes",
            "unread": f"it is not read ({detail})",
        }.get(kind, f"it runs {detail[:120]!r}, not only programs of {prefix} by exec")
        return None, f"{said}: the gcc it runs is not read", ()
    programs = sorted({_resolved(view, t) for t in targets if not t.startswith("-B")})
    if len(programs) != 1:
        return None, f"it execs {len(programs)} programs: the gcc it runs is not read", ()
    major, why, _ = _gcc_driver_major(view, programs[0])
    if major is None:
        return None, f"the program it execs, {programs[0]}, is not read as GCC's driver ({why})", ()
    bprefixes = [t[2:] for t in targets if t.startswith("-B")]
    given = [b if b.endswith("/") or not is_dir(view, b) else b + "/" for b in bprefixes]
    return programs[0], "", tuple(dict.fromkeys(d for b in given for d in _b_prefix_dirs(view, b)))


#: a directory name read as a GCC target triplet under a -B prefix (x86_64-linux-gnu, x86_64-pc-linux-gnu,
#: x86_64-redhat-linux, x86_64-conda-linux-gnu, aarch64-linux-gnu): a word, a dash, more words and dashes
_TRIPLET_DIR = _lazy(r"[A-Za-z0-9_.]+-[A-Za-z0-9_.-]+")


def _b_prefix_dirs(view: FileView, prefix: str) -> list[str]:
    """The places a GCC driver searches for a program under one -B PREFIX, in its order, each ending in "/" (a name
    prefix, "x86_64-" with no directory of that name, alone: its suffixed forms are not read). gcc.cc: -B is
    add_prefix (&exec_prefixes, arg, NULL, PREFIX_PRIORITY_B_OPT, 0, 0) (require_machine_suffix 0), and for_each_path
    tries each such prefix with the machine suffix TRIPLET/VERSION/ first, then (with a multiarch directory, Debian's
    and Ubuntu's builds: the triplet) PREFIX/MULTIARCH/, then PREFIX itself; COMPILER_PATH, which collect2 searches
    for its linker, is that list, directories only (build_search_list, check_dir). The driver's own TRIPLET, VERSION
    and multiarch name are compiled in, not read: every directory under PREFIX named like a triplet, and every one
    under it, is taken (a linker found in one that is not the driver's makes the linker unknown, never another
    read; gcc-mirror/gcc gcc/gcc.cc, read 2026-12-06)."""
    if not prefix.endswith("/"):
        return [prefix]
    out: list[str] = []
    for triplet in sorted(listdir_or_empty(view, prefix)):
        if not _TRIPLET_DIR.fullmatch(triplet) or not is_dir(view, f"{prefix}{triplet}"):
            continue
        versions = sorted(
            v for v in listdir_or_empty(view, f"{prefix}{triplet}") if is_dir(view, f"{prefix}{triplet}/{v}")
        )
        out.extend(f"{prefix}{triplet}/{version}/" for version in versions)
        out.append(f"{prefix}{triplet}/")
    return [*out, prefix]


#: a GCC driver's configure line as its .rodata carries it (gcc.cc includes configargs.h: configuration_arguments,
#: what `gcc -v` prints after "Configured with:"), naming the linker collect2 runs before any search: --with-ld=PATH
#: defines DEFAULT_LINKER (gcc/configure), and collect2.cc main takes it first where it is executable (`#ifdef
#: DEFAULT_LINKER if (access (DEFAULT_LINKER, X_OK) == 0) ld_file_name = DEFAULT_LINKER;`, before the compiler
#: path's real-ld / collect-ld / ld and the PATH); gcc.cc find_a_file does the same for -print-prog-name=ld
#: Its value as GCC's top-level configure writes it there: an argument holding a blank or one of
#: []~#$^&*(){}\|;<>?' is quoted, for `--NAME=VALUE` the VALUE alone (`--with-ld='/opt/my tools/ld'`), a quote inside
#: it written '\'' (gcc-mirror/gcc configure.ac, TOPLEVEL_CONFIGURE_ARGUMENTS: "if the argument is of the form
#: -foo=baz, quote the baz part only"; Debian 12's gcc-12 -v: --with-pkgversion='Debian 12.2.0-14+deb12u1'), any
#: other written as it is, bytes as given (a UTF-8 path). Groups: the quoted value, the plain one; either ends at a
#: blank, a NUL or the end (irobust2: the value was cut at 400 bytes and at a quote, and decoded as ASCII, so a
#: quoted, long or non-ASCII path was a path not there, and the PATH's ld was read in place of the one collect2 runs)
_WITH_LD = _lazy_bytes(rb"--with-ld=(?:'((?:[^'\x00]|'\\'')+)'|([^\s\x00'\"\[\]~#$^&*(){}\\|;<>?]+))(?=[\s\x00]|\Z)")


def _configured_linker(view: FileView, real: str) -> tuple[str | None, str]:
    """(the linker a GCC driver binary was configured with: --with-ld=PATH in its configure line, _WITH_LD; why it is
    not read, or ""). (None, "") where its strings name none or cannot be read (an ELF not read runs nothing: no link
    to judge). Not read (None, why) where `--with-ld=` stands in them in another shape than _WITH_LD's, twice with two
    values, with a `$` (which the top-level configure doubles for make), or in strings too large to read. The path is
    the one configured: a relocated install (conda's, built under another prefix) names a path that is not there, and
    collect2 then searches as without it."""
    from stackcheck.readers.elf import ElfError, ElfFile

    try:
        with ElfFile(real, view) as elf:
            rodata = elf.section(".rodata")
            size = rodata.size if rodata is not None else elf.size
            if size > _DRIVER_RODATA_MAX:
                return None, f"whose {size} bytes of strings (its configure line's --with-ld) are not read"
            data = elf.read_section(rodata) if rodata is not None else elf.read_at(0, size, "the file")
    except (ElfError, OSError, ValueError):
        return None, ""
    named = data.count(b"--with-ld=")
    if not named:
        return None, ""
    found = list(_WITH_LD.finditer(data))
    values = {m.group(1).replace(b"'\\''", b"'") if m.group(1) is not None else m.group(2) for m in found}
    if len(found) != named or len(values) != 1 or b"$" in next(iter(values)):
        return None, "whose configure line's --with-ld= value is not read (the linker collect2 runs before any search)"
    # (bytes as the file system has them: a non-ASCII path reaches the view as the same bytes, surrogateescape)
    return next(iter(values)).decode("utf-8", "surrogateescape"), ""


def _gcc_prefix_program_dirs(view: FileView, prefix: str) -> list[str]:
    """The program directories a GCC driver under PREFIX hands collect2 (its COMPILER_PATH) ahead of the PATH, for every
    TRIPLET and VERSION found there (the driver's own are compiled in, not read): PREFIX/libexec/gcc/TRIPLET/VERSION and
    PREFIX/libexec/gcc/TRIPLET (gcc.cc: add_prefix (&exec_prefixes, gcc_libexec_prefix, ...) searched with the
    machine suffix TRIPLET/VERSION/ and just TRIPLET/), PREFIX/lib/gcc/TRIPLET/VERSION and PREFIX/lib/gcc/TRIPLET
    (the BINUTILS prefix under standard_exec_prefix, and RHEL / Debian's layout of the same files), and the tooldir
    PREFIX/TRIPLET/bin (gcc.cc: tooldir_prefix = gcc_exec_prefix + TRIPLET/VERSION/ + tooldir_base_prefix "../../../../"
    + spec_machine/, then add_prefix (&exec_prefixes, tooldir_prefix + "bin/")). `gcc -print-prog-name=ld` searches the
    same list (find_a_program); inferred from that source, not run."""
    out: list[str] = []
    for sub in ("libexec/gcc", "lib/gcc"):
        base = posixpath.join(prefix, sub)
        for triplet in listdir_or_empty(view, base):
            versions = listdir_or_empty(view, f"{base}/{triplet}")
            out.extend(f"{base}/{triplet}/{version}" for version in versions)
            out.extend((f"{base}/{triplet}", posixpath.join(prefix, triplet, "bin")))
    return list(dict.fromkeys(out))


def _ld_looks_in_cwd_first(env: Mapping[str, str], view: FileView) -> str | None:
    """How the link's GNU ld may open a linker script's bare name in the working directory first (binutils before
    2.37, or a version not read: _LD_SCRIPT_DIR_FIRST); None where it is read as 2.37 or later."""
    version, why = gnu_ld_version(env, view)
    if version is None:
        return f"the link's ld (its binutils version not read: {why}) opens, where older than 2.37,"
    if version < _LD_SCRIPT_DIR_FIRST:
        return f"binutils {version[0]}.{version[1]}'s ld opens"
    return None


def gnu_ld_version(env: Mapping[str, str], view: FileView) -> tuple[tuple[int, int] | None, str]:
    """((major, minor) of the binutils whose GNU ld a torch extension's link runs, or None; why not). The link is
    g++'s (collect2's): an `ld` on the server's PATH, resolved, whose .rodata carries GNU ld's --version format
    (_GNU_LD_MARK) and one binutils version (_BFD_VERSION); not read where a GCC program directory (a version's, the
    machine's, the tooldir /usr/TRIPLET/bin or the server's COMPILER_PATH, and those under the prefix the link's own
    gcc is installed in: _link_driver_prefix, igap42) holds a linker of its own (collect2 prefers it), where the
    link's compiler is not GCC's driver (clang) or is outside a bin directory, where GCC_EXEC_PREFIX is set, where
    the PATH has no ld, where it is gold / lld / another program, or where it carries no single version (igap39).
    A link gcc configured --with-ld=PATH, executable there, runs that one (_configured_linker): it is read instead."""
    if env.get("GCC_EXEC_PREFIX"):  # (gcc's program directories under that prefix: not followed here)
        return None, "the server's GCC_EXEC_PREFIX adds gcc program directories, searched before the PATH's ld"
    for entry in (env.get("COMPILER_PATH") or "").split(":"):
        own = [n for n in _COLLECT2_LINKERS if entry and is_file(view, f"{entry.rstrip('/')}/{n}")]
        if own:
            return None, f"the server's COMPILER_PATH names {entry}, whose {own[0]} collect2 runs before the PATH's ld"
    prefix, why, configured, bdirs = _link_driver_prefix(env, view)
    if configured is not None:  # (the link's gcc was configured --with-ld=PATH, executable there: collect2 runs it)
        return _binutils_of(view, configured, f"the link's gcc's configured --with-ld={configured}")
    if why:
        return None, why
    if prefix is not None:
        for where in (*bdirs, *(f"{d}/" for d in _gcc_prefix_program_dirs(view, prefix))):
            own = [n for n in _COLLECT2_LINKERS if is_file(view, f"{where}{n}")]
            if own:
                held = f"{where.rstrip('/') or '/'} holds {own[0]}" if where.endswith("/") else f"{where}{own[0]} is"
                return None, f"{held}, which the link's gcc (under {prefix}) runs before the PATH's ld"
    for root in GCC_LIB_ROOTS:
        triplet = posixpath.basename(root)
        for base in (root, root.replace("/usr/lib/gcc/", "/usr/libexec/gcc/")):
            dirs = [base, *(f"{base}/{version}" for version in listdir_or_empty(view, base))]
            for directory in (*dirs, f"/usr/{triplet}/bin"):  # (the tooldir: gcc -print-search-dirs' programs)
                own = [n for n in _COLLECT2_LINKERS if is_file(view, f"{directory}/{n}")]
                if own:
                    return None, f"{directory} holds {own[0]}, which gcc's collect2 runs before the PATH's ld"
    ld, why = which_known(view, "ld", env.get("PATH"), None, BUILD_DIR)  # (collect2's search of the PATH)
    if why:
        return None, why
    if ld is None:
        return None, "no ld on the server's PATH"
    return _binutils_of(view, ld, ld)


def _binutils_of(view: FileView, ld: str, named: str) -> tuple[tuple[int, int] | None, str]:
    """((major, minor) of the binutils whose GNU ld `ld` is, or None; why not, the program called `named` there):
    its .rodata carries GNU ld's --version format (_GNU_LD_MARK) and one binutils version (_BFD_VERSION)."""
    from stackcheck.readers.elf import ElfError, ElfFile

    try:
        real = view.realpath(ld)
        with ElfFile(real, view) as elf:
            rodata = elf.section(".rodata")
            size = rodata.size if rodata is not None else elf.size
            if size > _LD_RODATA_MAX:
                return None, f"{real}'s {size} bytes of strings are not read"
            data = elf.read_section(rodata) if rodata is not None else elf.read_at(0, size, "the file")
    except (ElfError, OSError, ValueError):
        return None, f"{named} is not read as an ELF program"
    if _GNU_LD_MARK not in data:
        return None, f"{named} resolves to {real}, no GNU ld (gold, lld or another program)"
    versions = {(int(m.group(1)), int(m.group(2))) for m in _BFD_VERSION.finditer(data)}
    if len(versions) != 1:
        return None, f"{named} resolves to {real}, a GNU ld carrying {len(versions)} binutils versions"
    return versions.pop(), ""


def _without_comments(text: str) -> str:
    """A linker script's text without its /* comments */ (an unclosed one drops the rest, as ld reads no further)."""
    out, rest = [], text
    while "/*" in rest:
        before, _, rest = rest.partition("/*")
        out.append(before + " ")
        rest = rest.partition("*/")[2] if "*/" in rest else ""
    out.append(rest)
    return "".join(out)


def _elf_soname(view: FileView, path: str, real: str) -> tuple[str | None, str]:
    """(an ELF shared library's DT_SONAME, or None and why: no DT_SONAME, or not read)."""
    from stackcheck.readers.elf import DynamicSymbols, ElfError, ElfFile

    try:
        with ElfFile(real, view) as elf:
            soname = DynamicSymbols(elf).soname
    except (ElfError, OSError, ValueError):
        return None, f"{path}, an ELF file not read as a shared library"
    if not soname:
        return None, (
            f"{path}, an ELF shared library without DT_SONAME: the link writes the name it found, libcudart.so, into "
            "the allocator's DT_NEEDED, which torch's CUDA runtime does not answer"
        )
    if not soname.isprintable():
        return None, f"{path}, whose DT_SONAME is not printable"
    return soname, ""


def nccl_so_path(
    env: Mapping[str, str],
    view: FileView,
    machine: str | None = None,
    cwd: str | None = None,
    interpreter: str | None = None,
) -> dict[str, Any]:
    """The `nccl_so_path*` keys (see the module docstring): SGLang's pynccl passes a non-empty SGLANG_NCCL_SO_PATH
    to ctypes.CDLL as it is (sglang 0.5.1-0.5.23 pynccl_wrapper.py find_nccl_library: `if so_file:`). `machine`: the
    box's architecture (_link_machine), where known: an ELF of another architecture (an aarch64 libnccl on x86_64) is
    not found, since dlopen refuses it (ctypes.CDLL of an x86_64 library with e_machine set to aarch64, run under
    Debian 12's glibc 2.36: "OSError: ...: cannot open shared object file", the failed load pynccl catches; irev62:
    it was read for its symbols alone and found). `cwd`: the server's working directory where known (gate --cwd,
    igap38): a relative path with a slash is read from there, as dlopen opens a name with a slash from the process's
    working directory. A bare name other than libnccl.so.2 is looked up as the dynamic loader would (igap40:
    LD_LIBRARY_PATH, the ld.so cache, the default directories, the kernel runtime libraries' reading,
    stackcheck.probes.cudalibs.probe_cuda_libs, after the DT_RPATH of `interpreter`, the audited Python's box path,
    where known) and the file found read as a path; null where none is found there (the calling module's own
    DT_RPATH / DT_RUNPATH, which dlopen searches too, is not read)."""
    value = env.get("SGLANG_NCCL_SO_PATH")
    if not value:
        return {}
    if value == "libnccl.so.2":  # the default's own name: dlopen returns the libnccl.so.2 torch already loaded
        why = "libnccl.so.2 itself: dlopen returns the NCCL torch loaded, whose file is not read here"
        return {"nccl_so_path": value, "nccl_so_path_found": True, "nccl_so_path_version": None,
                "nccl_so_path_version_reason": why}  # fmt: skip
    if cwd is not None and "/" in value and not value.startswith("/") and cwd.startswith("/"):
        # (joined, not normalised: the loader resolves `sub/..` through a link `sub` as the kernel does; irev65)
        resolved = posixpath.join(cwd, value)
        return {**nccl_so_path({"SGLANG_NCCL_SO_PATH": resolved}, view, machine), "nccl_so_path": value}
    if "/" not in value:
        return _nccl_so_path_bare_name(env, view, value, machine, interpreter, cwd)
    if not value.startswith("/"):
        return {
            "nccl_so_path": value,
            "nccl_so_path_found": None,
            "nccl_so_path_reason": "not an absolute path: ctypes.CDLL opens a relative path from the server's "
            "working directory, which is not known (gate --cwd names it)",
        }
    if not is_file(view, value):
        return {"nccl_so_path": value, "nccl_so_path_found": False}
    arch = _link_elf_arch(view, value)
    if machine is not None and arch is not None and arch != machine:
        why = f"the file is an ELF for {arch}, not for this {machine} box: dlopen refuses it, pynccl's load fails"
        return {"nccl_so_path": value, "nccl_so_path_found": False, "nccl_so_path_reason": why}
    exports, why, extra = _exports_pynccl_functions(view, value)
    if exports is None:
        return {"nccl_so_path": value, "nccl_so_path_found": None, "nccl_so_path_reason": why}
    out: dict[str, Any] = {"nccl_so_path": value, "nccl_so_path_found": exports}
    if not exports:
        out["nccl_so_path_reason"] = why
    out.update(extra)
    if exports:
        version, cuda, why = nccl_library_build(view, value)
        out["nccl_so_path_version"] = version
        if version is None:
            out["nccl_so_path_version_reason"] = why
        if cuda is not None:
            out["nccl_so_path_cuda"] = cuda
            out["nccl_so_path_cuda_major"] = int(cuda.partition(".")[0])
    return out


def _nccl_so_path_bare_name(
    env: Mapping[str, str],
    view: FileView,
    value: str,
    machine: str | None,
    interpreter: str | None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """nccl_so_path for a name without a slash (not libnccl.so.2): the file the dynamic loader finds for it in the
    server's environment (probe_cuda_libs: the interpreter's DT_RPATH, LD_LIBRARY_PATH, the ld.so cache, the default
    directories; a copy of another ELF class or machine passed over, as glibc's open_verify), read as an absolute
    path would be. LD_LIBRARY_PATH is read as glibc reads it (ldpath.ld_library_path, irev67): an empty or relative
    element is searched from the server's working directory `cwd`; where that is not known (or the element names
    $ORIGIN / $LIB / $PLATFORM), a copy found after it is not taken for the loader's (unknown)."""
    from stackcheck.probes.cudalibs import probe_cuda_libs

    libs = probe_cuda_libs(env, view, (value,), interpreter, cwd=cwd)
    unreadable = (libs.get("unreadable") or {}).get(value)
    found = libs.get(value)
    if unreadable and str(unreadable).startswith("LD_LIBRARY_PATH's element"):
        return {"nccl_so_path": value, "nccl_so_path_found": None, "nccl_so_path_reason": unreadable}
    if isinstance(found, str) and not unreadable:
        return {**nccl_so_path({"SGLANG_NCCL_SO_PATH": found}, view, machine), "nccl_so_path": value}
    why = (
        f"the loader's copy could not be read: {unreadable}"
        if unreadable
        else "a bare name not found on LD_LIBRARY_PATH, in the ld.so cache or in the default directories (the "
        "module calling dlopen may have its own RPATH, not read)"
    )
    return {"nccl_so_path": value, "nccl_so_path_found": None, "nccl_so_path_reason": why}


#: the version string NCCL's init.cc builds from its compile-time macros for its INFO / VERSION log line, a literal
#: in the library's .rodata (NVIDIA/nccl src/init.cc VERSION_STRING: "NCCL version " STR(NCCL_MAJOR) "."
#: STR(NCCL_MINOR) "." STR(NCCL_PATCH) NCCL_SUFFIX "+cuda" STR(CUDA_MAJOR) "." STR(CUDA_MINOR); v2.26.2-1 and
#: v2.27.3-1 / v2.27.7-1 :529 / :538, master :694-696; NCCL_SUFFIX is nccl.h's, from makefiles/version.mk, empty in
#: the releases). Read in the nvidia-nccl-cu12 2.26.2 / 2.27.3 and nvidia-nccl-cu13 2.32.6 wheels' libnccl.so.2:
#: "NCCL version 2.26.2+cuda12.2", "NCCL version 2.27.3+cuda12.9", "NCCL version 2.32.6+cuda13.5", each once, in
#: .rodata, NUL-terminated ("NCCL version 2.26.2 compiled with CUDA 12.2", another string, is not this shape).
#: Groups: X.Y, the whole digit run after the second dot (NCCL_PATCH, and NCCL_SUFFIX's leading digits if it has
#: any: nothing in the string separates them; igap40), the rest of the suffix, the CUDA build A.B. The digit run is
#: taken whole, up to 16 digits (irobust2: unbounded and free to split with the suffix, a long run of digits was tried
#: at every split on a failure, ~0.9 s a megabyte, and a library of a few megabytes of them timed the jit probe out;
#: the run is the patch as before, and a longer one is no such string: a patch of several digits is not told anyway)
_NCCL_VERSION_STRING = _lazy_bytes(
    rb"NCCL version (\d{1,3}\.\d{1,3})\.(\d{1,16})(?![0-9])([!-*,-~]{0,32})\+cuda(\d{1,3}\.\d{1,3})(?=\x00)"
)
#: the most of a library's .rodata (or, without a section table, of the file) read for it (2.32.6: 1 MB of .rodata)
_NCCL_RODATA_MAX = 1 << 26


def nccl_library_version(view: FileView, path: str) -> tuple[str | None, str]:
    """(the NCCL version an NCCL library at `path` was built as, X.Y.Z with NCCL_SUFFIX where one is there, read from
    its .rodata without loading it (_NCCL_VERSION_STRING; the whole file where there is no section table); None and
    why where not read: no such string, two versions, too large, not an ELF file read, a patch of several digits)."""
    version, _, why = nccl_library_build(view, path)
    return version, why


def nccl_library_build(view: FileView, path: str) -> tuple[str | None, str | None, str]:
    """(nccl_library_version's version, the CUDA version A.B the library was built with, from the same string's
    "+cudaA.B", and why the version is not read, "" where it is). The CUDA build is read where the one string is
    there even if its patch is not told (igap40); None where there is no such string or two."""
    from stackcheck.readers.elf import ElfError, ElfFile

    try:
        with ElfFile(view.realpath(path), view) as elf:
            rodata = elf.section(".rodata")
            size = rodata.size if rodata is not None else elf.size
            if size > _NCCL_RODATA_MAX:
                return None, None, f"its {size} bytes of strings were not read for NCCL's version string"
            data = elf.read_section(rodata) if rodata is not None else elf.read_at(0, size, "the file")
    except (ElfError, OSError, ValueError) as exc:
        return None, None, f"the file was not read as an ELF shared library ({str(exc)[:160]})"
    found = sorted({m.group(0)[13:].decode("ascii") for m in _NCCL_VERSION_STRING.finditer(data)})
    if not found:
        return None, None, "no 'NCCL version X.Y.Z+cudaA.B' string (NCCL's init.cc VERSION_STRING) in its .rodata"
    if len(found) > 1:
        return None, None, f"its .rodata names more than one NCCL version ({', '.join(v[:48] for v in found[:4])})"
    match = _NCCL_VERSION_STRING.search(data)
    assert match is not None  # (found is not empty)
    head, patch, suffix, cuda = (g.decode("ascii") for g in match.group(1, 2, 3, 4))
    if len(patch) > 1:
        # VERSION_STRING writes STR(NCCL_PATCH) NCCL_SUFFIX with nothing between: "2.27.20" is NCCL 2.27.20 or 2.27.2
        # with the suffix "0", whose ncclGetVersion (NCCL_VERSION_CODE) says 22702; not told apart here (igap40)
        why = f"'NCCL version {found[0][:48]}': the patch runs into digits ({patch[:16]}), which may be an NCCL_SUFFIX"
        return None, cuda, why + " that starts with a digit: the version is not told"
    return f"{head}.{patch}{suffix}", cuda, ""


#: the functions SGLang's pynccl binds in the library it loads, each with getattr as NCCLLibrary is made (an
#: AttributeError there is caught by PyNcclCommunicator as a failed load: pynccl disabled):
#: NCCLLibrary.exported_functions of sglang 0.5.1-0.5.23 pynccl_wrapper.py (0.5.1 and 0.5.5 :156, 0.5.10 :158,
#: 0.5.17 :229, 0.5.23 :232; bound at 0.5.4 :358-361, 0.5.23 :458-461; read in the wheels, ifc41). The window
#: functions (exported_functions_symm_mem) are bound only where ncclCommWindowRegister is there: not required.
PYNCCL_FUNCTIONS = (
    "ncclGetErrorString", "ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclAllReduce", "ncclAllGather",
    "ncclReduce", "ncclReduceScatter", "ncclSend", "ncclRecv", "ncclBroadcast", "ncclCommDestroy", "ncclGroupStart",
    "ncclGroupEnd",
)  # fmt: skip
#: bound too where the library exports the first (NCCLLibrary.exported_functions_symm_mem, added where
#: hasattr(self.lib, "ncclCommWindowRegister"): sglang 0.5.1 :307 and :358, 0.5.17 :394 and :445, 0.5.23 :397 and
#: :458, read in the wheels, irev60); 0.5.23 binds ncclMemAlloc / ncclMemFree there too (PYNCCL_WINDOW_0523)
PYNCCL_WINDOW = ("ncclCommWindowRegister", "ncclCommWindowDeregister")
#: bound too from SGLang 0.5.17 (0.5.17 :229, 0.5.23 :232; not in 0.5.14-0.5.16): `nccl_so_path_init_config`
PYNCCL_FUNCTIONS_0517 = ("ncclCommInitRankConfig",)
#: bound with the window functions by SGLang 0.5.23 (exported_functions_symm_mem :397-420, extended into the list bound
#: with getattr where hasattr(self.lib, "ncclCommWindowRegister"): :458-461; in no release 0.5.1-0.5.22, each read,
#: igap29): `nccl_so_path_mem_alloc`
PYNCCL_WINDOW_0523 = ("ncclMemAlloc", "ncclMemFree")


def _exports_pynccl_functions(view: FileView, path: str) -> tuple[bool | None, str, dict[str, bool]]:
    """(whether the library at `path` exports every function of PYNCCL_FUNCTIONS, which pynccl looks up in the file
    it loads: a missing one raises AttributeError, caught by PyNcclCommunicator as a failed load (pynccl disabled);
    why not, naming the missing functions and its DT_SONAME; the keys `nccl_so_path_init_config`
    (ncclCommInitRankConfig, bound too from SGLang 0.5.17), `nccl_so_path_window` and, where that is true,
    `nccl_so_path_mem_alloc`). None (not
    read) where the file is no ELF object stackcheck reads (igap26: any file there counted as NCCL; ifc41: one exporting
    ncclGetVersion alone, or NCCL's names without ncclReduce, counted as NCCL). A function is what dlsym finds as code
    (DynamicSymbols.defines_function: igap29, a data object or a hidden version of the name counted); the window test
    is pynccl's hasattr, dlsym finding the name at all (dlsym_type)."""
    from stackcheck.readers.elf import DynamicSymbols, ElfError, ElfFile

    try:
        with ElfFile(view.realpath(path), view) as elf:
            symbols = DynamicSymbols(elf)
            missing = [name for name in PYNCCL_FUNCTIONS if not symbols.defines_function(name)]
            window = symbols.dlsym_type(PYNCCL_WINDOW[0]) is not None  # pynccl's hasattr(self.lib, ...)
            if window:  # (then pynccl binds the window functions too: irev60)
                missing.extend(name for name in PYNCCL_WINDOW if not symbols.defines_function(name))
            extra = {"nccl_so_path_init_config": all(symbols.defines_function(n) for n in PYNCCL_FUNCTIONS_0517)}
            extra["nccl_so_path_window"] = window
            if window:
                extra["nccl_so_path_mem_alloc"] = all(symbols.defines_function(n) for n in PYNCCL_WINDOW_0523)
            # a name the file exports otherwise (data, a hidden version): said so, not "defines no"
            elsewise = {name for name in missing if symbols.defines(name)}
            soname = symbols.soname
    except (ElfError, OSError, ValueError) as exc:
        return None, f"the file is there but was not read as a shared library ({str(exc)[:160]})", {}
    named = f" (DT_SONAME {soname})" if soname else " (no DT_SONAME)"
    if not missing:
        return True, "", extra
    not_code = [name for name in missing if name in elsewise]
    absent = [name for name in missing if name not in elsewise]
    parts = []
    if absent:
        shown = ", ".join(absent[:4]) + (f" and {len(absent) - 4} more" if len(absent) > 4 else "")
        parts.append(f"defines no {shown}")
    if not_code:
        shown = ", ".join(not_code[:4]) + (f" and {len(not_code) - 4} more" if len(not_code) > 4 else "")
        parts.append(f"exports {shown} only as what dlsym does not return as a function (a data object, a hidden "
                     "version name@VER or a hidden symbol): ctypes finds no function there or calls data")  # fmt: skip
    what = "; ".join(parts)
    if "ncclGetVersion" in absent:
        return False, f"the file is there but {what}{named}: no NCCL library for pynccl", extra
    why = (f"the file is there but {what}{named}, which SGLang's pynccl binds in the library it loads "
           "(pynccl_wrapper.py NCCLLibrary.exported_functions): AttributeError, pynccl disabled, or a call into "
           "what is no function")  # fmt: skip
    return False, why, extra


def _sglang_nccl_so_path(
    facts: Mapping[str, Any], env: Mapping[str, str], view: FileView, cwd: str | None, interpreter: str | None
) -> dict[str, Any]:
    """nccl_so_path with the environment as the installed SGLang reads it: 0.5.3rc2 and later copy SGL_NCCL_SO_PATH
    over SGLANG_NCCL_SO_PATH at import, before pynccl reads it (facts/sgl_prefix.py; irev73: the SGL_ spelling was
    not read). Where the two differ and the release is not known, the file pynccl opens is not known."""
    if "SGL_NCCL_SO_PATH" not in env:
        return nccl_so_path(env, view, _link_machine(facts, view), cwd, interpreter)
    from stackcheck.facts.sgl_prefix import sglang_environ

    packages = facts.get("packages")
    own = packages.get("sglang") if isinstance(packages, Mapping) else None
    raw = own.get("version") if isinstance(own, Mapping) and own.get("installed") else None
    read, undecided = sglang_environ(env, raw if isinstance(raw, str) else None)
    if "SGLANG_NCCL_SO_PATH" in undecided:
        why = (
            "SGL_NCCL_SO_PATH differs from SGLANG_NCCL_SO_PATH and the installed SGLang's release is not known: "
            "0.5.3 and later copy the first over the second, older releases do not"
        )
        return {"nccl_so_path": env["SGL_NCCL_SO_PATH"], "nccl_so_path_found": None, "nccl_so_path_reason": why}
    return nccl_so_path(read, view, _link_machine(facts, view), cwd, interpreter)


def probe_jit(
    facts: Mapping[str, Any],
    env: Mapping[str, str],
    view: FileView,
    timeout_s: float = 3.0,
    runner: Runner = run_command,
    cwd: str | None = None,
    interpreter: str | None = None,
) -> dict[str, Any]:
    """The `jit` facts section (see the module docstring), from the first round's facts and the view; `cwd`: the
    server's working directory where the gate was told it (`gate --cwd`), else None; `interpreter`: the audited
    Python's box path, whose DT_RPATH the loader searches for a bare SGLANG_NCCL_SO_PATH (igap40)."""
    out: dict[str, Any] = {
        "toolkit": None,
        "chosen_by": None,
        "nvcc": None,
        "nvcc_found": None,
        "cuda": None,
        "fp8_header": None,
        "fp4_header": None,
        "curand_header": None,
        "headers_cuda": None,
        "triton_ptxas": {},
    }
    notes: list[str] = []
    home_rocm, rocm_why = rocm_home(env, view, cwd)
    if rocm_why:  # (null, not absent: the rule reading it with `exists` is then unknown, never passed)
        out["rocm_home"] = None
        out["rocm_home_reason"] = rocm_why
    elif home_rocm is not None:
        out["rocm_home"] = home_rocm
    ninja, ninja_why = ninja_on_path(env, view)
    out["ninja_found"] = None if ninja_why else ninja is not None
    if ninja_why:
        out["ninja_reason"] = ninja_why
    if ninja is not None:
        out["ninja"] = ninja
    toolkits = facts.get("cuda_toolkits")
    tk = build_toolkit(facts)
    if not isinstance(toolkits, list):
        notes.append("the CUDA toolkits were not probed")
    elif tk is None:
        out["chosen_by"] = "none"  # no CUDA_HOME, no nvcc on PATH, no /usr/local/cuda: a JIT build fails
        out["nvcc_found"] = False
    else:
        home = tk.get("path")
        out["toolkit"] = home
        out["chosen_by"] = tk.get("source")
        out["cuda"] = _major_minor(tk.get("version"))
        if isinstance(home, str):
            nvcc = home.rstrip("/") + "/bin/nvcc"
            out["nvcc"] = nvcc if is_file(view, nvcc) else None
            out["nvcc_found"] = out["nvcc"] is not None
            includes = _include_dirs(view, home.rstrip("/"), out["nvcc"])
            # a header is missing only when nvcc is the toolkit's own binary: a wrapper script (exec
            # /usr/local/cuda-13.0/bin/nvcc "$@") brings its real toolkit's include directory, not read here
            real_nvcc = out["nvcc"] is not None and _is_elf(view, str(out["nvcc"]))
            for key, header in HEADERS.items():
                found = any(is_file(view, f"{d}/{header}") for d in includes)
                out[key] = True if found else (False if real_nvcc else None)
            if real_nvcc:
                out["headers_cuda"] = headers_cuda(view, includes)
            if out["nvcc"] is not None and not real_nvcc:
                out["headers_reason"] = f"{out['nvcc']} is not the compiler itself (a wrapper script?)"
        else:
            out["nvcc_found"] = False
        if tk.get("error"):
            notes.append(str(tk["error"]))
    for name in TRITON_PTXAS_ENV:
        path = env.get(name)
        if not path:
            continue
        version, why = ptxas_version(path, view, env, timeout_s, runner)
        entry: dict[str, Any] = {"path": path, "version": version}
        if why:
            entry["error"] = why
            notes.append(f"{name}: {why}")
        out["triton_ptxas"][name] = entry
    home_for_link = out["toolkit"] if isinstance(out["toolkit"], str) else None
    out.update(cxx_compiler(env, view))
    nvcc_path = out["nvcc"] if isinstance(out["nvcc"], str) else None
    out.update(nvcc_host_compiler(env, view, nvcc_path, nvcc_path is not None and _is_elf(view, nvcc_path)))
    out.update(_sglang_nccl_so_path(facts, env, view, cwd, interpreter))
    out.update(flashinfer_host_compiler(env, view, nvcc_path, nvcc_path is not None and _is_elf(view, nvcc_path)))
    out.update(pytorch_nvcc(env, view, nvcc_path))
    torch_lib, torch_gap = torch_lib_dir(facts)
    machine = _link_machine(facts, view)
    out.update(nccl_link(env, view, home_for_link, isinstance(toolkits, list), machine, torch_lib, torch_gap))
    out.update(cxx_headers(env, view, home_for_link, isinstance(toolkits, list), machine, torch_lib, torch_gap))
    for key in ("nvcc_host", "cc_host"):
        gcc, major = out.get(key), out.get(f"{key}_gnu_major")
        if isinstance(gcc, str) and isinstance(major, int):
            has_header, header_why = gcc_asan_header(env, view, gcc, major, home_for_link, machine)
            out[f"{key}_asan_header_found"] = has_header
            if header_why is not None:
                out[f"{key}_asan_header_reason"] = header_why
    if notes:
        out["error"] = "; ".join(notes)
    return out


def _link_machine(facts: Mapping[str, Any], view: FileView) -> str | None:
    """The architecture a link on this view is for: the system probe's machine when it is in, else this host's own
    for a host view (an image's, not read here, is None)."""
    system = facts.get("system")
    machine = system.get("machine") if isinstance(system, Mapping) else None
    if isinstance(machine, str) and machine:
        return machine
    if isinstance(view, HostView):
        return os.uname().machine or None
    return None


class JitProbe(Probe):
    """Second-wave probe: needs the `cuda_toolkits` and `packages` sections of the first round (`ctx.facts`)."""

    name: ClassVar[str] = "jit"
    timeout_s: ClassVar[float] = 4.0
    sections: ClassVar[tuple[str, ...]] = ("jit",)
    needs: ClassVar[tuple[str, ...]] = ("cuda_toolkits", "packages")

    def run(self, ctx: ProbeContext) -> ProbeResult:
        facts = getattr(ctx, "facts", None)
        if not isinstance(facts, Mapping) or "cuda_toolkits" not in facts:
            return ProbeResult({}, "skipped", "needs the toolkits probe's facts (cuda_toolkits)")
        # the server's own environment: a gated command's `env NAME=VALUE` prefix sets the PATH and CXX its JIT builds
        # run with even where the audited interpreter was named otherwise (--python, --env: ctx.env is the audit's)
        from stackcheck.probes.cudalibs import _interpreter

        keep = _KEEP_DIR.set(ctx.cache_dir)  # (this thread's: what _gcc_driver_major read is kept there)
        try:
            jit = probe_jit(facts, ctx.loader_environ, view_of(ctx), ctx.subprocess_timeout_s, cwd=ctx.launch_cwd,
                            interpreter=_interpreter(ctx))  # fmt: skip
        finally:
            _KEEP_DIR.reset(keep)
        if "error" in jit:
            return ProbeResult({"jit": jit}, "partial", str(jit["error"]))
        return ProbeResult({"jit": jit})
