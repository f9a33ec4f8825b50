"""Verdict reasons from the kernel symbol probe (facts.kernel_symbols, stackcheck/readers/kernelsymbols.py):
the builtin halves of the checks sgl-kernel-torch-abi and driver-api.

Each function returns None when the facts do not decide (no section, or no file of it was judged): the
release-number path (components.json pins, the driver-api rules) then decides as it did before the probe."""

from __future__ import annotations

from collections.abc import Mapping

from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.types import Reason

SOURCE = "ELF-DYNSYM"
#: the CUDA runtime majors of an extension and of torch, read in the wheels (2026-12-05, readelf -d / METADATA)
CUDART_SOURCE: list[Any] = [
    "ELF-DYNSYM",
    {
        "title": "lmcache 0.4.3 wheel, lmcache/c_ops.cpython-312-x86_64-linux-gnu.so: DT_NEEDED libcudart.so.12, no "
        "RUNPATH (readelf -d); torch 2.11.0 cp312 manylinux wheel: METADATA Requires-Dist cuda-toolkit[cudart,...]"
        "==13.0.2, torch/lib/libtorch_cuda.so DT_NEEDED libcudart.so.13 (read 2026-12-05)",
        "url": "https://pypi.org/project/lmcache/0.4.3/",
    },
]


def _section(ctx: Context) -> Mapping[str, Any] | None:
    ks = ctx.facts.get("kernel_symbols")
    if not isinstance(ks, Mapping) or ks.get("error") or not isinstance(ks.get("files"), list):
        return None
    return ks


def _files(ks: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [f for f in ks["files"] if isinstance(f, Mapping)]


def _torch_symbols_reason(entry: Mapping[str, Any], path: Any, torch: Any, effect: str, failed: str) -> Reason:
    """Rule torch-symbols' reason for one library read against torch (a kernel package's common_ops, another
    package's extension): fail with `failed` where some torch symbol it needs is missing, else pass."""
    count = entry.get("torch_missing_count")
    total = entry.get("torch_symbols")
    base: Reason = {
        "rule": "torch-symbols",
        "requirement": f"every torch symbol {path} needs is exported by torch's libraries",
        "observed": f"{count} of {total} missing",
        "required": "0 missing",
        "effect": effect,
        "source": SOURCE,
    }
    if count:
        return {**base, "result": "fail", "message": failed}
    libs = ", ".join(entry.get("torch_libs") or []) or "libraries"
    message = (
        f"all {total} torch symbols of {path} resolve in torch {torch}'s {libs}"
        if total
        else f"{path} needs no symbol of torch's C++ API"
    )
    return {**base, "result": "pass", "message": message}


def _shown(names: Any) -> str:
    from stackcheck.readers.kernelsymbols import readable

    listed = [n for n in names if isinstance(n, str)][:2] if isinstance(names, list) else []
    return ", ".join(f"{readable(n)} ({n})" if readable(n) != n else n for n in listed)


def _modules(ks: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    """The lazily imported modules (facts.kernel_symbols.modules) with a positive `key` count."""
    mods = ks.get("modules")
    if not isinstance(mods, list):
        return []
    return [m for m in mods if isinstance(m, Mapping) and isinstance(m.get(key), int) and m[key] > 0]


def _module_reason(pkg: str, m: Mapping[str, Any], rule: str, what: str, provider: str) -> Reason:
    """A degraded failure: a module only the feature that uses it imports (import sgl_kernel itself succeeds)."""
    kind = "torch" if rule == "torch-symbols" else "driver"
    count = int(m[f"{kind}_missing_count"])
    missing = m.get(f"{kind}_missing") or []
    first = missing[0] if missing else "?"
    return {
        "rule": rule,
        "result": "fail",
        "effect": "degraded",
        "requirement": f"every {what} {m.get('path')} needs is exported",
        "observed": f"{count} of {m.get(f'{kind}_symbols')} missing",
        "required": "0 missing",
        "source": SOURCE,
        "message": f"{pkg}'s {m.get('path')} needs {count} {what}{'s' if count > 1 else ''} that "
        f"{provider} does not export ({_shown(missing)}): "
        f"sgl_kernel.{m.get('module')} is imported only by the feature that uses it, which then fails with "
        f"'undefined symbol: {first}'; importing sgl_kernel itself succeeds",
    }


def _package(ks: Mapping[str, Any]) -> str:
    from stackcheck.facts.model import KERNEL_PACKAGES

    name = str(ks.get("package") or KERNEL_PACKAGES[0])
    version = ks.get("version")
    return f"{name} {version}" if isinstance(version, str) and version else f"{name} (version unknown)"


def torch_abi_reasons(ctx: Context) -> list[Reason] | None:
    """A failing reason per common_ops file that needs a torch symbol torch's libraries do not export; a pass
    when every judged file resolves; None when no file was judged (the release pins decide)."""
    ks = _section(ctx)
    if ks is None:
        return None
    files = _files(ks)
    judged = [f for f in files if isinstance(f.get("torch_missing_count"), int)]
    if not judged:
        return None
    torch = ks.get("torch_version") or ctx.installed_version("torch") or "(version unknown)"
    pkg = _package(ks)
    reasons: list[Reason] = []
    for f in judged:
        count = int(f["torch_missing_count"])
        missing = f.get("torch_missing") or []
        first = missing[0] if missing else "?"
        failed = (
            f"{pkg}'s {f.get('path')} needs {count} symbol{'s' if count > 1 else ''} of torch's "
            f"C++ API that torch {torch} does not export ({_shown(missing)}): importing sgl_kernel fails "
            f"with 'undefined symbol: {first}'; the kernel package was built against another torch"
        )
        reasons.append(_torch_symbols_reason(f, f.get("path"), torch, "crash", failed))
    for f in files:
        why = f.get("error") or f.get("torch_error")
        if why and f not in judged:
            reasons.append({"rule": "torch-symbols", "result": "unknown", "message": f"{f.get('path')}: {why}"})
    mods = _modules(ks, "torch_missing_count")
    reasons += [_module_reason(pkg, m, "torch-symbols", "torch symbol", f"torch {torch}") for m in mods]
    skipped = ks.get("files_skipped")
    if isinstance(skipped, int) and skipped > 0:
        reasons.append(
            {
                "rule": "torch-symbols",
                "result": "unknown",
                "message": f"{skipped} more common_ops librar{'ies' if skipped > 1 else 'y'} of {pkg} not read "
                "(past the probe's limit): one of them may be the copy that loads here",
            }
        )
    return reasons


def _driver_read(ctx: Context) -> Mapping[str, Any] | None:
    """The section when the driver's own libcuda.so.1 was read for at least one file (not for an assumed or
    planned driver, whose library is not the one read)."""
    driver = ctx.facts.get("driver")
    if isinstance(driver, Mapping) and driver.get("source") in ("assumed", "plan"):
        return None
    ks = _section(ctx)
    if ks is None or not any(isinstance(f.get("driver_missing_count"), int) for f in _files(ks)):
        return None
    return ks


def driver_symbols_decide(ctx: Context) -> bool:
    """Whether the probe's driver half decides driver-api alone: the driver's libcuda.so.1 was read for every
    common_ops file the package ships (one left unread, or past MAX_FILES, may be the copy that loads: the
    release-number rule then decides as well)."""
    ks = _driver_read(ctx)
    if ks is None or ks.get("files_skipped"):
        return False
    files = _files(ks)
    return len(files) == len(ks["files"]) and all(isinstance(f.get("driver_missing_count"), int) for f in files)


def driver_api_reasons(ctx: Context) -> list[Reason]:
    """A failing reason per common_ops file that calls a driver API function the driver's libcuda.so.1 does
    not export; a pass otherwise where the driver half decides (only the failures where it read some files but
    not all: the release-number rule decides the rest; [] without a driver half)."""
    if _driver_read(ctx) is None:
        return []
    decides = driver_symbols_decide(ctx)
    ks = _section(ctx)
    assert ks is not None
    driver = ctx.facts.get("driver")
    version = driver.get("version") if isinstance(driver, Mapping) else None
    where = f"driver {version}" if isinstance(version, str) and version else "the driver"
    lib = ks.get("libcuda") or "libcuda.so.1"
    pkg = _package(ks)
    reasons: list[Reason] = []
    for f in _files(ks):
        if not isinstance(f.get("driver_missing_count"), int):
            continue
        count = int(f["driver_missing_count"])
        base: Reason = {
            "rule": "driver-symbols",
            "requirement": f"every CUDA driver API function {f.get('path')} calls is exported by {lib}",
            "observed": f"{count} of {f.get('driver_symbols')} missing",
            "required": "0 missing",
            "effect": "crash",
            "source": SOURCE,
        }
        if count:
            missing = f.get("driver_missing") or []
            first = missing[0] if missing else "?"
            reasons.append(
                {
                    **base,
                    "result": "fail",
                    "message": f"{pkg}'s {f.get('path')} calls {count} CUDA driver API function"
                    f"{'s' if count > 1 else ''} that {where} ({lib}) does not export ({_shown(missing)}): "
                    f"importing sgl_kernel fails with 'undefined symbol: {first}'; the driver is too old, "
                    "torch's ABI is not the problem",
                }
            )
        elif decides:
            reasons.append(
                {
                    **base,
                    "result": "pass",
                    "message": f"all {f.get('driver_symbols')} driver API functions of {f.get('path')} are "
                    f"exported by {where} ({lib})"
                    if f.get("driver_symbols")
                    else f"{f.get('path')} calls no CUDA driver API function directly",
                }
            )
    mods = _modules(ks, "driver_missing_count")
    reasons += [_module_reason(pkg, m, "driver-symbols", "CUDA driver API function", f"{where} ({lib})") for m in mods]
    return reasons


def _cuda_runtime_reasons(ctx: Context, e: Mapping[str, Any], ext: str, path: str) -> list[Reason]:
    """The CUDA runtime an extension links by major (DT_NEEDED libcudart.so.N, `cuda_runtime`) against the CUDA
    torch is built with: the same major is torch's own runtime, loaded before the extension (a pass); another
    (LMCache 0.4.3's c_ops links libcudart.so.12, torch 2.11.0 from PyPI is built with CUDA 13.0 and brings
    libcudart.so.13) loads only where the loader finds a CUDA N runtime on its own path, which the facts do not
    say: unknown, as 'libcudart.so.12: cannot open shared object file' is what the import raises otherwise.
    Nothing where the file links none, or torch's CUDA is not known."""
    names = [n for n in e.get("cuda_runtime") or [] if isinstance(n, str)]
    torch = ctx.package("torch") or {}
    cuda = str(torch.get("cuda") or "")
    major = cuda.split(".", 1)[0]
    if not names or not major.isdigit():
        return []
    out: list[Reason] = []
    for name in names:
        want = name.rsplit(".", 1)[-1]
        base: Reason = {
            "rule": "cuda-runtime",
            "requirement": f"the CUDA runtime {path} links ({name}) is the one torch brings",
            "observed": f"{name}; torch built with CUDA {cuda}",
            "required": f"libcudart.so.{major}",
            "source": CUDART_SOURCE,
        }
        if want == major:
            out.append({**base, "result": "pass", "message": f"{path} links {name}, torch's own CUDA {major} runtime"})
        else:
            out.append(
                {
                    **base,
                    "result": "unknown",
                    "message": f"{ext}'s {path} links {name} (built with CUDA {want}), but torch is built with CUDA "
                    f"{cuda} and brings libcudart.so.{major}: the import loads it only where the loader finds a "
                    f"CUDA {want} runtime on its own path (LD_LIBRARY_PATH, ld.so.cache), which was not read; "
                    f"otherwise it fails with '{name}: cannot open shared object file'. Install the release of "
                    f"{ext} built with CUDA {major}, or a torch built with CUDA {want}",
                }
            )
    return out


def _loads_here(ctx: Context, spec: Mapping[str, Any]) -> bool:
    """Whether this launch imports the check's extension: its flag (the spec's launch fact) is set, or the installed
    SGLang imports it on every launch (every_launch_releases)."""
    fact = spec.get("launch_fact")
    if isinstance(fact, str) and ctx.launch.get(fact):
        return True
    every = spec.get("every_launch_releases")
    if not isinstance(every, str):
        return not isinstance(fact, str)
    from stackcheck.facts.versions import version_in

    sglang = ctx.installed_version("sglang")
    return sglang is not None and version_in(sglang, every) is True


#: a torch release as release_symbol_reasons judges it (a local tag allowed; a nightly or rc of a minor may predate
#: the change the table records)
_TORCH_RELEASE = _lazy(r"\d{1,9}\.\d{1,9}\.\d{1,9}(\+[\w.]{1,64})?")


def release_symbol_reasons(
    ctx: Context, spec: Mapping[str, Any], unread: str = "no kernel symbol section"
) -> list[Reason]:
    """Rule release-symbols from the installed versions alone, where no file of the extension was read (the spec's
    release_symbols table, read in the PyPI wheels): a failing reason where the installed release needs a torch
    symbol that the installed torch's minor exports another form of; [] otherwise (a release or a torch minor the
    table does not list, or the same symbol: only that one symbol was compared, so that is no pass). `unread` says
    why no file was read (no section; or, irev61, the section found the module's files and read none of them)."""
    table = spec.get("release_symbols")
    if not isinstance(table, Mapping):
        return []
    from stackcheck.facts.versions import minor_of

    package = str(table.get("package") or "")
    installed, torch = ctx.installed_version(package), ctx.installed_version("torch")
    if installed is None or torch is None:
        return []
    releases, exports = table.get("releases") or {}, table.get("torch_exports") or {}
    names = table.get("symbols") or {}
    release = installed.split("+", 1)[0]
    minor = minor_of(torch) if _TORCH_RELEASE.fullmatch(torch) else None
    needed = releases.get(release) if isinstance(releases, Mapping) else None
    key = f"{minor[0]}.{minor[1]}" if minor is not None else None
    exported = exports.get(key) if isinstance(exports, Mapping) and key is not None else None
    if not isinstance(needed, str) or not isinstance(exported, str) or needed == exported:
        return []
    loads_here = _loads_here(ctx, spec)
    fact = spec.get("launch_fact")
    imports = str(spec.get("imports") or "the launch imports it")
    if not loads_here:
        imports += f"; no launch here loads it (launch.{fact} not set), so this is information only"
    effect = str(spec["effect"]) if spec.get("effect") in ("crash", "degraded", "disabled") else "crash"
    want, has = names.get(needed, needed), names.get(exported, exported)
    built = [v for v, s in releases.items() if s == exported]
    return [
        {
            "rule": "release-symbols",
            "result": "fail",
            "effect": effect if loads_here else "degraded",
            "requirement": f"the torch symbol {package} {release}'s PyPI wheel links is exported by torch {torch}",
            "observed": f"{package} {installed} ({needed}), torch {torch} (exports {exported}); no file read here",
            "required": f"torch exporting {needed}",
            "source": table.get("source") or SOURCE,
            "inferred": True,
            "message": f"{package} {installed}'s PyPI wheel has {table.get('module')}'s compiled c_ops built against "
            f"another torch: it needs {want} ({needed}), and torch {torch}'s libc10_cuda.so exports only {has} "
            f"({exported}), so loading it fails with 'undefined symbol: {needed}' ({imports}). No file of this "
            f"install was read ({unread}): this is inferred from the versions, and a local build of "
            f"{package} {release} compiled against this torch (pip install -e . from source) would load; the probe "
            f"on the box reads the real file. Install a {package} release built for torch {key} "
            f"({', '.join(built) or 'none read'}), or the torch it was built against",
        }
    ]


def extension_torch_abi_reasons(ctx: Context, spec: Mapping[str, Any]) -> list[Reason]:
    """Other packages' compiled torch extensions (facts.kernel_symbols.extensions) named by a check's `extension`
    spec (modules, effect, imports, launch_fact?, every_launch_releases?): a failing reason per file of those
    modules that needs a torch symbol torch's libraries do not export (the spec's effect; degraded, information,
    where the spec's launch fact is not set, an audit or a launch without the flag that loads it, unless the
    installed SGLang imports it on every launch), a pass per file that resolves, unknown per file not read; a
    pass when the probe looked and found none (unknown where this launch's flag loads it: absent, or where the
    probe did not look); [] (skipped) without a section that looked for extensions (an
    image, a hand-written or older facts document)."""
    fact = spec.get("launch_fact")
    value = ctx.launch.get(fact) if isinstance(fact, str) else None
    configs: list[Reason] = []
    if spec.get("configs") == "torchao" and isinstance(value, str) and value:
        # what the flag's value runs (stackcheck/verdicts/torchao_config.py), judged with or without the section
        from stackcheck.verdicts.torchao_config import torchao_config_reasons

        configs = torchao_config_reasons(ctx, value)
    ks = _section(ctx)
    if ks is None or not isinstance(ks.get("extension_dirs"), list):
        if spec.get("configs") == "torchao":  # no files read: the pairs the wheels were read to abort in
            from stackcheck.verdicts.torchao_gate import read_abort_reasons

            return read_abort_reasons(ctx, _loads_here(ctx, spec)) + configs
        return release_symbol_reasons(ctx, spec) + configs
    modules = [m for m in spec.get("modules") or [] if isinstance(m, str)]
    effect = str(spec["effect"]) if spec.get("effect") in ("crash", "degraded", "disabled") else "crash"
    imports = str(spec.get("imports") or "the launch imports it")
    flagged = isinstance(fact, str) and bool(ctx.launch.get(fact))  # this launch's flag loads it
    every = spec.get("every_launch_releases")  # SGLang releases that import it whatever the flag
    every_launch = False
    if isinstance(every, str):
        from stackcheck.facts.versions import version_in

        sglang = ctx.installed_version("sglang")
        if sglang is not None and version_in(sglang, every) is True:
            fact = None
            every_launch = True
            imports += f"; SGLang {sglang} imports it on every model load"
    if isinstance(fact, str) and not ctx.launch.get(fact):
        # the flag that loads it is not in this launch (an audit, or a gate of another command): information
        effect = "degraded"
        imports += f"; no launch here loads it (launch.{fact} not set), so this is information only"
    # a module whose own failure is milder than the check's (LMCache 0.5.4+'s cuda_ops, loaded inside a try)
    declared = spec.get("module_effects")
    own_effects: Mapping[str, Any] = declared if isinstance(declared, Mapping) else {}
    listed = ks.get("extensions")
    entries: list[Any] = listed if isinstance(listed, list) else []
    torch = ks.get("torch_version") or ctx.installed_version("torch") or "(version unknown)"
    reasons: list[Reason] = []
    extra: list[Reason] = []  # torchao's check: fbgemm-gpu-genai's library, judged where torchao loads it
    if spec.get("configs") == "torchao":
        from stackcheck.verdicts.torchao_gate import fbgemm_reasons

        fbgemm = [e for e in entries if isinstance(e, Mapping) and e.get("extension") == "fbgemm_gpu_genai"]
        version = str(ks.get("torch_version") or ctx.installed_version("torch") or "")
        extra = fbgemm_reasons(ctx, fbgemm, version, every_launch or flagged, spec.get("library_loads"))
        modules = [m for m in modules if m != "fbgemm_gpu_genai"]  # judged above, not as torchao's own
    table = spec.get("release_symbols")
    table_module = table.get("module") if isinstance(table, Mapping) else None
    table_files = {"found": 0, "read": 0}  # (the release table's module: its files found, and read)
    for e in entries:
        if not isinstance(e, Mapping) or e.get("extension") not in modules:
            continue
        ext, path = str(e.get("extension")), e.get("path")
        count = e.get("torch_missing_count")
        why = e.get("error") or e.get("torch_error")
        if ext == table_module:
            table_files["found"] += 1
            table_files["read"] += isinstance(count, int)
        if not isinstance(count, int):
            reasons.append(
                {"rule": "torch-symbols", "result": "unknown", "message": f"{ext}: {path}: {why or 'not read'}"}
            )
            continue
        own = own_effects.get(ext)
        if own != "degraded":  # a module loaded inside a try (cuda_ops) that fails to load only degrades
            reasons += _cuda_runtime_reasons(ctx, e, ext, str(path))
        missing = e.get("torch_missing") or []
        first = missing[0] if missing else "?"
        failed = (
            f"{ext}'s {path} needs {count} symbol{'s' if count > 1 else ''} of torch's C++ API "
            f"that torch {torch} does not export ({_shown(missing)}): loading it fails with 'undefined "
            f"symbol: {first}' ({imports}); the extension was built against another torch"
        )
        kind = "degraded" if effect == "degraded" or own == "degraded" else effect
        reasons.append(_torch_symbols_reason(e, path, torch, kind, failed))
    if table_files["found"] and not table_files["read"]:
        # (irev61) the module's files were found and none was read (over 1 GiB, not an ELF file, an error): where the
        # versions alone say the load fails, say so, not only unknown (a gate with --allow-unknown let it through)
        reasons += release_symbol_reasons(ctx, spec, f"the probe found {table_module}'s files and read none of them")
    if spec.get("configs") == "torchao" and reasons:
        # torchao's own __init__ decides whether those files load at all, and a load across torch 2.9 aborts
        from stackcheck.verdicts.torchao_gate import gate_reasons

        mine = [e for e in entries if isinstance(e, Mapping) and e.get("extension") == "torchao"]
        version = str(ks.get("torch_version") or ctx.installed_version("torch") or "")
        reasons = gate_reasons(ctx, reasons, mine, version, every_launch or flagged)
    if not reasons:
        where = ", ".join(str(d) for d in ks["extension_dirs"]) or "no site-packages directory"
        package = ctx.package(modules[0]) if spec.get("configs") == "torchao" and modules else None
        if flagged and package is not None and package.get("installed") is not None:
            # torchao's own state was probed (the packages probe lists it): installed without compiled libraries,
            # the configs SGLang builds call none of them (torchao_config.py); not installed, the
            # check torchao-import fails the import itself
            installed = package.get("installed") is True
            reasons.append(
                {
                    "rule": "torch-symbols",
                    "result": "pass",
                    "message": f"no compiled library of {modules[0]} found (looked in {where}); "
                    + (
                        f"{modules[0]} {package.get('version') or '(version not read)'} is installed, and the "
                        "configs SGLang builds from --torchao-config call none of its compiled ops (rule "
                        "torchao-config)"
                        if installed
                        else f"{modules[0]} is not installed (the check torchao-import fails its import)"
                    ),
                }
            )
            return reasons + extra + configs
        if flagged:  # the launch imports it: absent there it fails, or it lies where the probe did not look
            reasons.append(
                {
                    "rule": "torch-symbols",
                    "result": "unknown",
                    "message": f"launch.{fact} is set, so the launch loads {' or '.join(modules)}, but no compiled "
                    f"library of it was found (looked in {where}, in that order): not installed there (the import "
                    "then fails), shadowed by a copy of its package with no compiled library earlier on sys.path "
                    "(none loads), or installed where the probe did not look (an editable install's import hook, a "
                    "directory not on the sys.path the probe read)",
                }
            )
            return reasons + extra + configs
        reasons.append(
            {
                "rule": "torch-symbols",
                "result": "pass",
                "message": f"no compiled library of {' or '.join(modules)} installed (looked in {where})",
            }
        )
    return reasons + extra + configs
