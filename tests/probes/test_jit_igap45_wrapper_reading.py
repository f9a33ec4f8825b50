"""igap45 (issue 16, item 2): _layout_major (a GCC driver's major from its prefix) and _wrapper_link_driver (the GCC
driver a wrapper in GCC's name runs for a link) read a compiler wrapper script the same way, now through one helper,
jit._wrapper_targets, which gives the script's text, the programs and -B prefixes its execs name, and why it is not
read as a wrapper of its prefix's own programs; each caller says that in its own words, as before."""

from __future__ import annotations

import stat
from pathlib import Path

from stackcheck.probes.jit import _SCRIPT_MAX, _wrapper_link_driver, _wrapper_targets
from stackcheck.readers.fsview import HostView


def _script(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_one_reading_of_a_wrapper_script(tmp_path: Path) -> None:
    view, prefix = HostView(), str(tmp_path / "opt/gcc")
    real = tmp_path / "opt/gcc/bin/g++-real"
    real.parent.mkdir(parents=True)
    real.write_bytes(b"\x7fELF" + bytes(60))
    text = f'#!/bin/sh\nexec {real} -B{prefix}/bin/ "$@"\n'
    got = _wrapper_targets(view, _script(tmp_path / "opt/gcc/bin/g++", text), prefix)
    assert got == (text, [str(real), f"-B{prefix}/bin/"], None)
    outside = _script(tmp_path / "opt/gcc/bin/g++2", '#!/bin/sh\nexec /usr/bin/g++-15 "$@"\n')
    kind, detail = _wrapper_targets(view, outside, prefix)[2] or ("", "")
    assert kind == "outside" and detail.startswith("/usr/bin/g++-15 -> "), detail
    assert _wrapper_targets(view, str(tmp_path / "none"), prefix)[2] == ("unreadable", "")
    long = _script(tmp_path / "opt/gcc/bin/g++3", "#!/bin/sh\n" + "#" * _SCRIPT_MAX)
    assert _wrapper_targets(view, long, prefix)[2] == ("long", "")
    # the link driver's words for each, as before the helper
    assert _wrapper_link_driver(view, outside, prefix)[1].startswith("it runs '/usr/bin/g++-15 -> ")
    assert _wrapper_link_driver(view, long, prefix)[1] == (
        f"it is longer than {_SCRIPT_MAX} bytes: the gcc it runs is not read"
    )
