"""Verdict reasons from the symbol versions of the --deep shared-library resolution (facts.libs
version_failures / version_errors, stackcheck/readers/libs.py): the version half of the check shared-libs.

A library found for an object that lacks a version the object needs from it (a non-weak DT_VERNEED name
missing from its DT_VERDEF names) makes glibc's loader refuse the load: "version `X' not found (required by
Y)" (elf/dl-version.c, match_symbol; _dl_check_map_versions runs it for every needed library when an object
is mapped, and dlopen fails). torch's libraries and the kernel package's are loaded by every SGLang launch
(import torch, import sgl_kernel), so there the effect is crash; another package's object fails when it is
imported, which not every launch does (degraded here, the message says what fails)."""

from __future__ import annotations

from collections.abc import Mapping

from stackcheck.facts.model import KERNEL_PACKAGES
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.verdicts.types import Reason

SOURCE = "GLIBC-DL-VERSION"
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
