"""argparse's messages without gettext and locale where no catalog can exist (stackcheck.commands.lean_gettext,
issue 21): the same answers as gettext's, the same bytes on every help and usage error, and no gettext or locale
in a run's modules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.cli import COMMANDS
from stackcheck.commands import lean_gettext

ROOT = Path(__file__).resolve().parent.parent.parent
MESSAGES = ["usage: ", "options", "show this help message and exit", "the following arguments are required: %s"]


def _child(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, cwd=ROOT)


@pytest.mark.parametrize("lang", ["", "C", "C.UTF-8", "en_US.UTF-8", "de_DE.UTF-8", "fr_FR:de"])
def test_the_answers_are_gettexts(lang: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a fresh process (gettext not imported) with the catalog directory absent, and with it present holding a
    German `messages` catalog: lean_gettext's answers are the real module's, for gettext and ngettext."""
    mo = tmp_path / "share" / "locale" / "de" / "LC_MESSAGES" / "messages.mo"
    mo.parent.mkdir(parents=True)
    mo.write_bytes(_catalog({"options": "Optionen", "show this help message and exit": "Hilfe zeigen"}))
    env = {"LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": "", "LANG": lang}
    for prefix in (str(tmp_path / "absent"), str(tmp_path)):
        code = (
            f"import sys; sys.base_prefix = {prefix!r}\n"
            "from stackcheck.commands import lean_gettext as g\n"
            f"lean = [g.gettext(m) for m in {MESSAGES!r}] + [g.ngettext('a', 'as', n) for n in (0, 1, 2)]\n"
            "assert 'gettext' not in sys.modules or " + repr(prefix == str(tmp_path)) + "\n"
            "import gettext\n"
            f"real = [gettext.gettext(m) for m in {MESSAGES!r}] + [gettext.ngettext('a', 'as', n) for n in (0, 1, 2)]\n"
            "print(lean == real, lean[1])"
        )
        out = _child(code, env)
        assert out.returncode == 0, out.stderr
        translated = prefix == str(tmp_path) and lang.rsplit(":", maxsplit=1)[-1].startswith("de")
        assert out.stdout.split() == ["True", "Optionen" if translated else "options"]


def _catalog(messages: dict[str, str]) -> bytes:
    """A GNU .mo catalog (little-endian, no hash table) of `messages`."""
    import struct

    keys = sorted(messages)
    ids = [k.encode() for k in keys]
    strs = [messages[k].encode() for k in keys]
    header = 7 * 4
    ids_at = header
    strs_at = ids_at + 8 * len(keys)
    data_at = strs_at + 8 * len(keys)
    table_ids, table_strs, blob = [], [], b""
    for s in ids:
        table_ids.append((len(s), data_at + len(blob)))
        blob += s + b"\0"
    for s in strs:
        table_strs.append((len(s), data_at + len(blob)))
        blob += s + b"\0"
    out = struct.pack("<7I", 0x950412DE, 0, len(keys), ids_at, strs_at, 0, 0)
    out += b"".join(struct.pack("<2I", *t) for t in table_ids)
    out += b"".join(struct.pack("<2I", *t) for t in table_strs)
    return out + blob


def test_help_and_usage_errors_are_the_same_bytes() -> None:
    """Every verb's --help, the top-level help and three usage errors, written by a run whose argparse uses
    lean_gettext, equal those of a run whose argparse imported gettext itself (gettext loaded first)."""
    runs = [["--help"], ["plan", "--bogus"], ["gate"], ["audit", "--format", "nope"]]
    runs += [[verb, "--help"] for verb in COMMANDS]
    code = (
        "import sys, io, contextlib\n"
        "{pre}\n"
        "from stackcheck.cli import main\n"
        "for argv in {runs!r}:\n"
        "    out, err = io.StringIO(), io.StringIO()\n"
        "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
        "        try:\n"
        "            code = main(argv)\n"
        "        except SystemExit as e:\n"
        "            code = e.code\n"
        "    print(repr((argv, code, out.getvalue(), err.getvalue())))\n"
        "print('gettext' in sys.modules, 'locale' in sys.modules)"
    )
    env = {"COLUMNS": "100", "LANG": "C.UTF-8"}
    lean = _child(code.format(pre="", runs=runs), env)
    real = _child(code.format(pre="import gettext", runs=runs), env)
    assert lean.returncode == real.returncode == 0, lean.stderr + real.stderr
    lean_lines, real_lines = lean.stdout.splitlines(), real.stdout.splitlines()
    assert lean_lines[:-1] == real_lines[:-1] and len(lean_lines) == len(runs) + 1
    assert "usage: stackcheck" in lean.stdout and "show this help message and exit" in lean.stdout
    if not os.path.isdir(os.path.join(sys.base_prefix, "share", "locale")):
        assert lean_lines[-1] == "False False"  # no catalog can exist: neither module imported


def test_nothing_changes_where_gettext_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A program that imported argparse or gettext itself keeps them as they are."""
    before = sys.modules.get("gettext"), sys.modules.get("argparse")
    lean_gettext.import_argparse()
    assert (sys.modules.get("gettext"), sys.modules.get("argparse")) == before
