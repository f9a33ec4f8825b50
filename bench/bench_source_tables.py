"""Time read_source_tables over the real wheels' files.

Usage: python bench/bench_source_tables.py [--runs N]

The wheels come from the test cache (~/.cache/stackcheck-tests/wheels), downloaded with pip when missing.
Only the files the gates read are unpacked into a temporary site directory per wheel. The gates are those
of manifests/gates.json (those with a probe). Prints the median, min and max wall time of N runs for each
sglang/flashinfer pair, and per file-read.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from stackcheck.readers.sourcetables import read_source_tables

REPO = Path(__file__).resolve().parent.parent
CACHE = Path.home() / ".cache" / "stackcheck-tests" / "wheels"
PAIRS = [("0.5.3", "0.6.3"), ("0.5.9", "0.6.3"), ("0.5.13", "0.6.17"), ("0.5.14", "0.6.17"), ("0.5.23", "0.7.2")]


def wheel(dist: str, version: str) -> Path:
    stem = f"{dist.replace('-', '_')}-{version}-"
    found = sorted(CACHE.glob(f"{stem}*.whl"))
    if not found:
        CACHE.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--python-version", "3.12", "--platform", "manylinux_2_34_x86_64", "--platform", "any",
            "--disable-pip-version-check", "-q", "-d", str(CACHE), f"{dist}=={version}",
        ]  # fmt: skip
        subprocess.run(cmd, check=False, timeout=600)
        found = sorted(CACHE.glob(f"{stem}*.whl"))
    if not found:
        raise SystemExit(f"cannot get {dist}=={version}")
    return found[0]


def unpack(whl: Path, site: Path, wanted: set[str]) -> None:
    with zipfile.ZipFile(whl) as zf:
        for name in zf.namelist():
            if name in wanted:
                (site / name).parent.mkdir(parents=True, exist_ok=True)
                (site / name).write_bytes(zf.read(name))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=51)
    args = parser.parse_args()
    gates = [g for g in json.loads((REPO / "manifests" / "gates.json").read_text())["gates"] if g.get("probe")]
    wanted = {f for g in gates for f in g["probe"]["files"]}
    with tempfile.TemporaryDirectory() as tmp:
        for sg, fi in PAIRS:
            sites = {}
            for dist, version in (("sglang", sg), ("flashinfer-python", fi)):
                site = Path(tmp) / f"{dist}-{version}"
                site.mkdir(exist_ok=True)
                unpack(wheel(dist, version), site, wanted)
                sites[dist] = str(site)
            times = []
            readings = {}
            for _ in range(args.runs):
                start = time.perf_counter()
                readings = read_source_tables(gates, sites)
                times.append(time.perf_counter() - start)
            nbytes = sum(
                (Path(sites[g["package"]]) / r["file"]).stat().st_size
                for g in gates
                if (r := readings.get(g["id"])) and r["file"]
            )
            values = {k: v["value"] for k, v in readings.items()}
            print(
                f"sglang {sg} + flashinfer {fi}: {len(readings)} gates, {nbytes / 1024:.0f} KiB parsed, "
                f"median {statistics.median(times) * 1000:.2f} ms "
                f"(min {min(times) * 1000:.2f}, max {max(times) * 1000:.2f}, n={args.runs}) {values}"
            )


if __name__ == "__main__":
    main()
