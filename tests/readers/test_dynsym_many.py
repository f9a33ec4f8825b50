"""Many lookups in one file (the second hop looks up every symbol a CUDA library needs from another): once they
pass LOOKUPS_MANY, DynamicSymbols reads the hash chains, symbols and names in blocks kept for the next lookups
and the GNU bucket array whole. The answers and the errors are those of a fresh lookup per name, on good files
and on files whose tables are overwritten anywhere; the reads are a fraction of one set per name."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elfwriter import build_so

from stackcheck.readers import elf as elfmod
from stackcheck.readers.elf import DynamicSymbols, ElfError, ElfFile

DEFINED = [f"_ZN5cuda{i}lookupEv" for i in range(3000)]
ASKED = DEFINED[::37] + [f"_ZN5cuda{i}lookupEv" for i in range(3000, 3060)] + ["", "_ZN5cuda1lookup"]


def _outcome(syms: DynamicSymbols, name: str) -> bool | str:
    try:
        return syms.defines(name)
    except ElfError as exc:
        return str(exc)


def _fresh(path: Path, names: list[str]) -> list[bool | str]:
    out: list[bool | str] = []
    for name in names:
        with ElfFile(path) as elf:
            out.append(_outcome(DynamicSymbols(elf), name))
    return out


@pytest.mark.parametrize(("gnu", "sysv", "nbuckets"), [(True, False, 1), (True, False, 211), (False, True, 97)])
def test_many_lookups_answer_as_one_lookup_each(tmp_path: Path, gnu: bool, sysv: bool, nbuckets: int) -> None:
    path = tmp_path / "lib.so"
    path.write_bytes(build_so(defined=DEFINED, gnu=gnu, sysv=sysv, nbuckets=nbuckets))
    names = list(ASKED)
    random.Random(7).shuffle(names)
    want = _fresh(path, names)
    assert want.count(True) == len(DEFINED[::37]) and not any(isinstance(w, str) for w in want)
    with ElfFile(path) as elf:
        syms = DynamicSymbols(elf)
        assert [_outcome(syms, n) for n in names] == want


def test_many_lookups_read_few_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "lib.so"
    path.write_bytes(build_so(defined=DEFINED, nbuckets=211))
    calls = []
    real = elfmod.ElfFile.read_at

    def counting(self: ElfFile, offset: int, length: int, what: str) -> bytes:
        calls.append(what)
        return real(self, offset, length, what)

    monkeypatch.setattr(elfmod.ElfFile, "read_at", counting)
    with ElfFile(path) as elf:
        syms = DynamicSymbols(elf)
        before = len(calls)
        assert sum(syms.defines(n) for n in ASKED) == len(DEFINED[::37])
    # one set per name (bucket, chain, symbol, name) was ~4 reads a name found: 100+ names, 400+ reads
    assert len(calls) - before < 120, len(calls) - before


def test_a_corrupt_table_fails_each_lookup_as_a_fresh_one(tmp_path: Path) -> None:
    """Buckets, chains, symbols or names overwritten with 0xff or random bytes (indices and offsets outside
    the file, chains without an end)."""
    whole = build_so(defined=DEFINED, nbuckets=211)
    names = ASKED[:40]
    compared = failing = 0
    good = tmp_path / "good.so"
    good.write_bytes(whole)
    with ElfFile(good) as elf:
        nbuckets, symoffset, _, _, _, buckets, chains = DynamicSymbols(elf)._gnu_header_read()
    fills = [(at, b"\xff" * 256) for at in range(0, len(whole) - 256, len(whole) // 60)]
    fills += [(at, random.Random(at).randbytes(256)) for at in range(0, len(whole) - 256, len(whole) // 60)]
    fills += [(buckets + 8 * k, (0x7FFFFF00 + k).to_bytes(4, "little")) for k in range(0, nbuckets // 2, 5)]
    fills += [(chains, b"\x02\x00\x00\x00" * (len(DEFINED) - symoffset + 1))]  # chains without an end
    for n, (at, junk) in enumerate(fills):
        path = tmp_path / f"bad{n}.so"
        path.write_bytes((whole[:at] + junk + whole[at + len(junk) :])[: max(len(whole), at + len(junk))])
        try:
            with ElfFile(path) as elf:
                DynamicSymbols(elf)
        except ElfError:
            continue  # the header or the dynamic table itself is hit: no lookup to compare
        want = _fresh(path, names)
        with ElfFile(path) as elf:
            syms = DynamicSymbols(elf)
            assert [_outcome(syms, n) for n in names] == want, at
        compared += 1
        failing += any(isinstance(w, str) for w in want)
    assert compared >= 40 and failing >= 3, (compared, failing)
