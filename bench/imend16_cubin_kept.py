"""imend16 (issue 21 beside a false pass): what the cubin probe's kept family answer costs once it also checks each
directory's names that are no non-empty regular file (a cubin emptied in place moves no directory stamp).

Writes a tree of 16,000 small files in FlashInfer's shape (four families, their names in 11 directories, one
checksums.txt each; no upstream file) under a temporary directory, then times in one process, CPU (process_time)
and wall medians over --runs calls: `cold`, family_status of the four families without a keeper (the first run's
reading: manifest read, hashed, split, each directory listed, each name lstat'ed); `first`, the same with a
KeptFamilies that has nothing kept yet (the reading and what keeping it adds); `kept`, with a KeptFamilies whose
answers were kept by an earlier call (served from the kept answer); iperf42's `prescan`, the kept answers opened and
every kept directory's stamp and odd names taken (KeptFamilies.prescan: what FlashinferCubinsProbe.prepare runs in a
thread beside the first wave), and `after`, the four families' status from a keeper so prescanned (what is left to
the probe's own run, after the packages probe). Run it once per tree (a tree without prescan: --rows cold,first,kept):

    PYTHONPATH=TREE python3 bench/imend16_cubin_kept.py [--runs 31] [--files 16000] [--rows ...]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import tempfile
import time
from pathlib import Path

FAMILIES = {  # rel: (sub-directories, share of the files)
    "aa00/fmha/trtllm-gen/": (["", "include", "kernels/sm100", "kernels/sm103"], 0.80),
    "bb11/batched_gemm-aa/": (["", "include", "kernels"], 0.15),
    "cc22/gemm-bb/": (["", "include"], 0.03),
    "dd33/deep-gemm/": (["", "kernels"], 0.02),
}


def build(root: Path, files: int) -> dict[str, str]:
    shas = {}
    n = 0
    for rel, (subs, share) in FAMILIES.items():
        fam = root / rel
        lines = []
        count = max(1, int(files * share))
        for sub in subs:
            (fam / sub).mkdir(parents=True, exist_ok=True)
        for i in range(count):
            sub = subs[i % len(subs)]
            name = f"{sub}/k{n:05d}.cubin" if sub else f"k{n:05d}.cubin"
            (fam / name).write_bytes(b"\x7fELF" + n.to_bytes(4, "little"))
            lines.append(f"{hashlib.sha256(name.encode()).hexdigest()} {name}\n")
            n += 1
        data = "".join(lines).encode()
        (fam / "checksums.txt").write_bytes(data)
        shas[rel] = hashlib.sha256(data).hexdigest()
    time.sleep(2.5)  # (change times older than readers.kept.RACY_NS: keepable)
    return shas


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--files", type=int, default=16000)
    parser.add_argument("--rows", default="cold,first,kept,prescan,after")
    args = parser.parse_args()
    os.environ["STACKCHECK_PLAN_CACHE"] = "1"
    from stackcheck.probes import flashinfer_cubins as fc
    from stackcheck.readers.fsview import HostView

    with tempfile.TemporaryDirectory(prefix="imend16-bench-") as tmp:
        root = Path(tmp) / "cubins"
        shas = build(root, args.files)
        view = HostView()
        cache = str(Path(tmp) / "cache")
        keep = fc.KeptFamilies.open(view, cache)
        assert keep is not None
        for rel, sha in shas.items():
            fc.family_status(view, str(root), rel, sha, keep)
        keep.save()
        assert keep.kept.files, "nothing kept"
        rows = {}
        for row in args.rows.split(","):
            cpu, wall = [], []
            for i in range(args.runs):
                keeper = None
                if row == "prescan":  # (iperf42: what FlashinferCubinsProbe.prepare runs in its thread)
                    c0, w0 = time.process_time(), time.perf_counter()
                    keeper = fc.KeptFamilies.open(view, cache)
                    assert keeper is not None and keeper.prescan() > 0
                    cpu.append(time.process_time() - c0)
                    wall.append(time.perf_counter() - w0)
                    continue
                if row == "after":  # (iperf42: what is left to the probe's run once prepare's prescan is done)
                    keeper = fc.KeptFamilies.open(view, cache)
                    assert keeper is not None and keeper.prescan() > 0
                if row == "kept":
                    keeper = fc.KeptFamilies.open(view, cache)
                elif row == "first":  # (a keeper with nothing kept yet: the reading, and what keeping it costs)
                    keeper = fc.KeptFamilies.open(view, str(Path(tmp) / f"first{i}"))
                c0, w0 = time.process_time(), time.perf_counter()
                got = [fc.family_status(view, str(root), rel, sha, keeper) for rel, sha in shas.items()]
                cpu.append(time.process_time() - c0)
                wall.append(time.perf_counter() - w0)
                assert all(g["missing"] == 0 for g in got), got
            rows[row] = (statistics.median(cpu) * 1e3, statistics.median(wall) * 1e3)
        listed = sum(1 for _ in root.rglob("*.cubin"))
        print(f"{listed} files; medians of {args.runs} calls (four families, ms)")
        for row, (c, w) in rows.items():
            print(f"  {row:5s} CPU {c:7.2f}  wall {w:7.2f}")


if __name__ == "__main__":
    main()
