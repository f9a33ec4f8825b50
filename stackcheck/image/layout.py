"""Opening an image file: `docker save` tarballs (the legacy layout and Docker 25+'s OCI layout inside the
tar), OCI image layouts as a directory or a tar; choosing one image; applying its layers.

See the package docstring (stackcheck/image/__init__.py) for what is read, what is served and why.
"""

from __future__ import annotations

import fnmatch
import gc
import json
import os
import re
import stat as st
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stackcheck.errors import BadInputError
from stackcheck.image.blobs import (
    Blob,
    FileHandle,
    GzipIndex,
    InflateReader,
    PlainReader,
    Truncated,
    compression_of,
)
from stackcheck.image.fastscan import apply_plain_layer
from stackcheck.image.info import ImageInfo, LayerInfo
from stackcheck.image.tarscan import HARDLINK, REGULAR, SYMLINK, Member, TarError, TarScanner
from stackcheck.image.tree import Tree, clean_parts, printable
from stackcheck.image.view import ImageView, LayerData

#: JSON documents of an image (index, manifests, config) larger than this are refused
JSON_CAP = 16 << 20
#: uncompressed layers through the fused reader (fastscan.py); False: the general reader (tests compare them)
FAST_PLAIN_LAYERS = True
#: labels recorded in facts.image at most
MAX_LABELS = 200

#: Files whose content is kept in memory while a *compressed* layer streams past (fnmatch patterns over
#: box paths): what the probes read as text. Anything else in a compressed layer is still readable, through
#: the layer's checkpoints (slower: up to one checkpoint spacing of decompression per read).
DEFAULT_CAPTURE: tuple[str, ...] = (
    "*.dist-info/METADATA",
    "*.dist-info/direct_url.json",
    "*.dist-info/top_level.txt",
    "*.egg-info/PKG-INFO",
    "*.egg-link",
    "*.pth",
    "*/pyvenv.cfg",
    "*/torch/version.py",
    "/etc/os-release",
    "/usr/lib/os-release",
    "/etc/debian_version",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d/*",
    "/etc/ld.so.cache",
    "*/cuda*/version.json",
    "*/cuda*/version.txt",
    # the gate tables of manifests/gates.json (stackcheck/readers/sourcetables.py reads them)
    "*/sglang/srt/distributed/device_communicators/*.py",
    "*/flashinfer/comm/*.py",
    "*/flashinfer/jit/*.py",
)
#: a captured file is at most this large (the source-table reader's own limit)
CAPTURE_FILE_CAP = 4 << 20
#: and all captured files together at most this much; past it, files are served through checkpoints
CAPTURE_TOTAL_CAP = 32 << 20

_DIGEST = re.compile(r"^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$")
_OCI_MANIFEST = {"application/vnd.oci.image.manifest.v1+json", "application/vnd.docker.distribution.manifest.v2+json"}
_OCI_INDEX = {"application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json"}
_REF_ANNOTATIONS = ("io.containerd.image.name", "org.opencontainers.image.ref.name")

#: image config Env entries recorded in facts.image.env (besides the host env allow-list of the system
#: probe); values that look like secrets are dropped as for the host
IMAGE_ENV_NAMES = frozenset(
    {
        "CUDA_VERSION",
        "NVIDIA_DISABLE_REQUIRE",
        "NVIDIA_VISIBLE_DEVICES",
        "NVIDIA_DRIVER_CAPABILITIES",
        "NV_CUDA_CUDART_VERSION",
        "NV_CUDA_LIB_VERSION",
        "NVARCH",
        "CUDNN_VERSION",
        "NV_CUDNN_VERSION",
        "NV_LIBNCCL_PACKAGE_VERSION",
        "PATH",
        "PYTHONPATH",
        "PYTHONHOME",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "HOME",
    }
)
IMAGE_ENV_PREFIXES = ("NVIDIA_REQUIRE_",)

_GOARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "ppc64le": "ppc64le"}


# ---- the file: an outer tar, or a directory ----------------------------------------------------------
class _Container:
    """The named files of an image archive (an OCI layout's blobs, a docker save's layer tars)."""

    label: str
    handles: list[FileHandle]

    def has(self, name: str) -> bool:
        raise NotImplementedError

    def blob(self, name: str) -> Blob:
        raise NotImplementedError

    def read_json(self, name: str) -> tuple[Any, bytes]:
        blob = self.blob(name)
        if blob.length > JSON_CAP:
            raise BadInputError(f"{self.label}: {name} is {blob.length} bytes, over the {JSON_CAP}-byte limit")
        try:
            data = blob.pread(0, blob.length)
        except (Truncated, OSError) as exc:
            raise BadInputError(f"{self.label}: {name}: {exc}") from None
        try:
            return json.loads(data.decode("utf-8")), data
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise BadInputError(f"{self.label}: {name}: not valid JSON ({str(exc).splitlines()[0][:120]})") from None


def _obj(value: Any) -> dict[str, Any]:
    """A JSON object, or {} for anything else (hostile documents put lists and nulls anywhere)."""
    return value if isinstance(value, dict) else {}


def _clean_name(name: str) -> str | None:
    parts, _ = clean_parts(name)
    return "/".join(parts) if parts else None


class _TarContainer(_Container):
    """An uncompressed tar file (docker save, or an OCI layout archived): its members indexed once."""

    def __init__(self, path: str, handle: FileHandle) -> None:
        self.label = path
        self.handles = [handle]
        self.handle = handle
        self.members: dict[str, Member] = {}
        reader = PlainReader(Blob(handle, 0, handle.size, path))
        scanner = TarScanner(reader, path)
        try:
            for m in scanner:
                name = _clean_name(m.name)
                if name is not None:
                    self.members[name] = m
        except Truncated as exc:
            raise BadInputError(f"{path}: truncated archive ({exc})") from None
        except TarError as exc:
            raise BadInputError(str(exc)) from None
        if not self.members:
            raise BadInputError(f"{path}: an empty tar archive")

    def _member(self, name: str) -> Member | None:
        clean = _clean_name(name)
        hops = 0
        while clean is not None and hops < 10:
            m = self.members.get(clean)
            if m is None:
                return None
            if m.type == SYMLINK:  # legacy docker save links duplicate layers: "../<id>/layer.tar"
                base = clean.rsplit("/", 1)[0] if "/" in clean else ""
                clean = _clean_name(m.linkname if m.linkname.startswith("/") else f"{base}/{m.linkname}")
            elif m.type == HARDLINK:
                clean = _clean_name(m.linkname)
            else:
                return m if m.type in REGULAR else None
            hops += 1
        return None

    def has(self, name: str) -> bool:
        return self._member(name) is not None

    def blob(self, name: str) -> Blob:
        m = self._member(name)
        if m is None:
            raise BadInputError(f"{self.label}: {printable(name)} is not in the archive")
        return Blob(self.handle, m.data_pos, m.size, f"{self.label}:{printable(name)}")


class _DirContainer(_Container):
    """An OCI image layout directory (or an unpacked docker save)."""

    def __init__(self, path: str) -> None:
        self.label = path
        self.root = os.path.realpath(path)
        self.handles = []
        self._open: dict[str, Blob] = {}

    def _path(self, name: str) -> str | None:
        clean = _clean_name(name)
        if clean is None:
            return None
        full = os.path.realpath(os.path.join(self.root, clean))
        if not full.startswith(self.root + os.sep):
            return None  # a link that leaves the layout directory
        return full

    def has(self, name: str) -> bool:
        full = self._path(name)
        try:
            return full is not None and st.S_ISREG(os.stat(full).st_mode)
        except OSError:
            return False

    def blob(self, name: str) -> Blob:
        if name in self._open:
            return self._open[name]
        full = self._path(name)
        if full is None or not self.has(name):
            raise BadInputError(f"{self.label}: {printable(name)} is not in the layout (or not a regular file)")
        handle = FileHandle(full)
        self.handles.append(handle)
        blob = Blob(handle, 0, handle.size, f"{self.label}/{printable(name)}")
        self._open[name] = blob
        return blob


def _open_container(path: str) -> _Container:
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise BadInputError(f"{path}: {exc.strerror or exc}") from None
    if st.S_ISDIR(mode):
        return _DirContainer(path)
    if not st.S_ISREG(mode):
        raise BadInputError(f"{path}: not a regular file or a directory")
    handle = FileHandle(path)
    try:
        head = handle.pread(512, 0)
        if head.startswith(b"\x1f\x8b"):
            raise BadInputError(
                f"{path}: a gzip-compressed archive; decompress it first (gunzip -k): stackcheck reads an image "
                "archive by seeking to its layers, which a compressed archive does not allow"
            )
        if len(head) < 512:
            raise BadInputError(f"{path}: {len(head)} bytes: not an image archive (truncated?)")
        return _TarContainer(path, handle)
    except BaseException:
        handle.close()
        raise


# ---- choosing the image --------------------------------------------------------------------------------
def host_platform() -> str:
    """ "linux/<GOARCH>" of this machine (x86_64 -> amd64, aarch64 -> arm64)."""
    machine = os.uname().machine.lower()
    return f"linux/{_GOARCH.get(machine, machine)}"


def _platform_matches(want: str, arch: str | None, os_name: str | None, variant: str | None) -> bool:
    w_os, _, rest = want.partition("/")
    w_arch, _, w_variant = rest.partition("/")
    if w_os != (os_name or "linux") or w_arch != (arch or ""):
        return False
    return not w_variant or w_variant == (variant or "")


def _digest_blob(digest: Any, where: str) -> str:
    if not isinstance(digest, str) or not _DIGEST.match(digest):
        raise BadInputError(f"{where}: not a digest: {printable(str(digest))}")
    alg, _, hexpart = digest.partition(":")
    return f"blobs/{alg}/{hexpart}"


@dataclass
class _Candidate:
    manifest: dict[str, Any]
    digest: str
    reference: str | None
    arch: str | None
    os: str | None
    variant: str | None


def _oci_candidates(c: _Container, warnings: list[str]) -> list[_Candidate]:
    """Every image manifest reachable from index.json whose blob is in the file (nested indexes walked)."""
    index, _ = c.read_json("index.json")
    out: list[_Candidate] = []

    def visit(doc: Any, where: str, ref: str | None, depth: int) -> None:
        if not isinstance(doc, dict) or not isinstance(doc.get("manifests"), list):
            raise BadInputError(f"{c.label}: {where}: not an image index (no manifests list)")
        if depth > 4:
            raise BadInputError(f"{c.label}: {where}: indexes nested more than 4 deep")
        for i, desc in enumerate(doc["manifests"]):
            if not isinstance(desc, dict):
                continue
            here = f"{where} manifests[{i}]"
            ann = _obj(desc.get("annotations"))
            if ann.get("vnd.docker.reference.type") == "attestation-manifest":
                continue
            name = _digest_blob(desc.get("digest"), f"{c.label}: {here}")
            if not c.has(name):
                plat = _obj(desc.get("platform"))
                warnings.append(
                    f"{here}: {plat.get('os', '?')}/{plat.get('architecture', '?')} manifest not in the file: skipped"
                )
                continue
            _check_size(c, name, desc, here)
            sub, _ = c.read_json(name)
            this_ref = next((str(ann[k]) for k in _REF_ANNOTATIONS if isinstance(ann.get(k), str)), None) or ref
            media = desc.get("mediaType") or _obj(sub).get("mediaType")
            if media in _OCI_INDEX or (isinstance(sub, dict) and "manifests" in sub and "layers" not in sub):
                visit(sub, name, this_ref, depth + 1)
                continue
            if not isinstance(sub, dict) or not isinstance(sub.get("layers"), list):
                raise BadInputError(f"{c.label}: {name}: not an image manifest (no layers list)")
            plat = _obj(desc.get("platform"))
            if plat.get("os") == "unknown":
                continue  # buildkit's attestation entries
            out.append(
                _Candidate(
                    sub,
                    str(desc["digest"]),
                    this_ref,
                    plat.get("architecture"),
                    plat.get("os"),
                    plat.get("variant"),
                )
            )

    visit(index, "index.json", None, 0)
    return out


def _check_size(c: _Container, name: str, desc: Mapping[str, Any], where: str) -> None:
    size = desc.get("size")
    actual = c.blob(name).length
    if isinstance(size, int) and size != actual:
        raise BadInputError(
            f"{c.label}: {where}: {name} is {actual} bytes, the descriptor says {size} (truncated or altered)"
        )


def _choose(
    items: Sequence[Any],
    describe: Callable[[Any], str],
    plat_of: Callable[[Any], tuple[str | None, str | None, str | None]],
    ref_of: Callable[[Any], list[str]],
    platform: str | None,
    reference: str | None,
    label: str,
) -> tuple[Any, str]:
    pool = list(items)
    if not pool:
        raise BadInputError(f"{label}: no image in the file")
    why: list[str] = []
    if reference is not None:
        pool = [x for x in pool if reference in ref_of(x) or any(r.endswith("/" + reference) for r in ref_of(x))]
        if not pool:
            known = sorted({r for x in items for r in ref_of(x)})
            raise BadInputError(f"{label}: no image named {reference!r} (the file has: {', '.join(known) or 'none'})")
        why.append(f"reference {reference}")
    if platform is not None:
        pool = [x for x in pool if _platform_matches(platform, *plat_of(x))]
        if not pool:
            have = ", ".join(sorted({describe(x) for x in items}))
            raise BadInputError(f"{label}: no image for platform {platform} (the file has: {have})")
        return pool[0], ", ".join([*why, f"platform {platform} as asked"])
    if len(pool) == 1:
        return pool[0], ", ".join([*why, "the only image in the file"]) if not why else ", ".join(why)
    host = host_platform()
    matching = [x for x in pool if _platform_matches(host, *plat_of(x))]
    if matching:
        return matching[0], ", ".join([*why, f"the host's platform {host} (the file has {len(pool)} images)"])
    have = ", ".join(describe(x) for x in pool)
    raise BadInputError(f"{label}: {len(pool)} images and none for this host ({host}): choose one ({have})")


# ---- the config --------------------------------------------------------------------------------------
def _env_list(config: Mapping[str, Any], warnings: list[str], unread: dict[str, str]) -> dict[str, str]:
    """The config's Env as a mapping; one that is not a list of strings is noted in `unread` (irobust11: the gate
    judged the launch without it; a runtime cannot decode such a config, so what a container gets is not known)."""
    inner = config.get("config") if isinstance(config.get("config"), dict) else {}
    raw = inner.get("Env") if isinstance(inner, dict) else None
    env: dict[str, str] = {}
    if raw is None:
        return env
    if not isinstance(raw, list):
        warnings.append("config: Env is not a list: ignored")
        unread["Env"] = "is not a list of strings"
        return env
    if not all(isinstance(item, str) for item in raw):
        warnings.append("config: Env holds an entry that is not a string: ignored")
        unread["Env"] = "is not a list of strings"
    for item in raw:
        if isinstance(item, str) and "=" in item:
            k, _, v = item.partition("=")
            env[k] = v
    return env


#: the most words of an Entrypoint or Cmd kept; one longer is kept cut and named in ImageInfo.unread
MAX_COMMAND_WORDS = 4096


def _string_list(inner: Any, key: str, warnings: list[str], unread: dict[str, str]) -> list[str]:
    """The config's Entrypoint or Cmd: a list of strings (null or absent: empty). One of another shape, or longer
    than MAX_COMMAND_WORDS, is noted in `unread` (key -> why): the command a container runs is then not known
    (irobust11: the gate judged the Cmd alone where the Entrypoint was [1], and a Cmd cut at its 4096th word)."""
    value = inner.get(key) if isinstance(inner, dict) else None
    if value is None:
        return []
    if isinstance(value, str):  # not what docker writes, but some builders do: one shell-form string
        return ["/bin/sh", "-c", value]
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        warnings.append(f"config: {key} is not a list of strings: ignored")
        unread[key] = "is not a list of strings"
        return []
    if len(value) > MAX_COMMAND_WORDS:
        warnings.append(f"config: {key} has {len(value)} words, only the first {MAX_COMMAND_WORDS} read")
        unread[key] = f"has {len(value)} words, more than the {MAX_COMMAND_WORDS} read"
    return list(value[:MAX_COMMAND_WORDS])


def redact_image_env(env: Mapping[str, str]) -> dict[str, str]:
    """The config Env entries a report may carry: allow-listed names, nothing that looks like a secret."""
    from stackcheck.redact import env_allowed, looks_secret, secret_name

    out: dict[str, str] = {}
    for name in sorted(env):
        if not (name in IMAGE_ENV_NAMES or name.startswith(IMAGE_ENV_PREFIXES) or env_allowed(name)):
            continue
        if secret_name(name):
            continue
        value = env[name]
        if ("://" in value and "@" in value) or looks_secret(value):
            continue
        out[name] = printable(value, 4000)
    return out


# ---- opening -------------------------------------------------------------------------------------------
@dataclass
class _Plan:
    config_name: str
    layers: list[tuple[str, str | None, str | None]]  # (name in the file, digest, media type)
    reference: str | None
    digest: str | None
    chosen_by: str
    expected_config_digest: str | None


def _plan_docker(c: _Container, platform: str | None, reference: str | None, warnings: list[str]) -> _Plan:
    doc, _ = c.read_json("manifest.json")
    if not isinstance(doc, list) or not doc:
        raise BadInputError(f"{c.label}: manifest.json: expected a non-empty list of images")
    entries = [e for e in doc if isinstance(e, dict)]
    for i, e in enumerate(entries):
        if not isinstance(e.get("Config"), str) or not isinstance(e.get("Layers"), list):
            raise BadInputError(f"{c.label}: manifest.json[{i}]: no Config or Layers")
        if not all(isinstance(x, str) for x in e["Layers"]):
            raise BadInputError(f"{c.label}: manifest.json[{i}]: Layers must be file names")
    configs: dict[str, Any] = {}

    def plat(e: Any) -> tuple[str | None, str | None, str | None]:
        name = e["Config"]
        if name not in configs:
            cfg, _ = c.read_json(name) if c.has(name) else ({}, b"")
            configs[name] = cfg if isinstance(cfg, dict) else {}
        cfg = configs[name]
        return cfg.get("architecture"), cfg.get("os"), cfg.get("variant")

    def tags(e: Any) -> list[str]:
        return [t for t in e.get("RepoTags") or [] if isinstance(t, str)]

    def describe(e: Any) -> str:
        a, o, v = plat(e)
        return f"{(tags(e) or [e['Config']])[0]} ({o}/{a}{'/' + v if v else ''})"

    entry, why = _choose(entries, describe, plat, tags, platform, reference, c.label)
    config_name = entry["Config"]
    if not c.has(config_name):
        raise BadInputError(f"{c.label}: manifest.json: config {printable(config_name)} is not in the file")
    layers: list[tuple[str, str | None, str | None]] = []
    for i, name in enumerate(entry["Layers"]):
        if not c.has(name):
            raise BadInputError(
                f"{c.label}: manifest.json: layer {i + 1} ({printable(name)}) is not in the file "
                "(a truncated save, or a manifest that does not match the archive)"
            )
        m = re.match(r"^blobs/(sha256|sha512)/([0-9a-f]+)$", _clean_name(name) or "")
        layers.append((name, f"{m.group(1)}:{m.group(2)}" if m else None, None))
    ref = next(iter(tags(entry)), None)
    expected = None
    cm = re.match(r"^(?:blobs/sha256/)?([0-9a-f]{64})(?:\.json)?$", _clean_name(config_name) or "")
    if cm:
        expected = f"sha256:{cm.group(1)}"
    digest = None
    if c.has("index.json"):  # Docker 25+: the OCI manifest of the same image is in the file too
        try:
            for cand in _oci_candidates(c, []):
                cfg = cand.manifest.get("config")
                if isinstance(cfg, dict) and cfg.get("digest") == expected:
                    digest = cand.digest
                    media = [d.get("mediaType") if isinstance(d, dict) else None for d in cand.manifest["layers"]]
                    if len(media) == len(layers):
                        layers = [(n, d, mt) for (n, d, _), mt in zip(layers, media, strict=True)]
                    break
        except BadInputError as exc:
            warnings.append(f"index.json beside manifest.json not used: {exc.message}")
    return _Plan(config_name, layers, ref, digest, why, expected)


def _plan_oci(c: _Container, platform: str | None, reference: str | None, warnings: list[str]) -> _Plan:
    if c.has("oci-layout"):
        layout, _ = c.read_json("oci-layout")
        if not isinstance(layout, dict) or not isinstance(layout.get("imageLayoutVersion"), str):
            warnings.append("oci-layout: no imageLayoutVersion")
    else:
        warnings.append("no oci-layout file: read as an OCI layout anyway")
    cands = _oci_candidates(c, warnings)

    def plat(x: Any) -> tuple[str | None, str | None, str | None]:
        return x.arch, x.os, x.variant

    def describe(x: Any) -> str:
        return f"{x.os or '?'}/{x.arch or '?'}{'/' + x.variant if x.variant else ''}"

    def refs(x: Any) -> list[str]:
        return [x.reference] if x.reference else []

    cand, why = _choose(cands, describe, plat, refs, platform, reference, c.label)
    cfg = cand.manifest.get("config")
    if not isinstance(cfg, dict):
        raise BadInputError(f"{c.label}: manifest {cand.digest}: no config descriptor")
    config_name = _digest_blob(cfg.get("digest"), f"{c.label}: manifest {cand.digest} config")
    if not c.has(config_name):
        raise BadInputError(f"{c.label}: manifest {cand.digest}: config {cfg.get('digest')} is not in the file")
    _check_size(c, config_name, cfg, f"manifest {cand.digest} config")
    layers: list[tuple[str, str | None, str | None]] = []
    for i, desc in enumerate(cand.manifest["layers"]):
        if not isinstance(desc, dict):
            raise BadInputError(f"{c.label}: manifest {cand.digest}: layers[{i}] is not a descriptor")
        name = _digest_blob(desc.get("digest"), f"{c.label}: manifest {cand.digest} layers[{i}]")
        if not c.has(name):
            raise BadInputError(
                f"{c.label}: manifest {cand.digest}: layer {i + 1} ({desc.get('digest')}) is not in the file"
            )
        _check_size(c, name, desc, f"manifest {cand.digest} layers[{i}]")
        media = desc.get("mediaType")
        layers.append((name, str(desc["digest"]), media if isinstance(media, str) else None))
    return _Plan(config_name, layers, cand.reference, cand.digest, why, str(cfg.get("digest")))


def _capture_matcher(patterns: Sequence[str]) -> Callable[[str], bool]:
    if not patterns:
        return lambda _path: False
    rx = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))
    return lambda path: rx.match(path) is not None


def open_image(
    path: str | os.PathLike[str],
    *,
    platform: str | None = None,
    reference: str | None = None,
    capture: Sequence[str] = DEFAULT_CAPTURE,
) -> ImageView:
    """Read an image file into an `ImageView` (its `info` is the `ImageInfo`).

    `path`: a `docker save` tarball, an OCI image layout directory, or an OCI layout in a tar.
    `platform` ("linux/arm64", "linux/arm/v7") picks one image of a multi-platform index; by default the
    only image, else the host's platform. `reference` ("serve:1.2") picks an image by name when the file
    holds several. `capture`: fnmatch patterns of files kept in memory while a compressed layer streams.
    Raises BadInputError (exit 2) with a one-line message for anything that cannot be read as an image.
    """
    spath = os.fspath(path)
    # the tree is one object per path and holds no cycles: collecting while it grows only re-walks it
    # (measured: a third of the time on 100,000 files)
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        container = _open_container(spath)
        try:
            return _open(container, spath, platform, reference, capture)
        except BaseException:
            for h in container.handles:
                h.close()
            raise
    finally:
        if gc_was_on:
            gc.enable()


def read_image_info(
    path: str | os.PathLike[str], *, platform: str | None = None, reference: str | None = None
) -> ImageInfo:
    """What the image says about itself (its config: Env, Entrypoint, Cmd, labels; its manifest), without
    applying its layers: the outer archive's index, the manifest and the config are read, nothing else
    (`layers` is empty). Raises BadInputError like `open_image`."""
    spath = os.fspath(path)
    container = _open_container(spath)
    try:
        info, _plan, _diff_ids = _read_info(container, spath, platform, reference, [])
        return info
    finally:
        for h in container.handles:
            h.close()


def _read_info(
    c: _Container, path: str, platform: str | None, reference: str | None, warnings: list[str]
) -> tuple[ImageInfo, _Plan, list[Any] | None]:
    if c.has("manifest.json"):
        fmt = "docker-save"
        plan = _plan_docker(c, platform, reference, warnings)
    elif c.has("index.json"):
        fmt = "oci-dir" if isinstance(c, _DirContainer) else "oci-tar"
        plan = _plan_oci(c, platform, reference, warnings)
    else:
        raise BadInputError(
            f"{path}: not a docker save archive or an OCI image layout (no manifest.json, no index.json)"
        )
    config, raw = c.read_json(plan.config_name)
    if not isinstance(config, dict):
        raise BadInputError(f"{path}: {plan.config_name}: the image config is not a JSON object")
    import hashlib  # only here: importing it costs more than hashing a config

    image_id = "sha256:" + hashlib.sha256(raw).hexdigest()
    if plan.expected_config_digest and plan.expected_config_digest.startswith("sha256:"):
        if plan.expected_config_digest != image_id:
            warnings.append(f"config digest {image_id} differs from the name it is stored under")
    rootfs = config.get("rootfs") if isinstance(config.get("rootfs"), dict) else {}
    diff_ids = rootfs.get("diff_ids") if isinstance(rootfs, dict) else None
    if isinstance(diff_ids, list) and len(diff_ids) != len(plan.layers):
        raise BadInputError(
            f"{path}: the manifest lists {len(plan.layers)} layers, the image config {len(diff_ids)} "
            "(docker load refuses such an image)"
        )
    unread: dict[str, str] = {}
    raw_env = _env_list(config, warnings, unread)
    inner = config.get("config") if isinstance(config.get("config"), dict) else {}
    labels_raw = inner.get("Labels") if isinstance(inner, dict) else None
    labels: dict[str, str] = {}
    if isinstance(labels_raw, dict):
        # what reaches a report (and a terminal) from the image: control characters escaped, sizes capped
        for k, v in list(labels_raw.items())[:MAX_LABELS]:
            labels[printable(str(k), 200)] = printable(str(v), 1000)
        if len(labels_raw) > MAX_LABELS:
            warnings.append(f"config: {len(labels_raw)} labels, only the first {MAX_LABELS} recorded")
    user = inner.get("User") if isinstance(inner, dict) and isinstance(inner.get("User"), str) else None
    workdir = inner.get("WorkingDir") if isinstance(inner, dict) and isinstance(inner.get("WorkingDir"), str) else None
    info = ImageInfo(
        path=path,
        format=fmt,
        reference=plan.reference,
        digest=plan.digest,
        image_id=image_id,
        architecture=config.get("architecture") if isinstance(config.get("architecture"), str) else None,
        os=config.get("os") if isinstance(config.get("os"), str) else None,
        variant=config.get("variant") if isinstance(config.get("variant"), str) else None,
        platform_chosen_by=plan.chosen_by,
        env=redact_image_env(raw_env),
        labels=labels,
        user=user,
        entrypoint=_string_list(inner, "Entrypoint", warnings, unread),
        cmd=_string_list(inner, "Cmd", warnings, unread),
        workdir=workdir or None,
        unread=unread,
        raw_env=raw_env,
    )
    return info, plan, diff_ids if isinstance(diff_ids, list) else None


def _open(c: _Container, path: str, platform: str | None, reference: str | None, capture: Sequence[str]) -> ImageView:
    warnings: list[str] = []
    info, plan, diff_ids = _read_info(c, path, platform, reference, warnings)
    tree = Tree()
    layer_data: list[LayerData] = []
    wants = _capture_matcher(capture)
    captured = 0
    for i, (name, stated_digest, media) in enumerate(plan.layers):
        blob = c.blob(name)
        comp = compression_of(blob)
        digest = stated_digest
        if digest is None and isinstance(diff_ids, list) and comp == "none" and isinstance(diff_ids[i], str):
            digest = diff_ids[i]  # a legacy layer.tar is uncompressed: its digest is the diff_id
        info.layers.append(LayerInfo(digest, blob.length, media, comp))
        where = f"{path}: layer {i + 1} ({(digest or name)[:19]})"
        if comp == "zstd":
            raise BadInputError(
                f"{where}: zstd-compressed; stackcheck reads uncompressed and gzip layers (the Python standard "
                "library has no zstd before 3.14): re-save the image with gzip layers"
            )
        gz: GzipIndex | None = None
        try:
            if comp == "gzip":
                gz = GzipIndex(blob)
                inflate = InflateReader(blob, gz)

                def capture_fn(box_path: str, m: Member, _r: InflateReader = inflate) -> bytes | None:
                    nonlocal captured
                    if m.size > CAPTURE_FILE_CAP or captured + m.size > CAPTURE_TOTAL_CAP or not wants(box_path):
                        return None
                    captured += m.size
                    return _r.read(m.size)

                scanner = TarScanner(inflate, where)
                tree.apply(i, scanner, where, capture_fn)
                inflate.finish()
                ended_cleanly = scanner.ended_cleanly
            elif FAST_PLAIN_LAYERS:
                ended_cleanly = apply_plain_layer(tree, i, blob, where)
            else:
                scanner = TarScanner(PlainReader(blob), where)
                tree.apply(i, scanner, where)
                ended_cleanly = scanner.ended_cleanly
        except Truncated as exc:
            raise BadInputError(f"{where}: truncated ({exc})") from None
        except TarError as exc:
            raise BadInputError(str(exc)) from None
        if not ended_cleanly:
            warnings.append(f"layer {i + 1}: no end-of-archive marker (the layer may be cut short)")
        layer_data.append(LayerData(blob, gz))
    info.warnings = warnings + tree.warnings.as_list()
    return ImageView(tree, layer_data, list(c.handles), info)
