"""H200 proof for issue 15's images: an image built from this machine's real torch, audited with
`stackcheck audit --image ... --deep`.

Builds, under --work (default /tmp/stackcheck-image-proof, removed afterwards unless --keep):
- `serve.tar`, a `docker save` tarball (legacy layout) of three uncompressed layers: a base layer (this
  machine's python3.X binary, its os.py, /etc/os-release, /etc/passwd), a layer of the site directory's other
  distributions' metadata (every *.dist-info except torch's) and a layer with torch itself (the package
  and its dist-info), the config's Env carrying PATH, CUDA_VERSION and NVIDIA_REQUIRE_CUDA;
- `serve-oci.tar`, the same image as an OCI layout in a tar with gzip layers (the registry-pulled shape),
  so that libtorch_cuda.so is read through the gzip checkpoints.
Then, for each image, runs the real CLI in a child process (peak RSS from os.wait4):
    python3 -m stackcheck audit --image IMAGE --deep --format json --timeout 300
and takes facts.binaries.torch's libtorch_cuda.so entry, facts.packages.torch, facts.python and
facts.image from the report. The SASS list must equal what `cuobjdump --list-elf` prints for the same
library on the host (and stackcheck's host-side scan of it); torch's version and CUDA read through the image
must equal the host's torch/version.py; the image's Python must be found on its PATH (learned "static");
the driver and GPUs are the host's (the nvml probe ran), and image-nvidia-require is judged (CUDA 13.0
against the host's driver). The reader's own peak memory is measured separately on the OCI image
(`open_image` alone in a child, ≤ 100 MB).

Run from the repository root on the GPU machine (one line, well under 10 minutes):
    PYTHONPATH=$PWD python3 bench/h200_image_proof.py --out "${OUT:-/tmp}/image-proof.json"
The last line says PROOF OK (exit 0) or PROOF FAILED (exit 1); the JSON holds every figure.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def sh(argv: list[str], timeout: float = 300, env: dict[str, str] | None = None) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False, env=env)
        return p.returncode, p.stdout + p.stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        return -1, f"{type(exc).__name__}: {exc}"


def torch_site(python: str) -> Path:
    """The site directory holding torch, found without importing torch."""
    code = "import importlib.util as u; s = u.find_spec('torch'); print(s.submodule_search_locations[0])"
    rc, out = sh([python, "-c", code])
    if rc != 0:
        raise SystemExit(f"torch not found by {python}: {out.strip()[-300:]}")
    return Path(out.strip().splitlines()[-1]).parent


def _add_bytes(tf: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, 1_700_000_000
    tf.addfile(info, io.BytesIO(data))


def layer_base(path: Path, python_real: Path, version: str) -> None:
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tf:
        tf.add(python_real, arcname=f"usr/bin/python{version}")
        link = tarfile.TarInfo("usr/bin/python3")
        link.type, link.linkname = tarfile.SYMTYPE, f"python{version}"
        tf.addfile(link)
        os_py = Path(f"/usr/lib/python{version}/os.py")
        _add_bytes(tf, f"usr/lib/python{version}/os.py", os_py.read_bytes() if os_py.exists() else b"")
        _add_bytes(tf, "etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")
        for etc in ("/etc/os-release", "/etc/debian_version"):
            if Path(etc).is_file():
                tf.add(etc, arcname=etc.lstrip("/"))


def layer_dists(path: Path, site: Path, box_site: str) -> int:
    n = 0
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tf:
        for d in sorted(site.glob("*.dist-info")):
            if d.name.startswith("torch-"):
                continue
            meta = d / "METADATA"
            if meta.is_file():
                tf.add(meta, arcname=f"{box_site}/{d.name}/METADATA")
                n += 1
    return n


def layer_torch(path: Path, site: Path, box_site: str) -> None:
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tf:
        tf.add(site / "torch", arcname=f"{box_site}/torch")
        for d in sorted(site.glob("torch-*.dist-info")):
            tf.add(d, arcname=f"{box_site}/{d.name}")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(8 << 20):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def build_images(work: Path, python: str, site: Path) -> dict[str, Any]:
    python_real = Path(os.path.realpath(python))
    m = re.match(r"python(\d+\.\d+)$", python_real.name)
    version = m.group(1) if m else f"{sys.version_info[0]}.{sys.version_info[1]}"
    # where pip puts packages for this interpreter family: Debian's dist-packages, else site-packages
    kind = "dist-packages" if Path("/etc/debian_version").exists() else "site-packages"
    box_site = f"usr/local/lib/python{version}/{kind}"
    layers = [work / "l0.tar", work / "l1.tar", work / "l2.tar"]
    t0 = time.monotonic()
    layer_base(layers[0], python_real, version)
    dists = layer_dists(layers[1], site, box_site)
    layer_torch(layers[2], site, box_site)
    diff_ids = [sha256_file(p) for p in layers]
    env = [
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "CUDA_VERSION=13.0.0",
        "NVIDIA_REQUIRE_CUDA=cuda>=13.0 brand=tesla,driver>=535,driver<536",
        "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
    ]
    cfg = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Env": env},
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
        }
    ).encode()
    cfg_hex = hashlib.sha256(cfg).hexdigest()
    docker = work / "serve.tar"
    with tarfile.open(docker, "w", format=tarfile.PAX_FORMAT) as tf:
        names = []
        for i, p in enumerate(layers):
            lid = diff_ids[i].split(":")[1]
            tf.add(p, arcname=f"{lid}/layer.tar")
            names.append(f"{lid}/layer.tar")
        _add_bytes(tf, f"{cfg_hex}.json", cfg)
        doc = [{"Config": f"{cfg_hex}.json", "RepoTags": ["proof/serve:1"], "Layers": names}]
        _add_bytes(tf, "manifest.json", json.dumps(doc).encode())
    t_docker = time.monotonic() - t0
    t1 = time.monotonic()
    oci = work / "serve-oci.tar"
    descs = []
    gz_paths = []
    for p in layers:
        gz = p.with_suffix(".tar.gz")
        with p.open("rb") as src, gzip.open(gz, "wb", compresslevel=1) as dst:
            shutil.copyfileobj(src, dst, 8 << 20)
        gz_paths.append(gz)
        descs.append(
            {
                "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                "digest": sha256_file(gz),
                "size": gz.stat().st_size,
            }
        )
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": f"sha256:{cfg_hex}",
                "size": len(cfg),
            },
            "layers": descs,
        }
    ).encode()
    index = json.dumps(
        {
            "schemaVersion": 2,
            "manifests": [
                {
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": "sha256:" + hashlib.sha256(manifest).hexdigest(),
                    "size": len(manifest),
                    "platform": {"architecture": "amd64", "os": "linux"},
                    "annotations": {"org.opencontainers.image.ref.name": "proof/serve:1"},
                }
            ],
        }
    ).encode()
    with tarfile.open(oci, "w", format=tarfile.PAX_FORMAT) as tf:
        _add_bytes(tf, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        _add_bytes(tf, "index.json", index)
        _add_bytes(tf, f"blobs/sha256/{hashlib.sha256(manifest).hexdigest()}", manifest)
        _add_bytes(tf, f"blobs/sha256/{cfg_hex}", cfg)
        for gz, d in zip(gz_paths, descs, strict=True):
            tf.add(gz, arcname=f"blobs/sha256/{d['digest'].split(':')[1]}")
    for p in [*layers, *gz_paths]:
        p.unlink()
    return {
        "python_version": version,
        "box_site": "/" + box_site,
        "other_dists": dists,
        "docker_save": {"path": str(docker), "bytes": docker.stat().st_size, "build_s": round(t_docker, 1)},
        "oci_gzip": {"path": str(oci), "bytes": oci.stat().st_size, "build_s": round(time.monotonic() - t1, 1)},
    }


READER = r"""
import json, sys, time
t0 = time.perf_counter()
from stackcheck.image import open_image
with open_image(sys.argv[1]) as view:
    print(json.dumps({"open_s": round(time.perf_counter() - t0, 2), "layers": len(view.info.layers)}))
"""


def reader_memory(image: str, pythonpath: str) -> dict[str, Any]:
    """`open_image` alone in a child: the reader's own wall time and peak RSS."""
    env = dict(os.environ, PYTHONPATH=pythonpath)
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", READER, image], stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return {"error": f"child exited {os.waitstatus_to_exitcode(status)}: {out[-2000:]!r}"}
    result: dict[str, Any] = json.loads(out)
    result["wall_s"] = round(time.monotonic() - t0, 2)
    result["peak_rss_mb"] = round(usage.ru_maxrss / 1024, 1)
    return result


def child_pythonpath(work: Path) -> str:
    """PYTHONPATH for the CLI in this interpreter: the tree, and `packaging` (stackcheck's one import that a
    bare system Python may lack) from a wheel in .whl/ (a pure-Python wheel is importable as a zip), else
    pip's vendored copy linked under the work directory."""
    parts = [str(REPO)]
    rc, _ = sh([sys.executable, "-c", "import packaging.version"])
    if rc == 0:
        return str(REPO)
    wheels = sorted((REPO / ".whl").glob("packaging-*.whl")) if (REPO / ".whl").is_dir() else []
    if wheels:
        return ":".join([*parts, str(wheels[-1])])
    rc, out = sh([sys.executable, "-c", "import pip._vendor.packaging as p; print(p.__path__[0])"])
    if rc == 0 and out.strip():
        shim = work / "pydeps"
        shim.mkdir(exist_ok=True)
        link = shim / "packaging"
        if not link.exists():
            link.symlink_to(out.strip().splitlines()[-1])
        parts.append(str(shim))
    return ":".join(parts)


def audit_image(image: str, pythonpath: str) -> dict[str, Any]:
    """The real CLI: `stackcheck audit --image IMAGE --deep --format json` (peak RSS from os.wait4)."""
    argv = [sys.executable, "-m", "stackcheck", "audit", "--image", image, "--deep", "--format", "json"]
    argv += ["--timeout", "300"]
    env = dict(os.environ, PYTHONPATH=pythonpath)
    t0 = time.monotonic()
    import tempfile

    with tempfile.TemporaryFile() as err_file:  # a file: a chatty stderr cannot block the child
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err_file, env=env)
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        err_file.seek(0)
        err = err_file.read()
    rc = os.waitstatus_to_exitcode(status)
    result: dict[str, Any] = {
        "command": " ".join(argv[1:]),
        "exit": rc,
        "wall_s": round(time.monotonic() - t0, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
    }
    try:
        report = json.loads(out)
    except ValueError:
        result["error"] = f"exit {rc}: {(out + err)[-1500:]!r}"
        return result
    facts = report.get("facts", {})
    files = facts.get("binaries", {}).get("torch", {}).get("files", [])
    entry = next((f for f in files if str(f.get("path", "")).endswith("libtorch_cuda.so")), {})
    torch = facts.get("packages", {}).get("torch", {})
    python = facts.get("python", {})
    checks = {c.get("id"): c.get("status") for c in report.get("checks", [])}
    result.update(
        {
            "sass": entry.get("sass"),
            "ptx": entry.get("ptx"),
            "bytes_read": entry.get("bytes_read"),
            "scan_error": entry.get("error"),
            "torch": {k: torch.get(k) for k in ("installed", "version", "cuda", "location")},
            "python": {k: python.get(k) for k in ("executable", "version", "prefix", "chosen_by", "learned")},
            "driver": facts.get("driver", {}).get("version"),
            "gpus": len(facts.get("gpus") or []),
            "image": {k: facts.get("image", {}).get(k) for k in ("format", "reference", "layers", "env", "warnings")},
            "image_nvidia_require": checks.get("image-nvidia-require"),
            "probes": {p.get("name"): p.get("status") for p in report.get("probes", [])},
        }
    )
    return result


def host_torch(python: str) -> dict[str, Any]:
    """torch's version and CUDA as the host's interpreter says them (imports torch once)."""
    rc, out = sh([python, "-c", "import torch; print(torch.__version__, torch.version.cuda)"], timeout=300)
    words = out.strip().splitlines()[-1].split() if rc == 0 and out.strip() else []
    return {"version": words[0] if words else None, "cuda": words[1] if len(words) > 1 else None, "raw": out[-300:]}


def same_targets(a: Any, b: Any) -> bool:
    """Both are lists naming the same targets, each once (order aside)."""
    if not isinstance(a, list) or not isinstance(b, list):
        return False
    return sorted(a) == sorted(b) and len(set(a)) == len(a) and len(set(b)) == len(b)


def cuobjdump_sass(lib: Path) -> list[str] | str:
    if not shutil.which("cuobjdump"):
        return "cuobjdump not found"
    rc, text = sh(["cuobjdump", "--list-elf", str(lib)], timeout=300)
    if rc != 0 and "ELF file" not in text:
        return f"cuobjdump failed ({rc}): {text[-300:]}"
    return sorted(set(re.findall(r"\.(sm_\d+[af]?)\.cubin", text)))


def host_scan(lib: Path, pythonpath: str) -> dict[str, Any]:
    for entry in reversed(pythonpath.split(":")):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    from stackcheck.readers.binaries import scan_file

    got = scan_file(lib, "torch/lib/libtorch_cuda.so") or {}
    return {"sass": got.get("sass"), "ptx": got.get("ptx"), "bytes_read": got.get("bytes_read")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default="/usr/bin/python3", help="the interpreter whose torch goes in the image")
    ap.add_argument("--site", default=None, help="the site directory holding torch (default: ask --python)")
    ap.add_argument("--work", default="/tmp/stackcheck-image-proof")
    ap.add_argument("--out", default=None, help="write the JSON summary here")
    ap.add_argument("--keep", action="store_true", help="keep the built images")
    args = ap.parse_args()
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    summary: dict[str, Any] = {}
    ok = False
    try:
        site = Path(args.site) if args.site else torch_site(args.python)
        lib = site / "torch" / "lib" / "libtorch_cuda.so"
        summary["host"] = {"site": str(site), "libtorch_cuda_bytes": lib.stat().st_size}
        summary["cuobjdump_sass"] = cuobjdump_sass(lib)
        pythonpath = child_pythonpath(work)
        summary["child_pythonpath"] = pythonpath
        summary["host_scan"] = host_scan(lib, pythonpath)
        summary["host_torch"] = host_torch(args.python)
        summary["built"] = build_images(work, args.python, site)
        summary["audit_docker_save"] = audit_image(summary["built"]["docker_save"]["path"], pythonpath)
        summary["audit_oci_gzip"] = audit_image(summary["built"]["oci_gzip"]["path"], pythonpath)
        summary["reader_oci_gzip"] = reader_memory(summary["built"]["oci_gzip"]["path"], pythonpath)
        want = summary["cuobjdump_sass"]
        audits = [summary[k] for k in ("audit_docker_save", "audit_oci_gzip")]
        host = summary["host_torch"]
        checks = {
            # the same set of targets (cuobjdump lists them in name order, stackcheck in architecture order)
            "docker_save_sass_equals_cuobjdump": same_targets(audits[0].get("sass"), want),
            "oci_gzip_sass_equals_cuobjdump": same_targets(audits[1].get("sass"), want),
            "host_scan_equals_cuobjdump": same_targets(summary["host_scan"].get("sass"), want),
            "torch_version_equals_host": all((a.get("torch") or {}).get("version") == host["version"] for a in audits),
            "torch_cuda_equals_host": all((a.get("torch") or {}).get("cuda") == host["cuda"] for a in audits),
            "image_python_static": all((a.get("python") or {}).get("learned") == "static" for a in audits),
            "driver_from_host": all(a.get("driver") and a.get("gpus") for a in audits),
            "image_nvidia_require_judged": all(a.get("image_nvidia_require") in ("ok", "failed") for a in audits),
            "reader_peak_rss_under_100mb": summary["reader_oci_gzip"].get("peak_rss_mb", 1e9) <= 100,
        }
        summary["checks"] = checks
        ok = isinstance(want, list) and bool(want) and all(checks.values())
    except Exception as exc:  # the proof reports, it does not crash
        summary["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(summary, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print("PROOF OK" if ok else "PROOF FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
