"""Container images read without running them and without Docker.

    from stackcheck.image import open_image, find_python
    with open_image("serve.tar") as view:          # a FileView: stat, listdir, read_bytes, readlink, realpath
        print(view.info.to_facts())                # facts.image: reference, digest, layers, env, labels, ...
        py = find_python(view, view.info.raw_env, view.info.user)
        print(py.sys_path)                         # the image's Python, its sys.path derived statically

Inputs: a `docker save` tarball (manifest.json with `<id>/layer.tar` layers, or Docker 25+'s OCI layout
inside the tar, where manifest.json still lists `blobs/sha256/...`), an OCI image layout directory
(oci-layout, index.json, blobs/), or such a layout in a tar. Layers may be uncompressed or gzip; a zstd
layer is refused with a one-line reason (the standard library has no zstd before Python 3.14 and no
third-party decompressor is used). The outer archive must be uncompressed: it is read by seeking.

One image is chosen: from a docker save, the only entry of manifest.json (else `reference=`, else the
host's platform); from an OCI index, nested indexes are walked, attestation manifests skipped, manifests
whose blob is absent skipped with a warning, and the only one (else `platform=`, else the host's
`linux/<arch>`) is taken. `ImageInfo.platform_chosen_by` says which rule chose.

How the layers are read, and the trade-off for file contents:
- Each layer is streamed once, bottom first, through a tar header reader (tarscan.py). Headers build one
  merged tree in memory (tree.py, about 200 bytes per path): whiteouts and opaque directories as the OCI
  spec states, hard links to earlier members, symbolic links kept as links and resolved inside the image
  root when read. Nothing is extracted; nothing is written anywhere.
- Uncompressed layers (docker save): a file's node records the offset of its bytes in the image file, so
  `read_bytes(path, limit, offset)` is one `pread` there: random access at any size, which the `--deep`
  ELF/fatbin walker needs for libtorch_cuda.so (over 1 GB; a few hundred KB of it are read).
- gzip layers cannot be seeked. Two mechanisms serve them, and neither holds a whole file in memory:
  (1) during the one pass, files matching `DEFAULT_CAPTURE` (what the probes read as text: METADATA,
  torch/version.py, .pth, pyvenv.cfg, os-release, ld.so.cache, CUDA version.json, the gate-table sources)
  are kept, at most 4 MiB each and 32 MiB in all; (2) every 8 MiB of decompressed output the pass keeps a
  checkpoint (a copy of the zlib state, 40-100 KB; at most 64 per layer, the spacing doubling beyond), so
  any other file is served by restarting at the checkpoint before it: at most one spacing (8 MiB for a
  512 MB layer, 32 MiB for a 2 GB one) of decompression per read, and reads that move forward continue
  from where the last one stopped, so the ELF walker decompresses a big library about once. Cost: at most
  about 6 MB of checkpoints per layer, whatever its size.
  The alternative — a recorded "not read: compressed layer" for binaries — would leave `--deep` blind on
  every registry-pulled (gzip) image, which is where it matters.
- Memory is bounded by the tree (paths), the captures (32 MiB) and the checkpoints, never by file sizes:
  a 10 GB member in an uncompressed layer is skipped by seeking; in a gzip layer it is decompressed once
  and discarded as it streams.

Bad input (a truncated file, a member outside the root, a hard link to nothing, a manifest naming a layer
that is not there, a blob whose size differs from its descriptor) is a `stackcheck.errors.BadInputError`
(exit 2) with one line naming the file and the place, or, where the image can still be read, a line in
`ImageInfo.warnings` (capped at 50 lines).
"""

from __future__ import annotations

from stackcheck.image.info import ImageInfo, LayerInfo
from stackcheck.image.layout import DEFAULT_CAPTURE, host_platform, open_image, read_image_info
from stackcheck.image.python import NoPython, TargetPython, find_python
from stackcheck.image.require import Device, Judgement, RequireSet, judge, parse_nvidia_require
from stackcheck.image.view import ContentNotRead, ImageView


def open_image_view(path: str, platform: str | None = None, reference: str | None = None) -> ImageView:
    """The view `stackcheck --image PATH` reads (stackcheck.assembly.target.open_view): `open_image` with the
    default captures. The caller closes it."""
    return open_image(path, platform=platform, reference=reference)


__all__ = [
    "DEFAULT_CAPTURE",
    "ContentNotRead",
    "Device",
    "ImageInfo",
    "ImageView",
    "Judgement",
    "LayerInfo",
    "NoPython",
    "RequireSet",
    "TargetPython",
    "find_python",
    "host_platform",
    "judge",
    "open_image",
    "open_image_view",
    "parse_nvidia_require",
    "read_image_info",
]
