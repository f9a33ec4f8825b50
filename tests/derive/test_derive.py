"""stackcheck.derive without the network: zip members as ELF sources, release trees, METADATA, flags, gate
tables, the comparison with the data, the manifests it writes, and the command line. Releases are built by
tests/derive_fixtures.py; the ELF files are the recorded nvcc outputs of tests/data/fatbin."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from derive_fixtures import DC, release_files, write_tree, write_wheel

from stackcheck.derive import zipmember
from stackcheck.derive.compare import compare
from stackcheck.derive.emit import emit
from stackcheck.derive.flags import scan_flags
from stackcheck.derive.kernels import scan_binaries
from stackcheck.derive.metadata import MetadataError, parse_metadata, self_extras
from stackcheck.derive.release import derive_release
from stackcheck.derive.tree import TreeError, WheelTree, open_releases
from stackcheck.knowledge.loader import load
from stackcheck.readers.elf import ElfError, ElfFile
from stackcheck.readers.fatbin import cubin_info, scan_fatbins

REPO = Path(__file__).resolve().parent.parent.parent
FATBIN = Path(__file__).parent.parent / "data" / "fatbin"
ELF_FILES = ["libk.so", "multi.o", "rdc.o", "compressed_zstd.o", "sm_90a.cubin", "sm_120f.cubin"]


@pytest.fixture(scope="module")
def manifests() -> Any:
    return load()


def _targets_on_disk(path: Path) -> dict[str, Any]:
    with ElfFile(path) as elf:
        if path.suffix == ".cubin":
            return {"sass": [cubin_info(elf).target], "ptx": []}
        scan = scan_fatbins(elf)
        return {"sass": scan.sass, "ptx": scan.ptx, "entries": [(e.offset, e.kind, e.arch) for e in scan.entries]}


def _targets_in_zip(wheel: Path, name: str) -> tuple[dict[str, Any], Any]:
    tree = WheelTree(wheel)
    display, source = tree.binary(name)
    assert source is not None
    with ElfFile(display, source=source) as elf:
        if name.endswith(".cubin"):
            got: dict[str, Any] = {"sass": [cubin_info(elf).target], "ptx": []}
        else:
            scan = scan_fatbins(elf)
            got = {"sass": scan.sass, "ptx": scan.ptx, "entries": [(e.offset, e.kind, e.arch) for e in scan.entries]}
    tree.close()
    return got, source


# -- zip members as ELF sources -------------------------------------------------------------------------


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_zip_member_reads_like_the_file(tmp_path: Path, compression: int) -> None:
    files: dict[str, str | bytes] = {f"pkg/{n}": (FATBIN / n).read_bytes() for n in ELF_FILES}
    wheel = write_wheel(tmp_path / "k.whl", files, compression)
    for name in ELF_FILES:
        got, source = _targets_in_zip(wheel, f"pkg/{name}")
        assert got == _targets_on_disk(FATBIN / name), name
        if compression == zipfile.ZIP_STORED:
            assert source.inflated == 0  # read in place, no decompression


def test_deflated_member_with_tiny_window_restarts_from_checkpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Force the restart path: a window and a checkpoint interval far smaller than the file, so reading the
    section table (end of file) and then the fatbin (middle) rewinds to a checkpoint; the result is the
    same and the memory held stays within the window."""
    monkeypatch.setattr(zipmember, "CHUNK", 512)
    monkeypatch.setattr(zipmember, "OUT_STEP", 256)
    monkeypatch.setattr(zipmember, "PIECE", 128)
    monkeypatch.setattr(zipmember, "WINDOW", 512)
    monkeypatch.setattr(zipmember, "CHECKPOINT_EVERY", 2048)
    data = (FATBIN / "multi.o").read_bytes()
    wheel = write_wheel(tmp_path / "k.whl", {"pkg/multi.o": data})
    got, source = _targets_in_zip(wheel, "pkg/multi.o")
    assert got == _targets_on_disk(FATBIN / "multi.o")
    assert source.inflated > len(data)  # it went back at least once
    tree = WheelTree(wheel)
    _, src = tree.binary("pkg/multi.o")
    assert isinstance(src, zipmember.ZipMemberSource)
    for offset in (len(data) - 100, 10, 5000, 4000, 17, len(data) - 1):  # backwards and forwards, any order
        assert src.read_at(offset, 100) == data[offset : offset + 100]
        assert len(src._window) <= 512
    assert len(src._checkpoints) >= 2  # taken at chunk boundaries, at least CHECKPOINT_EVERY apart
    assert src.read_at(len(data), 10) == b""
    tree.close()


def test_member_errors_are_one_line(tmp_path: Path) -> None:
    data = (FATBIN / "libk.so").read_bytes()
    wheel = write_wheel(tmp_path / "k.whl", {"pkg/libk.so": data, "pkg/x.so": b"not an elf at all"})
    raw = bytearray(wheel.read_bytes())
    with zipfile.ZipFile(wheel) as zf:
        info = zf.getinfo("pkg/libk.so")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start + 200 : start + 400] = bytes(range(200))  # corrupt the deflate stream after the header
    broken = tmp_path / "broken.whl"
    broken.write_bytes(bytes(raw))
    tree = WheelTree(broken)
    scan = scan_binaries(tree, tree.names())
    assert scan.files == []  # a corrupt member is an error, never a traceback
    assert any("libk.so: cannot read ELF magic" in e and "corrupt deflate data" in e for e in scan.errors)
    assert any("x.so: not an ELF file" in e for e in scan.errors)
    for err in scan.errors:
        assert "\n" not in err and "broken.whl!pkg/" in err
    tree.close()
    tree = WheelTree(wheel)
    display, source = tree.binary("pkg/x.so")
    with pytest.raises(ElfError, match=r"k\.whl!pkg/x\.so: not an ELF file"):
        ElfFile(display, source=source)
    tree.close()


def test_unsupported_and_encrypted_members(tmp_path: Path) -> None:
    wheel = tmp_path / "b.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_BZIP2) as zf:
        zf.writestr("a.so", b"\x7fELF" + b"\0" * 100)
    tree = WheelTree(wheel)
    with pytest.raises(TreeError, match="compression method 12 is not read"):
        tree.binary("a.so")
    tree.close()
    info = zipfile.ZipInfo("a.so")
    info.flag_bits |= 0x1
    with pytest.raises(zipmember.ZipMemberError, match="encrypted"):
        zipmember.ZipMemberSource(0, info, 0)


def test_deflate_roundtrip_of_large_zero_run(tmp_path: Path) -> None:
    """A highly compressible member (64 MiB of zeros in ~64 KiB) is read in bounded steps."""
    blob = b"\0" * (64 << 20) + b"TAIL"
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = comp.compress(blob) + comp.flush()
    assert len(packed) < 200_000
    wheel = write_wheel(tmp_path / "z.whl", {"z.bin": blob})
    tree = WheelTree(wheel)
    _, src = tree.binary("z.bin")
    assert isinstance(src, zipmember.ZipMemberSource)
    assert src.read_at(64 << 20, 4) == b"TAIL"
    assert len(src._window) <= zipmember.WINDOW
    tree.close()


# -- release trees ----------------------------------------------------------------------------------------


def test_open_releases_three_ways(tmp_path: Path) -> None:
    files = release_files()
    wheel = write_wheel(tmp_path / "sglang-0.5.24-py3-none-any.whl", files)
    (rel,) = open_releases(wheel)
    assert (rel.tree.kind, rel.dist_info, rel.origin) == ("wheel", "sglang-0.5.24.dist-info", wheel.name)
    unpacked = write_tree(tmp_path / "unpacked", files)
    (rel,) = open_releases(unpacked)
    assert rel.tree.kind == "directory" and "../../bin/outside" not in rel.tree.names()
    (rel,) = open_releases(unpacked / "sglang")  # the package directory inside a site directory
    assert rel.dist_info == "sglang-0.5.24.dist-info"
    assert rel.tree.exists("sglang/srt/server_args.py")


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda p: p / "missing.whl", "No such file"),
        (lambda p: (p / "x.txt").write_text("x") and p / "x.txt", "not a wheel"),
        (lambda p: (p / "bad.whl").write_bytes(b"PK junk") and p / "bad.whl", "not a readable wheel"),
        (lambda p: write_wheel(p / "none.whl", {"a.py": ""}), "0 .dist-info"),
        (lambda p: (p / "pkg").mkdir() or p / "pkg", "no .dist-info here or beside it"),
    ],
)
def test_open_releases_bad_input(tmp_path: Path, make: Any, needle: str) -> None:
    with pytest.raises(TreeError, match=needle) as info:
        list(open_releases(make(tmp_path)))
    assert "\n" not in str(info.value)


# -- METADATA ---------------------------------------------------------------------------------------------


def test_metadata_headers_pins_and_markers() -> None:
    meta = parse_metadata(release_files()["sglang-0.5.24.dist-info/METADATA"], "M")
    assert (meta.name, meta.version, meta.requires_python) == ("sglang", "0.5.24", ">=3.11")
    by = {(r.name, r.extra): r for r in meta.requires}
    assert by[("torch", None)].specifier == "==2.14.1" and by[("torch", None)].line == 10
    assert by[("flashinfer-python", None)].extras == ("cu13",)
    assert by[("torch", "cu130")].specifier == "==2.14.0"
    assert not by[("decord2", None)].on_platform  # aarch64 only
    assert ("not-a-header", None) not in by  # the body is not read
    assert meta.extras == ["cu130", "test"]


def test_metadata_without_name() -> None:
    with pytest.raises(MetadataError, match="M: no Name or Version"):
        parse_metadata("Summary: x\n", "M")


def test_self_extras_closure() -> None:
    text = (
        "Name: p\nVersion: 1\nProvides-Extra: all\nProvides-Extra: srt\nProvides-Extra: common\n"
        'Requires-Dist: p[srt]; extra == "all"\nRequires-Dist: p[common]; extra == "srt"\n'
        'Requires-Dist: torch==2.8.0; extra == "srt"\n'
    )
    meta = parse_metadata(text, "M")
    assert self_extras(meta, "all") == {"all", "srt", "common"}


def test_pins_of_a_release(tmp_path: Path, manifests: Any) -> None:
    (rel,) = open_releases(write_wheel(tmp_path / "s.whl", release_files()))
    pins = derive_release(rel, manifests, want={"pins"})["pins"]
    assert pins["requires"] == {
        "torch": "==2.14.1",
        "sglang-kernel": "==0.4.10",
        "flashinfer-python": "==0.7.2",
        "cuda-python": ">=13.0",
    }
    assert pins["requires_extras"] == {"flashinfer-python": ["cu13"]}
    assert pins["optional_requires"] == {"cu130": {"torch": "==2.14.0"}}
    assert pins["untracked"] == ["brand-new-kernels==1.0 (line 15)"]
    assert any("METADATA line 10: Requires-Dist torch==2.14.1" in s["title"] for s in pins["sources"])


def test_pins_under_the_documented_extra(tmp_path: Path, manifests: Any) -> None:
    """SGLang <= 0.5.3 kept its pins under `srt`, pulled by sglang[all]: they are the release's pins."""
    meta = (
        "Name: sglang\nVersion: 0.5.0\nProvides-Extra: srt\nProvides-Extra: all\n"
        'Requires-Dist: torch==2.8.0; extra == "srt"\nRequires-Dist: sglang[srt]; extra == "all"\n'
    )
    (rel,) = open_releases(write_wheel(tmp_path / "s.whl", {"sglang-0.5.0.dist-info/METADATA": meta}))
    pins = derive_release(rel, manifests, want={"pins"})["pins"]
    assert pins["requires"] == {"torch": "==2.8.0"}
    assert "optional_requires" not in pins and "under the 'srt' extra" in pins["notes"][0]


# -- flags ------------------------------------------------------------------------------------------------


def test_flags_from_add_argument_and_fields(tmp_path: Path) -> None:
    (rel,) = open_releases(write_wheel(tmp_path / "s.whl", release_files()))
    scan = scan_flags(rel.tree)
    got = {name: (f.kind, f.choices, f.aliases, f.how) for name, f in scan.flags.items()}
    assert got == {
        "--tp-size": ("value", None, ["--tensor-parallel-size"], "field"),
        "--quantization": ("value", ["fp8", "mxfp4", "modelopt_fp4"], [], "field"),
        "--mode": ("value", ["a", "b"], [], "field"),
        "--enable-x": ("bool", None, [], "field"),
        "--enable-old-thing": ("bool", None, [], "add_argument"),
        "--pick": ("value", ["l1", "l2"], ["--pick-alias"], "add_argument"),
        "--computed": ("value", None, [], "add_argument"),
        "--fp8-gemm-backend": ("value", ["b_extra", "auto"], [], "add_argument"),
        "--attention-backend": ("value", ["fa3", "flashinfer", "triton"], [], "field"),
        "--enable-torch-symm-mem": ("bool", None, [], "field"),
        "--no-thing": ("bool", None, [], "field"),
    }
    assert "make_choices()" in str(scan.flags["--computed"].choices_note)
    assert scan.lookup("--tensor-parallel-size") is scan.flags["--tp-size"]
    assert scan.flags["--attention-backend"].file == "sglang/srt/arg_groups/fields/exec_.py"
    assert "sglang/srt/arg_groups/choices.py" in scan.files  # read on demand through the import


def test_flags_boolean_optional_action_declares_the_no_forms(tmp_path: Path) -> None:
    """argparse.BooleanOptionalAction adds `--no-NAME` for every `--NAME`, through add_argument and through an
    Arg field's action alike; an alias list the reader cannot resolve is a problem, never a silent none."""
    files = release_files()
    files["sglang/srt/server_args.py"] = files["sglang/srt/server_args.py"].replace(
        "class ServerArgs:",
        "class ServerArgs:\n"
        "    shared_loras: A[bool, Arg(help='h', action=argparse.BooleanOptionalAction)] = True\n"
        "    odd: A[int, Arg(help='h', aliases=make_aliases())] = 1",
        1,
    )
    (rel,) = open_releases(write_wheel(tmp_path / "s.whl", files))
    scan = scan_flags(rel.tree)
    shared = scan.flags["--shared-loras"]
    assert shared.kind == "bool" and shared.aliases == ["--no-shared-loras"]
    assert scan.lookup("--no-shared-loras") is shared
    assert any("the aliases of --odd are not read statically" in p for p in scan.problems)


def test_flags_boolean_optional_action_in_add_argument(tmp_path: Path) -> None:
    files = release_files()
    src = files["sglang/srt/server_args.py"]
    head = "def add_cli_args(parser: argparse.ArgumentParser):\n"
    assert head in src
    files["sglang/srt/server_args.py"] = src.replace(
        head,
        head + "        parser.add_argument('--lora-strict', '--strict-lora', action=argparse.BooleanOptionalAction)\n",
        1,
    )
    (rel,) = open_releases(write_wheel(tmp_path / "s.whl", files))
    flag = scan_flags(rel.tree).flags["--lora-strict"]
    assert flag.kind == "bool"
    assert flag.aliases == ["--strict-lora", "--no-lora-strict", "--no-strict-lora"]


def test_flags_need_server_args(tmp_path: Path) -> None:
    files = release_files()
    files["sglang/srt/server_args.py"] = "def broken(:\n"
    (rel,) = open_releases(write_wheel(tmp_path / "s.whl", files))
    with pytest.raises(TreeError, match=r"server_args\.py: cannot parse"):
        scan_flags(rel.tree)


# -- a whole release against the data --------------------------------------------------------------------


def test_derive_new_release_against_the_data(tmp_path: Path, manifests: Any) -> None:
    (rel,) = open_releases(write_wheel(tmp_path / "s.whl", release_files()))
    d = derive_release(rel, manifests)
    assert d["gates"]["sglang.torch_symm_mem_sizes"] == {
        "status": "ok", "value": [9, 10], "file": f"{DC}/all_reduce_utils.py", "reason": None, "line": 2,
    }  # fmt: skip
    assert d["gates"]["sglang.torch_symm_mem_access"]["value"] == "get"
    assert d["gates"]["sglang.torch_symm_mem_access"]["line"] == 5
    assert d["flags"]["options"]["--enable-torch-symm-mem"]["present"] is True
    assert d["flags"]["options"]["--disable-cuda-graph"] == {"present": False}
    undecided = {u["feature"] for u in d["undecided"]}
    assert "attention-fa3" in undecided and "torch-symm-mem" in undecided
    cmp = compare(d, manifests)
    assert not cmp.known
    flags = {f.key: f for f in cmp.findings if f.kind == "flags"}
    # --disable-cuda-graph: the data's open range says present; this release has none: a difference
    assert flags["--disable-cuda-graph"].status == "differs"
    assert flags["--attention-backend"].status == "same"
    assert all(f.status == "new" for f in cmp.findings if f.kind == "pins")


def test_output_is_valid_and_extends_ranges(tmp_path: Path, manifests: Any) -> None:
    (rel,) = open_releases(write_wheel(tmp_path / "s.whl", release_files()))
    d = derive_release(rel, manifests)
    docs, changes = emit([d], manifests)
    gates = {g["id"]: g for g in docs["gates.json"]["gates"]}
    sizes = gates["sglang.torch_symm_mem_sizes"]["releases"]
    assert sizes[-1]["versions"] == ">=0.5.3,<=0.5.24"  # same value: the range now reaches the new release
    assert "line 2" in sizes[-1]["source"][-1]["title"]
    new = docs["components.json"]["packages"]["sglang"]["releases"][-1]
    assert new["version"] == "0.5.24" and new["requires"]["torch"] == "==2.14.1"
    assert any("new release entry" in c for c in changes)
    from stackcheck.knowledge.validate import validate_documents

    problems = validate_documents({n: (n, doc) for n, doc in docs.items()}, partial=True)
    assert problems == []


def test_output_splits_a_range_for_a_known_release_that_differs(tmp_path: Path, manifests: Any) -> None:
    files = release_files(version="0.5.9")
    (rel,) = open_releases(write_wheel(tmp_path / "s.whl", files))
    d = derive_release(rel, manifests, want={"gates"})
    assert d["gates"]["sglang.torch_symm_mem_access"]["value"] == "get"  # the data says "index" for 0.5.9
    cmp = compare(d, manifests)
    diff = [f for f in cmp.findings if f.key == "sglang.torch_symm_mem_access"]
    assert diff[0].status == "differs" and diff[0].shipped == "index"
    docs, _ = emit([d], manifests)
    access = next(g for g in docs["gates.json"]["gates"] if g["id"] == "sglang.torch_symm_mem_access")["releases"]
    assert access[0]["versions"] == "==0.5.9" and access[0]["value"] == "get"
    assert access[1]["versions"] == ">=0.5.3,<0.5.14,!=0.5.9"
    from stackcheck.knowledge.validate import validate_documents

    assert validate_documents({"gates.json": ("g", docs["gates.json"])}, partial=True) == []


# -- the command line -------------------------------------------------------------------------------------


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stackcheck", *args],
        capture_output=True, text=True, timeout=120, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
    )  # fmt: skip


def test_cli_derive(tmp_path: Path) -> None:
    wheel = write_wheel(tmp_path / "sglang-0.5.24-py3-none-any.whl", release_files())
    out = tmp_path / "out"
    proc = run_cli("manifests", "derive", str(wheel), "--against", str(REPO / "manifests"), "--output", str(out))
    assert proc.returncode == 1, proc.stderr  # a new release differs from the data
    assert "sglang 0.5.24 (wheel: sglang-0.5.24-py3-none-any.whl)" in proc.stdout
    assert "torch==2.14.1 (line 10)" in proc.stdout
    assert "≠ flags --disable-cuda-graph: derived false, data true" in proc.stdout
    assert "not decided by the files: attention-fa3" in proc.stdout
    valid = run_cli("manifests", "validate", str(out))
    assert valid.returncode == 0, valid.stdout + valid.stderr
    js = run_cli("manifests", "derive", str(wheel), "--format", "json")
    assert js.returncode == 0
    doc = json.loads(js.stdout)
    assert doc[0]["version"] == "0.5.24" and "comparison" not in doc[0]


def test_cli_derive_bad_input(tmp_path: Path) -> None:
    proc = run_cli("manifests", "derive", str(tmp_path / "nope.whl"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "nope.whl" in proc.stderr
    bad = write_wheel(tmp_path / "b.whl", {"b-1.dist-info/METADATA": "Summary: no name\n"})
    proc = run_cli("manifests", "derive", str(bad))
    assert proc.returncode == 2 and "no Name or Version" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_derive_package_is_pure_readers() -> None:
    """derive reads releases; it never imports what it reads nor runs it (ast only, no eval/exec)."""
    import ast

    for path in (REPO / "stackcheck" / "derive").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("eval", "exec", "compile", "__import__"), path
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                assert not any(n.split(".")[0] in ("sglang", "flashinfer", "torch", "sgl_kernel") for n in names), path


def test_zip_members_read_in_bounded_memory_stream() -> None:
    """The member reader never holds more than its window of output (checked above); here: it is
    independent of zipfile's own extraction (it reads the local header itself)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a", b"x" * 1000)
    assert zipmember.LOCAL_HEADER.size == 30


def test_cli_site_directory_and_hostile_names(tmp_path: Path) -> None:
    """A site directory: only the packages derive knows are read; names from a release never reach the
    terminal as control sequences."""
    files = release_files()
    files["sglang/srt/arg_groups/fields/exec_.py"] = files["sglang/srt/arg_groups/fields/exec_.py"].replace(
        '"symm mem"', '"symm mem"] = False\n    evil: A[int, Arg(help="x", cli_name="--evil\\x1b[2J")'
    )
    files["sglang/srt/arg_groups/fields/ev\x1b[2Jil.py"] = "def broken(:\n"
    site = write_tree(tmp_path / "site", files)
    write_tree(site, {"other_pkg-1.0.dist-info/METADATA": "Name: other-pkg\nVersion: 1.0\n"})
    proc = run_cli("manifests", "derive", str(site))
    assert proc.returncode == 0, proc.stderr
    assert "1 other distribution(s) skipped" in proc.stderr
    assert "sglang 0.5.24 (directory:" in proc.stdout
    assert "ev\\x1b[2Jil.py: cannot parse" in proc.stdout  # the name is shown, escaped
    assert "\x1b" not in proc.stdout + proc.stderr
    js = run_cli("manifests", "derive", str(site), "--format", "json")
    assert "--evil\\u001b[2J" in js.stdout and "\x1b" not in js.stdout
