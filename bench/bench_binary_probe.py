"""Time the headers-only binary scan: bytes read, file count, median wall time.

Usage:
    python bench/bench_binary_probe.py [DIR] [--runs N]          # scan DIR's *.so / *.cubin (default: torch/lib)
    python bench/bench_binary_probe.py --synthetic [--size-mb 400] [--entries 4000] [--runs N]

--synthetic writes a sparse ELF64 file with a `.nv_fatbin` section of the given size holding `--entries`
entries (containers of 8 entries, a mix of sm_80, sm_90a, sm_100f, sm_120 cubins and compressed
compute_120 PTX, payloads of equal size) and the section header table at the end of the file, like a real
library. The payloads are holes, so the file costs no disk blocks; the scan reads only the headers.
`make_synthetic_fatbin_elf()` is also used by tests/readers/test_elf_fatbin.py.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

from stackcheck.readers.binaries import scan_package_binaries

# (kind, arch, flags) cycled over the entries: 1 = PTX, 2 = ELF
_MIX = [
    (2, 80, 0x11),
    (2, 90, 0x100011),
    (2, 100, 0x1200011),
    (2, 120, 0x1000011),
    (1, 120, 0x8011),
]


def _entry(kind: int, arch: int, flags: int, header_size: int, payload: int) -> bytes:
    compressed = payload if flags & 0x8000 else 0
    usize = payload * 3 if flags & 0x8000 else 0
    code = (9 << 16) if kind == 1 else ((1 << 16) | 8)
    head = struct.pack("<HHIQIIIIIIQQQ", kind, 0x0101, header_size, payload, compressed, 0, code, arch, 0, 0,
                       flags, 0, usize)  # fmt: skip
    return head + b"\0" * (header_size - len(head))


def make_synthetic_fatbin_elf(
    path: Path, size_bytes: int, entries: int, per_container: int = 8, mix: list[tuple[int, int, int]] = _MIX
) -> dict[str, int]:
    """Write a sparse ELF64 file whose .nv_fatbin holds `entries` entries; returns layout facts."""
    hdr = 64
    per_entry_header = 64
    containers = (entries + per_container - 1) // per_container
    overhead = containers * 16 + entries * per_entry_header
    payload = max(8, ((size_bytes - overhead) // max(entries, 1)) & ~7)
    shstr = b"\0.shstrtab\0.nv_fatbin\0"
    shstr_off = hdr
    fat_off = (shstr_off + len(shstr) + 7) & ~7
    with path.open("wb") as f:
        f.seek(fat_off)
        pos = fat_off
        left = entries
        for _ in range(containers):
            n = min(per_container, left)
            left -= n
            fat_size = n * (per_entry_header + payload)
            f.seek(pos)
            f.write(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, fat_size))
            epos = pos + 16
            for i in range(n):
                kind, arch, flags = mix[(entries - left - n + i) % len(mix)]
                f.seek(epos)
                f.write(_entry(kind, arch, flags, per_entry_header, payload))
                epos += per_entry_header + payload
            pos = epos
        fat_size_total = pos - fat_off
        shoff = (pos + 7) & ~7
        sections = [
            struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
            struct.pack("<IIQQQQIIQQ", 1, 3, 0, 0, shstr_off, len(shstr), 0, 0, 1, 0),
            struct.pack("<IIQQQQIIQQ", 11, 1, 2, 0, fat_off, fat_size_total, 0, 0, 8, 0),
        ]
        f.seek(shstr_off)
        f.write(shstr)
        f.seek(shoff)
        f.write(b"".join(sections))
        ident = b"\x7fELF\x02\x01\x01" + b"\0" * 9
        ehdr = struct.pack("<16sHHIQQQIHHHHHH", ident, 3, 62, 1, 0, 0, shoff, 0, 64, 56, 0, 64, len(sections), 1)
        f.seek(0)
        f.write(ehdr)
    return {"containers": containers, "entries": entries, "payload": payload, "fat_off": fat_off,
            "fat_size": fat_size_total, "file_size": shoff + 64 * len(sections)}  # fmt: skip


def _torch_lib() -> Path | None:
    spec = importlib.util.find_spec("torch")  # locate only; torch is never imported
    if spec is None or not spec.submodule_search_locations:
        return None
    lib = Path(next(iter(spec.submodule_search_locations))) / "lib"
    return lib if lib.is_dir() else None


def bench(root: Path, globs: tuple[str, ...], runs: int) -> None:
    times = []
    out: dict[str, object] = {}
    for _ in range(runs):
        t0 = time.perf_counter()
        out = scan_package_binaries("bench", root, globs)
        times.append((time.perf_counter() - t0) * 1000.0)
    files = out["files"]
    assert isinstance(files, list)
    on_disk = sum((root / str(f["path"])).stat().st_size for f in files)
    print(f"root: {root}")
    print(f"files scanned: {out['files_scanned']}, with GPU code or errors: {len(files)}")
    print(f"bytes on disk (GPU files): {on_disk:,}; bytes read: {out['bytes_read']:,} "
          f"({100.0 * int(str(out['bytes_read'])) / max(on_disk, 1):.4f} %)")  # fmt: skip
    print(f"sass: {out['sass']}; ptx: {out['ptx']}")
    errors = [f for f in files if "error" in f]
    if errors:
        print(f"errors: {len(errors)}, first: {errors[0]['error']}")
    print(f"time over {runs} runs: median {statistics.median(times):.2f} ms, "
          f"min {min(times):.2f} ms, max {max(times):.2f} ms")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--size-mb", type=int, default=400)
    ap.add_argument("--entries", type=int, default=4000)
    args = ap.parse_args(argv)
    if args.synthetic:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "libsynthetic_cuda.so"
            t0 = time.perf_counter()
            layout = make_synthetic_fatbin_elf(path, args.size_mb << 20, args.entries)
            print(f"wrote {path.name}: {layout['file_size']:,} bytes (sparse), {layout['containers']} containers, "
                  f"{layout['entries']} entries, payload {layout['payload']:,} bytes each, "
                  f"in {(time.perf_counter() - t0) * 1000.0:.0f} ms")  # fmt: skip
            bench(Path(tmp), ("*.so",), args.runs)
        return 0
    root = args.dir or _torch_lib()
    if root is None:
        print("no directory given and no installed torch found; try --synthetic", file=sys.stderr)
        return 2
    bench(root, ("**/*.so", "**/*.so.*", "**/*.cubin"), args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
