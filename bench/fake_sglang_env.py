"""A virtual environment with a stand-in `sglang` distribution, for timing the gate's `dependencies` check on a
box without SGLang (the lent H200 has none, and no network).

    python bench/fake_sglang_env.py DIR      # builds DIR (python -m venv --without-pip) and prints its python

Only metadata is written: `sglang-0.5.9.dist-info/METADATA` whose Requires-Dist lines have the shapes a real
SGLang wheel's have (about 60 plain names, lower bounds, ranges and `==` pins, platform markers on
sys_platform/platform_machine with `and`/`or`/parentheses, and ~35 lines under `extra == "..."`), and one
`.dist-info` per requirement that applies here, at a version that satisfies it, so the check reads every header
and answers ok. The names and lines are written here, not copied from a wheel. Nothing is importable: the gate
reads the target environment's sys.path and its metadata, never imports its packages. Standard library only.
"""

from __future__ import annotations

import os
import subprocess
import sys

#: (name as written, specifier or "", marker or "", installed version or None for "not installed here")
PLAIN = [f"plain-dep-{i:02d}" for i in range(30)]
LINES: list[tuple[str, str, str, str | None]] = [
    *((name, "", "", "1.0") for name in PLAIN),
    ("Range_Dep.one", ">=0.1.5,<0.2", "", "0.1.9"),
    ("lower-dep-a", ">=0.20.0", "", "0.31.0"),
    ("lower-dep-b", ">=25.1.2", "", "26.0"),
    ("lower-dep-c", ">=1.78.0", "", "1.80.1"),
    ("lower-dep-d", ">=4.3.4", "", "4.3.4"),
    ("pinned-dep-a", "==3.0.0", "", "3.0.0"),
    ("pinned-dep-b", "==12.9", "", "12.9"),
    ("pinned-dep-c", "==0.0.4", "", "0.0.4"),
    ("pinned_dep.d", "==2.6.1", "", "2.6.1"),
    ("torch", "==2.9.1", "", "2.9.1"),
    ("sgl-kernel", "==0.3.21", "", "0.3.21"),
    ("flashinfer_python", "==0.6.3", "", "0.6.3"),
    ("flashinfer_cubin", "==0.6.3", "", "0.6.3"),
    ("torchaudio", "==2.9.1", "", "2.9.1"),
    ("transformers", "==4.57.1", "", "4.57.1"),
    ("xgrammar", "==0.1.27", "", "0.1.27"),
    ("bounded-dep", "<0.8.0,>=0.7.11", "", "0.7.30"),
    ("arm-only-dep", "",
     'sys_platform == "linux" and (platform_machine == "aarch64" or platform_machine == "arm64"'
     ' or platform_machine == "armv7l")', None),
    ("not-arm-dep", "==0.8.0",
     'sys_platform != "linux" or (sys_platform == "linux" and platform_machine != "aarch64"'
     ' and platform_machine != "arm64" and platform_machine != "armv7l")', "0.8.0"),
    ("old-python-dep", ">=1.0", 'python_version < "3.9"', None),
    *((f"extra-dep-{i:02d}", "==1.0" if i % 3 else "", f'extra == "{("test", "diffusion", "tracing")[i % 3]}"', None)
      for i in range(30)),
    ("arm-extra-dep", "==0.0.7",
     '(platform_machine != "aarch64" and platform_machine != "arm64") and extra == "diffusion"', None),
    ("sglang[test]", "", 'extra == "dev"', None),
    ("sglang[diffusion]", "", 'extra == "all"', None),
]  # fmt: skip


def requires_dist() -> list[str]:
    out = []
    for name, spec, marker, _ in LINES:
        line = f"{name}{spec}"
        out.append(f"{line}; {marker}" if marker else line)
    return out


def write_dist(site: str, name: str, version: str, requires: list[str]) -> None:
    norm = name.replace("-", "_").replace(".", "_")
    d = os.path.join(site, f"{norm}-{version}.dist-info")
    os.makedirs(d, exist_ok=True)
    head = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", "Summary: a stand-in (bench)"]
    body = [f"Requires-Dist: {r}" for r in requires]
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(head + body) + "\n\nA stand-in distribution written by bench/fake_sglang_env.py.\n")


def site_packages(prefix: str) -> str:
    py = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return os.path.join(prefix, "lib", py, "site-packages")


def build(prefix: str) -> str:
    """Builds the venv at prefix (if its python is not there yet) and returns the path of its python."""
    python = os.path.join(prefix, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", prefix], check=True)
    site = site_packages(prefix)
    write_dist(site, "sglang", "0.5.9", requires_dist())
    for name, _, _, version in LINES:
        if version is not None:
            write_dist(site, name, version, [])
    return python


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python bench/fake_sglang_env.py DIR")
    print(build(sys.argv[1]))
