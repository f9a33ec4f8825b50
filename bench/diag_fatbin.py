"""Print every fatbin entry stackcheck reads in a library, beside cuobjdump's own listing, to chase a
disagreement between the two.

    python3 bench/diag_fatbin.py /path/to/lib.so
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter

from stackcheck.readers.elf import ElfFile
from stackcheck.readers.fatbin import scan_fatbins


def main() -> int:
    path = sys.argv[1]
    with ElfFile(path) as elf:
        print("sections:", [s.name for s in elf.sections if "fatbin" in s.name.lower() or "nv" in s.name.lower()])
        scan = scan_fatbins(elf)
    print(
        f"section {scan.section}, containers {scan.containers}, entries {len(scan.entries)}, warnings {scan.warnings}"
    )
    kinds = Counter((e.kind, e.arch, hex(e.flags), e.target) for e in scan.entries)
    for (kind, arch, flags, target), n in sorted(kinds.items(), key=str):
        print(f"  kind {kind} arch {arch} flags {flags} -> {target}: {n}")
    if shutil.which("cuobjdump"):
        for flag in ("--list-elf", "--list-ptx"):
            out = subprocess.run(["cuobjdump", flag, path], capture_output=True, text=True, check=False)
            lines = (out.stdout + out.stderr).splitlines()
            print(f"cuobjdump {flag}: {len(lines)} lines; first: {lines[:3]}; last: {lines[-2:]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
