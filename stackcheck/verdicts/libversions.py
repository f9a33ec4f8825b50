"""Verdict reasons from the symbol versions of the --deep shared-library resolution (facts.libs
version_failures / version_errors, stackcheck/readers/libs.py): the version half of the check shared-libs.

A library found for an object that lacks a version the object needs from it (a non-weak DT_VERNEED name
missing from its DT_VERDEF names) makes glibc's loader refuse the load: "version `X' not found (required by
Y)" (elf/dl-version.c, match_symbol; _dl_check_map_versions runs it for every needed library when an object
is mapped, and dlopen fails). torch's libraries and the kernel package's are loaded by every SGLang launch
(import torch, import sgl_kernel), so there the effect is crash; another package's object fails when it is
imported, which not every launch does (degraded here, the message says what fails)."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from stackcheck.facts.model import KERNEL_PACKAGES
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.verdicts.types import Reason

SOURCE = "GLIBC-DL-VERSION"
SYMBOL_SOURCE = "GLIBC-DL-LOOKUP"
#: the packages whose objects every SGLang launch loads
_EVERY_LAUNCH = frozenset(("torch", *KERNEL_PACKAGES))
_SHOWN = 6  # version names listed in a message


def _names(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def version_reasons(libs: Mapping[str, Any]) -> list[Reason]:
    """One failing reason per library found too old for an object; one unknown per unreadable version table."""
    out: list[Reason] = []
    for f in libs.get("version_failures") or []:
        if not isinstance(f, Mapping):
            continue
        missing, defined = _names(f.get("missing")), _names(f.get("defined"))
        if not missing:
            continue
        pkg, obj, needed, winner = (str(f.get(k, "?")) for k in ("package", "object", "needed", "winner"))
        shown = ", ".join(defined[:_SHOWN]) + (f" and {len(defined) - _SHOWN} more" if len(defined) > _SHOWN else "")
        crash = pkg in _EVERY_LAUNCH
        out.append(
            {
                "rule": "shared-libs-version",
                "result": "fail",
                "effect": "crash" if crash else "degraded",
                "message": (
                    f"{pkg} {obj} needs {needed} version {', '.join(missing)}; the loader finds {winner}"
                    f"{' (' + str(f['via']) + ')' if f.get('via') else ''}, which defines only {shown or 'none'}: "
                    f'loading {obj} fails, "version `{missing[0]}\' not found (required by {obj})"'
                    + ("" if crash else f" (when {pkg} is imported)")
                ),
                "observed": f"{winner} defines {shown or 'no versions'}",
                "required": f"version {', '.join(missing)} (the version needs of {obj} for {needed})",
                "source": SOURCE,
            }
        )
    out += symbol_reasons(libs)
    for e in libs.get("version_errors") or []:
        if isinstance(e, str):
            out.append(
                {
                    "rule": "shared-libs-version",
                    "result": "unknown",
                    "message": f"symbol versions not read: {e}",
                    "source": SOURCE,
                }
            )
    return out


def symbol_reasons(libs: Mapping[str, Any]) -> list[Reason]:
    """One failing reason per CUDA library torch loads whose own dependency is found without symbols it needs
    (facts.libs.symbol_failures, the second hop of stackcheck/readers/libs.py): import torch fails with
    "undefined symbol: X, version V" (Python and ctypes load with RTLD_NOW, so every non-weak symbol is bound at
    load; glibc elf/dl-lookup.c _dl_lookup_symbol_x)."""
    out: list[Reason] = []
    for f in libs.get("symbol_failures") or []:
        if not isinstance(f, Mapping):
            continue
        missing = _names(f.get("missing"))
        if not missing:
            continue
        lib, needed, winner = (str(f.get(k, "?")) for k in ("library", "needed", "winner"))
        via = f" ({f['via']})" if f.get("via") else ""
        name, _, version = missing[0].partition("@")
        fix = (
            f"drop {posixpath.dirname(winner)} from LD_LIBRARY_PATH so that the copy torch installed is found"
            if f.get("via") == "LD_LIBRARY_PATH"
            else f"make the {needed} found the release {lib} was built against"
        )
        shown = ", ".join(missing[:_SHOWN]) + (f" and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else "")
        out.append(
            {
                "rule": "shared-libs-symbol",
                "result": "fail",
                "effect": "crash",
                "message": (
                    f"torch loads {lib}, which needs {shown} from {needed}; the loader finds {winner}{via}, which "
                    f"does not define {'them' if len(missing) > 1 else 'it'} (an older release, or a build without "
                    f'them): import torch fails, "undefined symbol: {name}{", version " + version if version else ""}"'
                    f" ({fix})"
                ),
                "observed": f"{winner}{via} does not define {shown}",
                "required": f"{needed} defining {shown} (the undefined symbols of {lib} bound to it)",
                "source": SYMBOL_SOURCE,
            }
        )
    return out
