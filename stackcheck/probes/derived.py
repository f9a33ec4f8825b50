"""What an installed release newer than the data holds in its own files: facts.derived.

It needs the packages probe's facts (versions and locations). Nothing is read unless an installed SGLang,
FlashInfer, kernel package or torch is newer than every release the manifests know; then
stackcheck.derive.installed reads only what the verdicts need (pins, server flags, compiled architectures),
cached per file, and stackcheck.derive.judge judges the release from it. The readers are imported only
then, so the common audit pays nothing.

The files are read on this host, or below a --root directory through its host paths. Inside an image they
are not read: each newer package gets an `error` saying so, and its verdicts stay unknown.
"""

from __future__ import annotations

from collections.abc import Mapping

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult

if TYPE_CHECKING:
    from typing import Any, ClassVar

NAME = "derived"


def _newer(facts: Mapping[str, Any], manifests: Any) -> dict[str, str]:
    """Package -> installed version, for the packages derive knows that are newer than the data."""
    from stackcheck.derive.installed import NEEDS, newer_than_data

    packages = facts.get("packages")
    out: dict[str, str] = {}
    if not isinstance(packages, Mapping):
        return out
    for name in NEEDS:
        pkg = packages.get(name)
        if isinstance(pkg, Mapping) and pkg.get("installed") is True and isinstance(pkg.get("version"), str):
            if newer_than_data(manifests, name, pkg["version"]):
                out[name] = pkg["version"]
    return out


def probe_derived(facts: Mapping[str, Any], manifests: Any, ctx: ProbeContext) -> dict[str, Any]:
    """The `derived` section ({} when nothing installed is newer than the data)."""
    from stackcheck.readers.fsview import HostView, is_host

    newer = _newer(facts, manifests)
    if not newer:
        return {}
    view = ctx.fs
    if not isinstance(view, HostView):
        why = f"its files are not read inside {getattr(view, 'description', 'an image')} (only on a host or --root)"
        return {n: {"version": v, "data_date": manifests.date, "error": why} for n, v in newer.items()}
    if not is_host(view):  # a --root directory: the locations are box paths below it
        packages = dict(facts.get("packages") or {})
        for name in newer:
            pkg = dict(packages[name])
            location = pkg.get("location")
            if isinstance(location, str) and location:
                try:
                    pkg["location"] = view.host_path(view.realpath(location))
                except (OSError, ValueError):
                    pkg["location"] = view.host_path(location)
            packages[name] = pkg
        facts = {**facts, "packages": packages}
    from pathlib import Path  # here, not at start-up: ~5 ms on 3.12 (derive reads paths anyway)

    from stackcheck.derive.installed import derive_installed

    if ctx.cache_dir == "":  # no cache asked for: an unwritable directory is no cache (derive.cache)
        cache_dir: Path | None = Path("/dev/null/stackcheck-no-cache")
    elif ctx.cache_dir:
        cache_dir = Path(ctx.cache_dir) / "derive"
    else:
        cache_dir = None  # derive's default: $STACKCHECK_CACHE_DIR, else the user cache directory
    return derive_installed(facts, manifests, cache_dir=cache_dir, env=ctx.host_environ)


class DerivedProbe(Probe):
    """Facts read from the files of an installed release newer than the data (always run; nothing to do
    on a box whose releases the manifests know)."""

    name: ClassVar[str] = NAME
    timeout_s: ClassVar[float] = 8.0
    sections: ClassVar[tuple[str, ...]] = ("derived",)
    needs: ClassVar[tuple[str, ...]] = ("packages",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        if ctx.manifests is not None:
            manifests = ctx.manifests()
        else:
            from stackcheck.knowledge.loader import load

            manifests = load([], env={})
        section = probe_derived(ctx.facts, manifests, ctx)
        if not section:
            return ProbeResult(facts={})  # nothing newer than the data: no section
        errors = [f"{name}: {entry['error']}" for name, entry in section.items() if entry.get("error")]
        return ProbeResult(
            facts={NAME: section}, status="partial" if errors else "ok", reason="; ".join(errors) or None
        )
