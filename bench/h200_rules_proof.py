"""The JIT / NCCL readings of the gate's newer rules on a real GPU box (run on the device; prints, never fails).

For each library and compiler the box really has (every libnccl.so* and libcudart.so* under the usual directories and
the interpreter's site-packages; the gcc / clang drivers on the PATH and under /opt), `stackcheck audit` runs with
SGLANG_NCCL_SO_PATH / CC / CXX set to it, and the script prints the jit facts it read (`nccl_so_path*`,
`libcudart_so*`, `cc_host*`, `cxx*`). Then the gate judges those real readings beside each SGLang release of
RELEASES (the release written into the saved facts: SGLang is not installed on the lent box) for a launch with
--enable-symm-mem, and prints each feature or reason whose text names the readings (NCCL, cudart, the host compiler).

    python3 bench/h200_rules_proof.py [--out DIR]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any

RELEASES = ("0.5.4", "0.5.6", "0.5.9", "0.5.23")
KEYS = re.compile(r"^(nccl_so_path|libcudart_so|cc_host|cxx|nvcc_host)")
WORDS = re.compile(r"nccl|cudart|host compiler|gcc|clang|CXX|CC=", re.I)


def libraries() -> list[str]:
    site = [p for p in sys.path if p.endswith("site-packages")]
    pats = ["/usr/lib/x86_64-linux-gnu/libnccl.so*", "/usr/local/cuda*/lib64/libcudart.so*"]
    pats += [f"{s}/nvidia/*/lib/libnccl.so*" for s in site] + [f"{s}/nvidia/*/lib/libcudart.so*" for s in site]
    return sorted({p for pat in pats for p in glob.glob(pat) if "libnccl" in p})


def compilers() -> list[tuple[str, str]]:
    out = [("CC", p) for p in ("/opt/gcc/bin/gcc",) if os.path.exists(p)]
    for name in ("gcc-13", "clang-16", "clang"):
        p = shutil.which(name)
        if p:
            out.append(("CC", p))
    for name in ("g++", "clang++-16"):
        p = shutil.which(name)
        if p:
            out.append(("CXX", p))
    if shutil.which("ccache"):
        out.append(("CXX", "ccache g++"))
    return out


def audit(env_extra: dict[str, str], path: str) -> dict[str, Any] | None:
    env = dict(os.environ, **env_extra)
    cmd = [sys.executable, "-m", "stackcheck", "audit", "--format", "json", "--output", path]
    subprocess.run(cmd, check=False, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    try:
        with open(path) as f:
            doc: dict[str, Any] = json.load(f)
            return doc
    except (OSError, ValueError):
        return None


def gate(facts_path: str, release: str, env_extra: dict[str, str], work: str) -> str:
    with open(facts_path) as f:
        doc = json.load(f)
    pkgs = doc.setdefault("facts", {}).setdefault("packages", {})
    pkgs["sglang"] = {"installed": True, "version": release, "dist_version": release}
    path = os.path.join(work, f"facts-{release}.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    cmd = [sys.executable, "-m", "stackcheck", "gate", "--facts", path, "--dry-run", "--format", "json", "--"]
    cmd += ["python", "-m", "sglang.launch_server", "--model-path", "/nonexist", "--tp", "2", "--enable-symm-mem"]
    r = subprocess.run(cmd, check=False, env=dict(os.environ, **env_extra), capture_output=True, text=True, timeout=120)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        return f"  gate rc={r.returncode}: no JSON ({r.stderr.strip()[:200]})"
    lines = [f"  SGLang {release}: gate rc={r.returncode} {out.get('decision')}"]
    for part in ("reasons", "warnings"):
        for item in out.get(part, []):
            for reason in item.get("reasons", []):
                msg = reason.get("message", "")
                if WORDS.search(msg):
                    lines.append(f"    {part[:-1]} {item.get('feature')} {item.get('status')}: {msg[:300]}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=tempfile.mkdtemp(prefix="rules-proof-"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    variants: list[dict[str, str]] = [{}]
    variants += [{"SGLANG_NCCL_SO_PATH": p} for p in libraries()]
    variants += [{k: v} for k, v in compilers()]
    for i, extra in enumerate(variants):
        path = os.path.join(args.out, f"audit-{i}.json")
        doc = audit(extra, path)
        print(f"== {extra or 'default environment'}")
        if doc is None:
            print("  audit wrote no JSON")
            continue
        jit = doc.get("facts", {}).get("jit", {}) or {}
        for k in sorted(jit):
            if KEYS.match(k):
                print(f"  {k} = {json.dumps(jit[k])[:200]}")
        if extra.get("SGLANG_NCCL_SO_PATH") or i == 0:
            for release in RELEASES:
                print(gate(path, release, extra, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
