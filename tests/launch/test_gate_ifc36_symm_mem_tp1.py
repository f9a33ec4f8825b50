"""ifc36, beside the thirty-sixth fact-check sample: population (a) held 11 gate allows of `--enable-symm-mem --tp 1`
on SGLang 0.5.1-0.5.4 with every hop of the allocator's build in place. Those releases enter use_symmetric_memory on
the TP group in every forward pass at any TP size (0.5.4 layers/vocab_parallel_embedding.py:476, linear.py:1375), and
its __enter__ asserts a PyNccl communicator (pynccl_allocator.py:84-86) that GroupCoordinator creates only for a group
larger than one (0.5.4 parallel_state.py:325): the server does not start. checks.json nccl rule
symm-mem-tp1-no-pynccl now refuses it; from 0.5.5 a TP group of one skips symmetric memory (pynccl_allocator.py
use_symmetric_memory's world_size test), so the rule does not apply there. At tp > 1 the same releases assert that
the NCCL torch loaded is 2.27.3 or newer (pynccl_allocator.py:87-89; the sample's rows a2 and a4, where no NCCL was
read): rules symm-mem-nccl-wheel-cu12 / -cu13 / -system refuse an older one, symm-mem-nccl-unread is unknown where
the NCCL in use was not read. Read in the wheels, not run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, LLAMA3, cli_json, model_dir

from stackcheck.commands.explain import release_facts
from stackcheck.facts.versions import cuda_from_tag
from stackcheck.knowledge.loader import load, pypi_variant

RULE = "symm-mem-tp1-no-pynccl"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _box(tmp_path: Path, release: str) -> Path:
    """tests/cases/h200-newest with SGLang `release` and its pinned packages, libnuma found and every hop of the
    allocator's build (ninja, CUDA home, C++ compiler, cuda_runtime.h, nccl.h, libnccl.so) and an NCCL of 2.27.3 or
    newer (the wheel torch pins) in place."""
    m = load()
    doc = json.loads(H200_NEWEST.read_text())
    facts = doc["facts"]
    pkgs = facts["packages"]
    for name in ("sgl-kernel", "sglang-kernel", "triton"):
        pkgs[name] = {"installed": False}
    pins = release_facts({}, m, release, None, None)["packages"]
    for name, p in pins.items():
        pkgs[name] = {"installed": True, "version": p["version"], "dist_version": p["version"]}
    trel = next(r for r in m.releases("torch") if r.get("version") == pins["torch"]["version"])
    variant = pypi_variant(trel) or "cu128"
    pkgs["torch"].update(version=f"{pins['torch']['version']}+{variant}", variant=variant, cuda=cuda_from_tag(variant))
    if not variant.startswith("cu13"):  # torch 2.8.0+cu128 (0.5.1-0.5.5's pin) and the NCCL wheel it pins
        pkgs.pop("nvidia-nccl-cu13", None)
        pkgs["nvidia-nccl-cu12"] = {"installed": True, "version": "2.27.3", "dist_version": "2.27.3"}
    facts["cuda_libs"] = {"libnuma.so.1": "/usr/lib/x86_64-linux-gnu/libnuma.so.1"}
    facts["jit"].update(libnccl_so_found=True, libnccl_so="/usr/lib/x86_64-linux-gnu/libnccl.so", cxx_found=True,
                        cxx="/usr/bin/c++", cxx_cuda_runtime_h_found=True, cxx_nccl_h_found=True,
                        libcudart_so_found=True)  # fmt: skip
    path = tmp_path / f"facts-{release}.json"
    path.write_text(json.dumps(doc))
    return path


def _gate(tmp_path: Path, release: str, *flags: str) -> dict[str, Any]:
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), *flags]
    return cli_json(["gate", "--facts", str(_box(tmp_path, release)), "--dry-run", "--format", "json", "--", *line])[1]


def _rule(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """(the check's status, the rule's result) for each symm-mem-tp1-no-pynccl reason the decision names."""
    return [
        (str(r.get("status")), str(x.get("result")))
        for r in doc.get("reasons") or []
        for x in r.get("reasons") or []
        if x.get("rule") == RULE
    ]


@pytest.mark.parametrize("release", ["0.5.1", "0.5.2", "0.5.3", "0.5.4"])
@pytest.mark.parametrize("flags", [("--tp", "1"), (), ("--tp", "1", "--dp", "2")])
def test_tp1_on_0_5_1_to_0_5_4_refuses(tmp_path: Path, release: str, flags: tuple[str, ...]) -> None:
    doc = _gate(tmp_path, release, "--enable-symm-mem", *flags)
    assert doc["decision"] == "refuse" and ("blocked", "fail") in _rule(doc), doc.get("reasons")
    reason = next(x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == RULE)
    assert "no attribute 'group_name'" in reason["message"] and reason["effect"] == "crash"
    assert any("parallel_state.py" in str(s.get("title")) for s in reason.get("source") or []), reason


@pytest.mark.parametrize("release", ["0.5.3", "0.5.4"])
def test_tp2_is_not_judged_by_it(tmp_path: Path, release: str) -> None:
    doc = _gate(tmp_path, release, "--enable-symm-mem", "--tp", "2")
    assert doc["decision"] == "allow" and _rule(doc) == [], doc.get("reasons")


@pytest.mark.parametrize("release", ["0.5.5", "0.5.10", "0.5.23"])
def test_from_0_5_5_a_tp_group_of_one_is_not_judged_by_it(tmp_path: Path, release: str) -> None:
    doc = _gate(tmp_path, release, "--enable-symm-mem", "--tp", "1")
    assert _rule(doc) == [], doc.get("reasons")


def test_without_the_flag_nothing_is_judged(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.3", "--tp", "1")
    assert doc["decision"] == "allow" and _rule(doc) == [], doc.get("reasons")


# The thirty-sixth sample's rows a2 and a4: at tp > 1 the same releases assert that the NCCL torch loaded is 2.27.3 or
# newer (pynccl_allocator.py:87-89); the gate did not read which NCCL that is.
NCCL_RULES = ("symm-mem-nccl-wheel-cu12", "symm-mem-nccl-wheel-cu13", "symm-mem-nccl-system", "symm-mem-nccl-unread")


def _nccl_gate(tmp_path: Path, release: str, wheel: str | None, env: dict[str, str], ngc: bool = False) -> Any:
    path = _box(tmp_path, release)
    doc = json.loads(path.read_text())
    pkgs = doc["facts"]["packages"]
    for name in ("nvidia-nccl-cu12", "nvidia-nccl-cu13"):
        pkgs.pop(name, None)
    if wheel is not None:
        pkgs["nvidia-nccl-cu12"] = {"installed": True, "version": wheel, "dist_version": wheel}
    if ngc:
        pkgs["torch"].update(version="2.8.0a0+5228986c39.nv25.06", ngc=True)
    doc["facts"]["system"]["env"] = env
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-symm-mem", "--tp", "2"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


def _nccl(doc: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {
        str(x["rule"]): (str(r.get("status")), str(x.get("result")))
        for r in doc.get("reasons") or []
        for x in r.get("reasons") or []
        if x.get("rule") in NCCL_RULES
    }


@pytest.mark.parametrize(
    ("wheel", "env", "expect"),
    [
        ("2.26.2", {}, {"symm-mem-nccl-wheel-cu12": ("blocked", "fail")}),
        (None, {"NCCL_VERSION": "2.25.1"}, {"symm-mem-nccl-system": ("blocked", "fail")}),
        (None, {}, {"symm-mem-nccl-unread": ("unknown", "unknown")}),
    ],
)
@pytest.mark.parametrize("release", ["0.5.1", "0.5.4"])
def test_an_nccl_older_than_2_27_3_or_not_read_is_refused(
    tmp_path: Path, release: str, wheel: str | None, env: dict[str, str], expect: dict[str, Any]
) -> None:
    doc = _nccl_gate(tmp_path, release, wheel, env)
    assert doc["decision"] == "refuse" and _nccl(doc) == expect, doc.get("reasons")
    reason = next(x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") in expect)
    assert "2.27.3" in reason["message"] and reason["effect"] == "crash"
    assert any("pynccl_allocator.py:87-89" in str(s.get("title")) for s in reason.get("source") or []), reason


@pytest.mark.parametrize(("wheel", "env"), [("2.27.3", {}), (None, {"NCCL_VERSION": "2.28.3"})])
def test_an_nccl_of_2_27_3_or_newer_allows(tmp_path: Path, wheel: str | None, env: dict[str, str]) -> None:
    doc = _nccl_gate(tmp_path, "0.5.3", wheel, env)
    if wheel is None:
        # (a pip torch with no NCCL wheel at all is unknown since igap47, torch-nccl-wheel-none: which libnccl.so.2 the
        # loader takes is not read; the symm-mem rules themselves read NCCL_VERSION's 2.28.3 and pass)
        rules = {str(x.get("rule")) for r in doc.get("reasons") or [] for x in r.get("reasons") or []
                 if x.get("result") in ("fail", "unknown")}  # fmt: skip
        assert doc["decision"] == "refuse" and rules == {"torch-nccl-wheel-none"}, rules
        assert _nccl(doc) == {}, doc.get("reasons")
        return
    assert doc["decision"] == "allow" and _nccl(doc) == {}, doc.get("reasons")


def test_an_nvidia_container_torch_is_judged_by_its_nccl_version(tmp_path: Path) -> None:
    doc = _nccl_gate(tmp_path, "0.5.3", "2.27.3", {"NCCL_VERSION": "2.26.5"}, ngc=True)
    assert _nccl(doc).get("symm-mem-nccl-system") == ("blocked", "fail"), doc.get("reasons")


@pytest.mark.parametrize("release", ["0.5.5", "0.5.10", "0.5.23"])
def test_later_releases_load_an_allocator_that_calls_ncclcommwindowregister(tmp_path: Path, release: str) -> None:
    """0.5.5 on: no assertion, but the allocator they build calls ncclCommWindowRegister (NCCL 2.27 on) and is loaded
    with RTLD_NOW against the NCCL torch loaded."""
    doc = _nccl_gate(tmp_path, release, "2.26.2", {})
    assert _nccl(doc) == {"symm-mem-nccl-wheel-cu12": ("blocked", "fail")}, doc.get("reasons")
    reason = next(x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == "symm-mem-nccl-wheel-cu12")
    assert "undefined symbol: ncclCommWindowRegister" in reason["message"]


def test_tp1_from_0_5_5_is_not_judged_by_them(tmp_path: Path) -> None:
    path = _box(tmp_path, "0.5.10")
    doc = json.loads(path.read_text())
    for name in ("nvidia-nccl-cu12", "nvidia-nccl-cu13"):
        doc["facts"]["packages"].pop(name, None)
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-symm-mem", "--tp", "1"]
    assert _nccl(cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]) == {}
