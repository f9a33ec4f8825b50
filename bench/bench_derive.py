"""Time `stackcheck manifests derive` on one SGLang wheel, and the audit of a box whose SGLang is newer than
the data (judged from its installed files, warm cache) against the audit of the same box with a release
the data knows.

    python bench/bench_derive.py [--wheel PATH] [--runs N]

The wheel defaults to the newest SGLang in the test cache (~/.cache/stackcheck-tests/wheels). The audit
part installs it twice into a temporary site directory with `pip install --target` (no dependencies): once
as it is, once relabelled one patch release newer than the data (its METADATA Version and dist-info name),
so both audits read the same files; each runs `stackcheck audit --format json` with that site on PYTHONPATH
and its own derive cache (warmed by one run first). Medians of wall and CPU time (user + system of the
child) are printed with min-max, and the ratio newer / known."""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = Path.home() / ".cache" / "stackcheck-tests" / "wheels"


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def summary(name: str, samples: list[tuple[float, float]]) -> tuple[float, float]:
    walls = [s[0] for s in samples]
    cpus = [s[1] for s in samples]
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"{name:58s} wall {wall:6.3f} s ({min(walls):.3f}-{max(walls):.3f})  cpu {cpu:6.3f} s")
    return wall, cpu


def newest_wheel() -> Path:
    def key(p: Path) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", p.name.split("-")[1]))

    wheels = sorted(CACHE.glob("sglang-0.5.*.whl"), key=key)
    if not wheels:
        raise SystemExit(f"no sglang wheel in {CACHE}; pass --wheel")
    return wheels[-1]


def install(wheel: Path, target: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "--disable-pip-version-check", "-q",
         "--target", str(target), "--python-version", "3.12", "--platform", "manylinux_2_34_x86_64",
         "--only-binary=:all:", str(wheel)],
        check=True,
    )  # fmt: skip


def relabel(site: Path, old: str, new: str) -> None:
    info = site / f"sglang-{old}.dist-info"
    meta = info / "METADATA"
    text = meta.read_text(encoding="utf-8").replace(f"\nVersion: {old}\n", f"\nVersion: {new}\n", 1)
    meta.write_text(text, encoding="utf-8")
    info.rename(site / f"sglang-{new}.dist-info")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", type=Path)
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    wheel = args.wheel or newest_wheel()
    version = wheel.name.split("-")[1]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; wheel {wheel.name}")

    derive = [sys.executable, "-m", "stackcheck", "manifests", "derive", str(wheel)]
    timed(derive, env)
    summary("stackcheck manifests derive WHEEL", [timed(derive, env) for _ in range(args.runs)])
    inproc = [sys.executable, "-c",
              "import sys,time;sys.path.insert(0,sys.argv[2]);"
              "from stackcheck.knowledge.loader import load;from stackcheck.derive.tree import open_releases;"
              "from stackcheck.derive.release import derive_release;m=load();"
              "t=time.perf_counter();[derive_release(r,m) for r in open_releases(sys.argv[1])];"
              "print(time.perf_counter()-t)", str(wheel), str(REPO)]  # fmt: skip
    inner = [float(subprocess.run(inproc, capture_output=True, text=True, check=True).stdout) for _ in range(args.runs)]
    print(f"{'derive_release() alone (in process)':58s} wall {statistics.median(inner):6.3f} s "
          f"({min(inner):.3f}-{max(inner):.3f})")  # fmt: skip

    parts = version.split(".")
    newer = ".".join([*parts[:-1], str(int(parts[-1]) + 1)])
    with tempfile.TemporaryDirectory() as tmp:
        known_site, newer_site = Path(tmp) / "known", Path(tmp) / "newer"
        install(wheel, known_site)
        shutil.copytree(known_site, newer_site)
        relabel(newer_site, version, newer)
        results = {}
        for label, site in (("known", known_site), ("newer", newer_site)):
            run_env = {
                **env,
                "PYTHONPATH": f"{REPO}{os.pathsep}{site}",
                "STACKCHECK_CACHE_DIR": str(Path(tmp) / f"c-{label}"),
            }
            audit = [sys.executable, "-m", "stackcheck", "audit", "--format", "json"]
            timed(audit, run_env)  # warm the page cache and the derive cache
            results[label] = (audit, run_env)
        samples: dict[str, list[tuple[float, float]]] = {"known": [], "newer": []}
        for _ in range(args.runs):  # interleaved, so load on the machine hits both alike
            for label, (audit, run_env) in results.items():
                samples[label].append(timed(audit, run_env))
        k = summary(f"audit, SGLang {version} (in the data)", samples["known"])
        n = summary(f"audit, SGLang {newer} (newer: judged from its files, warm)", samples["newer"])
        print(f"{'ratio newer / known':58s} wall {n[0] / k[0]:.2f}x  cpu {n[1] / k[1]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
