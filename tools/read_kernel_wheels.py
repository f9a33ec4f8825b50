#!/usr/bin/env python3
"""Read the compiled GPU targets of published sgl-kernel wheels with stackcheck's own fatbin reader, one wheel
at a time (they are 100-550 MB): download it, extract sgl_kernel/**/*.so (what the binary probe reads), scan
them, print one JSON line per release, delete the wheel. This is how the PyPI builds of sgl-kernel in
manifests/components.json (`archs`, `libs` of the variant marked `pypi`) and kernel-arch's `quantify` source
were read (i16n, 2026-12-02).

    PYTHONPATH=$PWD python3 tools/read_kernel_wheels.py 0.3.5 0.3.7 [--platform manylinux2014_x86_64]

Each line: version, wheel file name, the day read, per .so its SASS and PTX targets and the number of fatbin
entries per target (equal counts mean every compilation unit carries that target).
"""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from pathlib import Path

from stackcheck.readers.binaries import scan_file
from stackcheck.readers.elf import ElfFile
from stackcheck.readers.fatbin import scan_fatbins


def read_release(package: str, version: str, platform: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="kernel-wheel-") as tmp:
        where = Path(tmp)
        subprocess.run(
            [
                *(sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"),
                *("--python-version", "3.10", "--platform", platform, f"{package}=={version}", "-d", str(where)),
            ],
            check=True,
        )
        wheel = next(where.glob("*.whl"))
        files = []
        with zipfile.ZipFile(wheel) as z:
            # the package's own libraries (binaries.PACKAGE_GLOBS: sgl_kernel/**/*.so), not the bundled mscclpp
            for name in sorted(n for n in z.namelist() if n.startswith("sgl_kernel/") and n.endswith(".so")):
                target = where / "x" / name
                target.parent.mkdir(parents=True, exist_ok=True)
                with z.open(name) as src, target.open("wb") as dst:
                    shutil.copyfileobj(src, dst)
                entry = scan_file(target, name)
                if entry is None:
                    continue  # a host library without GPU code
                with ElfFile(str(target)) as elf:
                    counts = Counter(f"{e.target}" for e in scan_fatbins(elf).entries)
                files.append(
                    {"path": name, "sass": entry["sass"], "ptx": entry["ptx"], "entries": dict(sorted(counts.items()))}
                )
                target.unlink()
        return {"version": version, "wheel": wheel.name, "read": datetime.date.today().isoformat(), "files": files}


def main(argv: list[str]) -> int:
    platform = "manylinux2014_x86_64"
    if "--platform" in argv:
        i = argv.index("--platform")
        platform = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for version in argv:
        print(json.dumps(read_release("sgl-kernel", version, platform)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
