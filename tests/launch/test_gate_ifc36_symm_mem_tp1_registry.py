"""checks.json nccl rule symm-mem-tp1-no-pynccl read against the real SGLang wheels: in the releases of its scope
(0.5.1-0.5.4) use_symmetric_memory builds the pool and asserts the group's PyNccl communicator with no world-size
test, and GroupCoordinator creates that communicator only for a group larger than one; from 0.5.5 on
use_symmetric_memory hands a TP group of one a nullcontext. The rules symm-mem-nccl-* cover every release:
0.5.1-0.5.4 assert NCCL 2.27.3 or newer in the same context, the later ones build an allocator that calls
ncclCommWindowRegister. A release that changes any of these fails here."""

from __future__ import annotations

import re
from typing import Any

import pytest
from registry_wheels import fetch_wheel, read_texts, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load

ALLOCATOR = "sglang/srt/distributed/device_communicators/pynccl_allocator.py"
STATE = "sglang/srt/distributed/parallel_state.py"
WRAPPER = "sglang/srt/distributed/device_communicators/pynccl_wrapper.py"
ALL = ["0.5.1", "0.5.1.post3", *(f"0.5.{n}" for n in range(2, 24))]
DEFAULT = ["0.5.1", "0.5.4", "0.5.5", "0.5.23"]


def _versions() -> list[str]:
    return ALL if run_all() else DEFAULT


def _scope() -> str:
    nccl = next(c for c in load([], env={}).checks if c["id"] == "nccl")
    rule = next(r for r in nccl["rules"] if r["id"] == "symm-mem-tp1-no-pynccl")
    return str(rule["when"]["all"][-1]["value"])


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_rule_covers_the_releases_that_assert_at_tp_1(version: str) -> None:
    texts = read_texts(fetch_wheel("sglang", version), lambda n: n in (ALLOCATOR, STATE, WRAPPER))
    code, state = texts[ALLOCATOR], texts[STATE]
    # the communicator the assertion wants exists only for a group larger than one
    assert re.search(r"if use_pynccl and self\.world_size > 1:\n\s+self\.pynccl_comm = PyNcclCommunicator\(", state)
    assert re.search(r"assert \(?\s*self\.group_coordinator\.pynccl_comm is not None", code), version
    skips_one = re.search(r"group_coordinator\.world_size == 1", code) is not None
    asserts_at_one = not skips_one and re.search(r"class use_symmetric_memory\b", code) is not None
    assert asserts_at_one is (version_in(version, _scope()) is True), (version, _scope())
    if asserts_at_one:  # the assertion's message reads an attribute GroupCoordinator lacks there
        assert "group_coordinator.group_name}" in code and "self.group_name =" not in state, version
    # rules symm-mem-nccl-* (every release from 0.5.1): the releases of the tp 1 rule assert NCCL 2.27.3 or newer,
    # the later ones build an allocator that calls ncclCommWindowRegister (NCCL 2.27 on)
    # (igap23: symm-mem-nccl-so-path-version stands for them on the asserting releases where SGLANG_NCCL_SO_PATH
    # names the NCCL pynccl loads: its scope is the assertion's)
    scopes = {str(r["id"]): str(r["when"]["all"][2]["value"]) for r in _nccl_rules()}
    assert scopes.pop("symm-mem-nccl-so-path-version") == _scope()
    # (ifc41: symm-mem-nccl-so-path-init-config's scope is the releases whose pynccl binds ncclCommInitRankConfig too)
    init_config = scopes.pop("symm-mem-nccl-so-path-init-config")
    binds = re.search(r'Function\(\s*"ncclCommInitRankConfig"', texts[WRAPPER]) is not None
    assert binds is (version_in(version, init_config) is True), (version, init_config)
    # (igap29: -window stands for the assertion where the named NCCL has no ncclCommWindowRegister; ifc42:
    # -window-register's scope is the releases whose allocator acts on ncclCommWindowRegister's result: NCCLCHECK in
    # the allocation (0.5.8-0.5.11) or the registration's result asserted (0.5.12 on); -window-comm the releases that
    # do neither; -mem-alloc's scope is the releases whose pynccl binds ncclMemAlloc)
    assert scopes.pop("symm-mem-nccl-so-path-window") == _scope()
    window = scopes.pop("symm-mem-nccl-so-path-window-register")
    in_allocation = re.search(r"NCCLCHECK\(ncclCommWindowRegister\(", code) is not None
    returned = re.search(r"ncclResult_t res = ncclCommWindowRegister\(", code) is not None
    checked = in_allocation or (returned and re.search(r"assert \(?\s*result == 0", code) is not None)
    assert checked is (version_in(version, window) is True), (version, window)
    # (igap36: -same-nccl, the named NCCL's version against torch's, judges the releases -window-register judges)
    assert scopes.pop("symm-mem-nccl-so-path-same-nccl") == window
    comm = version_in(version, scopes.pop("symm-mem-nccl-so-path-window-comm")) is True
    assert comm is (not asserts_at_one and not checked), (version, comm)
    mem_alloc = scopes.pop("symm-mem-nccl-so-path-mem-alloc")
    binds = re.search(r'Function\(\s*"ncclMemAlloc"', texts[WRAPPER]) is not None
    assert binds is (version_in(version, mem_alloc) is True), (version, mem_alloc)
    assert set(scopes.values()) == {">=0.5.1"}
    assert ("pynccl_comm.nccl_version >= 22703" in code) is asserts_at_one, version
    source = re.search(r'nccl_allocator_source\s*=\s*[rf]?"""(.*?)"""', code, re.S)
    assert source is not None, version
    assert asserts_at_one or re.search(r"\bncclCommWindowRegister\s*\(", source.group(1)), version


def _nccl_rules() -> list[dict[str, Any]]:
    nccl = next(c for c in load([], env={}).checks if c["id"] == "nccl")
    return [dict(r) for r in nccl["rules"] if str(r["id"]).startswith("symm-mem-nccl-")]
