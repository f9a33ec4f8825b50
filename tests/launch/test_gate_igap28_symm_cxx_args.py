"""igap28 (issue 16, class 2): a CXX with arguments for the build of SGLang's symmetric-memory allocator.

torch's load_inline writes $CXX into the allocator's ninja file: unquoted in torch 2.8.0-2.12.0 (cpp_extension.py
_write_ninja_file, 2.12.0 :3035), so the shell splits off a launcher such as ccache, and as one shell-quoted word from
torch 2.13 (2.13.0 :3147, 2.14.1 :3159: shlex.join of _wrap_compiler's list), so CXX='ccache g++' names a program
'ccache g++' that no PATH holds and the build fails. Before, such a CXX left symm-mem-allocator-cxx unknown on every
torch; from 2.13 it is now refused by symm-mem-allocator-cxx-args (jit.cxx_quoted_found), and before 2.13 (igap31)
judged by symm-mem-allocator-cxx-split (jit.cxx_split_found: the program the shell's split runs is there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, cli_json, judged_rules, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView


def _jit(root: Path, cxx: str) -> dict[str, Any]:
    """The probe's cxx keys for CXX=`cxx` on a box with ccache and g++ in /usr/bin."""
    touch_exe(root / "usr/bin/ccache")
    touch_exe(root / "usr/bin/g++")
    jit = probe_jit(toolkit_128_facts(), {"PATH": "/usr/bin", "CXX": cxx}, HostView(str(root)))
    return {k: v for k, v in jit.items() if k in ("cxx_found", "cxx", "cxx_reason", "cxx_quoted_found")}


def _gate(tmp_path: Path, jit: dict[str, Any], torch: str) -> dict[str, Any]:
    """gate of `--enable-symm-mem --tp 2` on tests/cases/h200-newest (SGLang 0.5.23) with torch `torch`."""
    doc = json.loads(H200_NEWEST.read_text())
    doc["facts"]["packages"]["torch"].update(version=f"{torch}+cu130", dist_version=torch)
    for key in ("cxx_found", "cxx", "cxx_reason", "cxx_quoted_found"):
        doc["facts"]["jit"].pop(key, None)
    doc["facts"]["jit"].update(jit)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2", "--enable-symm-mem"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--allow-unknown", "--format", "json", "--", *line])[1]


def _results(doc: dict[str, Any]) -> dict[str, str]:
    return judged_rules(doc, lambda rule: rule.startswith("symm-mem-allocator-cxx"))


def test_the_probe_reads_the_whole_value_as_one_program(tmp_path: Path) -> None:
    jit = _jit(tmp_path, "ccache g++")
    assert jit["cxx_found"] is None and jit["cxx_quoted_found"] is False, jit


@pytest.mark.parametrize("torch", ["2.13.0", "2.14.1"])
def test_torch_2_13_and_later_quote_cxx_refused(tmp_path: Path, torch: str) -> None:
    doc = _gate(tmp_path, _jit(tmp_path / "box", "ccache g++"), torch)
    assert doc["decision"] == "refuse" and _results(doc).get("symm-mem-allocator-cxx-args") == "fail", doc["reasons"]
    failed = [x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == "symm-mem-allocator-cxx-args"]
    assert failed[0]["observed"] is False and failed[0]["source"], failed


def test_a_document_without_the_split_reading_stays_unknown_before_torch_2_13(tmp_path: Path) -> None:
    # (_jit keeps igap28's keys only: a facts document from before igap31's jit.cxx_split_found)
    doc = _gate(tmp_path, _jit(tmp_path / "box", "ccache g++"), "2.12.0")
    assert _results(doc) == {"symm-mem-allocator-cxx": "unknown"}, doc.get("warnings")


def test_a_plain_cxx_is_not_judged_by_the_new_rule(tmp_path: Path) -> None:
    doc = _gate(tmp_path, _jit(tmp_path / "box", "g++"), "2.14.1")
    assert _results(doc) == {}, doc.get("reasons")


# ---- igap31: torch 2.8-2.12 split an unquoted CXX, and the probe reads the split ---------------------------------


@pytest.mark.parametrize(
    ("cxx", "found"),
    [("ccache g++", True), ("g++ -O2", True), ("sccache g++", False), ("ccache clang++", False), ("cc1 x", None)],
)
def test_the_probe_reads_the_shells_split(tmp_path: Path, cxx: str, found: bool | None) -> None:
    touch_exe(tmp_path / "usr/bin/ccache")
    touch_exe(tmp_path / "usr/bin/g++")
    touch_exe(tmp_path / "usr/bin/cc1")
    jit = probe_jit(toolkit_128_facts(), {"PATH": "/usr/bin", "CXX": cxx}, HostView(str(tmp_path)))
    assert jit["cxx_found"] is None and jit["cxx_split_found"] is found, jit
    assert (found is True) is ("cxx_split_reason" not in jit), jit
    assert "cxx_split_found" not in probe_jit(toolkit_128_facts(), {"PATH": "/usr/bin"}, HostView(str(tmp_path)))


def _split_jit(root: Path, cxx: str) -> dict[str, Any]:
    touch_exe(root / "usr/bin/ccache")
    touch_exe(root / "usr/bin/g++")
    jit = probe_jit(toolkit_128_facts(), {"PATH": "/usr/bin", "CXX": cxx}, HostView(str(root)))
    return {k: v for k, v in jit.items() if k.startswith("cxx") and not k.startswith(("cxx_cuda", "cxx_nccl"))}


@pytest.mark.parametrize("torch", ["2.8.0", "2.12.0"])
def test_torch_before_2_13_runs_the_split_allowed_where_it_is_there(tmp_path: Path, torch: str) -> None:
    # unknown before (symm-mem-allocator-cxx: jit.cxx_found null): the shell runs ccache, which runs g++
    doc = _gate(tmp_path, _split_jit(tmp_path / "box", "ccache g++"), torch)
    assert _results(doc) == {}, (doc.get("reasons"), doc.get("warnings"))


def test_torch_before_2_13_refuses_a_split_whose_compiler_is_missing(tmp_path: Path) -> None:
    doc = _gate(tmp_path, _split_jit(tmp_path / "box", "sccache g++"), "2.12.0")
    assert doc["decision"] == "refuse" and _results(doc) == {"symm-mem-allocator-cxx-split": "fail"}, doc["reasons"]
    failed = [x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == "symm-mem-allocator-cxx-split"]
    assert failed[0]["observed"] is False and "2.8.0 :2838" in failed[0]["source"][0]["title"], failed


def test_torch_2_13_still_refuses_ccache_g_plus_plus_by_its_quoting(tmp_path: Path) -> None:
    doc = _gate(tmp_path, _split_jit(tmp_path / "box", "ccache g++"), "2.13.0")
    assert _results(doc) == {"symm-mem-allocator-cxx-args": "fail"}, doc["reasons"]


# ---- irev62: what str.split() cut that the shell does not ----------------------------------------------------------


@pytest.mark.parametrize(
    "cxx", ["g++\r -O2", "g++\n-O2", "ccache\x0bg++", "g++\x85", "CCACHE_DISABLE=1 ccache g++", "g++ #x"]
)
def test_a_cxx_the_shell_reads_otherwise_is_not_found(tmp_path: Path, cxx: str) -> None:
    # before: 'g++\r -O2' split to g++ and -O2 (found: the shell runs 'g++\r', not found)
    jit = _split_jit(tmp_path, cxx)
    assert jit.get("cxx_found") is not True and jit.get("cxx_split_found") is None, jit
    assert jit.get("cxx_split_reason") or jit.get("cxx_reason"), jit
