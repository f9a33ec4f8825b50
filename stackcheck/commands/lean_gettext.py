"""argparse without gettext and locale where no message catalog can exist (issue 21: ~2-3 ms of every start on
the 2-core box, with a search for catalog files at each message argparse translates).

argparse takes `gettext` and `ngettext` from the gettext module when it is first imported. import_argparse()
imports it with a stand-in gettext module in sys.modules that holds the two functions below, then takes the
stand-in away. They answer as gettext's do: gettext looks for a catalog under sys.base_prefix/share/locale only,
until a caller binds a domain elsewhere or changes the domain, which it can only do through the gettext module
itself; so while gettext is not imported and that directory does not exist, it translates nothing and gives each
message back; otherwise they ask the real gettext module (imported then)."""

from __future__ import annotations

import os
import sys


def _no_catalog() -> bool:
    """True when gettext would find no catalog: it is not imported (nothing is bound elsewhere) and its default
    directory (sys.base_prefix/share/locale) does not exist."""
    return "gettext" not in sys.modules and not os.path.isdir(os.path.join(sys.base_prefix, "share", "locale"))


def gettext(message: str) -> str:
    """gettext.gettext(message)."""
    if _no_catalog():
        return message
    import gettext as real

    return str(real.gettext(message))


def ngettext(singular: str, plural: str, n: int) -> str:
    """gettext.ngettext(singular, plural, n)."""
    if _no_catalog():
        return singular if n == 1 else plural
    import gettext as real

    return str(real.ngettext(singular, plural, n))


def import_argparse() -> None:
    """Import argparse with the two functions above for its messages. Where argparse or gettext is already
    loaded (a program that imports stackcheck, a test run), nothing changes."""
    if "argparse" in sys.modules or "gettext" in sys.modules:
        return
    import types

    stand_in = types.ModuleType("gettext")
    stand_in.gettext = gettext  # type: ignore[attr-defined]
    stand_in.ngettext = ngettext  # type: ignore[attr-defined]
    sys.modules["gettext"] = stand_in
    try:
        import argparse  # noqa: F401
    finally:
        if sys.modules.get("gettext") is stand_in:
            del sys.modules["gettext"]
