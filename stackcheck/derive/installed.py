"""Derive at audit time: when an installed package is newer than every release the manifests know, read
the facts its own files hold (its pins, its server flags, its compiled architectures; the gate tables are
read by the source_tables probe for every release anyway) so the verdicts can judge it from them
(stackcheck.derive.judge). Only what a verdict needs is read, and each result is cached per installed
file (path, size, mtime), so a warm audit only stats a few files.

The result is the facts section `derived`: {package: {"version", "data_date", "origin", "pins"?, "flags"?,
"archs"?, "error"?}}. Nothing here raises: a package that cannot be read gets "error"."""

from __future__ import annotations

from collections.abc import Mapping

from stackcheck.facts.model import KERNEL_PACKAGES
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:  # the readers are imported only when a release is newer than the data (start-up stays lean)
    from pathlib import Path
    from typing import Any

    from stackcheck.derive.cache import Cache
    from stackcheck.derive.tree import FileKey, Release

#: package -> what its verdicts need read from the installed files
NEEDS: dict[str, tuple[str, ...]] = {
    "sglang": ("pins", "flags"),
    "flashinfer-python": ("pins",),
    **dict.fromkeys(KERNEL_PACKAGES[::-1], ("pins", "archs")),
    "flashinfer-jit-cache": ("archs",),
    "torch": ("archs",),
}


def newer_than_data(manifests: Any, name: str, version: str | None) -> bool:
    from stackcheck.facts.versions import newer_than_all

    if not version:
        return False
    return newer_than_all(version, [str(r.get("version", "")) for r in manifests.releases(name)])


def _keys(release: Release, names: list[str]) -> list[FileKey]:
    out = []
    for name in names:
        key = release.tree.file_key(name)
        if key is not None:
            out.append(key)
    return out


def _pins(release: Release, manifests: Any, cache: Cache) -> Any:
    from stackcheck.derive.release import derive_pins, read_metadata, tracked_dependencies

    file = f"{release.dist_info}/METADATA"
    keys = _keys(release, [file])
    cache_key = f"pins:{keys[0].path if keys else file}"
    hit = cache.get(cache_key, keys)
    if hit is not None:
        return hit
    meta = read_metadata(release)
    value = derive_pins(release, meta, tracked_dependencies(manifests, release.name))
    cache.put(cache_key, keys, value)
    return value


def _flags(release: Release, manifests: Any, cache: Cache) -> Any:
    from stackcheck.derive.flags import flag_sources
    from stackcheck.derive.release import derive_flags

    primary = flag_sources(release.tree)
    keys = _keys(release, primary)
    cache_key = f"flags:{release.tree.label}/{release.dist_info}"
    hit = cache.get(cache_key, keys)
    if hit is not None:
        return hit
    value = derive_flags(release, manifests.launch)
    read = _keys(release, list(value.get("files") or []))
    cache.put(cache_key, read or keys, value)
    return value


def _archs(release: Release, cache: Cache, globs: tuple[str, ...]) -> Any:
    """The package's binaries, one cache entry per file."""
    from pathlib import Path  # here: every audit imports this module (NEEDS), few read a release

    from stackcheck.derive.kernels import is_binary_name, scan_one

    root = Path(release.tree.label)
    names: list[str] = []
    for pattern in globs:
        names.extend(str(p.relative_to(root)) for p in sorted(root.glob(pattern)) if p.is_file() and not p.is_symlink())
    names = sorted({n for n in names if is_binary_name(n)})
    sass: set[str] = set()
    ptx: set[str] = set()
    files: list[dict[str, Any]] = []
    errors: list[str] = []
    for name in names:
        key = release.tree.file_key(name)
        if key is None:
            continue
        cache_key = f"binary:{key.path}"
        entry = cache.get(cache_key, [key])
        if entry is None:
            scanned = scan_one(release.tree, name)
            entry = {"none": True} if scanned is None else {k: v for k, v in scanned.items() if not k.startswith("_")}
            cache.put(cache_key, [key], entry)
        if entry.get("none"):
            continue
        if "error" in entry:
            errors.append(str(entry["error"]))
            continue
        files.append({"path": name, "sass": entry.get("sass", []), "ptx": entry.get("ptx", [])})
        sass.update(entry.get("sass", []))
        ptx.update(entry.get("ptx", []))
    from stackcheck.facts.archs import sort_targets

    return {"sass": sort_targets(sass), "ptx": sort_targets(ptx), "files": files, "errors": errors[:5]}


def derive_installed(
    facts: Mapping[str, Any], manifests: Any, cache_dir: Path | None = None, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The `derived` facts section (empty when nothing installed is newer than the data)."""
    packages = facts.get("packages")
    if not isinstance(packages, Mapping):
        return {}
    newer = {
        name: pkg
        for name, pkg in ((n, packages.get(n)) for n in NEEDS)
        if isinstance(pkg, Mapping)
        and pkg.get("installed") is True
        and isinstance(pkg.get("version"), str)
        and newer_than_data(manifests, name, pkg["version"])
    }
    if not newer:
        return {}
    from stackcheck.derive.cache import Cache, default_dir
    from stackcheck.derive.tree import TreeError, installed_release
    from stackcheck.readers.binaries import PACKAGE_GLOBS

    cache = Cache(cache_dir if cache_dir is not None else default_dir(env))
    out: dict[str, Any] = {}
    for name, pkg in newer.items():
        needs = NEEDS[name]
        version = str(pkg["version"])
        entry: dict[str, Any] = {"version": version, "data_date": manifests.date}
        out[name] = entry
        location = pkg.get("location")
        release = installed_release(location, name) if isinstance(location, str) and location else None
        if release is None:
            entry["error"] = f"no .dist-info of {name} found in {location}"
            continue
        release.name, release.version = name, version
        entry["origin"] = release.origin
        try:
            if "pins" in needs:
                entry["pins"] = _pins(release, manifests, cache)
            if "flags" in needs:
                entry["flags"] = _flags(release, manifests, cache)
            binaries = (facts.get("binaries") or {}).get(name) if isinstance(facts.get("binaries"), Mapping) else None
            if "archs" in needs and not (isinstance(binaries, Mapping) and binaries.get("sass")):
                entry["archs"] = _archs(release, cache, PACKAGE_GLOBS.get(name, ()))
        except (TreeError, OSError, ValueError) as exc:
            entry["error"] = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        except Exception as exc:  # a metadata or parse failure costs this package, never the audit
            entry["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return out


__all__ = ["NEEDS", "derive_installed", "newer_than_data"]
