"""Tests for stackcheck.readers.sourcetables and the source_tables post-probe.

The synthetic trees under tests/data/sources are our own small files in the shape of the upstream ones.
The tests marked `registry` download the real wheels (pip download --no-deps, cached under
~/.cache/stackcheck-tests/wheels) and read the real files; they skip when the registry cannot be reached.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from registry_wheels import extract, fetch_wheel  # the shared cache and platforms (manylinux2014-only wheels included)

from stackcheck.probes.source_tables import outcome, package_locations, probe_source_tables
from stackcheck.readers import sourcetables
from stackcheck.readers.sourcetables import compare_with_release, normalise_name, read_source_tables, read_table

DATA = Path(__file__).parent.parent / "data" / "sources"
REPO = Path(__file__).resolve().parent.parent.parent
DC = "sglang/srt/distributed/device_communicators"

SIZES = {
    "files": [f"{DC}/all_reduce_utils.py"],
    "read": "dict_keys",
    "symbol": ["TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", "SYMM_MEM_ALL_REDUCE_MAX_SIZES"],
}
ACCESS = {
    "files": [f"{DC}/torch_symm_mem.py", f"{DC}/symm_mem.py"],
    "read": "subscript_style",
    "symbol": [
        "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES",
        "SYMM_MEM_ALL_REDUCE_MAX_SIZES",
        "_WORLD_SIZES_MULTIMEM",
    ],
}
MULTIMEM = {
    "files": [f"{DC}/torch_symm_mem.py", f"{DC}/symm_mem.py"],
    "read": "class_attr_dict_keys",
    "class": ["TorchSymmMemCommunicator", "SymmMemCommunicator"],
    "symbol": ["_WORLD_SIZES_MULTIMEM"],
}
MAJORS = {
    "files": ["flashinfer/jit/comm.py", "flashinfer/comm/trtllm_ar.py"],
    "read": "call_keyword_list",
    "function": "gen_trtllm_comm_module",
    "keyword": "supported_major_versions",
}
GATES: list[dict[str, Any]] = [
    {"id": "sglang.torch_symm_mem_sizes", "package": "sglang", "probe": SIZES},
    {"id": "sglang.torch_symm_mem_access", "package": "sglang", "probe": ACCESS},
    {"id": "sglang.world_sizes_multimem", "package": "sglang", "probe": MULTIMEM},
    {"id": "flashinfer.trtllm_comm_majors", "package": "flashinfer-python", "probe": MAJORS},
    {"id": "sglang.manifest_only", "package": "sglang", "probe": None},
]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- synthetic trees ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tree", "sizes", "access", "multimem", "consumer"),
    [
        ("sglang_059", [9, 10], "index", [9, 10], "torch_symm_mem.py"),
        ("sglang_0514", [9, 10], "get", [9, 10], "torch_symm_mem.py"),
        ("sglang_patched", [9, 10, 12], "get", [9, 10, 12], "torch_symm_mem.py"),
        ("sglang_053", [9, 10], "index", [9, 10], "symm_mem.py"),
    ],
)
def test_sglang_trees(tree: str, sizes: list[int], access: str, multimem: list[int], consumer: str) -> None:
    site = DATA / tree
    got = read_table(SIZES, site)
    assert got == {
        "status": "ok",
        "value": sizes,
        "file": f"{DC}/all_reduce_utils.py",
        "reason": None,
        "sha256": sha(site / DC / "all_reduce_utils.py"),
    }
    got = read_table(ACCESS, site)
    assert (got["status"], got["value"], got["file"]) == ("ok", access, f"{DC}/{consumer}")
    assert got["sha256"] == sha(site / DC / consumer)
    got = read_table(MULTIMEM, site)
    assert (got["status"], got["value"], got["file"]) == ("ok", multimem, f"{DC}/{consumer}")


@pytest.mark.parametrize(
    ("tree", "majors", "file"),
    [
        ("flashinfer_063", [9, 10], "flashinfer/jit/comm.py"),
        ("flashinfer_0617", [9, 10, 12], "flashinfer/jit/comm.py"),
        # jit/comm.py exists without the function: the next file in the list is read
        ("flashinfer_031", [9, 10], "flashinfer/comm/trtllm_ar.py"),
    ],
)
def test_flashinfer_trees(tree: str, majors: list[int], file: str) -> None:
    got = read_table(MAJORS, DATA / tree)
    assert (got["status"], got["value"], got["file"], got["reason"]) == ("ok", majors, file, None)


def test_call_keyword_not_a_list_literal() -> None:
    got = read_table(MAJORS, DATA / "flashinfer_nolist")
    assert got["status"] == "error"
    assert got["value"] is None
    assert "not a list literal" in (got["reason"] or "")


def test_call_keyword_missing_function_or_keyword() -> None:
    got = read_table({**MAJORS, "function": "gen_absent_module"}, DATA / "flashinfer_063")
    assert got["status"] == "not-found"
    assert "no function gen_absent_module" in (got["reason"] or "")
    got = read_table({**MAJORS, "keyword": "absent_kw"}, DATA / "flashinfer_063")
    assert got["status"] == "not-found"
    assert got["file"] == "flashinfer/jit/comm.py"
    assert got["sha256"] is not None


def test_class_attr_ignores_other_classes() -> None:
    # class Helper also has _WORLD_SIZES_MULTIMEM = {7: [2]}: only the listed classes count
    got = read_table({**MULTIMEM, "class": ["Helper"]}, DATA / "sglang_059")
    assert got["value"] == [7]
    got = read_table({**MULTIMEM, "class": ["Absent"]}, DATA / "sglang_059")
    assert got["status"] == "not-found"


def test_subscript_style_ignores_literal_keys_and_other_symbols() -> None:
    # sglang_0514 also has TABLE[9] (a literal key): still "get"
    assert read_table(ACCESS, DATA / "sglang_0514")["value"] == "get"
    got = read_table({**ACCESS, "symbol": ["NOT_USED"]}, DATA / "sglang_059")
    assert got["status"] == "not-found"


def test_subscript_style_index_wins(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("def f(cap):\n    a = TABLE.get(cap)\n    b = TABLE[cap]\n    TABLE[cap] = 1\n")
    got = read_table({"files": ["m.py"], "read": "subscript_style", "symbol": "TABLE"}, tmp_path)
    assert got["value"] == "index"
    src.write_text("def f(cap):\n    TABLE[cap] = 1\n    return TABLE.get(cap, {})\n")
    assert read_table({"files": ["m.py"], "read": "subscript_style", "symbol": "TABLE"}, tmp_path)["value"] == "get"


def test_dict_keys_annotated_and_last_assignment(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("T: dict[int, int] = {1: 2}\nT = {3: X * 2, -1: 0, 3: 4}\n")
    got = read_table({"files": ["m.py"], "read": "dict_keys", "symbol": ["T"]}, tmp_path)
    assert (got["status"], got["value"]) == ("ok", [-1, 3])
    (tmp_path / "m.py").write_text("T: dict[int, int] = {12: 2}\n")
    assert read_table({"files": ["m.py"], "read": "dict_keys", "symbol": "T"}, tmp_path)["value"] == [12]


def test_dict_keys_first_symbol_in_list_order(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("OLD = {9: 1}\nNEW = {9: 1, 10: 1}\n")
    spec = {"files": ["m.py"], "read": "dict_keys", "symbol": ["NEW", "OLD"]}
    assert read_table(spec, tmp_path)["value"] == [9, 10]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("T = {True: 1}\n", "not an int literal"),
        ("T = {'9': 1}\n", "not an int literal"),
        ("T = {**BASE, 9: 1}\n", "unpacks"),
        ("T = [9, 10]\n", "not a dict literal"),
    ],
)
def test_dict_keys_unacceptable_shapes(tmp_path: Path, text: str, needle: str) -> None:
    (tmp_path / "m.py").write_text(text)
    got = read_table({"files": ["m.py"], "read": "dict_keys", "symbol": "T"}, tmp_path)
    assert got["status"] == "error"
    assert needle in (got["reason"] or "")
    assert "\n" not in (got["reason"] or "")


def test_nonliteral_table() -> None:
    got = read_table({**SIZES, "symbol": ["TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES"]}, DATA / "nonliteral")
    assert got["status"] == "error"
    assert "not a dict literal" in (got["reason"] or "")
    got = read_table({**SIZES, "symbol": ["SYMM_MEM_ALL_REDUCE_MAX_SIZES"]}, DATA / "nonliteral")
    assert got["status"] == "error"
    assert "not an int literal" in (got["reason"] or "")


# -- bad files: every failure is a reading with a one-line reason, never a raise ---------------------


def assert_one_line_error(got: sourcetables.TableReading, needle: str) -> None:
    assert got["status"] == "error", got
    assert got["value"] is None
    reason = got["reason"] or ""
    assert needle in reason, reason
    assert "\n" not in reason
    assert "Traceback" not in reason


def test_syntax_error() -> None:
    got = read_table(SIZES, DATA / "broken")
    assert_one_line_error(got, "syntax error at line")
    assert got["file"] == f"{DC}/all_reduce_utils.py"


def test_not_utf8() -> None:
    got = read_table(SIZES, DATA / "latin1")
    assert_one_line_error(got, "not UTF-8")
    assert got["sha256"] == sha(DATA / "latin1" / DC / "all_reduce_utils.py")


def test_huge_file(tmp_path: Path) -> None:
    path = tmp_path / DC / "all_reduce_utils.py"
    path.parent.mkdir(parents=True)
    with path.open("wb") as fh:
        fh.write(b"TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES = {9: 1}\n")
        fh.truncate(sourcetables.MAX_SOURCE_BYTES + 1)  # sparse: cheap to make
    assert_one_line_error(read_table(SIZES, tmp_path), "larger than")


def test_null_bytes(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_bytes(b"T = {9: 1}\n\x00\n")
    assert_one_line_error(read_table({"files": ["m.py"], "read": "dict_keys", "symbol": "T"}, tmp_path), "")


def test_deep_nesting(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("T = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    got = read_table({"files": ["m.py"], "read": "dict_keys", "symbol": "T"}, tmp_path)
    assert got["status"] == "error"


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root reads any file")
def test_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("T = {9: 1}\n")
    path.chmod(0)
    try:
        assert_one_line_error(
            read_table({"files": ["m.py"], "read": "dict_keys", "symbol": "T"}, tmp_path), "cannot read"
        )
    finally:
        path.chmod(0o644)


def test_missing_files(tmp_path: Path) -> None:
    got = read_table(SIZES, tmp_path)
    assert got["status"] == "not-found"
    assert got["file"] is None and got["sha256"] is None
    assert "all_reduce_utils.py" in (got["reason"] or "")
    got = read_table(SIZES, tmp_path / "no" / "such" / "site")
    assert got["status"] == "not-found"


def test_symbol_absent() -> None:
    got = read_table(SIZES, DATA / "nosymbol")
    assert got["status"] == "not-found"
    assert got["file"] == f"{DC}/all_reduce_utils.py"


@pytest.mark.parametrize(
    "spec",
    [
        {"files": ["m.py"], "read": "evaluate", "symbol": "T"},
        {"files": ["m.py"], "symbol": "T"},
        {"files": [], "read": "dict_keys", "symbol": "T"},
        {"files": ["m.py"], "read": "dict_keys"},
        {"files": ["../m.py"], "read": "dict_keys", "symbol": "T"},
        {"files": ["/etc/passwd"], "read": "dict_keys", "symbol": "T"},
        {"files": ["m.py"], "read": "call_keyword_list", "function": "f"},
    ],
)
def test_bad_specs(tmp_path: Path, spec: dict[str, Any]) -> None:
    (tmp_path / "m.py").write_text("T = {9: 1}\ndef f():\n    g(k=[1])\n")
    got = read_table(spec, tmp_path)
    assert got["status"] == "error"
    assert (got["reason"] or "").startswith("probe spec:")


def test_no_exec(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "marker"
    monkeypatch.setenv("STACKCHECK_EXEC_MARKER", str(marker))
    before = set(sys.modules)
    site = DATA / "noexec"
    assert read_table(SIZES, site)["value"] == [9, 10]
    assert read_table(MULTIMEM, site)["value"] == [9, 10]
    assert read_table(ACCESS, site)["value"] == "index"
    assert not marker.exists()
    captured = capsys.readouterr()
    assert "EXECUTED" not in captured.out + captured.err
    assert not any(name.startswith("sglang") for name in set(sys.modules) - before)


def test_module_never_imports_probed_packages() -> None:
    import re

    text = (REPO / "stackcheck" / "readers" / "sourcetables.py").read_text()
    for banned in ("eval(", "exec(", "import_module", "__import__", "literal_eval"):
        assert banned not in text
    # the builtin compile() (code objects); re.compile of a probe's pattern is not code
    assert not re.search(r"(?<![\w.])compile\(", text)


# -- read_source_tables and the post-probe ------------------------------------------------------------


def test_read_source_tables() -> None:
    locations = {"sglang": str(DATA / "sglang_059"), "flashinfer_python": str(DATA / "flashinfer_0617")}
    got = read_source_tables(GATES, locations)
    assert sorted(got) == [
        "flashinfer.trtllm_comm_majors",
        "sglang.torch_symm_mem_access",
        "sglang.torch_symm_mem_sizes",
        "sglang.world_sizes_multimem",
    ]
    assert got["sglang.torch_symm_mem_sizes"]["value"] == [9, 10]
    assert got["sglang.torch_symm_mem_access"]["value"] == "index"
    assert got["flashinfer.trtllm_comm_majors"]["value"] == [9, 10, 12]
    json.dumps(got)  # JSON-compatible


def test_read_source_tables_package_not_installed() -> None:
    got = read_source_tables(GATES, {"flashinfer-python": str(DATA / "flashinfer_063")})
    assert list(got) == ["flashinfer.trtllm_comm_majors"]
    assert read_source_tables(GATES, {}) == {}


def test_read_source_tables_gate_without_package() -> None:
    got = read_source_tables([{"id": "x", "probe": SIZES}], {"sglang": str(DATA / "sglang_059")})
    assert got["x"]["status"] == "error"


def test_probe_source_tables_from_facts() -> None:
    facts = {
        "packages": {
            "sglang": {"installed": True, "version": "0.5.14", "location": str(DATA / "sglang_0514")},
            "Flashinfer_Python": {"installed": True, "location": str(DATA / "flashinfer_063")},
            "sgl-kernel": {"installed": False},
            "torch": {"installed": True, "location": None},
        }
    }
    assert package_locations(facts) == {
        "sglang": str(DATA / "sglang_0514"),
        "flashinfer-python": str(DATA / "flashinfer_063"),
    }
    section = probe_source_tables(facts, GATES)
    assert section["sglang.torch_symm_mem_access"]["value"] == "get"
    assert section["flashinfer.trtllm_comm_majors"]["value"] == [9, 10]
    assert outcome(section) == ("ok", None)


def test_probe_source_tables_outcomes() -> None:
    section = probe_source_tables({}, GATES)
    assert "error" in section
    assert outcome(section)[0] == "failed"
    section = probe_source_tables(
        {"packages": {"sglang": {"installed": True, "location": str(DATA / "broken")}}}, GATES
    )
    status, reason = outcome(section)
    assert status == "partial"
    assert "sglang.torch_symm_mem_sizes" in (reason or "")


def test_normalise_name() -> None:
    assert normalise_name("Flashinfer_Python") == "flashinfer-python"
    assert normalise_name("sgl.kernel__x") == "sgl-kernel-x"


def test_compare_with_release() -> None:
    assert compare_with_release([10, 9], [9, 10]) == "same"
    assert compare_with_release([9, 10, 12], [9, 10]) == "patched"
    assert compare_with_release([9, 10], [9, 10, 12]) == "patched"
    assert compare_with_release("get", "get") == "same"
    assert compare_with_release("index", "get") == "patched"
    assert compare_with_release(None, [9, 10]) == "patched"
    assert compare_with_release([9, 9, 10], [9, 10]) == "patched"
    patched = read_table(SIZES, DATA / "sglang_patched")["value"]
    assert compare_with_release(patched, [9, 10]) == "patched"


# -- real wheels (registry) ----------------------------------------------------------------------------

WANTED_PREFIXES = (f"{DC}/", "flashinfer/jit/comm.py", "flashinfer/comm/trtllm_ar.py")


@pytest.fixture(scope="session")
def real_site(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A function (dist, version) → a site dir holding only the files the gates read from that wheel."""
    made: dict[tuple[str, str], Path] = {}

    def make(dist: str, version: str) -> Path:
        if (dist, version) not in made:
            wheel = fetch_wheel(dist, version)
            site = tmp_path_factory.mktemp(f"site-{dist}-{version}")
            gate_files = {f for g in manifest_gates() if g.get("probe") for f in g["probe"]["files"]}

            def keep(name: str) -> bool:
                return (name.startswith(WANTED_PREFIXES) and name.endswith(".py")) or name in gate_files

            made[(dist, version)] = extract(wheel, site, keep)
        return made[(dist, version)]

    return make


SGLANG_EXPECTED = {
    # version: (sizes keys, access style, multimem keys, consumer)
    "0.5.3": ([9, 10], "index", [9, 10], "symm_mem.py"),
    "0.5.9": ([9, 10], "index", [9, 10], "torch_symm_mem.py"),
    "0.5.13": ([9, 10], "index", [9, 10], "torch_symm_mem.py"),
    "0.5.14": ([9, 10], "get", [9, 10], "torch_symm_mem.py"),
}
FLASHINFER_EXPECTED = {"0.6.3": [9, 10], "0.6.17": [9, 10, 12]}


@pytest.mark.registry
@pytest.mark.parametrize("version", sorted(SGLANG_EXPECTED))
def test_real_sglang(real_site: Any, version: str) -> None:
    sizes, access, multimem, consumer = SGLANG_EXPECTED[version]
    site = real_site("sglang", version)
    got = read_table(SIZES, site)
    assert (got["status"], got["value"]) == ("ok", sizes), got
    got = read_table(ACCESS, site)
    assert (got["status"], got["value"], got["file"]) == ("ok", access, f"{DC}/{consumer}"), got
    got = read_table(MULTIMEM, site)
    assert (got["status"], got["value"]) == ("ok", multimem), got


@pytest.mark.registry
@pytest.mark.parametrize("version", sorted(FLASHINFER_EXPECTED))
def test_real_flashinfer(real_site: Any, version: str) -> None:
    got = read_table(MAJORS, real_site("flashinfer-python", version))
    assert (got["status"], got["value"], got["file"]) == (
        "ok",
        FLASHINFER_EXPECTED[version],
        "flashinfer/jit/comm.py",
    ), got


def manifest_gates() -> list[dict[str, Any]]:
    path = REPO / "manifests" / "gates.json"
    if not path.is_file():
        pytest.skip("manifests/gates.json is not there yet")
    doc = json.loads(path.read_text())
    gates = doc.get("gates") if isinstance(doc, dict) else None
    if not isinstance(gates, list):
        pytest.skip("manifests/gates.json has no gates list")
    return gates


REAL_VERSIONS = {"sglang": sorted(SGLANG_EXPECTED), "flashinfer-python": sorted(FLASHINFER_EXPECTED)}


@pytest.mark.registry
def test_manifest_gates_agree_with_real_wheels(real_site: Any) -> None:
    """Every gate in gates.json with a probe, read from the real wheels, equals its release value."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    problems: list[str] = []
    checked = 0
    for gate in manifest_gates():
        probe, package = gate.get("probe"), normalise_name(str(gate.get("package", "")))
        if not isinstance(probe, dict) or package not in REAL_VERSIONS:
            continue
        for version in REAL_VERSIONS[package]:
            releases = [
                rel
                for rel in gate.get("releases", [])
                if Version(version) in SpecifierSet(str(rel.get("versions", "")), prereleases=True)
            ]
            got = read_table(probe, real_site(package, version))
            if not releases:
                if got["status"] == "ok":
                    problems.append(f"{gate['id']} {package} {version}: read {got['value']!r}, no release")
                continue
            for rel in releases:
                checked += 1
                if got["status"] != "ok":
                    problems.append(f"{gate['id']} {package} {version}: {got['status']}: {got['reason']}")
                elif compare_with_release(got["value"], rel.get("value")) != "same":
                    problems.append(
                        f"{gate['id']} {package} {version}: read {got['value']!r}, "
                        f"gates.json says {rel.get('value')!r} for {rel.get('versions')}"
                    )
    assert not problems, "\n".join(problems)
    if checked == 0:
        pytest.skip("gates.json has no release covering the downloaded versions")


def test_source_tables_probe_class(tmp_path: Path) -> None:
    from stackcheck.probes.interface import ProbeContext
    from stackcheck.probes.source_tables import SourceTablesProbe

    # the facts hold box paths; the context's root (its filesystem view) maps them onto the test tree
    facts = {"packages": {"sglang": {"installed": True, "location": "/sources/sglang_059"}}}
    probe = SourceTablesProbe()
    result = probe.run(ProbeContext(env={}, root=DATA.parent, facts=facts, gates=lambda: GATES))
    assert result.status == "ok" and result.reason is None
    section = result.facts["source_tables"]
    assert section["sglang.torch_symm_mem_access"]["value"] == "index"
    assert section["sglang.world_sizes_multimem"]["value"] == [9, 10]
    failed = SourceTablesProbe().run(ProbeContext(env={}, gates=lambda: GATES))
    assert failed.status == "failed"
    # the packages probe failed (every entry an error): the tables are unknown, not "nothing installed"
    unknown = {"packages": {"sglang": {"error": "probe timed out after 5s"}, "torch": {"error": "probe timed out"}}}
    failed = SourceTablesProbe().run(ProbeContext(env={}, facts=unknown, gates=lambda: GATES))
    assert failed.status == "failed" and "timed out" in str(failed.reason)
    assert probe.failure_facts("hung") == {"source_tables": {"error": "hung"}}


def multimem_table(site: Path) -> dict[int, list[int]]:
    """_WORLD_SIZES_MULTIMEM of the real communicator, as literals (test-side, for manifest-only gates)."""
    import ast

    for name in ("torch_symm_mem.py", "symm_mem.py"):
        path = site / DC / name
        if not path.is_file():
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "_WORLD_SIZES_MULTIMEM" for t in node.targets
            ):
                return {k: sorted(v) for k, v in ast.literal_eval(node.value).items()}
    raise AssertionError(f"no _WORLD_SIZES_MULTIMEM under {site}")


@pytest.mark.registry
@pytest.mark.parametrize("version", sorted(SGLANG_EXPECTED))
def test_manifest_multimem_world_sizes_agree(real_site: Any, version: str) -> None:
    """The manifest-only gates sglang.multimem_world_sizes_sm90/sm100 against the real class attribute."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    gates = {g.get("id"): g for g in manifest_gates()}
    table = multimem_table(real_site("sglang", version))
    checked = 0
    for gate_id, major in (
        ("sglang.multimem_world_sizes_sm90", 9),
        ("sglang.multimem_world_sizes_sm100", 10),
    ):
        for rel in gates.get(gate_id, {}).get("releases", []):
            if Version(version) in SpecifierSet(rel["versions"]):
                checked += 1
                assert compare_with_release(table[major], rel["value"]) == "same", (gate_id, version, table)
    if checked == 0:
        pytest.skip("gates.json has no multimem world-size gates covering this version")


@given(st.text(alphabet="/.ab", max_size=12))
@example("a//b/./c")
@example("/a")
@example("./")
@example("a/../b")
def test_file_names_split_as_pathlib_splits_them(rel: str) -> None:
    # _safe_relative replaced PurePosixPath (no pathlib at start-up): the same parts, the same refusals
    import pathlib

    path = pathlib.PurePosixPath(rel)
    refused = path.is_absolute() or ".." in path.parts or not path.parts
    try:
        parts = sourcetables._safe_relative(rel)
    except sourcetables._Unreadable:
        assert refused
    else:
        assert not refused and parts == path.parts
