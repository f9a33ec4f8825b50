"""pcie.acs_control reads the extended capability chain with int.from_bytes, as struct.unpack_from("<I"/"<H") read
it (held equal on listed and generated config spaces), and the probe module imports no struct (~2.4 M instructions
of every probed start where _struct is a shared library, as with pyenv's builds)."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.probes.pcie import ACS_CAP_ID, CONFIG_SIZE, EXT_CAP_START, acs_control

ROOT = Path(__file__).resolve().parent.parent.parent


def reference(config: bytes) -> int | None:
    """The struct reading of the chain (the module's before)."""
    offset = EXT_CAP_START
    seen: set[int] = set()
    while offset and offset not in seen and offset + 8 <= len(config):
        seen.add(offset)
        (header,) = struct.unpack_from("<I", config, offset)
        if header in (0, 0xFFFFFFFF):
            return None
        if header & 0xFFFF == ACS_CAP_ID:
            (control,) = struct.unpack_from("<H", config, offset + 6)
            return int(control)
        offset = (header >> 20) & 0xFFC
    return None


def chain(caps: list[tuple[int, int]], size: int = CONFIG_SIZE) -> bytes:
    """A config space whose extended capabilities (id, control word) follow one another from 0x100."""
    data = bytearray(size)
    at = EXT_CAP_START
    for n, (cap, control) in enumerate(caps):
        following = at + 0x10 if n + 1 < len(caps) else 0
        struct.pack_into("<IHH", data, at, cap | (1 << 16) | (following << 20), 0, control)
        at = following
    return bytes(data)


def test_listed_chains() -> None:
    for config in (chain([(0x1, 0), (ACS_CAP_ID, 0x1F)]), chain([(ACS_CAP_ID, 0x0C)]), chain([(0x1, 5)]),
                   bytes(CONFIG_SIZE), b"\xff" * CONFIG_SIZE, chain([(ACS_CAP_ID, 0xABCD)], size=0x108),
                   chain([(0x2, 1), (0x3, 2), (ACS_CAP_ID, 0xFFFF)])):  # fmt: skip
        assert acs_control(config) == reference(config)
    assert acs_control(chain([(0x1, 0), (ACS_CAP_ID, 0x1F)])) == 0x1F


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=EXT_CAP_START + 1, max_size=CONFIG_SIZE))
def test_generated_config_spaces(tail: bytes) -> None:
    assert acs_control(tail) == reference(tail)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0x1, 0x2, ACS_CAP_ID, 0x10]), st.integers(0, 0xFFFF)), max_size=8))
def test_generated_chains(caps: list[tuple[int, int]]) -> None:
    config = chain(caps)
    assert acs_control(config) == reference(config)


def test_the_probe_imports_no_struct() -> None:
    code = "import sys; import stackcheck.probes.pcie; print('struct' in sys.modules, '_struct' in sys.modules)"
    bare = subprocess.run([sys.executable, "-c", "import sys; print('struct' in sys.modules)"], capture_output=True,
                          text=True, check=True, timeout=60).stdout.split()  # fmt: skip
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}).stdout.split()  # fmt: skip
    if bare == ["False"]:
        assert got[0] == "False"
