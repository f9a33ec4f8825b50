"""Unpacked roots for the `--root` tests (tests/assembly/test_root_environment.py,
tests/launch/test_gate_igap38_root.py): a root with Python on its default PATH and torch / sglang metadata, written
here, never copied."""

from __future__ import annotations

import sys
from pathlib import Path

XY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def serving_root(root: Path) -> Path:
    """An unpacked root with Python on its default PATH and torch / sglang metadata, and no CUDA toolkit."""
    executable(root / "usr/bin" / f"python{XY}", "\x7fELF")
    (root / "usr/bin/python3").symlink_to(f"python{XY}")
    (root / "usr/lib" / f"python{XY}").mkdir(parents=True)
    (root / "usr/lib" / f"python{XY}" / "os.py").write_text("")
    (root / "usr/lib/python3/dist-packages").mkdir(parents=True)  # (a Debian layout: its site dirs are read)
    site = root / "usr/local/lib" / f"python{XY}" / "dist-packages"
    for name, version in (("torch", "2.9.1"), ("sglang", "0.5.9")):
        info = site / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (site / "torch").mkdir()
    (site / "torch/version.py").write_text("__version__ = '2.9.1+cu130'\ncuda = '13.0'\n")
    return root
