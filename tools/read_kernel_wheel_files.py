#!/usr/bin/env python3
"""Read what components.json records of an sgl-kernel release from its downloaded wheel(s), one JSON line each:
the compiled GPU targets per shared library (stackcheck's fatbin reader, as tools/read_kernel_wheels.py), the
libraries each one needs (DT_NEEDED, stackcheck's ELF reader), the CUDA driver API symbols it leaves undefined
(`cu[A-Z]*` from `nm -D --undefined-only`, binutils; the green-context family is what the driver-api check
reads), the c10::cuda::SetDevice mangling it imports (`_ZN3c104cuda9SetDeviceEa` before torch 2.8,
`...SetDeviceEab` from torch 2.8: a hint of the torch it was built against), and METADATA's Requires-Dist and
Requires-Python. With `--torch TORCH_WHEEL...` it also says, per torch wheel, which of the kernel library's
undefined C++ symbols of torch's namespaces (c10, at, torch, caffe2) that torch's libraries (torch/lib/*.so)
do not export: none means the library's torch ABI resolves against that torch, any means importing it fails
with 'undefined symbol'. This is how sgl-kernel 0.1.0-0.3.4.post1 were read into components.json (iold,
2026-12-02).

    PYTHONPATH=$PWD python3 tools/read_kernel_wheel_files.py /tmp/wheels/sgl_kernel-0.2.7-*.whl ... \
        [--torch /tmp/wheels/torch-2.7.1-*.whl ...]
"""

from __future__ import annotations

import datetime
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from stackcheck.readers.binaries import scan_file
from stackcheck.readers.elf import ElfFile

#: a mangled C++ name in one of torch's namespaces (vtables and type infos included)
_TORCH_NAME = re.compile(r"_Z(?:T[VIS])?N?K?(?:3c10|2at|5torch|6caffe2)")


def _symbols(path: Path, which: str) -> list[str]:
    out = subprocess.run(["nm", "-D", which, str(path)], capture_output=True, text=True, check=True)
    return sorted({line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()})


def _undefined(path: Path) -> list[str]:
    return _symbols(path, "--undefined-only")


def torch_exports(wheel: Path) -> tuple[str, set[str]]:
    """(torch version, the symbols torch/lib/*.so of that wheel export)."""
    exported: set[str] = set()
    with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory(prefix="torch-wheel-") as tmp:
        for name in (n for n in z.namelist() if re.fullmatch(r"torch/lib/[^/]+\.so", n)):
            target = Path(tmp) / Path(name).name
            with z.open(name) as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst)
            exported.update(_symbols(target, "--defined-only"))
            target.unlink()
    return wheel.name.split("-")[1], exported


def read_wheel(wheel: Path, torches: list[tuple[str, set[str]]] | None = None) -> dict[str, object]:
    files = []
    metadata: dict[str, list[str]] = {"Requires-Dist": [], "Requires-Python": []}
    with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory(prefix="kernel-wheel-") as tmp:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        for line in z.read(meta).decode("utf-8", "replace").splitlines():
            key, _, value = line.partition(": ")
            if key in metadata:
                metadata[key].append(value)
        for name in sorted(n for n in z.namelist() if n.startswith("sgl_kernel/") and n.endswith(".so")):
            target = Path(tmp) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with z.open(name) as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst)
            entry = scan_file(target, name) or {"sass": [], "ptx": []}
            with ElfFile(str(target)) as elf:
                needed = elf.dynamic().needed
            undefined = _undefined(target)
            torch_names = [u for u in undefined if _TORCH_NAME.match(u)]
            unresolved = {version: [u for u in torch_names if u not in exported] for version, exported in torches or []}
            files.append(
                {
                    "path": name,
                    "sass": entry["sass"],
                    "ptx": entry["ptx"],
                    "needed": needed,
                    "driver_api": [s for s in undefined if s[:2] == "cu" and s[2:3].isupper()],
                    "set_device": [s for s in undefined if s.startswith("_ZN3c104cuda9SetDevice")],
                    "torch_symbols": len(torch_names),
                    "torch_unresolved": unresolved,
                }
            )
            target.unlink()
    return {"wheel": wheel.name, "read": datetime.date.today().isoformat(), "metadata": metadata, "files": files}


def main(argv: list[str]) -> int:
    torches: list[tuple[str, set[str]]] = []
    if "--torch" in argv:
        i = argv.index("--torch")
        torches = [torch_exports(Path(t)) for t in argv[i + 1 :]]
        argv = argv[:i]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for arg in argv:
        print(json.dumps(read_wheel(Path(arg), torches)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
