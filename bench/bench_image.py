"""Image reading speed and memory: `open_image` on a synthetic image of >= 2 GB against GNU `tar -tf`.

The image is a `docker save` tarball of three layers with realistic file counts (100,000 files by default:
an OS layer of small files, a CUDA layer with large libraries, a Python layer of many modules and a few
large libraries, whiteouts in the upper layers). File contents are zeros written as holes, so the image
costs little disk. The same layers are also written as separate tar files and, with --gzip, as an OCI
layout with gzip layers.

What is compared (best of --repeat runs, page cache warm):
- ours: a child process that runs `open_image` (every layer header read, the merged tree built); wall
  and CPU time of the child (interpreter start included) and its peak RSS (`os.wait4` rusage, ru_maxrss);
- tar: `tar -tf image.tar` (the outer archive) plus `tar -tf layerN.tar` for every layer (GNU tar lists
  the members of every layer: the same headers ours reads); for gzip, `tar -tzf layerN.tar.gz`.
speed ratio = tar time / our time (>= 0.8 is the target: "at 80 % of the speed of tar -tf"), given for
the whole child process (interpreter start and imports included, about 0.1 s of CPU) and for the reading
alone (`read_*`: open_image timed inside the child); peak RSS <= 100 MB is the memory target. On a shared
machine wall times follow the load; CPU times are the steadier comparison.

    python3 bench/bench_image.py                       # 100k files, about 2.7 GB, under a temporary dir
    python3 bench/bench_image.py --files 20000 --gzip  # also the gzip OCI layout
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def members(n_files: int) -> list[list[tuple[str, int, str]]]:
    """Three layers of (name, size, kind) with kind "f" (file), "d" (dir), "w" (whiteout marker file)."""
    os_n, cuda_n = n_files // 5, n_files // 10
    py_n = n_files - os_n - cuda_n
    l1: list[tuple[str, int, str]] = [("usr/", 0, "d"), ("usr/lib/", 0, "d"), ("etc/", 0, "d")]
    for i in range(os_n):
        d = f"usr/share/pkg{i // 200:03d}/" if i % 3 else f"usr/lib/x86_64-linux-gnu/grp{i // 400:03d}/"
        if i % 200 == 0 or i % 400 == 0:
            l1.append((d, 0, "d"))
        l1.append((f"{d}file{i:06d}.dat", 1024 + (i * 37) % 7000, "f"))
    l2: list[tuple[str, int, str]] = [("usr/local/cuda-13.0/", 0, "d"), ("usr/local/cuda-13.0/lib64/", 0, "d")]
    for i in range(cuda_n - 10):
        l2.append((f"usr/local/cuda-13.0/include/sub{i // 300:03d}/h{i:06d}.h", 2048 + (i * 13) % 30000, "f"))
    for i in range(10):
        l2.append((f"usr/local/cuda-13.0/lib64/libbig{i}.so.13", 100 << 20, "f"))
    l2.append(("usr/share/pkg000/.wh.file000001.dat", 0, "w"))
    site = "usr/local/lib/python3.12/dist-packages/"
    l3: list[tuple[str, int, str]] = [(site, 0, "d")]
    for i in range(py_n - 8):
        l3.append((f"{site}pkg{i // 2000:02d}/sub{i // 100:04d}/mod{i:06d}.py", 512 + (i * 101) % 12000, "f"))
    for i in range(8):
        l3.append((f"{site}torch/lib/libtorch_part{i}.so", 150 << 20, "f"))
    l3.append(("usr/local/cuda-13.0/include/.wh..wh..opq", 0, "w"))
    return [l1, l2, l3]


def _header(name: str, size: int, kind: str) -> bytes:
    info = tarfile.TarInfo(name)
    info.mtime = 1_700_000_000
    if kind == "d":
        info.type, info.mode = tarfile.DIRTYPE, 0o755
    else:
        info.size, info.mode = size, 0o644
    return info.tobuf(format=tarfile.GNU_FORMAT)


def layer_size(entries: list[tuple[str, int, str]]) -> int:
    total = 0
    for name, size, kind in entries:
        total += len(_header(name, size, kind)) + size + (-size % 512)
    return total + 1024


def write_layer(f: object, entries: list[tuple[str, int, str]]) -> None:
    """Write a layer at the current position of `f`: headers written, file data left as holes."""
    assert hasattr(f, "write") and hasattr(f, "seek")
    for name, size, kind in entries:
        f.write(_header(name, size, kind))
        if size:
            f.seek(size + (-size % 512), os.SEEK_CUR)
    f.write(bytes(1024))


def build(out: Path, n_files: int) -> dict[str, object]:
    layers = members(n_files)
    layer_files = []
    for i, entries in enumerate(layers):
        p = out / f"layer{i}.tar"
        with p.open("wb") as f:
            write_layer(f, entries)
            f.truncate(f.tell())
        layer_files.append(p)
    sizes = [layer_size(x) for x in layers]
    assert sizes == [p.stat().st_size for p in layer_files]
    names = [f"{i:064x}"[-64:] + "/layer.tar" for i in range(1, len(layers) + 1)]
    cfg = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Env": ["PATH=/usr/local/bin:/usr/bin:/bin", "CUDA_VERSION=13.0.1"]},
            "rootfs": {"type": "layers", "diff_ids": [f"sha256:{i:064x}" for i in range(len(layers))]},
        }
    ).encode()
    manifest = json.dumps([{"Config": "config.json", "RepoTags": ["bench:1"], "Layers": names}]).encode()
    image = out / "image.tar"
    with image.open("wb") as f:
        for name, entries, size in zip(names, layers, sizes, strict=True):
            info = tarfile.TarInfo(name)
            info.size = size
            f.write(info.tobuf(format=tarfile.GNU_FORMAT))
            write_layer(f, entries)
            f.write(bytes(-size % 512))
        for name, data in (("config.json", cfg), ("manifest.json", manifest)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            f.write(info.tobuf(format=tarfile.GNU_FORMAT) + data + bytes(-len(data) % 512))
        f.write(bytes(1024))
    return {
        "image": str(image),
        "layers": [str(p) for p in layer_files],
        "files": sum(1 for x in layers for _, _, k in x if k == "f"),
        "bytes": image.stat().st_size,
    }


def gzip_layout(out: Path, layer_files: list[str]) -> dict[str, object]:
    """The same layers gzip-compressed in an OCI layout directory (and as .tar.gz files for tar -tzf)."""
    import hashlib

    layout = out / "oci"
    (layout / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)
    descs, gz_files = [], []
    for p in layer_files:
        gz = Path(p + ".gz")
        comp = zlib.compressobj(1, zlib.DEFLATED, 31)
        h = hashlib.sha256()
        with open(p, "rb") as src, gz.open("wb") as dst:
            while chunk := src.read(8 << 20):
                data = comp.compress(chunk)
                h.update(data)
                dst.write(data)
            data = comp.flush()
            h.update(data)
            dst.write(data)
        digest = h.hexdigest()
        shutil.copyfile(gz, layout / "blobs" / "sha256" / digest)
        gz_files.append(str(gz))
        descs.append(
            {
                "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                "digest": f"sha256:{digest}",
                "size": gz.stat().st_size,
            }
        )

    def put(data: bytes) -> dict[str, object]:
        d = hashlib.sha256(data).hexdigest()
        (layout / "blobs" / "sha256" / d).write_bytes(data)
        return {"digest": f"sha256:{d}", "size": len(data)}

    diff_ids = [f"sha256:{i:064x}" for i in range(len(layer_files))]  # not checked: only counted
    cfg = json.dumps({"architecture": "amd64", "os": "linux", "config": {}, "rootfs": {"diff_ids": diff_ids}}).encode()
    manifest = json.dumps({"schemaVersion": 2, "config": put(cfg), "layers": descs}).encode()
    mdesc = {"mediaType": "application/vnd.oci.image.manifest.v1+json", **put(manifest)}
    (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [mdesc]}))
    (layout / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    return {"layout": str(layout), "gz_layers": gz_files, "bytes": sum(Path(x).stat().st_size for x in gz_files)}


CHILD = """
import sys, time, json
t0 = time.perf_counter()
from stackcheck.image import open_image
t1, c1 = time.perf_counter(), time.process_time()
with open_image(sys.argv[1]) as view:
    opened = time.perf_counter() - t0
    read_wall, read_cpu = time.perf_counter() - t1, time.process_time() - c1
print(json.dumps({"open_s": opened, "read_wall_s": read_wall, "read_cpu_s": read_cpu,
                  "paths": view._tree.entries, "warnings": len(view.info.warnings)}))
"""


def run_ours(target: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, target], stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"child failed: {out!r}")
    inner = json.loads(out)
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "open_s": inner["open_s"],
        "read_wall_s": inner["read_wall_s"],
        "read_cpu_s": inner["read_cpu_s"],
        "paths": inner["paths"],
        "peak_rss_mb": usage.ru_maxrss / 1024,
    }


def run_tar(argvs: list[list[str]]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the tar processes and the gzip they start)."""
    import resource

    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    for argv in argvs:
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def _best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return min(r[0] for r in runs), min(r[1] for r in runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gzip", action="store_true", help="also the gzip OCI layout (slow to build)")
    ap.add_argument("--dir", default=None, help="where to build (default: a temporary directory, removed)")
    ap.add_argument("--json", default=None, help="write the figures here")
    ap.add_argument("--reuse", action="store_true", help="with --dir: reuse the image built there before")
    args = ap.parse_args()
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="stackcheck-bench-image-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        done = work / "built.json"
        if args.reuse and done.is_file():
            built = json.loads(done.read_text())
        else:
            built = build(work, args.files)
            done.write_text(json.dumps(built))
        print(f"image: {built['bytes'] / 1e9:.2f} GB, {built['files']} files in 3 layers ({work})", file=sys.stderr)
        rows: dict[str, object] = {"built": built, "python": sys.version.split()[0], "cpus": os.cpu_count()}
        tar_argvs = [["tar", "-tf", str(built["image"])]] + [["tar", "-tf", p] for p in built["layers"]]  # type: ignore[attr-defined]
        run_tar(tar_argvs)  # warm the page cache
        tar_wall, tar_cpu = _best([run_tar(tar_argvs) for _ in range(args.repeat)])
        outer_wall, _ = _best([run_tar(tar_argvs[:1]) for _ in range(args.repeat)])
        ours = [run_ours(str(built["image"])) for _ in range(args.repeat)]
        wall = min(r["wall_s"] for r in ours)
        cpu = min(r["cpu_s"] for r in ours)
        rows["docker_save"] = {
            "tar_tf_outer_wall_s": round(outer_wall, 4),
            "tar_tf_outer_and_layers_wall_s": round(tar_wall, 4),
            "tar_tf_outer_and_layers_cpu_s": round(tar_cpu, 4),
            "ours_wall_s": round(wall, 4),
            "ours_cpu_s": round(cpu, 4),
            "ours_open_s": round(min(r["open_s"] for r in ours), 4),
            # the reading alone (open_image in the child: no interpreter start, no imports)
            "ours_read_wall_s": round(min(r["read_wall_s"] for r in ours), 4),
            "ours_read_cpu_s": round(min(r["read_cpu_s"] for r in ours), 4),
            "read_speed_ratio_wall": round(tar_wall / min(r["read_wall_s"] for r in ours), 3),
            "read_speed_ratio_cpu": round(tar_cpu / min(r["read_cpu_s"] for r in ours), 3),
            "paths": ours[0]["paths"],
            "peak_rss_mb": round(max(r["peak_rss_mb"] for r in ours), 1),
            "speed_ratio_wall": round(tar_wall / wall, 3),
            "speed_ratio_cpu": round(tar_cpu / cpu, 3),
        }
        if args.gzip:
            gz_done = work / "gz.json"
            if args.reuse and gz_done.is_file():
                gz = json.loads(gz_done.read_text())
            else:
                gz = gzip_layout(work, built["layers"])  # type: ignore[arg-type]
                gz_done.write_text(json.dumps(gz))
            gz_argvs = [["tar", "-tzf", p] for p in gz["gz_layers"]]  # type: ignore[attr-defined]
            run_tar(gz_argvs)
            tgz_wall, tgz_cpu = _best([run_tar(gz_argvs) for _ in range(args.repeat)])
            ours_gz = [run_ours(str(gz["layout"])) for _ in range(args.repeat)]
            gwall = min(r["wall_s"] for r in ours_gz)
            gcpu = min(r["cpu_s"] for r in ours_gz)
            rows["oci_gzip"] = {
                "compressed_bytes": gz["bytes"],
                "tar_tzf_layers_wall_s": round(tgz_wall, 4),
                "tar_tzf_layers_cpu_s": round(tgz_cpu, 4),
                "ours_wall_s": round(gwall, 4),
                "ours_cpu_s": round(gcpu, 4),
                "ours_read_cpu_s": round(min(r["read_cpu_s"] for r in ours_gz), 4),
                "peak_rss_mb": round(max(r["peak_rss_mb"] for r in ours_gz), 1),
                "speed_ratio_wall": round(tgz_wall / gwall, 3),
                "speed_ratio_cpu": round(tgz_cpu / gcpu, 3),
            }
        text = json.dumps(rows, indent=2)
        print(text)
        if args.json:
            Path(args.json).write_text(text + "\n")
        ds = rows["docker_save"]
        ok = ds["read_speed_ratio_cpu"] >= 0.8 and ds["peak_rss_mb"] <= 100  # type: ignore[index,operator]
        print("targets met" if ok else "targets NOT met", file=sys.stderr)
        return 0 if ok else 1
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
