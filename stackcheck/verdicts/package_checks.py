"""The MoE all-to-all backend's own package (preflight.json a2a_packages): SGLang imports DeepEP (`deep_ep`) or
Mooncake's EP buffer (`mooncake.mooncake_ep_buffer`) in a try block when its token dispatcher module loads and
raises ImportError ('DeepEP is not installed', 'Mooncake EP is not installed') when a MoE layer builds the
dispatcher (model load, before serving). A --quantization method's own package (preflight.json quant_packages:
humming-kernels, bitsandbytes) is judged the same way (check quant-package), with its minimum version where the entry
gives one (`min_versions`: one per distribution, the first release whose deep_ep exports --moe-a2a-backend
deepep_v2's ElasticBuffer). The packages probe reads whether the distribution is installed; a list that does not name
it (a hand-written or older report) leaves the check unknown. Pure."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from stackcheck.digits import whole_number
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.verdicts.check_result import CheckResult

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.verdicts.check_result import Status

CHECK = "moe-a2a-package"
QUANT_CHECK = "quant-package"
TRANSFER_CHECK = "transfer-package"


def _as_json(value: Any) -> str:
    """A parsed JSON value as JSON text again (igap56: a file's extra config handed to the text's reading)."""
    import json

    return json.dumps(value)


def _version_in(version: str | None, spec: str) -> bool | None:
    """Whether the version is in the range; None where it is not given or not readable, or is a pre-release or dev
    build of a release V the range splits from the releases just below V (versions.version_in_settled)."""
    if version is None:
        return None
    from stackcheck.facts.versions import version_in_settled

    return version_in_settled(version, spec)


def _unsettled(version: str | None, spec: str) -> str:
    """Why _version_in gave None, in words."""
    from stackcheck.facts.versions import settled

    final = settled(version, spec).straddled if version is not None else None
    if final is not None:
        return (f"{version} is a pre-release or dev build of {final}, whose code is {final}'s or the release's before"
                " it: which is not known")  # fmt: skip
    return "the facts do not give the installed version"


def check_a2a_package(
    backend: str | None, facts: Mapping[str, Any], data: Mapping[str, Any], sglang_version: str | None
) -> CheckResult | None:
    """The result for `--moe-a2a-backend BACKEND` (as the command gives it; None: not given), None where no entry
    of a2a_packages names that backend or the installed release is known to be outside its range."""
    subject = f"--moe-a2a-backend {backend}"
    return _judge(CHECK, "a2a_packages", "backend", backend, subject, facts, data, sglang_version)


def check_quant_package(
    method: str | None, facts: Mapping[str, Any], data: Mapping[str, Any], sglang_version: str | None
) -> CheckResult | None:
    """The result for the launch's quantization method (`--quantization METHOD` as the command gives it, else the
    checkpoint's own quant_method; None: neither), None where no entry of quant_packages names that method or the
    installed release is known to be outside its range."""
    return _judge(QUANT_CHECK, "quant_packages", "method", method, f"--quantization {method}", facts, data,
                  sglang_version)  # fmt: skip


def check_load_format_package(
    load_format: str | None, facts: Mapping[str, Any], data: Mapping[str, Any], sglang_version: str | None
) -> CheckResult | None:
    """The result for `--load-format FORMAT` (as the command gives it; None: not given) whose model loader imports
    a package of its own (quant_packages entries with `load_format`: bitsandbytes), None where no entry names it or
    the installed release is known to be outside its range."""
    return _judge(QUANT_CHECK, "quant_packages", "load_format", load_format, f"--load-format {load_format}", facts,
                  data, sglang_version)  # fmt: skip


def check_transfer_package(
    key: str,
    backend: str | None,
    subject: str,
    facts: Mapping[str, Any],
    data: Mapping[str, Any],
    sglang_version: str | None,
) -> CheckResult | None:
    """The result for a disaggregation transfer backend (key "transfer_backend") or a HiCache storage backend (key
    "storage_backend") the launch uses (None: none), from preflight.json transfer_packages; None where no entry names
    it or the installed release is known to be outside its range."""
    return _judge(TRANSFER_CHECK, "transfer_packages", key, backend, subject, facts, data, sglang_version)


def _judge(
    check: str,
    table_name: str,
    key: str,
    value: str | None,
    subject: str,
    facts: Mapping[str, Any],
    data: Mapping[str, Any],
    sglang_version: str | None,
) -> CheckResult | None:
    table = data.get(table_name)
    spec: Mapping[str, Any] = table if isinstance(table, Mapping) else {}
    named = [e for e in spec.get("entries") or [] if isinstance(e, Mapping) and e.get(key) == value]
    # the entries whose release range may hold the installed release (every one where the release is not known)
    entries = [e for e in named if _version_in(sglang_version, str(e.get("versions", ""))) is not False]
    if value is None or not entries:
        return None
    results = [_judge_entry(check, e, subject, facts, sglang_version) for e in entries]
    if len({r.status for r in results}) == 1:
        return results[0]
    ranges = ", ".join(str(e.get("versions")) for e in entries)
    return CheckResult(check, "unknown", None, [r.required for r in results],
                       f"{subject}: SGLang's release is not known, and the releases {ranges} judge it differently: "
                       + "; ".join(f"{r.status}: {r.message}" for r in results), [r.source for r in results],
                       subject)  # fmt: skip


def _judge_entry(
    check: str, entry: Mapping[str, Any], subject: str, facts: Mapping[str, Any], sglang_version: str | None = None
) -> CheckResult:
    """The entry's result, with the notes of the `system_libraries` items a report did not look for
    (not_probed_note: liblzma.so.5 beside Mooncake's bundled libunwind) appended where the distribution is
    installed."""
    result = _judge_distribution(check, entry, subject, facts, sglang_version)
    notes = _not_probed_notes(entry, facts)
    if not notes:
        return result
    return result._replace(message=f"{result.message} (note: {'; '.join(notes)})")


def _not_probed_notes(entry: Mapping[str, Any], facts: Mapping[str, Any]) -> list[str]:
    """The not_probed_note of each `system_libraries` item with one whose sonames the facts' cuda_libs do not read
    (absent from it, or an unreadable copy), for the first installed distribution of the entry whose release may
    link them (not a release read that does not)."""
    packages = facts.get("packages")
    listed = packages if isinstance(packages, Mapping) else {}
    dist = next((str(d) for d in entry.get("distributions") or [] if isinstance(listed.get(d), Mapping)
                 and listed[d].get("installed") is True), None)  # fmt: skip
    if dist is None:
        return []
    notes = []
    for lib in entry.get("system_libraries") or ():
        note = lib.get("not_probed_note")
        unread = _unread_sonames(lib, facts)
        if not isinstance(note, str) or not unread:
            continue
        version, _, needs, read = _release_reading(lib, listed[dist], dist)
        if needs is False and read is True:
            continue
        notes.append(note.replace("{unread}", ", ".join(unread)).replace("{version}", str(version)))
    return notes


def _unread_sonames(lib: Mapping[str, Any], facts: Mapping[str, Any]) -> list[str]:
    """The item's sonames the facts' cuda_libs section did not look for or could not read the loader's copy of."""
    libs = facts.get("cuda_libs")
    table = libs if isinstance(libs, Mapping) else {}
    unreadable = table.get("unreadable")
    return [str(s) for s in lib.get("sonames") or ()
            if s not in table or (isinstance(unreadable, Mapping) and s in unreadable)]  # fmt: skip


def _judge_distribution(
    check: str, entry: Mapping[str, Any], subject: str, facts: Mapping[str, Any], sglang_version: str | None = None
) -> CheckResult:
    unregistered = entry.get("unregistered")
    if isinstance(unregistered, Mapping):
        return CheckResult(check, "fail", unregistered.get("observed"), unregistered.get("required"),
                           str(entry.get("message")), entry.get("source"), subject)  # fmt: skip
    dists = [str(d) for d in entry.get("distributions") or []]
    module = str(entry.get("module"))
    source = entry.get("source")
    packages = facts.get("packages") if isinstance(facts.get("packages"), Mapping) else None
    listed = {d: packages[d] for d in dists if packages is not None and isinstance(packages.get(d), Mapping)}
    installed = [d for d, p in listed.items() if p.get("installed") is True]
    floors = entry.get("min_versions")
    if len(installed) > 1 and isinstance(floors, Mapping):
        # two distributions install the same import package: which one `import deep_ep` takes is not read, so
        # their floors decide only where every one is below its own
        below = [d for d in installed if _floor_fits(listed[d], floors.get(d)) is False]
        if below and len(below) < len(installed):
            both = " and ".join(installed)
            return CheckResult(check, "unknown", f"{both} installed", module,
                               f"{both} are both installed and both install {module}; "
                               f"{', '.join(below)} is older than the release that has what {subject} imports, "
                               "and which one the import takes is not read", source, subject)  # fmt: skip
    if installed:
        name = installed[0]
        forward = entry.get("backends")
        if isinstance(forward, Mapping):
            got = _backends_result(check, forward, listed[name], name, packages, module, subject)
            if got is not None:
                return got
        floor = entry.get("min_version") or (floors.get(name) if isinstance(floors, Mapping) else None)
        if isinstance(floor, str):
            version = listed[name].get("version")
            fits = _version_in(version if isinstance(version, str) else None, f">={floor}")
            observed = f"{name} {version} installed" if isinstance(version, str) else f"{name} installed"
            if fits is False:
                msg = str(entry.get("version_message")).replace("{dist}", name).replace("{floor}", floor)
                return CheckResult(check, "fail", observed, f"{name}>={floor}" if isinstance(floors, Mapping) else
                                   f"{module}>={floor}", msg.replace("{version}", str(version)), source,
                                   subject)  # fmt: skip
            if fits is None:
                return CheckResult(check, "unknown", observed, f"{module}>={floor}",
                                   f"{subject} needs {name} {floor} or newer, and "
                                   f"{_unsettled(version if isinstance(version, str) else None, f'>={floor}')}",
                                   source, subject)  # fmt: skip
        lib = entry.get("runtime_library")
        if isinstance(lib, Mapping):
            got = _runtime_library_result(check, lib, listed[name], name, facts, subject)
            if got is not None:
                return got
        for system in entry.get("system_libraries") or ():
            got = _system_libraries_result(check, system, listed[name], name, facts, subject)
            if got is not None:
                return got
        python_lib = entry.get("python_library")
        if isinstance(python_lib, Mapping):
            got = _python_library_result(check, python_lib, listed[name], name, facts, subject)
            if got is not None:
                return got
        backend_lib = entry.get("backend_runtime_library")
        if isinstance(backend_lib, Mapping):
            got = _backend_runtime_library_result(check, backend_lib, listed[name], name, facts, subject)
            if got is not None:
                return got
        first_lib = entry.get("first_backend_runtime_library")
        if isinstance(first_lib, Mapping):
            got = _first_backend_library_result(check, first_lib, listed[name], name, facts, subject)
            if got is not None:
                return got
        api = entry.get("api_floor")
        if isinstance(api, Mapping):
            got = _api_floor_result(check, api, entry, listed[name], name, facts, subject, sglang_version)
            if got is not None:
                return got
        unread = entry.get("installed_unknown")
        if isinstance(unread, str):
            return CheckResult(check, "unknown", f"{name} installed", module, unread, source, subject)
        jit = entry.get("jit_toolchain")
        if isinstance(jit, Mapping):
            return _jit_result(check, jit, name, facts, subject)
        pre = entry.get("prebuilt")
        if isinstance(pre, Mapping) and len(installed) > 1 and pre.get("distribution") in installed:
            both = " and ".join(installed)
            return CheckResult(check, "unknown", f"{both} installed", module,
                               f"{both} are both installed and both install {module}: which one the import takes is "
                               "not read", source, subject)  # fmt: skip
        if isinstance(pre, Mapping) and pre.get("distribution") == name:
            return _prebuilt_result(check, pre, listed[name], name, facts, subject)
        ext = entry.get("extension")
        ext_dists = ext.get("distributions") if isinstance(ext, Mapping) else None
        if isinstance(ext, Mapping) and (not isinstance(ext_dists, list) or name in ext_dists):
            # the releases of the distribution that build the module (DeepEP 2.0.0 on build deep_ep._C instead of
            # deep_ep_cpp); a version the facts do not give is judged as one that builds it
            built = ext.get("versions")
            have = listed[name].get("version")
            builds = _version_in(have if isinstance(have, str) else None, built) if isinstance(built, str) else True
            if builds is not False:
                got = _extension_result(ext, listed[name], name, facts, subject)
                if builds is None and got.status == "fail":  # a release that builds another module may be installed
                    why = _unsettled(have if isinstance(have, str) else None, str(built))
                    return CheckResult(check, "unknown", got.observed, got.required,
                                       f"{got.message} (unless it is a release that does not build it: its versions "
                                       f"{built} do, and {why})", got.source, subject)  # fmt: skip
                return got
            return CheckResult(check, "ok", f"{name} {have} installed", module,
                               f"{name} {have} is installed; it builds no {ext.get('module')} (its versions {built} "
                               "do), and its own compiled module is not read", source, subject)  # fmt: skip
        return CheckResult(check, "ok", f"{name} installed", module, f"{name} is installed", source, subject)
    names = " or ".join(dists)
    if len(listed) == len(dists) and all(p.get("installed") is False for p in listed.values()):
        return CheckResult(check, "fail", "not installed", module, str(entry.get("message")), source, subject)
    return CheckResult(
        check,
        "unknown",
        None,
        module,
        f"{subject} needs {names} (SGLang imports {module}), and the facts do not say whether it "
        "is installed (a packages list that does not name it)",
        source,
        subject,
    )


#: how _release_reading names a release the facts narrow to candidates (the words after it list them)
_ONE_OF = "one of "


def _release_reading(
    lib: Mapping[str, Any], package: Mapping[str, Any], dist: str
) -> tuple[str | None, str, bool | None, bool | None]:
    """The installed release of a `runtime_library` / `system_libraries` entry's distribution: (its version, the
    observed text, whether needs_versions holds, whether read_versions holds). A pre-release or dev build is no
    release read (0.3.7rc1, 0.3.12rc1: only PyPI's final releases were read, and its code is V's or the release's
    before), whatever the range says. Nor is a local build (igap41): a version with a local part (0.3.6+cu128) or an
    editable install is built on its own machine with its own options, so what PyPI's wheel of that release links
    says nothing of it (whether it needs the libraries is not known either): Mooncake 0.3.5-0.3.6.post1 built with
    CUDA were read as their PyPI wheels, which link no libcudart. A hand-written report that gives no version but
    narrows the release to `candidates` (facts schema: the releases it can be) is read over every candidate:
    needs_versions holds where it holds for each and fails where it fails for each (else None), read_versions holds
    only where every candidate is a final release read; the version is then the words 'one of A, B, ...'."""
    raw = package.get("version")
    version = raw if isinstance(raw, str) else None
    if version is None:
        from stackcheck.facts.versions import candidates_of

        narrowed = candidates_of(package)  # (None: the release is not given)
        if narrowed is not None:
            return _candidates_reading(lib, narrowed, dist)
    found = f"{dist} {version} installed" if version else f"{dist} installed"
    needs = _version_in(version, str(lib.get("needs_versions")))
    read = _version_in(version, str(lib.get("read_versions")))
    from stackcheck.facts.versions import final_release

    if read and version is not None and final_release(version) is not None:
        read = False
    kind = _local_build(version, package)
    if kind is not None:
        found = f"{found} ({kind}, not PyPI's wheel)"
        needs, read = None, False
    return version, found, needs, read


def _local_build(version: str | None, package: Mapping[str, Any]) -> str | None:
    """'an editable install' / 'built from a directory by pip' (packages.NAME.source_install) / 'installed from a
    local file by pip' (a wheel or sdist file on the box: one built there, `pip wheel .`, installs this way, and
    which file it was is not read; igap44) / 'a local build' (a version with a local part), else None; an install
    from an index, or an archive at an https URL, is taken as the release's."""
    from stackcheck.facts.versions import local_tag

    if version is None:
        return None
    if package.get("editable") is True:
        return "an editable install"
    if package.get("source_install") in ("dir", "vcs"):
        return f"built from a {'directory' if package.get('source_install') == 'dir' else 'VCS checkout'} by pip"
    if package.get("source_install") == "file":
        return "installed from a local file by pip"
    return "a local build" if local_tag(version) is not None else None


def _candidates_reading(
    lib: Mapping[str, Any], candidates: list[str], dist: str
) -> tuple[str | None, str, bool | None, bool | None]:
    """_release_reading over the releases a report narrows the distribution to."""
    from stackcheck.facts.versions import final_release

    each = [_release_reading(lib, {"version": c}, dist) for c in candidates]
    needs_each = [n for _, _, n, _ in each]
    needs = True if all(n is True for n in needs_each) else False if all(n is False for n in needs_each) else None
    read = all(r is True and final_release(c) is None for c, (_, _, _, r) in zip(candidates, each, strict=True))
    label = _ONE_OF + ", ".join(candidates)
    return label, f"{dist} installed, {label} (packages.{dist}.candidates)", needs, read


def _release_words(version: str | None, lib: Mapping[str, Any], package: Mapping[str, Any]) -> str:
    """Why a release leaves a runtime / system library entry unknown, in words after "{dist}'s release"."""
    if version is None:
        return "is not given"
    if version.startswith(_ONE_OF):
        return (f"is {version} (the facts' candidates), and the releases read ({lib.get('read_versions')}) do not "
                "settle them all")  # fmt: skip
    kind = _local_build(version, package)
    if kind is not None:
        return (f"{version} is {kind}, whose own compiled module was not read (PyPI's wheels "
                f"{lib.get('read_versions')} were, and a build of its own may link other libraries)")  # fmt: skip
    return f"{version} was not read (read: {lib.get('read_versions')})"


def _runtime_library_result(
    check: str, lib: Mapping[str, Any], package: Mapping[str, Any], dist: str, facts: Mapping[str, Any], subject: str
) -> CheckResult | None:
    """A CUDA runtime library the installed release's compiled module NEEDs and its RPATH does not bring
    (preflight.json `runtime_library`, mooncake-transfer-engine 0.3.7+: libcudart.so.12). A torch of the library's
    CUDA major has loaded it before the import, so only a torch of another major is judged: fail where the loader
    finds no such library (facts cuda_libs), unknown where the release is outside read_versions (or a pre-release or
    dev build, none of which was read) and the library is not found, or where torch's CUDA build or the loader's
    libraries are not given; None (judged on) otherwise."""
    soname = str(lib.get("soname"))
    source = lib.get("source")
    version, found, needs, read = _release_reading(lib, package, dist)
    if needs is False and read is True:
        return None  # a release read that does not link it
    packages = facts.get("packages")
    torch = packages.get("torch") if isinstance(packages, Mapping) else None
    major = _cuda_major(torch.get("cuda") if isinstance(torch, Mapping) else None)
    if major == lib.get("torch_cuda_major"):
        return None  # torch has loaded a library of this soname before the import
    libs = facts.get("cuda_libs")
    unreadable = libs.get("unreadable") if isinstance(libs, Mapping) else None
    copy_unread = isinstance(unreadable, Mapping) and soname in unreadable
    probed = isinstance(libs, Mapping) and soname in libs and not copy_unread
    if probed and isinstance(libs, Mapping) and libs.get(soname) is not None:
        return None  # the loader finds it
    if major is None:
        return CheckResult(check, "unknown", found, soname,
                           f"{subject}: {dist} links {soname} where its release is {lib.get('needs_versions')}, and "
                           "torch's CUDA build (packages.torch.cuda) is not given: a torch of another CUDA major loads "
                           "none, and then the loader must find it", source, subject)  # fmt: skip
    if not probed:
        return CheckResult(check, "unknown", f"{found}; torch CUDA {major}", soname,
                           f"{subject}: {dist} links {soname} where its release is {lib.get('needs_versions')}, beside "
                           f"a torch of CUDA {major}, and whether the loader finds {soname} was not probed (cuda_libs)",
                           source, subject)  # fmt: skip
    observed = f"{found}; torch CUDA {major}; {soname} not found by the loader"
    if needs is True:  # (missing_status "unknown": a release that links it whose failure was not run; nixl 0.6.1)
        msg = str(lib.get("missing_message")).replace("{version}", str(version)).replace("{torch}", str(major))
        if lib.get("missing_status") == "unknown":
            return CheckResult(check, "unknown", observed, soname, msg, source, subject)
        return CheckResult(check, "fail", observed, soname, msg, source, subject)
    what = _release_words(version, lib, package)
    return CheckResult(check, "unknown", observed, soname,
                       f"{subject}: {dist}'s release {what}; the releases {lib.get('needs_versions')} link {soname}, "
                       f"which the loader does not find beside a torch of CUDA {major}", source, subject)  # fmt: skip


def _system_libraries_result(
    check: str, lib: Mapping[str, Any], package: Mapping[str, Any], dist: str, facts: Mapping[str, Any], subject: str
) -> CheckResult | None:
    """System libraries the installed release's compiled module NEEDs and neither its wheel nor its RPATH brings
    (preflight.json `system_libraries`, mooncake-transfer-engine's engine.so: libibverbs.so.1, libnuma.so.1,
    libcurl.so.4, and libmlx5.so.1 from 0.3.12): only the loader's path finds them (facts cuda_libs). Fail where the
    release needs them and the loader finds one not; unknown where one was not probed (or could not be read), or the
    release is outside read_versions (or a pre-release or dev build, none of which was read) and one is not found;
    None (judged on) where every one is found or the release read does not need them. An item with a not_probed_note
    (liblzma.so.5, which the libunwind Mooncake 0.3.5-0.3.11.post1 bundle NEEDs) is judged on the sonames read only:
    one not probed leaves the verdict to the other items, and _judge_entry adds the note."""
    sonames = [str(s) for s in lib.get("sonames") or ()]
    source = lib.get("source")
    version, found, needs, read = _release_reading(lib, package, dist)
    if needs is False and read is True:
        return None  # a release read that does not link them
    libs = facts.get("cuda_libs")
    table = libs if isinstance(libs, Mapping) else {}
    not_read = _unread_sonames(lib, facts)
    missing = [s for s in sonames if s not in not_read and table.get(s) is None]
    # an item with a not_probed_note is judged on what was read, and _judge_entry notes the rest: a soname the report
    # never looked for (absent from cuda_libs); one it looked for whose loader copy is not known (`unreadable`: a copy
    # not read, an LD_LIBRARY_PATH element not placed, a launch's own loader path) is unknown as for any item (irev69)
    unreadable = table.get("unreadable")
    looked = [s for s in not_read if s in table and isinstance(unreadable, Mapping) and s in unreadable]
    unread = looked if isinstance(lib.get("not_probed_note"), str) else not_read
    if not unread and not missing:
        return None  # the loader finds every one
    where = f"{dist}'s compiled module links {', '.join(sonames)} where its release is {lib.get('needs_versions')}"
    if missing and needs is True:
        observed = f"{found}; {', '.join(missing)} not found by the loader"
        msg = str(lib.get("missing_message")).replace("{version}", str(version))
        msg = msg.replace("{missing}", ", ".join(missing))
        return CheckResult(check, "fail", observed, ", ".join(sonames), msg, source, subject)
    if unread:
        return CheckResult(check, "unknown", found, ", ".join(sonames),
                           f"{subject}: {where} (system libraries no pip wheel brings), and whether the loader finds "
                           f"{', '.join(unread)} was not probed (cuda_libs)", source, subject)  # fmt: skip
    what = _release_words(version, lib, package)
    return CheckResult(check, "unknown", f"{found}; {', '.join(missing)} not found by the loader", ", ".join(sonames),
                       f"{subject}: {dist}'s release {what}; {where}", source, subject)  # fmt: skip


def _python_library_result(
    check: str, lib: Mapping[str, Any], package: Mapping[str, Any], dist: str, facts: Mapping[str, Any], subject: str
) -> CheckResult | None:
    """CPython's shared library (libpython3.X.so.1.0), which the installed release's compiled module NEEDs
    (preflight.json `python_library`: the engine copy bundled in mooncake-transfer-engine 0.3.8-0.3.9, linked by its
    EP modules). An interpreter that links it (cuda_libs.interpreter_rpath.libpython) has loaded it before the
    import; a statically linked one ("") leaves it to the loader's path (cuda_libs: libpython3.X.so.1.0 of the
    Python's major.minor, system.python). Fail where the release needs it, the interpreter does not link it and the
    loader does not find it; unknown where the interpreter's ELF, the Python's version or the soname was not read,
    or the release is outside read_versions and it is not found; None (judged on) otherwise."""
    source = lib.get("source")
    version, found, needs, read = _release_reading(lib, package, dist)
    if needs is False and read is True:
        return None  # a release read that does not link it
    libs = facts.get("cuda_libs")
    table = libs if isinstance(libs, Mapping) else {}
    own = table.get("interpreter_rpath")
    linked = own.get("libpython") if isinstance(own, Mapping) and "error" not in own else None
    if isinstance(linked, str) and linked:
        return None  # the interpreter links it: loaded before the import
    system = facts.get("system")
    python = system.get("python") if isinstance(system, Mapping) else None
    parts = python.split(".") if isinstance(python, str) else []
    minor = ".".join(parts[:2]) if len(parts) >= 2 and all(p.isdigit() for p in parts[:2]) else None
    soname = f"libpython{minor}.so.1.0" if minor else "libpython3.X.so.1.0"
    unreadable = table.get("unreadable")
    probed = minor is not None and soname in table and not (isinstance(unreadable, Mapping) and soname in unreadable)
    if probed and table.get(soname) is not None:
        return None  # the loader finds it
    where = f"{dist}'s compiled module links {soname} where its release is {lib.get('needs_versions')}"
    if not (isinstance(linked, str) and minor is not None and probed):
        why = ("the Python's version (system.python) is not given" if minor is None else
               "whether the interpreter links libpython itself (cuda_libs.interpreter_rpath.libpython) was not read"
               if not isinstance(linked, str) else
               f"the interpreter does not link libpython itself, and whether the loader finds {soname} was not probed "
               "(cuda_libs)")  # fmt: skip
        return CheckResult(check, "unknown", found, soname, f"{subject}: {where}, and {why}", source, subject)
    observed = f"{found}; a Python {minor} that does not link libpython; {soname} not found by the loader"
    if needs is True:
        msg = str(lib.get("missing_message")).replace("{version}", str(version)).replace("{soname}", soname)
        return CheckResult(check, "fail", observed, soname, msg, source, subject)
    what = _release_words(version, lib, package)
    return CheckResult(check, "unknown", observed, soname, f"{subject}: {dist}'s release {what}; {where}", source,
                       subject)  # fmt: skip


def _backend_runtime_library_result(
    check: str, lib: Mapping[str, Any], package: Mapping[str, Any], dist: str, facts: Mapping[str, Any], subject: str
) -> CheckResult | None:
    """A CUDA runtime library that the backend distribution an installed forwarder loads NEEDs (preflight.json
    `backend_runtime_library`: nixl 0.7.1 imports nixl_cu13, else nixl_cu12, whose bundled UCX CUDA module and NIXL's
    UCX_MO plugin NEED libcudart.so.12). Judged as a `runtime_library` of that backend's release (`distribution`:
    nixl-cu12) where the forwarder is `from_version` or newer and no distribution of `unless_installed` (nixl-cu13,
    taken first) is installed; a fail becomes unknown where the forwarder's release is outside forwarder_versions
    (which backend its import takes was not read) or whether an `unless_installed` one is installed is not given.
    None (judged on) where the forwarder is older, the backend is not installed or the runtime item passes."""
    since = str(lib.get("from_version"))
    raw = package.get("version")
    version = raw if isinstance(raw, str) else None
    if _version_in(version, f">={since}") is False:
        return None  # the forwarder ships its own package (not judged by this item)
    packages = facts.get("packages")
    listed = packages if isinstance(packages, Mapping) else {}
    first = [str(d) for d in lib.get("unless_installed") or ()]
    if _version_in(version, str(lib.get("torch_major_versions"))) is True and _local_build(version, package) is None:
        return _torch_major_result(check, lib, package, dist, facts, subject)
    if any(isinstance(listed.get(d), Mapping) and listed[d].get("installed") is True for d in first):
        return None  # the forwarder takes that backend first
    backend = str(lib.get("distribution"))
    own = listed.get(backend)
    if not (isinstance(own, Mapping) and own.get("installed") is True):
        return None  # not installed (the `backends` item judges a forwarder with neither)
    got = _runtime_library_result(check, lib, own, backend, facts, subject)
    if got is None or got.status != "fail":
        return got
    unsure = [d for d in first if not (isinstance(listed.get(d), Mapping) and listed[d].get("installed") is False)]
    took = _version_in(version, str(lib.get("forwarder_versions")))
    if took is True and version is not None and _local_build(version, package) is None and not unsure:
        return got
    why = (f"whether {' or '.join(unsure)} is installed (which {dist} takes first) is not given" if unsure else
           f"{dist}'s release {_release_words(version, {'read_versions': lib.get('forwarder_versions')}, package)} "
           f"for which backend its import takes")  # fmt: skip
    return CheckResult(check, "unknown", got.observed, got.required,
                       f"{got.message} (unless {dist} loads another backend: {why})", got.source,
                       subject)  # fmt: skip


def _torch_backend(lib: Mapping[str, Any], listed: Mapping[str, Any]) -> tuple[int | None, list[str], str | None]:
    """The backend a forwarder release of torch_major_versions imports (nixl 1.1.0-1.5.2: nixl_cu<torch's CUDA major>,
    ImportError without it), the one reading that _torch_major_result, _api_modules and _backend_unsettled share:
    (torch's CUDA major, the backend distributions the import may take, why that is not settled or None). A known
    major may take the entry's distribution named -cuN (`distribution`, `unless_installed`); an unknown one
    (packages.torch.cuda not given: a CPU build or a facts file without it) may take any of them, and is settled only
    where every one is installed (the import then finds its backend whichever major torch is, and each is judged).
    Unsettled (every answer that hangs on it is unknown, never ok and never fail): an unknown major with a backend not
    given as installed, a known major no named distribution serves, or a backend of that major not given as installed
    or not (imend6: the API floor judged a CUDA 13 torch on nixl-cu12 where nixl-cu13 was not given, ok where the
    library item said unknown)."""
    torch = listed.get("torch")
    major = _cuda_major(torch.get("cuda") if isinstance(torch, Mapping) else None)
    every = [str(lib.get("distribution")), *(str(d) for d in lib.get("unless_installed") or ())]

    def state(name: str) -> object:
        seen = listed.get(name)
        return seen.get("installed") if isinstance(seen, Mapping) else None

    if major is None:
        there = all(state(d) is True for d in every)
        return None, every, None if there else "torch's CUDA build (packages.torch.cuda) is not given"
    takes = [d for d in every if d.endswith(f"-cu{major}")]
    if not takes:
        return major, takes, f"no backend distribution read ({', '.join(every)}) is of CUDA {major}"
    unsure = [d for d in takes if state(d) not in (True, False)]
    return major, takes, f"whether {' or '.join(unsure)} is installed is not given" if unsure else None


def _torch_major_result(
    check: str,
    lib: Mapping[str, Any],
    package: Mapping[str, Any],
    dist: str,
    facts: Mapping[str, Any],
    subject: str,
) -> CheckResult | None:
    """A forwarder release that imports the backend of torch's CUDA major (nixl 1.1.0-1.5.2): a torch of CUDA 13 never
    loads nixl_cu12 (and one of CUDA 12 has loaded libcudart.so.12), so the library item does not apply; fail where
    the distribution of torch's major (`distribution` or one of `unless_installed`, named -cuN) is not installed (the
    forwarder raises ImportError), unknown where _torch_backend leaves it unsettled; None otherwise. (irev71: a CUDA 12
    torch beside nixl-cu13 alone was passed here.)"""
    packages = facts.get("packages")
    listed = packages if isinstance(packages, Mapping) else {}
    major, takes, unsure = _torch_backend(lib, listed)
    version = package.get("version")
    missing = [d for d in takes if not (isinstance(listed.get(d), Mapping) and listed[d].get("installed") is True)]
    if unsure is None and not missing:
        return None  # the backend torch's major takes is there (every one, where the major is not given)
    found = f"{dist} {version} installed" if major is None else f"{dist} {version} installed; torch CUDA {major}"
    required = " or ".join(takes) if takes else f"{dist}-cu{major}"
    if unsure is None:  # (a known major: its one backend given as not installed)
        msg = str(lib.get("torch_major_message")).replace("{version}", str(version)).replace("{torch}", str(major))
        return CheckResult(check, "fail", f"{found}; {missing[0]} not installed", missing[0], msg, lib.get("source"),
                           subject)  # fmt: skip
    which = f" ({' or '.join(takes)} for CUDA {major})" if major is not None and takes else ""
    return CheckResult(check, "unknown", found, required,
                       f"{subject}: {dist} {version} imports the backend of torch's CUDA major{which} and raises "
                       f"ImportError without it, and {unsure}", lib.get("source"), subject)  # fmt: skip


def _backends_result(
    check: str,
    forward: Mapping[str, Any],
    package: Mapping[str, Any],
    dist: str,
    packages: Mapping[str, Any] | None,
    module: str,
    subject: str,
) -> CheckResult | None:
    """A distribution that only forwards its import to one of `forward`'s distributions from `from_version` on (nixl
    0.7.1+: nixl-cu12 / nixl-cu13): fail where it is that version or newer and none of them is installed, unknown
    where its version or theirs is not read, None (judged on as installed) where one is there or it is older."""
    since = str(forward.get("from_version"))
    raw = package.get("version")
    version = raw if isinstance(raw, str) else None
    newer = _version_in(version, f">={since}")
    if newer is False:
        return None
    names = [str(d) for d in forward.get("distributions") or []]
    seen = {d: packages.get(d) for d in names} if packages is not None else {}
    if any(isinstance(p, Mapping) and p.get("installed") is True for p in seen.values()):
        return None
    source = forward.get("source")
    found = f"{dist} {version} installed" if version else f"{dist} installed"
    either = " or ".join(names)
    required = f"{module} through {either}"
    known = len(seen) == len(names) and all(isinstance(p, Mapping) and p.get("installed") is False
                                            for p in seen.values())  # fmt: skip
    if known and newer:
        msg = str(forward.get("message")).replace("{version}", str(version))
        return CheckResult(check, "fail", f"{found}; {either} not installed", required, msg, source, subject)
    unsure = "its version is not given" if version is None else _unsettled(version, f">={since}")
    why = (f"{unsure}, and from {since} on it needs {either}, neither installed" if known else
           f"from {since} on it needs {either}, and the facts do not say whether either is installed")  # fmt: skip
    return CheckResult(check, "unknown", found, required, f"{subject}: {found}, but {why}", source, subject)


def _first_backend_library_result(
    check: str, lib: Mapping[str, Any], package: Mapping[str, Any], dist: str, facts: Mapping[str, Any], subject: str
) -> CheckResult | None:
    """A CUDA runtime library that the backend a forwarder takes first NEEDs (preflight.json
    `first_backend_runtime_library`, ifc52: nixl 0.7.1-1.0.1 import nixl_cu13 whenever it is installed, and nixl-cu13's
    bundled UCX CUDA module NEEDs libcudart.so.13, which a torch of CUDA 12 does not load): judged as a
    `runtime_library` of that backend's release where the forwarder's release is in forwarder_versions (or not
    known) and the backend is installed; None otherwise."""
    raw = package.get("version")
    version = raw if isinstance(raw, str) else None
    if _version_in(version, str(lib.get("forwarder_versions"))) is False:
        return None
    packages = facts.get("packages")
    listed = packages if isinstance(packages, Mapping) else {}
    backend = str(lib.get("distribution"))
    own = listed.get(backend)
    if isinstance(own, Mapping) and own.get("installed") is True:
        return _runtime_library_result(check, lib, own, backend, facts, subject)
    if isinstance(own, Mapping) and own.get("installed") is False:
        return None
    # (irev72: whether the backend is installed is not given: passed over as not installed before)
    got = _runtime_library_result(check, lib, {}, backend, facts, subject)
    if got is None:
        return None
    return CheckResult(check, "unknown", f"{dist} {raw} installed; whether {backend} is installed not given",
                       got.required, f"{subject}: {dist} {raw} takes {backend} first where it is installed, and "
                       f"whether it is was not given; {got.message}", got.source, subject)  # fmt: skip


def _api_modules(
    entry: Mapping[str, Any], package: Mapping[str, Any], dist: str, facts: Mapping[str, Any]
) -> list[tuple[str, Mapping[str, Any]]] | None:
    """The installed distributions whose module the import of `entry`'s module may take (ifc52): the forwarder's own
    where it is older than its `backends` item's from_version (nixl 0.6.1 ships nixl._api), else the backend it loads
    (backend_runtime_library: nixl_cu13 first, else nixl_cu12, for forwarder_versions; torch's CUDA major's for
    torch_major_versions: _torch_backend's, installed) or, where which one is not read, every installed backend. None
    where the forwarder's own release is not given."""
    raw = package.get("version")
    version = raw if isinstance(raw, str) else None
    forward = entry.get("backends")
    if not isinstance(forward, Mapping):
        return [(dist, package)]
    newer = _version_in(version, f">={forward.get('from_version')}")
    if newer is None:
        return None
    if newer is False:
        return [(dist, package)]
    packages = facts.get("packages")
    listed = packages if isinstance(packages, Mapping) else {}
    installed = [(str(d), listed[d]) for d in forward.get("distributions") or []
                 if isinstance(listed.get(d), Mapping) and listed[d].get("installed") is True]  # fmt: skip
    lib = entry.get("backend_runtime_library")
    if not isinstance(lib, Mapping) or _local_build(version, package) is not None:
        return installed
    if _version_in(version, str(lib.get("torch_major_versions"))) is True:
        _, takes, _ = _torch_backend(lib, listed)  # (where it is unsettled, _backend_unsettled says why)
        return [(d, p) for d, p in installed if d in takes]
    if _version_in(version, str(lib.get("forwarder_versions"))) is True:
        first = [str(d) for d in lib.get("unless_installed") or ()]
        taken = [(d, p) for d, p in installed if d in first]
        return taken[:1] or [(d, p) for d, p in installed if d == lib.get("distribution")] or installed
    return installed


def _backend_unsettled(
    entry: Mapping[str, Any], package: Mapping[str, Any], dist: str, facts: Mapping[str, Any]
) -> str | None:
    """Why the backend a forwarder's import takes is not settled, None where it is (or the entry names none): for
    backend_runtime_library's forwarder_versions (nixl 0.7.1-1.0.1) the backends it takes first (`unless_installed`:
    nixl_cu13) whose being installed the facts do not give, where none of them is given as installed (irev72: the API
    floor was judged on nixl-cu12 alone, a report without nixl-cu13 passed); for its torch_major_versions (nixl
    1.1.0-1.5.2) _torch_backend's reason (an unknown torch CUDA major, or its backend not given)."""
    lib = entry.get("backend_runtime_library")
    if not isinstance(lib, Mapping):
        return None
    raw = package.get("version")
    version = raw if isinstance(raw, str) else None
    if _local_build(version, package):
        return None
    packages = facts.get("packages")
    listed = packages if isinstance(packages, Mapping) else {}
    if _version_in(version, str(lib.get("torch_major_versions"))) is True:
        return _torch_backend(lib, listed)[2]
    if _version_in(version, str(lib.get("forwarder_versions"))) is not True:
        return None
    first = [str(d) for d in lib.get("unless_installed") or ()]
    if any(isinstance(listed.get(d), Mapping) and listed[d].get("installed") is True for d in first):
        return None  # (the one taken is known)
    unsure = [d for d in first if not (isinstance(listed.get(d), Mapping) and listed[d].get("installed") is False)]
    return f"whether {' or '.join(unsure)} is installed, which {dist} takes first, is not given" if unsure else None


def _api_floor_result(
    check: str,
    api: Mapping[str, Any],
    entry: Mapping[str, Any],
    package: Mapping[str, Any],
    dist: str,
    facts: Mapping[str, Any],
    subject: str,
    sglang_version: str | None,
) -> CheckResult | None:
    """The SGLang releases (`sglang_versions`) whose import of the module needs a name its releases before
    `min_version` lack (preflight.json `api_floor`; ifc52: SGLang 0.5.15+ import nixl_thread_sync_t from nixl._api,
    which nixl ships from 1.2.0; an older one raises ImportError when the KV manager starts): fail where the module
    the import takes (_api_modules) is older, unknown where which one, its release or SGLang's is not known; None
    (judged on) where every module it may take is new enough or the release does not import the name."""
    applies = _version_in(sglang_version, str(api.get("sglang_versions")))
    if applies is False:
        return None
    floor = str(api.get("min_version"))
    source = api.get("source")
    modules = _api_modules(entry, package, dist, facts)
    unsure = _backend_unsettled(entry, package, dist, facts)
    if modules is not None and not modules and unsure is None:
        return None  # no backend installed: the `backends` item (or the backend library's) judges it
    found = (", ".join(f"{d} {p.get('version')}" for d, p in modules) if modules
             else f"{dist} {package.get('version')} (the backend it takes not settled)" if modules is not None
             else f"{dist} (its version not given)")  # fmt: skip
    required = f"{entry.get('module')} from a release >= {floor}"
    fits = [_version_in(p.get("version") if isinstance(p.get("version"), str) else None, f">={floor}")
            for _, p in modules or ()]  # fmt: skip
    if modules is not None and all(f is True for f in fits) and not unsure:
        return None
    msg = str(api.get("message")).replace("{found}", found).replace("{floor}", floor)
    if modules and all(f is False for f in fits) and applies is True and not unsure:
        return CheckResult(check, "fail", f"{found} installed", required, msg, source, subject)
    why = ("SGLang's release is not given" if applies is None else
           unsure if unsure else
           "which one the import takes is not read" if modules is not None and False in fits else
           "the installed release is not given")  # fmt: skip
    return CheckResult(check, "unknown", f"{found} installed", required, f"{msg} (not settled: {why})", source,
                       subject)  # fmt: skip


def _floor_fits(package: Mapping[str, Any], floor: object) -> bool | None:
    """Whether the installed distribution's version is at least `floor` (True where there is no floor)."""
    if not isinstance(floor, str):
        return True
    version = package.get("version")
    return _version_in(version if isinstance(version, str) else None, f">={floor}")


def _prebuilt_result(
    check: str, pre: Mapping[str, Any], package: Mapping[str, Any], dist: str, facts: Mapping[str, Any], subject: str
) -> CheckResult:
    """A prebuilt distribution whose import demands torch's CUDA major equal its build's (preflight.json `prebuilt`,
    sgl-deep-ep): fail where packages.NAME.build_cuda_major and torch.cuda's major differ, unknown where either was
    not read, ok where they agree (the rest of its import is not read: the entry's note)."""
    source = pre.get("source")
    raw = package.get("build_cuda_major")
    build = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
    packages = facts.get("packages")
    torch = packages.get("torch") if isinstance(packages, Mapping) else None
    want = _cuda_major(torch.get("cuda") if isinstance(torch, Mapping) else None)
    version = package.get("version")
    found = f"{dist} {version} installed" if isinstance(version, str) else f"{dist} installed"
    required = f"torch of CUDA {build}" if build is not None else "torch of the CUDA major the build names"
    if build is None or want is None:
        what = f"the CUDA major its build names (packages.{dist}.build_cuda_major)" if build is None else \
            "torch's CUDA version (packages.torch.cuda)"  # fmt: skip
        return CheckResult(check, "unknown", found, required,
                           f"{dist} is installed, but {what} is not read; its import refuses a torch of another CUDA "
                           "major", source, subject)  # fmt: skip
    observed = f"{found}, built for CUDA {build}; torch CUDA {want}"
    if build != want:
        msg = str(pre.get("mismatch_message")).replace("{build}", str(build)).replace("{torch}", str(want))
        return CheckResult(check, "fail", observed, required, msg, source, subject)
    return CheckResult(check, "ok", observed, required,
                       f"{dist} is installed, built for CUDA {build} as torch is (the rest of its import-time checks "
                       "are not read)", source, subject)  # fmt: skip


_SYSTEM_ROOT = "/usr/local/cuda"


def _number(text: str) -> int | None:
    """A version part of a facts file (torch's CUDA, the target Python's) as a number: ASCII digits, at most 9 of
    them, else None (igap26: '²' passes str.isdigit() and 5,000 digits pass str.isdecimal(), and int() raises on
    both: a hand-written or hostile facts file ended the gate in an internal error, exit 4)."""
    return whole_number(text, ascii_only=True)


def _cuda_major(version: object) -> int | None:
    return _number(version.split(".")[0]) if isinstance(version, str) else None


def _major_minor(python: object) -> tuple[int, int] | None:
    """The target Python's (major, minor) from system.python ('3.12.3'), None where it is not two such numbers."""
    parts = python.split(".") if isinstance(python, str) else []
    numbers = [_number(p) for p in parts[:2]]
    return (numbers[0], numbers[1]) if len(numbers) == 2 and numbers[0] is not None and numbers[1] is not None else None


def _jit_result(check: str, jit: Mapping[str, Any], dist: str, facts: Mapping[str, Any], subject: str) -> CheckResult:
    """The quant package's run-time compiler (preflight.json `jit_toolchain`, humming-kernels): a CUDA environment of
    torch's CUDA major among the toolkits it looks at ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /usr/local/cuda-*,
    the nvidia-* pip wheels; the cuda_toolkits facts, less one found only through the nvcc on PATH). ok where one is a
    toolkit with its own nvcc, fail where every one it looks at is known to be another major, unknown otherwise."""
    source = jit.get("source")
    found = f"{dist} installed"
    packages = facts.get("packages")
    torch = packages.get("torch") if isinstance(packages, Mapping) else None
    major = _cuda_major(torch.get("cuda") if isinstance(torch, Mapping) else None)
    toolkits = facts.get("cuda_toolkits")

    def unknown(why: str) -> CheckResult:
        required = f"a CUDA {major} environment" if major is not None else "a CUDA environment of torch's major"
        msg = str(jit.get("unknown_message")).replace("{why}", why)
        return CheckResult(check, "unknown", found, required, msg, source, subject)

    if major is None:
        return unknown("torch's CUDA version is not known (packages.torch.cuda)")
    if not isinstance(toolkits, list):
        return unknown("the CUDA toolkits were not probed (cuda_toolkits)")
    seen = []
    for tk in toolkits:
        if not isinstance(tk, Mapping) or "error" in tk:
            continue
        path = str(tk.get("path") or "").rstrip("/")
        looked_at = tk.get("source") in ("CUDA_HOME", "CUDA_PATH", "pip") or (
            path == _SYSTEM_ROOT or path.startswith(_SYSTEM_ROOT + "-")
        )
        if looked_at:
            seen.append(tk)
    required = f"a CUDA {major} environment (nvrtc.h or nvcc)"
    majors = [_cuda_major(tk.get("version")) for tk in seen]
    full = [
        tk for tk, m in zip(seen, majors, strict=True) if m == major and tk.get("source") != "pip" and tk.get("nvcc")
    ]
    if full:
        msg = f"{dist} is installed and the CUDA {major} toolkit {full[0].get('path')} has nvcc (its nvrtc.h assumed)"
        return CheckResult(check, "ok", f"{found}, CUDA {major} toolkit {full[0].get('path')}", required, msg,
                           source, subject)  # fmt: skip
    if all(m is not None and m != major for m in majors):
        listed = ", ".join(f"{tk.get('path')} ({tk.get('version')})" for tk in seen) or "none"
        msg = str(jit.get("fail_message")).replace("{major}", str(major))
        return CheckResult(check, "fail", f"{found}; CUDA environments: {listed}", required, msg, source, subject)
    if any(m is None for m in majors):
        return unknown("a toolkit's CUDA version was not read")
    return unknown(
        f"only pip wheels or toolkits without nvcc are CUDA {major}, and whether nvrtc.h is there is not read"
    )


def import_suffixes(python: object, machine: object, free_threaded: bool = False) -> list[str] | None:
    """The file suffixes CPython's import takes for an extension module on Linux, in its order
    (importlib.machinery.EXTENSION_SUFFIXES: `.cpython-312-x86_64-linux-gnu.so`, `.abi3.so`, `.so`); a free-threaded
    build's own suffix carries its ABI flag t (`.cpython-313t-x86_64-linux-gnu.so`) and its stable-ABI suffix from
    3.15 is `.abi3t.so`; None where the Python's version or the machine is not known."""
    version = _major_minor(python)
    if version is None or machine not in ("x86_64", "aarch64"):
        return None
    flag = "t" if free_threaded else ""
    stable = ".abi3t.so" if free_threaded and version >= (3, 15) else ".abi3.so"
    return [f".cpython-{version[0]}{version[1]}{flag}-{machine}-linux-gnu.so", stable, ".so"]


_PY_LIB_DIR = r"/python(\d+)\.(\d+)(t?)(?:/|$)"


def python_builds(python: object, paths: list[object]) -> list[bool]:
    """Whether the target CPython is a free-threaded build, as the candidates [False] (GIL), [True] (free-threaded)
    or [False, True] (not known). Free-threaded builds exist from 3.13 and keep their library directories under
    lib/python3.XYt (sysconfig's abi_thread: the standard library and site-packages): the paths given (sys.path,
    the distribution's location) decide where one names this version's directory; below 3.13 it is a GIL build."""
    import re

    version = _major_minor(python)
    if version is not None and version < (3, 13):
        return [False]
    seen = set()
    for path in paths:
        for m in re.finditer(_PY_LIB_DIR, path if isinstance(path, str) else ""):
            named = (_number(m.group(1)), _number(m.group(2)))
            if None not in named and (version is None or named == version):
                seen.add(m.group(3) == "t")
    return sorted(seen) if len(seen) == 1 else [False, True]


def _extension_result(
    ext: Mapping[str, Any], package: Mapping[str, Any], dist: str, facts: Mapping[str, Any], subject: str
) -> CheckResult:
    """The a2a package's compiled module (preflight.json `extension`): fail where the packages probe listed the
    distribution's location (for a PEP 660 editable install, the project directory its finder or .pth names:
    extension_dir) and no file there is one the target Python's import takes; unknown where the files were not
    listed (an older or hand-written report, an editable install whose project was not found) or the Python is not
    known, or a CPython 3.13+ not known to be free-threaded or not has a file only one of the two builds takes; ok
    where one is there (its linked libraries are not read: the entry's note)."""
    module = str(ext.get("module"))
    source = ext.get("source")
    files = package.get("extension_files")
    found = f"{dist} installed"
    where = package.get("extension_dir") or package.get("location")
    if not isinstance(files, list):
        why = f"packages.{dist}.extension_files: the report does not list"
        if package.get("editable") is True:
            why = f"an editable install whose project directory was not read; packages.{dist}.extension_files: " \
                  "the report does not list"  # fmt: skip
        msg = f"{dist} is installed, but whether its compiled module {module} is there was not read ({why} it)"
        return CheckResult(CHECK, "unknown", found, module, msg, source, subject)
    raw = facts.get("system")
    system: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    py = facts.get("python")
    listed = py.get("sys_path") if isinstance(py, Mapping) else None
    sys_path: list[object] = list(listed) if isinstance(listed, list) else []
    builds = python_builds(system.get("python"), [*sys_path, package.get("location"), where])
    by_build = {b: import_suffixes(system.get("python"), system.get("machine"), b) for b in builds}
    if (
        any(v is None for v in by_build.values())
        or str(system.get("python_implementation") or "CPython").lower() != "cpython"
    ):
        msg = f"{dist} is installed, but which file of {module} this Python's import takes is not known"
        return CheckResult(CHECK, "unknown", found, module, f"{msg} (its CPython version and machine)", source, subject)
    names = [f for f in files if isinstance(f, str)]
    taken = {b: [f for f in names if f.startswith(module) and f[len(module) :] in (sfx or [])]
             for b, sfx in by_build.items()}  # fmt: skip
    at = f" in {where}" if package.get("extension_dir") else ""
    if all(taken.values()):
        first = taken[builds[0]][0]
        if first.endswith(".abi3.so") and True in builds:  # 3.13t / 3.14t still list .abi3.so, whose ABI they lack
            msg = f"{dist} is installed with {first}{at}, a stable-ABI build that a free-threaded CPython imports " \
                  "but cannot run"  # fmt: skip
            return CheckResult(CHECK, "unknown", f"{found}, {first}", module, msg, source, subject)
        return _links_result(ext, package, dist, facts, subject, first, at)
    seen = ", ".join(names) or "none"
    if any(taken.values()):
        have = next(f for fs in taken.values() for f in fs)
        msg = (f"{dist} is installed with {have}{at}, which only a {'free-threaded' if taken.get(True) else 'GIL'} "
               f"build of CPython {system.get('python')} imports, and whether this one is free-threaded was not read "
               "(no library directory python3.XYt or python3.XY among its paths)")  # fmt: skip
        return CheckResult(CHECK, "unknown", f"{found}, {have}", module, msg, source, subject)
    suffix = (by_build[builds[0]] or [""])[0]
    observed = f"{module}{suffix} missing{at} (found: {seen})"
    return CheckResult(CHECK, "fail", observed, module, str(ext.get("message")), source, subject)


def _links_result(
    ext: Mapping[str, Any], package: Mapping[str, Any], dist: str, facts: Mapping[str, Any], subject: str,
    first: str, at: str,
) -> CheckResult:  # fmt: skip
    """The NVSHMEM libraries the module file the Python takes links (packages.NAME.extension_links, the packages
    probe's reading of its DT_NEEDED and where the loader finds each): ok where every one is found and, for one in
    an nvidia-nvshmem wheel, that wheel's CUDA major is torch's; fail where one is found nowhere the loader looks
    (its RPATH / RUNPATH, LD_LIBRARY_PATH, the ld.so cache, the default directories) and no nvidia-* wheel beside
    it has a copy torch could load first; unknown otherwise (not read, unreadable, a copy only torch may load, a
    wheel of another CUDA major)."""
    module = str(ext.get("module"))
    links = ext.get("links")
    spec: Mapping[str, Any] = links if isinstance(links, Mapping) else {}
    source = spec.get("source") or ext.get("source")
    raw = package.get("extension_links")
    record = raw.get(first) if isinstance(raw, Mapping) else None
    observed = f"{dist} installed, {first}{at}"

    def unknown(why: str) -> CheckResult:
        return CheckResult(CHECK, "unknown", observed, f"{module} and the libraries it links",
                           f"{dist} is installed with {first}{at}, but {why}", source, subject)  # fmt: skip

    if not isinstance(record, Mapping):
        return unknown(f"the libraries it links (libnvshmem_host) were not read (packages.{dist}.extension_links)")
    if "error" in record:
        return unknown(f"its dynamic section could not be read ({record['error']})")
    got, bad = record.get("found"), record.get("unreadable")
    found: Mapping[str, Any] = got if isinstance(got, Mapping) else {}
    unread: Mapping[str, Any] = bad if isinstance(bad, Mapping) else {}
    needed = [str(n) for n in record.get("needed") or []]
    for soname in needed:
        if soname in unread:
            return unknown(f"{soname} could not be read where the loader looks ({unread[soname]})")
        if found.get(soname) is None:
            copies = record.get("wheel_copies") or []
            if copies:
                return unknown(f"it links {soname}, which the loader finds nowhere it looks for this module; only "
                               f"{copies[0]} is there, which torch may have loaded first (not read)")  # fmt: skip
            where = record.get("runpath") or record.get("rpath") or "none"
            message = str(spec.get("missing_message")).replace("{soname}", soname).replace("{rpath}", str(where))
            return CheckResult(CHECK, "fail", f"{observed}; {soname} not found (RPATH/RUNPATH: {where})",
                               f"{soname} where the loader finds it", message, source, subject)  # fmt: skip
    majors = _nvshmem_majors(facts)
    packages = facts.get("packages")
    torch = packages.get("torch") if isinstance(packages, Mapping) else None
    want = _cuda_major(torch.get("cuda") if isinstance(torch, Mapping) else None)
    for soname in needed:
        path = str(found.get(soname))
        if "/nvidia/" not in path:
            continue  # a toolkit's or the system's copy: its CUDA build is not read (its own note)
        major = 13 if "/nvidia/cu13/" in path else (majors[0] if len(majors) == 1 else None)
        if major is None or want is None:
            return unknown(f"which CUDA major the nvidia-nvshmem wheel of {path} is built for, or torch's, is not "
                           "known (packages nvidia-nvshmem-cu12 / -cu13, torch.cuda)")  # fmt: skip
        if major != want:
            return unknown(f"it links {path}, NVSHMEM's CUDA {major} wheel, under torch's CUDA {want}: whether that "
                           "pairing runs is not read")  # fmt: skip
    libs = ", ".join(f"{n} at {found.get(n)}" for n in needed) or "no NVSHMEM library"
    return CheckResult(CHECK, "ok", observed, f"{module} and the libraries it links",
                       f"{dist} is installed with {first}{at}, which links {libs}", source, subject)  # fmt: skip


def _nvshmem_majors(facts: Mapping[str, Any]) -> list[int]:
    packages = facts.get("packages")
    pk: Mapping[str, Any] = packages if isinstance(packages, Mapping) else {}
    out = []
    for major in (12, 13):
        p = pk.get(f"nvidia-nvshmem-cu{major}")
        if isinstance(p, Mapping) and p.get("installed") is True:
            out.append(major)
    return out


STORAGE_CONFIG_CHECK = "storage-config"
#: the check ids this module's results carry (imend15: gate_preflight.preflight_checks derives --allow's from them)
CHECK_IDS = (CHECK, QUANT_CHECK, TRANSFER_CHECK, STORAGE_CONFIG_CHECK)


def _address(value: object) -> bool:
    """Whether a Mooncake store configuration value is an address: a string with more than spaces in it."""
    return isinstance(value, str) and bool(value.strip())


def _no_address(where: str, config: Mapping[str, Any], keys: list[str], storage: str | None = "mooncake") -> str:
    """The message of a configuration that names the store's keys with no address in any (irev72): SGLang tests only
    that a key is there (from_file: 0.5.6 mooncake_store.py:67, 0.5.23 :152-158; the extra config: not None) and hands
    the value to Mooncake's setup, whose outcome was not read (ifc64: another backend's reader of that value, not
    judged here either)."""
    given = ", ".join(f"{k}={config.get(k)!r}" for k in keys if k in config)
    if storage != "mooncake":
        return (f"{where} gives {given}, no non-empty string: what SGLang's {storage} backend does with that value "
                "was not read (fail closed)")  # fmt: skip
    return (f"{where} gives {given}: SGLang takes the key as the store's configuration and hands that value to "
            "Mooncake's setup as the address, and what Mooncake does with it was not read")  # fmt: skip


def endpoint_url_problem(value: str) -> tuple[Status, str] | None:
    """ifc65: why botocore's client refuses `value` as its endpoint_url (("fail", why)), or cannot be judged here
    (("unknown", why)); None for an http(s) URL with a host name or IPv4 address. botocore's EndpointCreator raises
    ValueError 'Invalid endpoint: VALUE' where the URL holds a tab or newline, or urlsplit finds no host in it (a
    `HOST:PORT` with no scheme: `10.0.0.1:8333` splits as a path, `seaweed:8333` as scheme `seaweed`), or the host is
    no dotted name of letters, digits and hyphens (botocore 1.44.18 endpoint.py :407-410, utils.py
    is_valid_endpoint_url :1314-1340; `boto3.client('s3', endpoint_url='10.0.0.1:8333')` raised it here). Another
    scheme, an IPv6 host or a port that is no number is left unknown (not read further)."""
    import re
    from urllib.parse import urlsplit

    if any(c in value for c in "\t\r\n"):
        return "fail", f"{value!r} holds a tab or newline, which botocore refuses ('Invalid endpoint')"
    try:
        parts = urlsplit(value)
        host = parts.hostname
        parts.port  # noqa: B018 (read for its ValueError: a port that is no number)
    except ValueError as exc:
        return "unknown", f"{value!r} is not a URL Python's urlsplit reads ({exc}); botocore's reading not judged"
    if host is None:
        return "fail", (
            f"{value!r} names no host as a URL (a scheme is needed: http://HOST:PORT), and botocore "
            "raises ValueError 'Invalid endpoint' as the backend builds its S3 client at startup"
        )
    if parts.scheme.lower() not in ("http", "https") or ":" in host or not host.isascii():
        return "unknown", f"{value!r}: a scheme other than http / https, an IPv6 or non-ASCII host, not judged here"
    labels = host[:-1] if host.endswith(".") else host
    if len(labels) > 255 or not re.fullmatch(r"(?:(?!-)[A-Za-z0-9-]{1,63}(?<!-)\.)*(?!-)[A-Za-z0-9-]{1,63}(?<!-)",
                                             labels):  # fmt: skip
        return "fail", (
            f"the host {host!r} of {value!r} is no dotted name of letters, digits and hyphens, which "
            "botocore refuses ('Invalid endpoint')"
        )
    return None


def _config_value(config: Mapping[str, Any], key: str) -> Any:
    """The value of an extra config's key: `a.b` is key b of the object under a (ifc64: TensorCast's
    tensorcast.daemon_address), None where a step is missing or not an object."""
    value: Any = config
    for part in key.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _is_number(value: object) -> bool:
    import math

    return type(value) in (int, float) and math.isfinite(value)  # type: ignore[arg-type]


def _nonblank(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


#: (irobust12) the typed configurations SGLang builds from the whole extra config of a backend, each field with what
#: is taken without doubt (a check that fails: the value is not read as taken: unknown). SeaweedFS (0.5.22-0.5.23
#: seaweedfs_store.py SeaweedFSConfig :44-59: a msgspec Struct converted strictly from the extra config's keys that
#: name its fields, the others dropped); TensorCast (0.5.21-0.5.23 tensorcast_store/host_allocator.py TensorcastConfig
#: :62-97 under the `tensorcast` object, TensorcastScratchConfig :56-59 under its `scratch`: pydantic models with
#: extra="forbid", strict strings, blank ones refused by validate_required_string)
_SEAWEEDFS_FIELDS: dict[str, Callable[[object], bool]] = {
    "endpoint": _nonblank,
    "bucket": _nonblank,
    "prefix": lambda v: isinstance(v, str),
    "region": _nonblank,
    "access_key": lambda v: v is None or isinstance(v, str),
    "secret_key": lambda v: v is None or isinstance(v, str),
    "max_workers": lambda v: type(v) is int and v > 0,
}
_TENSORCAST_FIELDS: dict[str, Callable[[object], bool]] = {
    "daemon_address": _nonblank,
    "namespace": _nonblank,
    "transfer_mode": lambda v: v in ("allocator", "scratch"),
    "model_id": lambda v: v is None or _nonblank(v),
    "model_version": _nonblank,
    "session_name_prefix": _nonblank,
    "region_name_prefix": _nonblank,
    "exists_timeout_s": lambda v: _is_number(v) and v > 0,  # type: ignore[operator]
    "transfer_timeout_s": lambda v: v is None or (_is_number(v) and v > 0),  # type: ignore[operator]
    "scratch": lambda v: (
        isinstance(v, Mapping) and set(v) <= {"capacity_bytes"} and all(type(x) is int and x > 0 for x in v.values())
    ),
}


def _typed_config_rest(storage: str | None, parsed: Mapping[str, Any]) -> str | None:
    """Why an extra config that names the store is not known to be taken (irobust12): a field of the backend's typed
    configuration (_SEAWEEDFS_FIELDS, _TENSORCAST_FIELDS) given a value it may refuse at startup, or a key the
    TensorCast object does not have (pydantic's extra="forbid": a ValidationError); None where every key is taken."""
    if storage == "seaweedfs":
        fields, given, where = _SEAWEEDFS_FIELDS, parsed, "SeaweedFSConfig (msgspec, strict)"
    elif storage == "tensorcast" and isinstance(parsed.get("tensorcast"), Mapping):
        fields, given, where = _TENSORCAST_FIELDS, parsed["tensorcast"], "TensorcastConfig (pydantic, extra forbidden)"
    else:
        return None
    for key, value in given.items():
        ok = fields.get(str(key))
        if ok is None:
            if storage == "tensorcast":
                return (f"the extra config's tensorcast object has {str(key)[:40]!r}, no field of SGLang's {where}: "
                        "a ValidationError at startup")  # fmt: skip
            continue  # (SeaweedFS takes only the keys that name its fields)
        if not ok(value):
            return (f"the extra config's {str(key)[:40]!r} is given a value SGLang's {where} may refuse at startup "
                    "(its type or range is not the one it takes): whether the store starts is not known")  # fmt: skip
    return None


#: (irev78) what the HiCache cache's own parse of the extra config takes from it, and the types it raises on (0.5.9
#: hiradix_cache.py :542-568, 0.5.14 hiradix_cache.py :653-688, 0.5.19 hiradix_cache.py :746-781, 0.5.23
#: hybrid_cache/hybrid_cache_controller.py :404-430: `extra_config.pop(NAME, default)` on the parsed value, then
#: ValueError where a value popped is not of its type), before it builds whichever storage backend
_CACHE_KEYS = (("prefetch_threshold", (int,), "int"), ("prefetch_timeout_base", (int, float), "number"),
               ("prefetch_timeout_per_ki_token", (int, float), "number"),
               ("hicache_storage_pass_prefix_keys", (bool,), "bool"))  # fmt: skip
_JSON_TYPES = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def cache_parse_problem(parsed: Any) -> str | None:
    """Why the HiCache cache's parse of an extra config read as `parsed` (the JSON value) raises at startup, or None:
    a top level that is no JSON object (`.pop` on a list, string, number or null: TypeError / AttributeError), or a
    prefetch value of another type (_CACHE_KEYS: ValueError). One reading for every backend's extra config, the @FILE
    of a backend with no entry (_any_backend_file) and Mooncake's (check_storage_config), which disagreed (irev78: a
    JSON array in the file was no verdict for the first, allowed, and unknown for the second)."""
    if not isinstance(parsed, dict):
        kind = "null" if parsed is None else _JSON_TYPES.get(type(parsed), type(parsed).__name__)
        return (f"its JSON is a{'n' if kind[0] in 'aeiou' else ''} {kind}, not an object: the cache calls .pop on "
                "it (AttributeError / TypeError)")  # fmt: skip
    for name, types, said in _CACHE_KEYS:
        if name in parsed:
            value = parsed[name]
            if not isinstance(value, types):  # (a JSON true is an int to isinstance, as in the release's check)
                got = "null" if value is None else _JSON_TYPES.get(type(value), type(value).__name__)
                return f"its {name} is a JSON {got}, and the cache raises ValueError '{name} must be {said}'"
    return None


def _parse_raises(storage: str, sglang_version: str | None, given: str, problem: str) -> tuple[str, str]:
    """(observed, message) of an extra config the HiCache cache raises on as it parses it at startup, one wording
    whether it is given as @FILE (`given` starts with "@") or as text (imend12: read_extra_file and _any_backend_text
    said it two ways). `problem`: "HEADLINE: what raises" (cache_parse_problem's, or the JSON parse's own)."""
    flag = "--hicache-storage-backend-extra-config"
    shown, parsed = (f"{flag} {given!r}", repr(given[1:])) if given.startswith("@") else (f"{flag} text", "the text")
    return (f"{shown}: {problem.partition(':')[0]}", f"SGLang {sglang_version} parses {parsed} as JSON and pops its "
            f"prefetch keys before it builds the {storage} backend, and raises at startup: {problem}. Give a JSON "
            "object with values of those types")  # fmt: skip


def _not_json(given: str) -> str:
    return f"it is not JSON: {'json.load' if given.startswith('@') else 'json.loads'} raises JSONDecodeError"


def read_extra_file(
    extra_config: str,
    storage: str,
    sglang_version: str | None,
    read_config_file: Callable[[str], tuple[str, Any]] | None,
) -> tuple[str | None, str, str, Any]:
    """The extra config's @FILE as the HiCache cache opens and parses it, one reading for every backend (irev78: the
    two readers, _any_backend_file's and Mooncake's in check_storage_config, were twins): (("fail", observed, message,
    None) where the parse raises at startup: an extension it does not load, a file absent, a .json file not JSON
    (the reader's tag, imend9) or its value one the parse raises on (cache_parse_problem); (None, how, why, got) else:
    the reader's tag and answer ("read" with the parsed JSON of a .json file; "unread", or "missing" for a .toml /
    .yaml file, which the reader does not parse)."""
    import posixpath

    flag = "--hicache-storage-backend-extra-config"
    path = extra_config[1:]
    ext = posixpath.splitext(path)[1].lower()
    if ext not in (".json", ".toml", ".yaml", ".yml"):
        return ("fail", f"{flag} {extra_config!r}: no .json / .toml / .yaml file",
                f"SGLang {sglang_version} reads {flag} @FILE by the file's extension (.json, .toml, .yaml, .yml) "
                f"before it builds the storage backend, and raises ValueError 'Unsupported config file' (or the "
                f"open fails) at startup for {path!r}. Name a .json, .toml or .yaml file", None)  # fmt: skip
    how, got = read_config_file(path) if read_config_file is not None and path else ("unread", "no path")
    if how == "absent":
        what = "it does not exist (FileNotFoundError)"
        return ("fail", f"{flag} {extra_config!r}: {what}", f"SGLang {sglang_version} opens the file {flag} names "
                f"with @ ({path!r}, from the server's working directory) before it builds the {storage} backend and "
                f"raises at startup: {what}. Give a readable JSON file, or the extra config as JSON text",
                None)  # fmt: skip
    problem = (
        _not_json(extra_config) if how == "missing" and ext == ".json"  # (the reader parses JSON: not .toml / .yaml)
        else cache_parse_problem(got) if how == "read" and ext == ".json"
        else None
    )  # fmt: skip
    if problem is not None:
        return ("fail", *_parse_raises(storage, sglang_version, extra_config, problem), None)
    if how == "missing" or (how == "read" and ext != ".json"):  # (a .toml / .yaml file: the reader parses JSON)
        how, got = "unread", f"a {ext} file is not parsed here"
    return None, how, str(got) if how != "read" else "", got


def _any_backend_file(
    storage: str,
    extra_config: str,
    generic: Any,
    sglang_version: str | None,
    read_config_file: Callable[[str], tuple[str, Any]] | None,
) -> CheckResult | None:
    """The extra config's @FILE of a backend with no storage_configs entry, judged as the releases of
    storage_configs.extra_config_file open and parse it (imend9): absent, a .json file not JSON or an extension the
    release does not load fails; a .toml / .yaml file, or one not read here, is unknown; a JSON file read is no verdict
    (what the backend reads in it is not judged). None outside those releases (or no such table)."""
    if not isinstance(generic, Mapping) or _version_in(sglang_version, str(generic.get("versions") or "")) is not True:
        return None
    flag = "--hicache-storage-backend-extra-config"
    subject = f"--hicache-storage-backend {storage}"
    required = f"{flag} @FILE naming a readable .json (or .toml / .yaml) file"
    source = generic.get("source")

    def result(status: Status, observed: str, message: str) -> CheckResult:
        return CheckResult(STORAGE_CONFIG_CHECK, status, observed, required, f"{subject}: {message}", source, subject)

    failed, how, why, _ = read_extra_file(extra_config, storage, sglang_version, read_config_file)
    if failed is not None:
        return result("fail", how, why)
    if how == "read":
        return None
    return result("unknown", f"{flag} {extra_config!r} not read", f"SGLang {sglang_version} parses "
                  f"{extra_config[1:]!r} before it builds the {storage} backend (a file it cannot parse raises at "
                  f"startup): {why}")  # fmt: skip


def _any_backend_text(storage: str, text: str, generic: Any, sglang_version: str | None) -> CheckResult | None:
    """ifc62: the extra config given as text (not @FILE) for a backend with no storage_configs entry, on the releases
    of storage_configs.extra_config_file: the HiCache cache json.loads it and pops its prefetch keys before it builds
    any backend, so text that is not JSON, or JSON the cache's parse raises on (cache_parse_problem: no object, a
    prefetch value of another type), raises at startup. None where the parse takes it (what the backend reads in it is
    not judged) or outside those releases."""
    import json

    if not isinstance(generic, Mapping) or _version_in(sglang_version, str(generic.get("versions") or "")) is not True:
        return None
    flag = "--hicache-storage-backend-extra-config"
    subject = f"--hicache-storage-backend {storage}"
    try:
        problem = cache_parse_problem(json.loads(text))
    except ValueError:
        problem = _not_json(text)
    except RecursionError:  # (irobust11: nested deeper than this reader goes; whether the server's parse does is not
        # known: its own recursion limit and stack depth decide; an internal error, exit 4, before)
        return CheckResult(STORAGE_CONFIG_CHECK, "unknown", f"{flag} text not read", f"{flag} a JSON object (or @FILE)",
                           f"{subject}: SGLang {sglang_version} parses {flag} as JSON before it builds the {storage} "
                           "backend; the text nests deeper than this reader goes, so whether that parse takes it is "
                           "not known", generic.get("source"), subject)  # fmt: skip
    if problem is None:
        return None
    observed, message = _parse_raises(storage, sglang_version, text, problem)
    return CheckResult(STORAGE_CONFIG_CHECK, "fail", observed, f"{flag} a JSON object (or @FILE)",
                       f"{subject}: {message}", generic.get("source"), subject)  # fmt: skip


def check_storage_config(
    storage: str | None,
    extra_config: str | None,
    env: Mapping[str, str],
    data: Mapping[str, Any],
    sglang_version: str | None,
    read_config_file: Callable[[str], tuple[str, Any]] | None = None,
    extra_file_read: bool = True,
    read_text: Callable[[str], tuple[str, str]] | None = None,
) -> CheckResult | None:
    """Whether a HiCache storage backend finds the configuration it reads as it is built (preflight.json
    storage_configs), in the order the release reads it: --hicache-storage-backend-extra-config (`extra_config`, the
    text as given; None: not given) naming one of `extra_config_keys`, else the file the entry's `config_file_env`
    names (read by `read_config_file`, handed in by the launch layer: ("read", the parsed JSON), ("absent", why) for a
    file the release would fail to open, ("missing", why) for one it would fail to parse as JSON, ("unread", why) for
    one not read here), else `env_any` in `env` (the
    server's environment; `empty_is_unset`: the release reads the variable with os.getenv, so an empty value is none).
    None where no entry names the backend or the release is outside its range; unknown where the release is not known,
    the extra config is not a JSON object the check can read, or a value the release reads was not read.

    igap56: an extra config `@PATH` (the entry's `extra_config_file_versions`: the releases that load the file it
    names) is read with `read_config_file` where PATH is a .json file and `extra_file_read` (the HiCache path; a PD
    decode server's offload manager json.loads the text as it is: not read, unknown); a file absent on the live host or
    not JSON, or an extension the release does not load, fails; a .toml / .yaml file is unknown."""
    table = data.get("storage_configs")
    spec: Mapping[str, Any] = table if isinstance(table, Mapping) else {}
    entries = [e for e in spec.get("entries") or [] if isinstance(e, Mapping) and e.get("storage_backend") == storage]
    entries = [e for e in entries if _version_in(sglang_version, str(e.get("versions", ""))) is not False]
    if storage is not None and not entries and extra_file_read and str(extra_config or "").startswith("@"):
        # (imend9) any other storage backend (hf3fs, nixl, aibrix, eic, lmcache, file, ...): the HiCache cache parses
        # the extra config before it builds whichever backend, so an @FILE it cannot open or parse raises at startup
        # for them too (storage_configs.extra_config_file); what the backend then reads from it is not judged here
        return _any_backend_file(storage, str(extra_config), spec.get("extra_config_file"), sglang_version,
                                 read_config_file)  # fmt: skip
    if storage is not None and not entries and extra_file_read and extra_config:
        return _any_backend_text(storage, str(extra_config), spec.get("extra_config_file"), sglang_version)
    if storage is None or not entries:
        return None
    entry = entries[0]
    subject = f"--hicache-storage-backend {storage}"
    keys = [str(k) for k in entry.get("extra_config_keys") or []]
    names = [str(n) for n in entry.get("env_any") or []]
    file_env = entry.get("config_file_env")
    file_keys = entry.get("config_file_keys")
    empty_unset = entry.get("empty_is_unset") is True
    source = entry.get("source")
    places = [*([f"--hicache-storage-backend-extra-config with {' or '.join(keys)}"] if keys else []),
              *([f"{file_env} naming a JSON file with {' or '.join(str(k) for k in file_keys or keys)}"]
                if isinstance(file_env, str) else []),
              *([f"{' or '.join(names)} set{' (not empty)' if empty_unset else ''}"] if names else [])]  # fmt: skip
    required = "one of: " + "; ".join(places)

    def result(status: Status, observed: str, message: str) -> CheckResult:
        return CheckResult(STORAGE_CONFIG_CHECK, status, observed, required, f"{subject}: {message}", source, subject)

    needs = entry.get("client_needs_standalone")
    client_keys = [str(k) for k in needs.get("keys") or []] if isinstance(needs, Mapping) else []

    def client_only(where: str, named: Mapping[str, Any], standalone: bool) -> CheckResult | None:
        """ifc54: unknown where only a client key names the store (no master with an address) outside standalone
        mode, in which the release hands Mooncake's setup a master of None; None where the store is named otherwise."""
        if not isinstance(needs, Mapping) or standalone:
            return None
        if any(_address(named.get(k)) for k in named if k not in client_keys):
            return None
        if not any(_address(named.get(k)) for k in client_keys):
            return None
        flag = f"{needs.get('standalone_key')} true" if where != "the environment" else f"{needs.get('standalone_env')}"
        return result("unknown", f"{where} names only a client ({', '.join(k for k in client_keys if k in named)})",
                      f"SGLang {sglang_version} takes a client address only in standalone mode ({flag}), not given "
                      f"in {where}: outside it the store calls Mooncake's setup with no master address (None where "
                      "the binding takes a string: a TypeError at startup, inferred, not run). Give the master "
                      f"(master_server_address / MOONCAKE_MASTER) or the standalone mode")  # fmt: skip

    def _true(value: Any) -> bool:
        # (SGLang's EnvBool: value.lower() in true / 1 / yes / y, unstripped; anything else is its default, False:
        # 0.5.10 and 0.5.23 environ.py EnvBool.parse, EnvField.get; irev73: ' true' was read as true)
        return value is True or (isinstance(value, str) and value.lower() in ("true", "1", "yes", "y"))

    at_file = extra_file_read and bool(extra_config) and str(extra_config).startswith("@")
    file_range = str(entry.get("extra_config_file_versions") or "")
    if at_file and keys and file_range and _version_in(sglang_version, file_range) is True:
        # (igap56) `@PATH`: the release opens PATH (from the server's working directory) and loads it by its
        # extension; a file it cannot open or parse, or an extension it does not take, raises at startup (one reading
        # with any backend's: read_extra_file)
        flag = "--hicache-storage-backend-extra-config"
        failed, how, why, got = read_extra_file(str(extra_config), storage, sglang_version, read_config_file)
        if failed is not None:
            return result("fail", how, why)
        if how != "read" or not isinstance(got, dict):
            return result("unknown", f"{flag} {extra_config!r} not read", f"SGLang {sglang_version} reads the store's "
                          f"extra config from {str(extra_config)[1:]!r}: {why}, so whether it names the store is not "
                          "known")  # fmt: skip
        extra_config = _as_json(got)
    elif extra_file_read and extra_config and not at_file:
        # (irev79) the text itself: the HiCache cache json.loads it and pops its prefetch keys before it builds this
        # backend too, so text it raises on fails as any other backend's does (and as the same content in @FILE)
        raised = _any_backend_text(storage, str(extra_config), spec.get("extra_config_file"), sglang_version)
        if raised is not None:
            return raised
    if extra_config and keys:  # (an empty text is no extra config: the release parses only a non-empty one)
        import json

        try:
            parsed = json.loads(extra_config)
        except (ValueError, RecursionError):  # (irobust11: RecursionError too, nested deeper than json goes: unknown)
            parsed = None
        if not isinstance(parsed, dict):
            return result("unknown", "--hicache-storage-backend-extra-config not read", "the extra config is not a "
                          "JSON object this check reads (a file or other text): whether it names the store is not "
                          "known")  # fmt: skip
        if any(_config_value(parsed, k) is not None for k in keys):
            if any(_address(_config_value(parsed, k)) for k in keys):
                named = {k: _config_value(parsed, k) for k in keys if _config_value(parsed, k) is not None}
                std = needs.get("standalone_key") if isinstance(needs, Mapping) else None
                client = client_only(
                    "--hicache-storage-backend-extra-config", named, parsed.get(str(std)) is True
                )  # (the extra config's own key, read as given: a JSON true)
                for url_key in [str(k) for k in entry.get("extra_config_url_keys") or []]:
                    url = _config_value(parsed, url_key)
                    bad = endpoint_url_problem(url) if isinstance(url, str) and _address(url) else None
                    if bad is not None:  # (ifc65: `{"endpoint": "10.0.0.1:8333"}` was ok)
                        return result(bad[0], f"extra config {url_key}={url!r}", f"{url_key} {bad[1]}")
                rest = _typed_config_rest(storage, parsed)
                if rest is not None:
                    return result("unknown", "extra config names the store; another of its keys not taken", rest)
                unsigned = _no_credentials(entry.get("credentials"), parsed, env, read_text)
                if unsigned is not None:  # (ifc66: SeaweedFS with no access key anywhere read was ok)
                    return result("unknown", "extra config names the store; no credentials read", unsigned)
                return client or result(
                    "ok", "extra config names the store", "--hicache-storage-backend-extra-config names the store"
                )
            named = {k: _config_value(parsed, k) for k in keys if k in parsed or _config_value(parsed, k) is not None}
            return result("unknown", "extra config names the store with no address", _no_address(
                "--hicache-storage-backend-extra-config", named, keys, storage))  # fmt: skip
    known = _version_in(sglang_version, str(entry.get("versions", ""))) is True
    if not known:
        return result("unknown", "no configuration given", f"SGLang's release is not known; {entry.get('message')}")
    if isinstance(file_env, str) and file_env in env and (env[file_env] or not empty_unset):
        path = env[file_env]
        how, got = read_config_file(path) if read_config_file is not None and path else ("missing", "an empty path")
        wanted = [str(k) for k in file_keys] if isinstance(file_keys, list) else keys
        if how == "read" and isinstance(got, dict) and any(k in got for k in wanted):
            if any(_address(got.get(k)) for k in wanted):
                std = needs.get("standalone_key") if isinstance(needs, Mapping) else None
                named = {k: got.get(k) for k in wanted if got.get(k) is not None}
                client = client_only(f"the file {file_env} names", named, got.get(str(std)) is True)
                return client or result(
                    "ok", f"{file_env} names a file with {' or '.join(k for k in wanted if k in got)}",
                    f"the store is named by the file {file_env} names",
                )  # fmt: skip
            if isinstance(file_keys, list):  # (irev72: the key is there, its value no address: passed as ok before)
                return result("unknown", f"{file_env} names a file with no address", _no_address(
                    f"the file {file_env} names ({path!r})", got, wanted))  # fmt: skip
        if how == "unread" or (how == "read" and not isinstance(file_keys, list)):
            why = got if how == "unread" else f"it holds no {' or '.join(wanted)} and this release does not check it"
            return result("unknown", f"{file_env} file not read", f"SGLang {sglang_version} reads the store's "
                          f"configuration from the file {file_env} names ({path!r}), not from the environment: "
                          f"{why}, so whether it names the store is not known")  # fmt: skip
        found = got if how in ("missing", "absent") else f"it holds no {' or '.join(wanted)}"
        return result(
            "fail",
            f"{file_env}={path!r}: {found}",
            f"SGLang {sglang_version} reads the store's "
            f"configuration from the file {file_env} names ({path!r}) and raises as HiCache builds its "
            f"storage backend at startup: {found}. Give the file {' or '.join(wanted)}, or leave {file_env} unset",
        )
    given = [n for n in names if n in env and (env[n] or not empty_unset)]
    if given:
        if any(env[n].strip() for n in given):
            client = None
            if isinstance(needs, Mapping) and client_keys:
                client_env = [str(n) for n in needs.get("env") or []]
                # the client variables as the client key, the others (the master) under their own names
                named_env = {(client_keys[0] if n in client_env else n): env[n] for n in given if env[n].strip()}
                client = client_only("the environment", named_env, _true(env.get(str(needs.get("standalone_env")))))
            return client or result("ok", f"{given[0]} set", f"its configuration is named by {given[0]} (the "
                                    "master it names is not reached here)")  # fmt: skip
        return result("unknown", f"{given[0]} set but empty", f"{given[0]} is set to an empty value, which SGLang "
                      f"{sglang_version} takes as set (it reads is_set, the name in os.environ) and hands to "
                      "Mooncake's setup as the address: what Mooncake does with it was not read")  # fmt: skip
    return result("fail", "no configuration given", str(entry.get("message")))


def _no_credentials(
    spec: Any, parsed: Mapping[str, Any], env: Mapping[str, str], read_text: Callable[[str], tuple[str, str]] | None
) -> str | None:
    """(ifc66) Why a backend that signs its requests (storage_configs entry `credentials`: SeaweedFS's boto3 client)
    may find no credentials: None where the extra config gives every one of `keys` as a non-empty string (the release
    hands them to the client only so), the server's environment sets every one of `env_all` (botocore's EnvProvider,
    first in its chain), or (imend17) the shared credentials / config file's profile holds both keys (aws_profile_keys,
    through `read_text`: the box the server runs on, None where it is not read); else the reason, naming the places
    botocore also looks that are not read here."""
    if not isinstance(spec, Mapping):
        return None
    keys = [str(k) for k in spec.get("keys") or []]
    if keys and all(isinstance(parsed.get(k), str) and parsed.get(k) for k in keys):
        return None
    names = [str(n) for n in spec.get("env_all") or []]
    if names and all(env.get(n) for n in names):
        return None
    if "AWS_ACCESS_KEY_ID" not in names:
        return str(spec.get("message"))
    found, why = aws_profile_keys(env, read_text)
    if found:
        return None
    return f"{why}. {spec.get('message')}"


#: (imend17) keys of a botocore profile whose provider comes before the shared credentials file's or the config file's
#: keys in create_credential_resolver's chain (botocore 1.44.18 credentials.py :84-160: env, AssumeRoleProvider
#: (role_arn, credential_source, source_profile), ProfileProviderBuilder.providers :205-214: web identity, SSO,
#: SharedCredentialProvider, login, ProcessProvider (credential_process), ConfigProvider): where one is there the
#: credentials may come from what is not read here
_AWS_PREEMPTING = ("role_arn", "credential_source", "source_profile", "web_identity_token_file", "sso_session",
                   "sso_start_url", "sso_account_id", "login_session", "credential_process")  # fmt: skip


def _ini_key_names(text: str) -> dict[str, dict[str, bool]] | None:
    """An INI text as configparser.RawConfigParser reads it (botocore configloader.raw_config_parse): each section's
    key names (lower-cased, as optionxform does) with whether the value is non-empty. The values themselves are never
    kept. None where RawConfigParser raises (a key before any section, a line with neither `=` nor `:`, a section or
    key given twice: strict mode) or a value continues on an indented line (a botocore subsection): botocore raises
    ConfigParseError or reads what is not read here."""
    sections: dict[str, dict[str, bool]] = {}
    current: dict[str, bool] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if raw[:1] in (" ", "\t") and current:
            return None  # (a continuation line)
        if line.startswith("[") and line.endswith("]") and len(line) > 2:
            name = line[1:-1]
            if name in sections:
                return None
            current = sections[name] = {}
            continue
        cut = min((k for k in (line.find("="), line.find(":")) if k >= 0), default=-1)
        if current is None or cut <= 0:
            return None
        key = line[:cut].strip().lower()
        if key in current:
            return None
        current[key] = bool(line[cut + 1 :].strip())
    return sections


def _aws_path(env: Mapping[str, str], name: str, default: str) -> tuple[str | None, str]:
    """(the path botocore opens for the file `name` or its default, expanded as raw_config_parse expands it; None where
    it is not known here) and how it was named."""
    path = env.get(name, default)
    named = f"{name}={path!r}" if name in env else f"{name} not set: {default}"
    if "$" in path or (path.startswith("~") and not (path == "~" or path.startswith("~/"))):
        return None, named  # (expandvars, ~user: not followed)
    if path.startswith("~"):
        home = env.get("HOME")
        if not home:
            return None, named
        path = home.rstrip("/") + path[1:]
    return path, named


def aws_profile_keys(env: Mapping[str, str], read_text: Callable[[str], tuple[str, str]] | None) -> tuple[bool, str]:
    """(imend17) Whether botocore's credential chain finds a key pair in its profile's files for the server with
    environment `env`: the profile AWS_DEFAULT_PROFILE or AWS_PROFILE names (configprovider.py
    BOTOCORE_DEFAUT_SESSION_VARIABLES 'profile', the first set), else `default`; the shared credentials file
    (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials: SharedCredentialProvider, its section [NAME]) and then the
    config file (AWS_CONFIG_FILE, else ~/.aws/config: ConfigProvider, [profile NAME] or [default]), each holding
    aws_access_key_id and aws_secret_access_key with values. Only the key names are read; the values are never kept or
    shown. (False, why) where the files are not read (`read_text` None: --facts / --root / --image), a file is not
    read or not parsed, the environment holds one key of the pair or a web identity, a provider before them is
    configured in the profile, or the profile holds no pair."""
    if read_text is None:
        return False, ("the AWS shared credentials and config files are read only where the gate runs the server on "
                       "this box (not under --facts / --root / --image)")  # fmt: skip
    pair = [n for n in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if env.get(n)]
    if len(pair) == 1:
        return False, f"only {pair[0]} of the pair is set (botocore's EnvProvider raises PartialCredentialsError)"
    if env.get("AWS_WEB_IDENTITY_TOKEN_FILE"):
        return False, "AWS_WEB_IDENTITY_TOKEN_FILE is set (a web identity's role, assumed over the network)"
    which = next((n for n in ("AWS_DEFAULT_PROFILE", "AWS_PROFILE") if n in env), None)
    profile = (env[which] if which else "") or "default"
    sections: list[tuple[str, dict[str, bool] | None]] = []
    for name, default, config in (("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials", False),
                                  ("AWS_CONFIG_FILE", "~/.aws/config", True)):  # fmt: skip
        path, named = _aws_path(env, name, default)
        if path is None:
            return False, f"{named} is not read here (HOME not set, ~user or $VAR)"
        how, text = read_text(path)
        if how == "absent":
            sections.append((named, None))
            continue
        if how != "read":
            return False, f"{named} is not read ({text})"
        got = _ini_key_names(text)
        if got is None:
            return False, f"{named} is not in a shape read here (botocore may raise ConfigParseError)"
        if config:  # (configloader.build_profile_map: [profile NAME], and [default] for the default profile)
            section = got.get(f"profile {profile}")
            section = got.get("default") if section is None and profile == "default" else section
        else:
            section = got.get(profile)
        sections.append((named, section))
    shown = f"profile {profile!r}" + (f" ({which})" if which else "")
    for named, section in sections:
        early = [k for k in _AWS_PREEMPTING if section and k in section]
        if early:
            return False, (f"the {shown} in {named} sets {', '.join(early)}, whose credentials come from what is not "
                           "read here")  # fmt: skip
    if which and env[which] and all(section is None for _, section in sections):
        return False, f"the {shown} is in neither file (botocore raises ProfileNotFound)"
    for named, section in sections:
        if section is None or "aws_access_key_id" not in section:
            continue
        if section["aws_access_key_id"] and section.get("aws_secret_access_key"):
            return True, f"the {shown} in {named} holds aws_access_key_id and aws_secret_access_key"
        return False, (f"the {shown} in {named} holds aws_access_key_id without both values (botocore raises "
                       "PartialCredentialsError, or signs with an empty key)")  # fmt: skip
    files = " or ".join(named for named, _ in sections)
    return False, f"no aws_access_key_id / aws_secret_access_key pair in the {shown} of {files}"


def _yaml_key_given(text: str, key: str) -> bool | None:
    """Whether `key` is given a value in a YAML text, read as text (no YAML parser here): False where the name is
    nowhere in the text (no mapping can hold it), True where a plain top-level `key: value` line gives it a value
    (not null / ~), None for any other shape (indented, flow style, quoted, a null value)."""
    import re

    if key not in text:
        return False
    line = re.search(rf"(?m)^{re.escape(key)}[ \t]*:[ \t]*([^\s#].*?)?[ \t]*(?:#.*)?$", text)
    if line is None or not line.group(1) or line.group(1) in ("~", "null", "Null", "NULL"):
        return None
    return True


def check_storage_config_file(
    storage: str | None,
    env: Mapping[str, str],
    data: Mapping[str, Any],
    sglang_version: str | None,
    read_text: Callable[[str], tuple[str, str]] | None,
) -> CheckResult | None:
    """ifc63: the configuration file a storage backend opens itself as it is built (preflight.json
    storage_configs.config_files: EIC's YAML file, REMOTE_EIC_YAML or its default path). `read_text` (handed in by
    the launch layer) answers ("read", the text), ("absent", why) where the server would not find the file, ("unread",
    why) where it was not read. Fails where the file is absent or names a required key nowhere; unknown where it was
    not read, the release is not known, or a key is in no shape read here; None where no entry names the backend, the
    release is outside its range, or every key is given."""
    table = data.get("storage_configs")
    spec: Mapping[str, Any] = table if isinstance(table, Mapping) else {}
    listed = spec.get("config_files") or []
    entries = [e for e in listed if isinstance(e, Mapping) and e.get("storage_backend") == storage]
    entries = [e for e in entries if _version_in(sglang_version, str(e.get("versions", ""))) is not False]
    if storage is None or not entries:
        return None
    entry = entries[0]
    name, default = str(entry.get("env")), str(entry.get("default"))
    keys = [str(k) for k in entry.get("keys") or []]
    subject = f"--hicache-storage-backend {storage}"
    # (os.environ.get(NAME) is not None: an empty value is the path "", which does not exist)
    path = env.get(name, default)
    required = f"the YAML file {name} names (else {default}) with {', '.join(keys)}"
    source = entry.get("source")

    def result(status: Status, observed: str, message: str) -> CheckResult:
        return CheckResult(STORAGE_CONFIG_CHECK, status, observed, required, f"{subject}: {message}", source, subject)

    if _version_in(sglang_version, str(entry.get("versions", ""))) is None:
        return result("unknown", f"SGLang {sglang_version or 'not known'}", f"whether this release opens {name}'s "
                      f"file is not known here. {entry.get('message')}")  # fmt: skip
    where = f"{name}={path!r}" if name in env else f"{name} not set: {path}"
    how, text = read_text(path) if read_text is not None and path else ("absent", f"{path!r} does not exist")
    if how == "absent":
        return result("fail", f"{where}: not there ({text})", str(entry.get("message")))
    if how != "read":
        return result("unknown", f"{where}: not read ({text})", f"SGLang {sglang_version} opens it as the backend "
                      f"is built and raises where it is not there. {entry.get('message')}")  # fmt: skip
    given = {k: _yaml_key_given(text, k) for k in keys}
    missing = [k for k, v in given.items() if v is False]
    if missing:
        return result("fail", f"{where}: no {', '.join(missing)} in it", str(entry.get("message")))
    unread = [k for k, v in given.items() if v is None]
    if unread:
        return result("unknown", f"{where}: {', '.join(unread)} not read as a top-level `key: value` line",
                      f"the YAML file's {', '.join(unread)} is in a shape not read here (the backend reads it with "
                      f"yaml.safe_load and raises without a value). {entry.get('message')}")  # fmt: skip
    return None
