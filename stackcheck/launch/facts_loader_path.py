"""`gate --facts FILE -- env LD_LIBRARY_PATH=/x python -m sglang.launch_server ...`: a saved report's `cuda_libs` are
the loader's answers for the LD_LIBRARY_PATH the report was taken with. A launch whose own prefix sets, clears or
changes that variable (its `env NAME=VALUE`, `env -i`, `env -u`, a shell string's `export`) makes the server's loader
search other directories, which the facts never read: a library reachable only through them was called missing, and
one they shadow (an older libcudart.so.12 in /x) was judged by the facts' copy (a false pass).

glibc's loader searches, for a library whose requesting object has no DT_RUNPATH, the executable's DT_RPATH, then
LD_LIBRARY_PATH's directories in order, then the ld.so cache, then the default directories, and the first directory
that holds the name ends the search (elf/dl-load.c _dl_map_object: the rpath, env_path_list, the cache, the system
directories, in that order; the probe's model, stackcheck/probes/cudalibs.py). So, from the facts alone:

- a library the facts found through the interpreter's DT_RPATH is found there again (it comes before LD_LIBRARY_PATH);
- where the facts record the directories they searched (`cuda_libs.ld_library_path`, from igap43 on): the launch's
  directories equal to them change nothing; a library found in one of them is found there again where the launch's
  list reaches that directory through the facts' own earlier directories only (those held no copy, or one passed
  over); one found past them (the cache, the default directories) is found again where every launch directory is one
  of the facts'; everything else is not known;
- where the facts do not record them, any change the launch makes is not known.

What is not known becomes unknown with its reason (`cuda_libs.unreadable`, which every reader of the section judges
unknown), never the facts' answer."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

#: stands for the report's own LD_LIBRARY_PATH where the facts do not record it (no launch sets it to this value)
_UNRECORDED = "\x00the facts' own LD_LIBRARY_PATH\x00"


def _dirs(value: str | None, cwd: str | None = None) -> list[str]:
    """The directories of an LD_LIBRARY_PATH value as the loader searches them (stackcheck.readers.ldpath.
    ld_library_path, the probes' own reading: ':' and ';', an empty or relative element from the launch directory
    `cwd`), ending with the first element not placed (relative with `cwd` not known, or naming $ORIGIN / $LIB /
    $PLATFORM) as written: no facts directory is that element, so no answer is taken past it (_same_answer)."""
    from stackcheck.readers.ldpath import ld_library_path

    placed, unplaced = ld_library_path(value, cwd)
    return placed if unplaced is None else [*placed, unplaced]


def launch_loader_path(
    command: Sequence[str],
    mapping: Mapping[str, Any],
    facts_dirs: list[str] | None,
    cwd: str | None = None,
    policy: list[str] | None = None,
) -> tuple[list[str] | None, bool]:
    """(the LD_LIBRARY_PATH directories the launch's server starts with, None where the facts' own, unrecorded, are
    kept; whether the launch changes the variable), with the command's env prefix and shell string applied to an
    environment whose LD_LIBRARY_PATH is the facts' (`facts_dirs`; None: not recorded). `cwd`: the launch directory
    where known (gate --cwd), from which a relative or empty element is read (_dirs). A launch behind a program
    that rebuilds the environment by a policy of its own (gate.ENV_POLICY: sudo, doas, pkexec) has an LD_LIBRARY_PATH
    not known: (None, True), the program's name added to `policy`."""
    from stackcheck.launch import gate

    base = ":".join(facts_dirs) if facts_dirs is not None else _UNRECORDED
    argv, prefixed = gate.split_env_prefix(command, {"LD_LIBRARY_PATH": base})
    trace: dict[str, Any] = {}
    env = gate.find_launch(argv, mapping, prefixed, trace)[2]
    if trace.get("env_policy"):  # (behind sudo: the server's environment is the policy's, not known: irobust4)
        if policy is not None:
            policy.extend(trace["env_policy"])
        return None, True
    value = env.get("LD_LIBRARY_PATH")
    if facts_dirs is None:
        if value == _UNRECORDED:
            return None, False
        if value is not None and _UNRECORDED in value:  # (`LD_LIBRARY_PATH=/x:$LD_LIBRARY_PATH`: the facts' and more)
            return None, True
        return _dirs(value, cwd), True
    launch = _dirs(value, cwd)
    return launch, launch != facts_dirs


def _same_answer(found: str | None, launch: list[str], facts_dirs: list[str]) -> bool:
    """Whether the loader's answer the facts give (`found`, found past any DT_RPATH) holds for the launch's
    directories too (see the module docstring)."""
    if found is None:
        return False  # (a file that is no library may have ended the search in a directory the launch drops)
    where = posixpath.dirname(found)
    if where not in facts_dirs:  # found in the cache or a default directory: no facts directory ended the search
        return all(d in facts_dirs for d in launch)
    if where not in launch:
        return False
    earlier = set(facts_dirs[: facts_dirs.index(where)])
    return all(d in earlier for d in launch[: launch.index(where)])


def apply_launch_loader_path(
    facts: dict[str, Any], command: Sequence[str], mapping: Mapping[str, Any], cwd: str | None = None
) -> list[str]:
    """Make the facts' loader answers that the launch's own LD_LIBRARY_PATH may change unknown, each with its reason;
    the `cuda_libs` sonames made so. Nothing where the launch leaves the variable as the facts had it. `cwd`: the
    launch directory where known (gate --cwd). A section changed is replaced by a changed copy (the facts file's own
    dictionaries are left as read: the gate cache's digest is the file's): `cuda_libs` (each library, as the module
    docstring says), and the answers read with the same loader path (igap45, issue 16): the --deep `libs` section
    (every library's resolution, reported as one unknown: _launch_libs), the kernel symbol section's driver half
    (the libcuda.so.1 read: _launch_kernel_symbols) and the jit section's bare SGLANG_NCCL_SO_PATH name (the loader's
    copy, whose directory the facts do not record: _launch_nccl_bare_name)."""
    _launch_jit_env(facts, command, mapping)
    libs = facts.get("cuda_libs")
    recorded = libs.get("ld_library_path") if isinstance(libs, dict) else None
    facts_dirs = [str(d) for d in recorded] if isinstance(recorded, list) else None
    policy: list[str] = []
    launch, changed = launch_loader_path(command, mapping, facts_dirs, cwd, policy)
    preloaded = _launch_preload(command, mapping)
    if not changed:
        return _preload_unknown(facts, preloaded) if preloaded else []
    shown = ":".join(launch) if launch is not None else "the facts' own with more"
    was = ":".join(facts_dirs) if facts_dirs is not None else "not recorded in the facts"
    sets = f"the launch sets LD_LIBRARY_PATH ({shown or 'empty'}), and the facts' loader path ({was}) is another"
    for program in policy[:1]:  # (irobust4)
        sets = (f"the launch runs behind `{program}`, whose environment (LD_LIBRARY_PATH included) is a policy's "
                f"the gate does not read, and the facts' loader path ({was}) may not be the server's")  # fmt: skip
    unknown = _loader_path_changed(facts, launch, facts_dirs, sets)
    if preloaded:  # (a preloaded library comes before the interpreter's DT_RPATH too)
        unknown += [s for s in _preload_unknown(facts, preloaded) if s not in unknown]
    return unknown


def _loader_path_changed(
    facts: dict[str, Any], launch: list[str] | None, facts_dirs: list[str] | None, sets: str
) -> list[str]:
    """The facts' loader answers the launch's directories `launch` (None: not known) may change made unknown with
    `sets`, the reason (apply_launch_loader_path); the `cuda_libs` sonames made so."""
    _launch_libs(facts, sets)
    _launch_kernel_symbols(facts, sets, launch, facts_dirs)
    _launch_nccl_bare_name(facts, sets)
    libs = facts.get("cuda_libs")
    if not isinstance(libs, dict):
        return []
    unread = libs.get("unreadable")  # (another type than a mapping: none recorded, as every reader takes it)
    libs = facts["cuda_libs"] = {**libs, "unreadable": dict(unread) if isinstance(unread, dict) else {}}
    own = libs.get("interpreter_rpath")
    dirs = own.get("dirs") if isinstance(own, dict) else None  # (a list, or none: a string's letters are no dirs)
    rpath = {d.rstrip("/") or "/" for d in dirs if isinstance(d, str)} if isinstance(dirs, list) else set()
    unknown: list[str] = []
    unreadable = libs["unreadable"]
    for soname, found in list(libs.items()):
        if not (soname.startswith("lib") and ".so" in soname):
            continue
        if soname in unreadable:
            continue
        path = found if isinstance(found, str) else None
        if path is not None and posixpath.dirname(path) in rpath:
            continue  # (the interpreter's DT_RPATH comes before LD_LIBRARY_PATH)
        if launch is not None and facts_dirs is not None and _same_answer(path, launch, facts_dirs):
            continue
        libs[soname] = None
        unreadable[soname] = f"{sets}: where the server's loader finds it is not known from the facts"
        unknown.append(soname)
    if not unreadable:
        del libs["unreadable"]
    return unknown


def apply_launch_env_unread(
    facts: dict[str, Any], probed: Mapping[str, str], launch: Mapping[str, str], cwd: str | None = None
) -> list[str]:
    """A gate that probes its box (this host, --root, --image) reads the loader's path and the JIT toolchain with the
    environment assembly.target.command_environment gives the launch (`probed`: the command's env / nohup wrappers,
    an env behind a launcher), which a shell string's own words before the launch are not in (`bash -c "export
    LD_LIBRARY_PATH=/opt/x:$LD_LIBRARY_PATH && python -m sglang.launch_server ..."`); `launch` is the environment the
    gate's find_launch reads for the launch itself. Where the two differ (irev70: the probes' answers were taken for
    the server's), the answers read with the variable are unknown as under gate --facts: LD_LIBRARY_PATH (the loader
    answers whose directory the launch's, from `cwd`, may change: _loader_path_changed), LD_PRELOAD (_preload_unknown),
    a JIT_ENV variable (the jit section, as _launch_jit_env). The `cuda_libs` sonames made unknown."""
    jit_names = [name for name in JIT_ENV if probed.get(name) != launch.get(name)]
    cubin_names = [name for name in CUBIN_ENV if probed.get(name) != launch.get(name)]
    if cubin_names and "flashinfer_cubins" in facts:
        facts["flashinfer_cubins"] = {"error": _cubins_unread(cubin_names)}
    if jit_names:
        why = f"the launch's own words set {', '.join(jit_names)} (a shell string before it), and the JIT toolchain "
        facts["jit"] = {"error": why + "was probed without them: what a JIT build runs there is not known"}
        from stackcheck.launch.facts_toolkit_env import forget_build_choice

        moved = [n for n in ("CUDA_HOME", "CUDA_PATH") if n in jit_names]
        if moved or ("PATH" in jit_names and not (launch.get("CUDA_HOME") or launch.get("CUDA_PATH"))):
            forget_build_choice(facts)  # (the toolkits probe's build choice was read without them too: imend5)
    unknown: list[str] = []
    value = launch.get("LD_PRELOAD")
    if value != probed.get("LD_PRELOAD") and value:
        unknown += _preload_unknown(facts, [w for w in value.replace(":", " ").split(" ") if w])
    if probed.get("LD_LIBRARY_PATH") == launch.get("LD_LIBRARY_PATH"):
        return unknown
    libs = facts.get("cuda_libs")
    recorded = libs.get("ld_library_path") if isinstance(libs, dict) else None
    facts_dirs = [str(d) for d in recorded] if isinstance(recorded, list) else None
    dirs = _dirs(launch.get("LD_LIBRARY_PATH"), cwd)
    if facts_dirs is not None and dirs == facts_dirs:
        return unknown
    was = ":".join(facts_dirs) if facts_dirs is not None else "not recorded"
    sets = (f"the launch's own words set LD_LIBRARY_PATH ({':'.join(dirs) or 'empty'}; a shell string before it), and "
            f"the loader's path was probed without them ({was})")  # fmt: skip
    return unknown + [s for s in _loader_path_changed(facts, dirs, facts_dirs, sets) if s not in unknown]


#: the variables the jit probe reads to find what a JIT build runs (stackcheck/probes/jit.py and toolkits.py: the
#: toolkit from CUDA_HOME / CUDA_PATH / the nvcc on PATH as torch's _find_cuda_home; the host compiler from CXX / CC /
#: NVCC_CCBIN / NVCC_*_FLAGS and PATH, GCC's own lookup from COMPILER_PATH / GCC_EXEC_PREFIX / LIBRARY_PATH; the
#: ptxas Triton runs; the NCCL SGLang opens; PYTORCH_NVCC; FlashInfer's FLASHINFER_NVCC / FLASHINFER_EXTRA_CUDAFLAGS
#: (probes/jit.py FLASHINFER_NVCC_ENV, FLASHINFER_CUDAFLAGS_ENV) and the include directories of the header search
#: (CUDA_INC_PATH, CUDNN_HOME / CUDNN_PATH, CPATH, CPLUS_INCLUDE_PATH: probes/jit.py's include path; imend5), and
#: SGL_NCCL_SO_PATH, which SGLang 0.5.3rc2+ copies over SGLANG_NCCL_SO_PATH (facts/sgl_prefix.py; irev73)
JIT_ENV = (
    "CUDA_HOME", "CUDA_PATH", "PATH", "CXX", "CC", "NVCC_CCBIN", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS",
    "PYTORCH_NVCC", "TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "SGLANG_NCCL_SO_PATH", "LIBRARY_PATH",
    "COMPILER_PATH", "GCC_EXEC_PREFIX", "FLASHINFER_NVCC", "FLASHINFER_EXTRA_CUDAFLAGS", "CUDA_INC_PATH",
    "CUDNN_HOME", "CUDNN_PATH", "CPATH", "CPLUS_INCLUDE_PATH", "SGL_NCCL_SO_PATH",
)  # fmt: skip


#: the variables the flashinfer_cubins probe reads (stackcheck/probes/flashinfer_cubins.py: the cubin directory from
#: FLASHINFER_CUBIN_DIR / FLASHINFER_WORKSPACE_BASE / HOME, whether a mismatched flashinfer-cubin is taken, whether a
#: download is refused or copied from a local repository; SGLANG_CACHE_DIR / SGL_CACHE_DIR, where SGLang 0.5.18+ points
#: FLASHINFER_WORKSPACE_BASE: ifc62): a launch that sets one the facts were not read with makes the section unknown
#: (icubin1)
CUBIN_ENV = (
    "FLASHINFER_CUBIN_DIR", "FLASHINFER_WORKSPACE_BASE", "HOME", "FLASHINFER_NO_DOWNLOAD",
    "FLASHINFER_CUBINS_REPOSITORY", "FLASHINFER_DISABLE_VERSION_CHECK", "FLASHINFER_CUBIN_CHECKSUM_DISABLED",
    "SGLANG_CACHE_DIR", "SGL_CACHE_DIR",
)  # fmt: skip


def _cubins_unread(names: Sequence[str]) -> str:
    return (f"the launch sets {', '.join(names)} itself, and FlashInfer's cubin directory was read with the facts' "
            "own environment: which cubins the server finds is not known from the facts")  # fmt: skip


def _launch_jit_env(facts: dict[str, Any], command: Sequence[str], mapping: Mapping[str, Any]) -> None:
    """The jit section was read with the facts' own environment; a launch whose own words set, clear or change one of
    JIT_ENV (`env CUDA_HOME=/opt/cuda-11.8`, `env -i`, a shell string's `export PATH=...`) builds with a toolkit, a
    compiler or a library the facts never read: the section is replaced by one that says so (`error`: every rule on
    it is unknown, never the facts' answer; a section the facts lack too, whose rules are else read from their
    cuda_toolkits) (irobust4: before, gate --facts judged such a launch on the facts' toolkit, jit-toolchain ok)."""
    from stackcheck.launch import gate

    base = {name: f"\x00{name}\x00" for name in (*JIT_ENV, *CUBIN_ENV)}  # (a value no launch writes: the facts' own)
    system = facts.get("system")
    recorded = system.get("env") if isinstance(system, dict) else None
    for name, value in recorded.items() if isinstance(recorded, dict) else ():
        if name in base and isinstance(value, str):  # (the facts' own value, where they record it)
            base[name] = value
    jit = facts.get("jit")
    if isinstance(jit, dict) and isinstance(jit.get("nccl_so_path"), str):
        base["SGLANG_NCCL_SO_PATH"] = jit["nccl_so_path"]
    ptxas = jit.get("triton_ptxas") if isinstance(jit, dict) else None
    for name, read in ptxas.items() if isinstance(ptxas, dict) else ():
        if name in base and isinstance(read, dict) and isinstance(read.get("path"), str):
            base[name] = read["path"]
    argv, prefixed = gate.split_env_prefix(command, base)
    env = gate.find_launch(argv, mapping, prefixed)[2]
    changed = [name for name in JIT_ENV if env.get(name) != base[name]]
    cubin_changed = [name for name in CUBIN_ENV if env.get(name) != base[name]]
    if cubin_changed and "flashinfer_cubins" in facts:
        facts["flashinfer_cubins"] = {"error": _cubins_unread(cubin_changed)}
    home = next((env[n] for n in ("CUDA_HOME", "CUDA_PATH") if env.get(n) and env[n] != f"\x00{n}\x00"), None)
    from stackcheck.launch.facts_toolkit_env import names_chosen_toolkit

    if names_chosen_toolkit(home, jit):
        # (CUDA_HOME / CUDA_PATH naming the toolkit the facts' JIT reading chose: the same build, as
        # facts_toolkit_env.apply_launch_toolkit_env reads it (ifc49); the other variables still count)
        changed = [name for name in changed if name not in ("CUDA_HOME", "CUDA_PATH")]
    if changed:
        facts["jit"] = {"error": f"the launch sets {', '.join(changed)} itself, and the facts' JIT toolchain was "
                        "read with their own: what a JIT build runs there is not known from the facts"}  # fmt: skip


def _launch_preload(command: Sequence[str], mapping: Mapping[str, Any]) -> list[str]:
    """The LD_PRELOAD entries the launch's own words set (an `env` prefix, a shell string's export), split as glibc
    splits the variable: at spaces and colons (elf/rtld.c handle_preload_list: strcspn (p, " :")); [] where the
    launch leaves the variable as it was. A preloaded object is loaded before the program's own dependencies, and a
    later request for its soname is answered by it (elf/dl-load.c _dl_map_object: a loaded object whose name or
    soname matches ends the search before any directory): a loader answer the facts never saw (irobust4)."""
    from stackcheck.launch import gate

    argv, prefixed = gate.split_env_prefix(command, {"LD_PRELOAD": _UNRECORDED})
    value = gate.find_launch(argv, mapping, prefixed)[2].get("LD_PRELOAD")
    if value is None or value == _UNRECORDED:
        return []
    return [w for w in value.replace(_UNRECORDED, " ").replace(":", " ").split(" ") if w]


def _preload_unknown(facts: dict[str, Any], preloaded: list[str]) -> list[str]:
    """Each `cuda_libs` soname a launch's LD_PRELOAD entry may be (its file name starts with the soname's `libX.so`;
    an entry not named `lib*.so*` may be any library: every soname) made unknown with the reason; the sonames made
    so. The file's own soname is not read from the facts, so its name stands for it (inferred)."""
    names = [posixpath.basename(p) for p in preloaded]
    anything = any(not (n.startswith("lib") and ".so" in n) for n in names)
    driver = [p for p, n in zip(preloaded, names, strict=True) if anything or n.startswith("libcuda.so")]
    if driver:  # (the kernel symbol section's driver half was read in the facts' libcuda.so.1)
        _launch_kernel_symbols(facts, f"the launch preloads {driver[0][:120]!r} (LD_PRELOAD)", None, None)
    libs = facts.get("cuda_libs")
    if not isinstance(libs, dict):
        return []
    unread = libs.get("unreadable")
    out = {**libs, "unreadable": dict(unread) if isinstance(unread, dict) else {}}
    unknown: list[str] = []
    for soname, found in libs.items():
        if not (soname.startswith("lib") and ".so" in soname) or soname in out["unreadable"]:
            continue
        stem = soname[: soname.index(".so") + 3]
        hit = [p for p, n in zip(preloaded, names, strict=True) if anything or n.startswith(stem)]
        if not hit:
            continue
        out[soname] = None
        out["unreadable"][soname] = (
            f"the launch preloads {hit[0][:120]!r} (LD_PRELOAD), loaded before the program's libraries and the "
            f"loader's answer for {soname} where it is that library (by its file name, inferred): the facts' answer "
            f"{found!r} is not known to be the server's"
        )
        unknown.append(soname)
    if unknown:
        facts["cuda_libs"] = out
    return unknown


def _launch_libs(facts: dict[str, Any], sets: str) -> None:
    """The --deep `libs` section read with the facts' loader path: each object's libraries were resolved through it
    (readers/libs.py resolve_object: an object's DT_RPATH, LD_LIBRARY_PATH, its DT_RUNPATH, the cache, the default
    directories) and its warnings and version failures follow from those answers, which the section does not keep
    per directory searched: the whole section is unknown (`launch_loader_path`, which check shared-libs reports)."""
    section = facts.get("libs")
    if isinstance(section, dict):
        facts["libs"] = {**section, "launch_loader_path": f"{sets}: which copy each library resolves to is not "
                         "known from the facts' --deep resolution"}  # fmt: skip


def _launch_kernel_symbols(
    facts: dict[str, Any], sets: str, launch: list[str] | None, facts_dirs: list[str] | None
) -> None:
    """The kernel symbol section's driver half read in the libcuda.so.1 the facts' loader path gave (its
    `libcuda`): where the launch's directories can be told to give the same copy (_same_answer), it stands; else
    each file's driver answer becomes `driver_error` with the reason (the driver half then decides nothing, and the
    release-number checks decide, as for a libcuda not read)."""
    section = facts.get("kernel_symbols")
    if not isinstance(section, dict):
        return
    found = section.get("libcuda")
    if not isinstance(found, str):
        return
    if launch is not None and facts_dirs is not None and _same_answer(found, launch, facts_dirs):
        return
    why = f"{sets}: the libcuda.so.1 the server's loader finds may not be {found}, which was read"
    changed = dict(section)
    for key in ("files", "modules", "extensions"):
        entries = section.get(key)
        if isinstance(entries, list):
            changed[key] = [_driver_unknown(e, why) for e in entries]
    facts["kernel_symbols"] = changed


def _driver_unknown(entry: Any, why: str) -> Any:
    """An entry of the kernel symbol section with its driver answer replaced by `driver_error`."""
    if not isinstance(entry, dict) or not any(k in entry for k in ("driver_missing_count", "driver_error")):
        return entry
    out = {k: v for k, v in entry.items() if k not in ("driver_missing_count", "driver_missing")}
    out["driver_error"] = why
    return out


#: the jit keys the bare-name lookup of SGLANG_NCCL_SO_PATH reads in the loader's copy (jit._nccl_so_path_bare_name)
_NCCL_READ = (
    "nccl_so_path_init_config",
    "nccl_so_path_window",
    "nccl_so_path_mem_alloc",
    "nccl_so_path_version",
    "nccl_so_path_version_reason",
    "nccl_so_path_cuda",
    "nccl_so_path_cuda_major",
)


def _launch_nccl_bare_name(facts: dict[str, Any], sets: str) -> None:
    """SGLANG_NCCL_SO_PATH given as a bare name other than libnccl.so.2 (the jit probe looked it up as the loader
    does, through LD_LIBRARY_PATH: jit._nccl_so_path_bare_name): the copy it read is not recorded, so under another
    loader path the name is not found nor read (nccl_so_path_found null, with the reason: rule
    nccl-so-path-cuda-unread says unknown where a group of ranks opens it)."""
    jit = facts.get("jit")
    value = jit.get("nccl_so_path") if isinstance(jit, dict) else None
    if not isinstance(jit, dict) or not isinstance(value, str) or not value or "/" in value or value == "libnccl.so.2":
        return
    if jit.get("nccl_so_path_found") is None and "nccl_so_path_reason" in jit:
        return  # (not found or not read already)
    out = {k: v for k, v in jit.items() if k not in _NCCL_READ}
    out["nccl_so_path_found"] = None
    out["nccl_so_path_reason"] = f"{sets}: which file the loader finds for {value[:120]!r} is not known from the facts"
    facts["jit"] = out
