"""Container images read without Docker: layouts, layers, whiteouts, links, contents, and bad input."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tarfile
import time
from pathlib import Path

import pytest
from imagebuild import digest, docker_save, layer_tar, oci_layout, snapshot

from stackcheck.errors import BadInputError
from stackcheck.image import blobs as blobs_module
from stackcheck.image import host_platform, open_image
from stackcheck.readers.fsview import NotRegularFile

SITE = "usr/local/lib/python3.12/site-packages"
DATA = Path(__file__).parent.parent / "data"


def torch_layer(version: str, cuda: str) -> list[tuple[object, ...]]:
    dist = f"{SITE}/torch-{version}.dist-info"
    return [
        ("dir", f"{dist}"),
        ("file", f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n\n".encode()),
        ("file", f"{SITE}/torch/version.py", f"__version__ = '{version}+cu{cuda}'\ncuda = '{cuda}'\n".encode()),
        ("file", f"{SITE}/torch/__init__.py", b""),
    ]


BASE = [
    ("dir", "usr"),
    ("dir", "usr/bin"),
    ("file", "usr/bin/python3.12", b"\x7fELF-not-really", 0o755),
    ("symlink", "usr/bin/python3", "python3.12"),
    ("file", "etc/os-release", b'PRETTY_NAME="Ubuntu 24.04 LTS"\n'),
    ("dir", "opt/app"),
    ("file", "opt/app/a.txt", b"a"),
    ("file", "opt/app/b.txt", b"b"),
    ("dir", "opt/app/sub"),
    ("file", "opt/app/sub/deep.txt", b"deep"),
    *torch_layer("2.9.1", "128"),
]

UPPER = [
    # an upper layer replaces torch: the old dist-info goes, a new one and a new version.py come
    ("whiteout", f"{SITE}/torch-2.9.1.dist-info"),
    *torch_layer("2.11.0", "130"),
    # opaque directory: every lower entry of /opt/app goes, this layer's entries stay (marker after one)
    ("file", "opt/app/c.txt", b"c"),
    ("opaque", "opt/app"),
    ("file", "opt/app/sub2/x.txt", b"x"),
    ("hardlink", "usr/bin/python3-copy", "usr/bin/python3.12"),  # a hard link to a lower-layer file
]

ENV = [
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "CUDA_VERSION=13.0.1",
    "NVIDIA_REQUIRE_CUDA=cuda>=13.0 brand=tesla,driver>=535,driver<536",
    "NVIDIA_VISIBLE_DEVICES=all",
    "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
    "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789",
    "LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
]


def _check_merged(view) -> None:  # type: ignore[no-untyped-def]
    site = "/" + SITE
    names = sorted(view.listdir(site))
    assert names == ["torch", "torch-2.11.0.dist-info"]
    assert b"2.11.0+cu130" in view.read_bytes(f"{site}/torch/version.py", 1000)
    assert b"Version: 2.11.0" in view.read_bytes(f"{site}/torch-2.11.0.dist-info/METADATA", 1000)
    assert sorted(view.listdir("/opt/app")) == ["c.txt", "sub2"]
    assert view.stat("/opt/app/a.txt") is None and view.stat("/opt/app/sub/deep.txt") is None
    assert view.read_bytes("/opt/app/sub2/x.txt", 10) == b"x"
    assert view.realpath("/usr/bin/python3") == "/usr/bin/python3.12"
    assert view.readlink("/usr/bin/python3") == "python3.12"
    assert view.stat("/usr/bin/python3").kind == "file"
    assert view.stat("/usr/bin/python3", follow_symlinks=False).kind == "link"
    assert view.read_bytes("/usr/bin/python3-copy", 100) == b"\x7fELF-not-really"
    assert view.read_bytes("/usr/bin/python3.12", 4, offset=1) == b"ELF-"


@pytest.mark.parametrize("oci", [False, True], ids=["legacy", "docker25-oci"])
def test_docker_save_two_layers_whiteouts_and_opaque(tmp_path: Path, oci: bool) -> None:
    image = docker_save(
        tmp_path / "serve.tar",
        [layer_tar(BASE), layer_tar(UPPER)],
        env=ENV,
        oci=oci,
        labels={"org.opencontainers.image.version": "1.0"},
    )
    before = snapshot(tmp_path)
    with open_image(image) as view:
        _check_merged(view)
        info = view.info
        assert info.format == "docker-save"
        assert info.reference == "serve:1.0"
        assert info.platform_chosen_by == "the only image in the file"
        assert [x.compression for x in info.layers] == ["none", "none"]
        assert all(x.digest and x.digest.startswith("sha256:") for x in info.layers)
        assert (info.digest is not None) == oci  # the manifest digest exists only where the manifest is stored
        facts = info.to_facts()
        assert facts["env"]["CUDA_VERSION"] == "13.0.1"
        assert facts["env"]["NVIDIA_DRIVER_CAPABILITIES"] == "compute,utility"
        assert "HF_TOKEN" not in facts["env"]  # never a secret in a report
        assert "hf_abc" not in json.dumps(facts)
        assert facts["labels"] == {"org.opencontainers.image.version": "1.0"}
        assert facts["nvidia_require"]["requirements"][0]["alternatives"] == [
            ["cuda>=13.0"],
            ["brand=tesla", "driver>=535", "driver<536"],
        ]
        assert facts["architecture"] == "amd64" and facts["os"] == "linux"
        json.dumps(facts)  # JSON-ready
    assert snapshot(tmp_path) == before  # nothing written


@pytest.mark.parametrize("as_tar", [False, True], ids=["oci-dir", "oci-tar"])
def test_oci_layout_gzip_layers_and_platform_choice(tmp_path: Path, as_tar: bool) -> None:
    amd = {"layers": [layer_tar(BASE), layer_tar(UPPER)], "arch": "amd64", "env": ENV}
    arm = {"layers": [layer_tar([("file", "etc/arch", b"arm64")])], "arch": "arm64"}
    target = tmp_path / ("img.tar" if as_tar else "layout")
    if not as_tar:
        target.mkdir()
    oci_layout(target, [amd, arm], as_tar=as_tar, attestation=True)
    with open_image(target, platform="linux/amd64") as view:
        _check_merged(view)
        assert view.info.format == ("oci-tar" if as_tar else "oci-dir")
        assert [x.compression for x in view.info.layers] == ["gzip", "gzip"]
        assert view.info.layers[0].media_type == "application/vnd.oci.image.layer.v1.tar+gzip"
        assert view.info.reference == "serve:1.0"
        assert view.info.digest is not None and view.info.digest.startswith("sha256:")
        assert "as asked" in view.info.platform_chosen_by
    with open_image(target, platform="linux/arm64") as view:
        assert view.read_bytes("/etc/arch", 10) == b"arm64"
        assert view.info.architecture == "arm64"
    host = host_platform()
    if host in ("linux/amd64", "linux/arm64"):
        with open_image(target) as view:  # default: the host's platform, said so
            assert host in view.info.platform_chosen_by
            assert view.info.architecture == host.split("/")[1]
    with pytest.raises(BadInputError, match="no image for platform linux/s390x"):
        open_image(target, platform="linux/s390x")


def test_gzip_layer_serves_big_files_through_checkpoints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # small spacing so that a 3 MB file crosses many checkpoints (the product default is 8 MiB)
    monkeypatch.setattr(blobs_module, "CHECKPOINT_SPACING", 64 << 10)
    monkeypatch.setattr(blobs_module, "MAX_CHECKPOINTS", 8)  # and thinning happens
    payload = os.urandom(1 << 20) * 3
    layer = layer_tar([("file", "big.bin", payload), ("file", "after.txt", b"after")])
    oci_layout(tmp_path, [{"layers": [layer]}])
    with open_image(tmp_path) as view:
        for off, n in [(0, 100), (2_500_000, 5000), (100_000, 70_000), (3 * (1 << 20) - 10, 100), (1 << 20, 1)]:
            assert view.read_bytes("/big.bin", n, off) == payload[off : off + n]
        assert view.read_bytes("/after.txt", 100) == b"after"
        gz = view._layers[0].gzip  # the index is the point of this test
        assert gz is not None and 1 < len(gz.checkpoints) <= 8 and gz.spacing > 64 << 10


def test_deep_reads_a_real_fatbin_library_inside_both_layer_kinds(tmp_path: Path) -> None:
    from stackcheck.readers.binaries import scan_file, scan_package_binaries

    lib = (DATA / "fatbin" / "libk.so").read_bytes()
    entries = [("file", f"{SITE}/torch/lib/libtorch_cuda.so", lib, 0o755), ("file", f"{SITE}/torch/lib/x.txt", b"")]
    host = scan_file(DATA / "fatbin" / "libk.so", "torch/lib/libtorch_cuda.so")
    assert host is not None and host["sass"]
    docker_save(tmp_path / "a.tar", [layer_tar(entries)])
    (tmp_path / "oci").mkdir()
    oci_layout(tmp_path / "oci", [{"layers": [layer_tar(entries)]}])
    for image in (tmp_path / "a.tar", tmp_path / "oci"):
        with open_image(image) as view:
            got = scan_package_binaries("torch", "/" + SITE, ("torch/lib/*.so", "torch/lib/*.so.*"), view=view)
            assert got["sass"] == host["sass"] and got["ptx"] == host["ptx"]
            assert got["files"][0]["path"] == "torch/lib/libtorch_cuda.so"
            assert got["files"][0]["bytes_read"] == host["bytes_read"]


def test_links_stay_inside_the_image(tmp_path: Path) -> None:
    layer = layer_tar(
        [
            ("file", "etc/passwd", b"root:x:0:0::/root:/bin/sh\n"),
            ("symlink", "escape", "../../../../../etc/passwd"),
            ("symlink", "abs", "/etc"),
            ("symlink", "loop1", "loop2"),
            ("symlink", "loop2", "loop1"),
            ("fifo", "run/fifo"),
            ("symlink", "lib", "usr/lib"),
            ("dir", "usr/lib"),
        ]
    )
    upper = layer_tar([("file", "lib/through-link.so", b"so")])  # a parent that is a link: followed inside
    docker_save(tmp_path / "i.tar", [layer, upper])
    with open_image(tmp_path / "i.tar") as view:
        assert view.realpath("/escape") == "/etc/passwd"
        assert view.read_bytes("/escape", 4) == b"root"
        assert view.read_bytes("/abs/passwd", 4) == b"root"
        assert view.stat("/loop1") is None
        with pytest.raises(OSError):
            view.read_bytes("/loop1", 1)
        with pytest.raises(NotRegularFile):
            view.read_bytes("/run/fifo", 1)
        assert view.stat("/run/fifo").kind == "other"  # type: ignore[union-attr]
        with pytest.raises(NotRegularFile):
            view.read_bytes("/usr", 1)
        assert view.read_bytes("/usr/lib/through-link.so", 10) == b"so"
        with pytest.raises(FileNotFoundError):
            view.read_bytes("/nope", 1)
        with pytest.raises(NotADirectoryError):
            view.listdir("/etc/passwd")
        assert view.realpath("/../../etc/./passwd") == "/etc/passwd"


def test_hostile_members_are_recorded_not_followed(tmp_path: Path) -> None:
    buf_entries = [
        ("file", "../evil.txt", b"evil"),
        ("file", "/abs/file.txt", b"abs"),
        ("file", "ok/../fine.txt", b"fine"),
        ("hardlink", "dangling", "no/such/file"),
        ("whiteout", "never/existed"),
    ]
    docker_save(tmp_path / "h.tar", [layer_tar([("file", "seed", b"")]), layer_tar(buf_entries)])
    before = snapshot(tmp_path)
    with open_image(tmp_path / "h.tar") as view:
        assert view.stat("/evil.txt") is None
        assert view.read_bytes("/abs/file.txt", 10) == b"abs"
        assert view.read_bytes("/fine.txt", 10) == b"fine"
        assert view.stat("/dangling") is None
        text = "\n".join(view.info.warnings)
        assert "../evil.txt leaves the image root: skipped" in text
        assert "absolute member names" in text
        assert "hard link dangling -> no/such/file: target not in this or a lower layer" in text
        assert "whiteout of /never/existed" in text
    assert snapshot(tmp_path) == before
    assert not (tmp_path.parent / "evil.txt").exists()


def test_same_layer_entries_survive_their_opaque_marker_in_any_order(tmp_path: Path) -> None:
    lower = layer_tar([("file", "d/old.txt", b"o"), ("file", "d/keep/old2.txt", b"o")])
    upper = layer_tar([("file", "d/keep/new.txt", b"n"), ("opaque", "d"), ("file", "d/late.txt", b"l")])
    docker_save(tmp_path / "o.tar", [lower, upper])
    with open_image(tmp_path / "o.tar") as view:
        assert view.walk("/d") == ["/d/keep", "/d/keep/new.txt", "/d/late.txt"]


def test_three_layers_file_dir_replacements(tmp_path: Path) -> None:
    l1 = layer_tar([("file", "x/f", b"1"), ("file", "y", b"file")])
    l2 = layer_tar([("dir", "y"), ("file", "y/inner", b"i"), ("whiteout", "x")])
    l3 = layer_tar([("file", "x", b"now a file"), ("whiteout", "y/inner")])
    docker_save(tmp_path / "r.tar", [l1, l2, l3])
    with open_image(tmp_path / "r.tar") as view:
        assert view.read_bytes("/x", 100) == b"now a file"
        assert view.stat("/y").kind == "dir"  # type: ignore[union-attr]
        assert view.listdir("/y") == []


# ---- bad input ---------------------------------------------------------------------------------------
def _good(tmp_path: Path) -> Path:
    return docker_save(tmp_path / "g.tar", [layer_tar(BASE), layer_tar(UPPER)], env=ENV)


def test_truncated_tarball_is_one_line(tmp_path: Path) -> None:
    image = _good(tmp_path)
    data = image.read_bytes()
    with tarfile.open(image) as tf:
        last = tf.getmembers()[-1]
    # cut inside a layer, inside a header, inside the last member's data (a cut after the last member only
    # loses the end-of-archive marker and padding: the image is whole)
    for cut in (len(data) // 3, len(data) // 2, 700, last.offset + 100, last.offset_data + 10):
        bad = tmp_path / f"cut{cut}.tar"
        bad.write_bytes(data[:cut])
        with pytest.raises(BadInputError) as err:
            open_image(bad)
        assert "\n" not in err.value.message and str(bad) in err.value.message


def test_manifest_that_lies(tmp_path: Path) -> None:
    image = _good(tmp_path)
    with tarfile.open(image) as tf:
        members = {m.name: tf.extractfile(m).read() for m in tf.getmembers() if m.isfile()}  # type: ignore[union-attr]
    doc = json.loads(members["manifest.json"])
    doc[0]["Layers"].append("0" * 64 + "/layer.tar")
    members["manifest.json"] = json.dumps(doc).encode()
    lying = tmp_path / "lying.tar"
    with tarfile.open(lying, "w") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, __import__("io").BytesIO(data))
    with pytest.raises(BadInputError, match=r"layer 3 \(0+/layer.tar\) is not in the file"):
        open_image(lying)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"", "0 bytes: not an image archive"),
        (b"hello world" * 100, "not a tar header at byte 0"),
        (gzip.compress(b"x" * 2000, mtime=0), "gzip-compressed archive; decompress it first"),
    ],
)
def test_not_an_image(tmp_path: Path, content: bytes, match: str) -> None:
    p = tmp_path / "x.tar"
    p.write_bytes(content)
    with pytest.raises(BadInputError, match=match):
        open_image(p)


def test_no_manifest_and_missing_path(tmp_path: Path) -> None:
    p = tmp_path / "plain.tar"
    with tarfile.open(p, "w") as tf:
        tf.add(__file__, arcname="some.py")
    with pytest.raises(BadInputError, match=r"no manifest\.json, no index\.json"):
        open_image(p)
    with pytest.raises(BadInputError, match="No such file"):
        open_image(tmp_path / "absent.tar")


def test_descriptor_size_and_zstd_layers(tmp_path: Path) -> None:
    oci_layout(tmp_path, [{"layers": [layer_tar(BASE)], "gzip": False}])
    blob = next(p for p in (tmp_path / "blobs" / "sha256").iterdir() if p.read_bytes()[:3] == b"usr")
    blob.write_bytes(blob.read_bytes()[:-512])
    with pytest.raises(BadInputError, match="the descriptor says"):
        open_image(tmp_path)
    zs = tmp_path / "z"
    zs.mkdir()
    oci_layout(zs, [{"layers": [b"\x28\xb5\x2f\xfd" + b"\0" * 600], "gzip": False}])
    with pytest.raises(BadInputError, match="zstd-compressed"):
        open_image(zs)


def test_config_that_disagrees_with_the_manifest(tmp_path: Path) -> None:
    image = docker_save(
        tmp_path / "d.tar",
        [layer_tar(BASE)],
        extra_config={"rootfs": {"type": "layers", "diff_ids": [digest(b"a"), digest(b"b")]}},
    )
    with pytest.raises(BadInputError, match="the manifest lists 1 layers, the image config 2"):
        open_image(image)


def _sparse_layer_image(path: Path, size: int) -> None:
    """An image whose one layer holds a single `size`-byte file of zeros, written sparse (holes on disk)."""
    inner = tarfile.TarInfo("huge.bin")
    inner.size = size
    inner_hdr = inner.tobuf(format=tarfile.GNU_FORMAT)
    layer_len = len(inner_hdr) + size + (-size % 512) + 1024
    cfg = json.dumps({"architecture": "amd64", "os": "linux", "config": {}, "rootfs": {"diff_ids": ["x"]}}).encode()
    manifest = json.dumps([{"Config": "c.json", "RepoTags": ["huge:1"], "Layers": ["l/layer.tar"]}]).encode()
    with path.open("wb") as f:
        outer = tarfile.TarInfo("l/layer.tar")
        outer.size = layer_len
        f.write(outer.tobuf(format=tarfile.GNU_FORMAT))
        f.write(inner_hdr)
        f.seek(size + (-size % 512) + 1024, os.SEEK_CUR)  # the data and the end marker: a hole
        f.seek(-layer_len % 512, os.SEEK_CUR)
        for name, data in (("c.json", cfg), ("manifest.json", manifest)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            f.write(info.tobuf(format=tarfile.GNU_FORMAT))
            f.write(data + bytes(-len(data) % 512))
        f.write(bytes(1024))


def test_ten_gigabyte_layer_is_not_read_for_nothing(tmp_path: Path) -> None:
    image = tmp_path / "huge.tar"
    size = 10 << 30
    _sparse_layer_image(image, size)
    if os.stat(image).st_blocks * 512 > 64 << 20:
        pytest.skip("this filesystem does not keep holes")
    t0 = time.process_time()  # CPU time (user and system): reading 10 GB of holes is work, a loaded box's wait is not
    with open_image(image) as view:
        assert view.stat("/huge.bin").size == size  # type: ignore[union-attr]
        assert view.read_bytes("/huge.bin", 8, offset=size - 8) == bytes(8)
        assert view.read_bytes("/huge.bin", 8, offset=size) == b""
    assert time.process_time() - t0 < 5.0


def test_image_directory_with_escaping_blob_link(tmp_path: Path) -> None:
    oci_layout(tmp_path, [{"layers": [layer_tar(BASE)]}])
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    idx = json.loads((tmp_path / "index.json").read_text())
    hexd = idx["manifests"][0]["digest"].split(":")[1]
    blob = tmp_path / "blobs" / "sha256" / hexd
    shutil.move(blob, outside / hexd)
    blob.symlink_to(outside / hexd)  # a blob that is a link out of the layout: not followed
    with pytest.raises(BadInputError, match=r"manifest not in the file|no image in the file"):
        open_image(tmp_path)


def test_concurrent_reads_of_a_gzip_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Probes read in threads: one gzip cursor per layer, shared under a lock, gives every thread its bytes."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(blobs_module, "CHECKPOINT_SPACING", 32 << 10)
    files = {f"f{i}.bin": os.urandom(200_000) for i in range(6)}
    oci_layout(tmp_path, [{"layers": [layer_tar([("file", k, v) for k, v in files.items()])]}])
    with open_image(tmp_path) as view:

        def check(i: int) -> bool:
            name = f"f{i % 6}.bin"
            off = (i * 7919) % 150_000
            return view.read_bytes("/" + name, 5000, off) == files[name][off : off + 5000]

        with ThreadPoolExecutor(8) as pool:
            assert all(pool.map(check, range(200)))


def test_labels_and_env_reach_the_report_escaped(tmp_path: Path) -> None:
    image = docker_save(
        tmp_path / "l.tar",
        [layer_tar([("file", "x", b"")])],
        env=["CUDA_VERSION=13.0\x1b[2J", "NVIDIA_REQUIRE_CUDA=cuda>=13.0"],
        labels={"title\x07": "line1\nline2\x1b]0;pwned\x07"},
    )
    with open_image(image) as view:
        facts = view.info.to_facts()
    strings = [*facts["labels"], *facts["labels"].values(), *facts["env"].values()]
    assert not [x for x in strings if any(ord(ch) < 32 or ord(ch) == 127 for ch in x)]
    assert facts["labels"] == {"title\\x07": "line1\\nline2\\x1b]0;pwned\\x07"}  # escaped, still readable
    assert facts["env"]["CUDA_VERSION"] == "13.0\\x1b[2J"


def test_big_member_in_a_gzip_layer_streams_in_bounded_memory(tmp_path: Path) -> None:
    """A 256 MiB file of zeros in a gzip layer is decompressed as it streams past, never held."""
    import hashlib
    import resource
    import zlib

    size = 256 << 20
    blob = tmp_path / "layer.gz"
    comp = zlib.compressobj(1, zlib.DEFLATED, 31)
    header = tarfile.TarInfo("huge.bin")
    header.size = size
    h = hashlib.sha256()
    with blob.open("wb") as f:

        def put(data: bytes) -> None:
            out = comp.compress(data)
            h.update(out)
            f.write(out)

        put(header.tobuf(format=tarfile.GNU_FORMAT))
        zeros = bytes(1 << 20)
        for _ in range(size >> 20):
            put(zeros)
        put(layer_tar([("file", "after.txt", b"after")]))  # a second member, then the end marker
        tail = comp.flush()
        h.update(tail)
        f.write(tail)
    layer_digest = "sha256:" + h.hexdigest()
    root = tmp_path / "oci"
    (root / "blobs" / "sha256").mkdir(parents=True)
    blob.rename(root / "blobs" / "sha256" / layer_digest.split(":")[1])
    cfg = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"diff_ids": ["sha256:" + "0" * 64]}}).encode()
    (root / "blobs" / "sha256" / digest(cfg).split(":")[1]).write_bytes(cfg)
    layer_desc = {
        "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
        "digest": layer_digest,
        "size": (root / "blobs" / "sha256" / layer_digest.split(":")[1]).stat().st_size,
    }
    manifest = json.dumps(
        {"schemaVersion": 2, "config": {"digest": digest(cfg), "size": len(cfg)}, "layers": [layer_desc]}
    ).encode()
    (root / "blobs" / "sha256" / digest(manifest).split(":")[1]).write_bytes(manifest)
    (root / "index.json").write_text(json.dumps({"manifests": [{"digest": digest(manifest), "size": len(manifest)}]}))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with open_image(root) as view:
        assert view.stat("/huge.bin").size == size  # type: ignore[union-attr]
        assert view.read_bytes("/after.txt", 10) == b"after"
        assert view.read_bytes("/huge.bin", 4, offset=size - 4) == bytes(4)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 64, f"peak memory grew by {grown_mb:.0f} MB"


def test_legacy_save_with_a_layer_that_links_to_another(tmp_path: Path) -> None:
    """Old docker save writes a repeated layer once and links the second <id>/layer.tar to it."""
    import io

    layer = layer_tar([("file", "etc/marker", b"m")])
    upper = layer_tar([("file", "etc/second", b"s")])
    cfg = json.dumps(
        {"architecture": "amd64", "os": "linux", "rootfs": {"diff_ids": [digest(layer), digest(upper), digest(layer)]}}
    ).encode()
    manifest = json.dumps(
        [{"Config": "c.json", "RepoTags": None, "Layers": ["a/layer.tar", "b/layer.tar", "c/layer.tar"]}]
    ).encode()
    image = tmp_path / "linked.tar"
    with tarfile.open(image, "w") as tf:
        for name, data in (
            ("a/layer.tar", layer),
            ("b/layer.tar", upper),
            ("c.json", cfg),
            ("manifest.json", manifest),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("c/layer.tar")
        link.type, link.linkname = tarfile.SYMTYPE, "../a/layer.tar"
        tf.addfile(link)
    with open_image(image) as view:
        assert sorted(view.listdir("/etc")) == ["marker", "second"]
        assert [x.digest for x in view.info.layers] == [digest(layer), digest(upper), digest(layer)]
        assert view.info.reference is None
