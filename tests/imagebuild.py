"""Build container images for the tests: layer tars (python tarfile) and the JSON around them, in the
docker save layouts (legacy `<id>/layer.tar`, and Docker 25+'s OCI blobs beside manifest.json) and as OCI
image layouts (a directory or a tar). Written here from the specs' shapes; nothing is copied.

A layer is a list of entries:
    ("file", "usr/bin/x", b"content")  [, mode]
    ("dir", "opt/app")
    ("symlink", "usr/bin/python3", "python3.12")
    ("hardlink", "usr/bin/b", "usr/bin/a")
    ("whiteout", "opt/app/old")        -> opt/app/.wh.old
    ("opaque", "opt/app")              -> opt/app/.wh..wh..opq
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Entry = tuple[Any, ...]


def layer_tar(entries: Sequence[Entry], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tf:
        for e in entries:
            kind, name = e[0], e[1]
            info = tarfile.TarInfo(name)
            info.mtime = 1_700_000_000
            if kind == "file":
                data = e[2]
                info.size = len(data)
                info.mode = e[3] if len(e) > 3 else 0o644
                tf.addfile(info, io.BytesIO(data))
                continue
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
            elif kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, e[2]
            elif kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, e[2]
            elif kind == "whiteout":
                parent, _, base = name.rpartition("/")
                info.name = f"{parent}/.wh.{base}" if parent else f".wh.{base}"
            elif kind == "opaque":
                info.name = f"{name.rstrip('/')}/.wh..wh..opq"
            elif kind == "fifo":
                info.type = tarfile.FIFOTYPE
            else:
                raise ValueError(kind)
            tf.addfile(info)
    return buf.getvalue()


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def config_json(
    diff_ids: list[str],
    env: Sequence[str] = (),
    labels: dict[str, str] | None = None,
    arch: str = "amd64",
    container: dict[str, Any] | None = None,
) -> bytes:
    """An image config; `container` adds keys of its "config" object (Entrypoint, Cmd, User, WorkingDir)."""
    doc = {
        "architecture": arch,
        "os": "linux",
        "config": {"Env": list(env), "Labels": labels or {}, **(container or {})},
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
    }
    return json.dumps(doc).encode()


def _add(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1_700_000_000
    tf.addfile(info, io.BytesIO(data))


def docker_save(
    path: Path,
    layers: Sequence[bytes],
    *,
    env: Sequence[str] = (),
    labels: dict[str, str] | None = None,
    tags: Sequence[str] = ("serve:1.0",),
    oci: bool = False,
    extra_config: dict[str, Any] | None = None,
    container: dict[str, Any] | None = None,
) -> Path:
    """A `docker save` tarball: legacy layout (<id>/layer.tar), or with `oci` Docker 25+'s (blobs/ +
    index.json + manifest.json). Layers are given as uncompressed tar bytes; `container`: keys of the
    config's "config" object (Entrypoint, Cmd, User, WorkingDir)."""
    diff_ids = [digest(x) for x in layers]
    cfg = config_json(diff_ids, env, labels, container=container)
    if extra_config:
        doc = json.loads(cfg)
        doc.update(extra_config)
        cfg = json.dumps(doc).encode()
    cfg_hex = digest(cfg).split(":")[1]
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tf:
        if oci:
            names = []
            for layer in layers:
                hexd = digest(layer).split(":")[1]
                _add(tf, f"blobs/sha256/{hexd}", layer)
                names.append(f"blobs/sha256/{hexd}")
            _add(tf, f"blobs/sha256/{cfg_hex}", cfg)
            manifest = {
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {
                    "mediaType": "application/vnd.oci.image.config.v1+json",
                    "digest": digest(cfg),
                    "size": len(cfg),
                },
                "layers": [
                    {"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": digest(x), "size": len(x)}
                    for x in layers
                ],
            }
            mbytes = json.dumps(manifest).encode()
            _add(tf, f"blobs/sha256/{digest(mbytes).split(':')[1]}", mbytes)
            index = {
                "schemaVersion": 2,
                "manifests": [
                    {
                        "mediaType": "application/vnd.oci.image.manifest.v1+json",
                        "digest": digest(mbytes),
                        "size": len(mbytes),
                        "annotations": {"io.containerd.image.name": f"docker.io/library/{tags[0]}" if tags else ""},
                    }
                ],
            }
            _add(tf, "index.json", json.dumps(index).encode())
            _add(tf, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
            doc = [{"Config": f"blobs/sha256/{cfg_hex}", "RepoTags": list(tags), "Layers": names}]
        else:
            names = []
            for i, layer in enumerate(layers):
                layer_id = hashlib.sha256(f"layer{i}".encode() + layer[:64]).hexdigest()
                _add(tf, f"{layer_id}/VERSION", b"1.0")
                _add(tf, f"{layer_id}/layer.tar", layer)
                names.append(f"{layer_id}/layer.tar")
            _add(tf, f"{cfg_hex}.json", cfg)
            doc = [{"Config": f"{cfg_hex}.json", "RepoTags": list(tags), "Layers": names}]
        _add(tf, "manifest.json", json.dumps(doc).encode())
    return path


def oci_layout(
    target: Path,
    images: Sequence[dict[str, Any]],
    *,
    as_tar: bool = False,
    ref: str | None = "serve:1.0",
    attestation: bool = False,
) -> Path:
    """An OCI image layout with one image index listing each image (dict: layers (tar bytes), gzip (bool),
    env, arch). With `as_tar`, the layout is written as a tar at `target`; else as a directory."""
    blobs: dict[str, bytes] = {}

    def put(data: bytes) -> str:
        d = digest(data)
        blobs[d.split(":")[1]] = data
        return d

    descs = []
    for img in images:
        layers = img["layers"]
        gz = img.get("gzip", True)
        stored = [gzip.compress(x, compresslevel=1, mtime=0) if gz else x for x in layers]
        cfg = config_json(
            [digest(x) for x in layers],
            img.get("env", ()),
            img.get("labels"),
            img.get("arch", "amd64"),
            img.get("container"),
        )
        media = "application/vnd.oci.image.layer.v1.tar" + ("+gzip" if gz else "")
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": put(cfg), "size": len(cfg)},
            "layers": [{"mediaType": media, "digest": put(x), "size": len(x)} for x in stored],
        }
        mb = json.dumps(manifest).encode()
        descs.append(
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": put(mb),
                "size": len(mb),
                "platform": {"architecture": img.get("arch", "amd64"), "os": "linux"},
            }
        )
    if attestation:
        att = json.dumps({"schemaVersion": 2, "config": {}, "layers": []}).encode()
        descs.append(
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": put(att),
                "size": len(att),
                "platform": {"architecture": "unknown", "os": "unknown"},
                "annotations": {"vnd.docker.reference.type": "attestation-manifest"},
            }
        )
    inner = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": descs}
    ib = json.dumps(inner).encode()
    top: dict[str, Any] = {
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "digest": put(ib),
        "size": len(ib),
    }
    if ref:
        top["annotations"] = {"org.opencontainers.image.ref.name": ref}
    index = json.dumps({"schemaVersion": 2, "manifests": [top]}).encode()
    files = {"oci-layout": b'{"imageLayoutVersion": "1.0.0"}', "index.json": index}
    files.update({f"blobs/sha256/{h}": data for h, data in blobs.items()})
    if as_tar:
        with tarfile.open(target, "w") as tf:
            for name, data in files.items():
                _add(tf, name, data)
    else:
        for name, data in files.items():
            p = target / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
    return target


def snapshot(root: Path) -> set[str]:
    """Every path below root (to prove that reading an image wrote nothing)."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}
