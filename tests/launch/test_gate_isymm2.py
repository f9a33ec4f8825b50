"""`--enable-symm-mem`'s other hops (issue 16): torch's load_inline, which builds SGLang's NCCL symmetric-memory
allocator at start, first checks for ninja, then needs a CUDA home (with_cuda=True) and runs the C++ compiler ($CXX,
else c++) before the -lnccl link (rule symm-mem-allocator-link, tests/launch/test_gate_isymm.py). checks.json nccl
rules symm-mem-allocator-ninja / -cuda-home / -cxx refuse where a hop provably fails, unknown where not read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, allocator_box, cli_json, model_dir

HOPS = (
    "symm-mem-allocator-ninja",
    "symm-mem-allocator-cuda-home",
    "symm-mem-allocator-cxx",
    "symm-mem-allocator-cuda-header",
    "symm-mem-allocator-nccl-header",
    "symm-mem-allocator-link",
    "symm-mem-allocator-cudart-link",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _box(tmp_path: Path, release: str = "0.5.17", **jit: Any) -> Path:
    """gate_cli.allocator_box at `release` (0.5.17 by default) without a libcudart.so path (libcudart_so_found
    alone, as this file's tests were written), then `jit`'s keys."""
    return allocator_box(tmp_path, release, **{"libcudart_so": None, **jit})


def _gate(tmp_path: Path, facts: Path, *flags: str) -> dict[str, Any]:
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), *flags]
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _hops(doc: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """{rule: (the nccl check's status, the rule's result)} for the allocator's rules the decision names."""
    return {
        str(x["rule"]): (str(r.get("status")), str(x.get("result")))
        for r in doc.get("reasons") or []
        for x in r.get("reasons") or []
        if x.get("rule") in HOPS
    }


def test_every_hop_in_place_allows_it(tmp_path: Path) -> None:
    doc = _gate(tmp_path, _box(tmp_path), "--tp", "2", "--enable-symm-mem")
    assert doc["decision"] == "allow" and _hops(doc) == {}, doc.get("reasons")


@pytest.mark.parametrize(
    ("jit", "rule", "words"),
    [
        ({"cxx_found": False, "cxx": None}, "symm-mem-allocator-cxx", "c++: not found"),
        ({"ninja_found": False, "ninja": None}, "symm-mem-allocator-ninja", "Ninja is required"),
        ({"chosen_by": "none", "toolkit": None}, "symm-mem-allocator-cuda-home", "CUDA_HOME environment variable"),
    ],
)
@pytest.mark.parametrize("release", ["0.5.2", "0.5.10", "0.5.23"])
def test_a_hop_that_provably_fails_refuses(
    tmp_path: Path, release: str, jit: dict[str, Any], rule: str, words: str
) -> None:
    doc = _gate(tmp_path, _box(tmp_path, release, **jit), "--tp", "4", "--enable-symm-mem")
    assert doc["decision"] == "refuse" and _hops(doc) == {rule: ("blocked", "fail")}, doc.get("reasons")
    reason = next(x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == rule)
    assert words in reason["message"] and reason["effect"] == "crash"
    assert any("cpp_extension.py" in str(s.get("title")) for s in reason.get("source") or []), reason


@pytest.mark.parametrize(("jit", "rule"), [({"cxx_found": None}, "symm-mem-allocator-cxx"),
                                           ({"chosen_by": None}, "symm-mem-allocator-cuda-home"),
                                           ({"ninja_found": None}, "symm-mem-allocator-ninja")])  # fmt: skip
def test_a_hop_not_read_is_unknown(tmp_path: Path, jit: dict[str, Any], rule: str) -> None:
    doc = _gate(tmp_path, _box(tmp_path, **jit), "--tp", "2", "--enable-symm-mem")
    assert doc["decision"] == "refuse" and _hops(doc) == {rule: ("unknown", "unknown")}, doc.get("reasons")


@pytest.mark.parametrize("flags", [("--tp", "1", "--enable-symm-mem"), ("--tp", "2")])
def test_no_allocator_build_no_hop(tmp_path: Path, flags: tuple[str, ...]) -> None:
    """From 0.5.5 a TP group of one builds no allocator; without the flag nothing is built."""
    facts = _box(tmp_path, "0.5.17", cxx_found=False, chosen_by="none", libnccl_so_found=False)
    assert _hops(_gate(tmp_path, facts, *flags)) == {}


def test_the_audit_does_not_judge_the_hops(tmp_path: Path) -> None:
    statuses = []
    for cxx in (True, False):
        _rc, doc = cli_json(["audit", "--facts", str(_box(tmp_path, cxx_found=cxx)), "--format", "json"])
        check = next(c for c in doc["checks"] if c.get("id") == "nccl")
        statuses.append((check.get("status"), [x.get("rule") for x in check.get("reasons") or []]))
    assert statuses[0] == statuses[1] and not set(HOPS) & set(statuses[0][1])


@pytest.mark.parametrize(
    ("release", "jit", "refused"),
    [
        ("0.5.23", {"cxx_cuda_runtime_h_found": False}, {"symm-mem-allocator-cuda-header": ("blocked", "fail")}),
        ("0.5.5", {"cxx_nccl_h_found": False}, {}),  # 0.5.5 on write NCCL's declarations out: no nccl.h
        ("0.5.4", {"cxx_nccl_h_found": False}, {"symm-mem-allocator-nccl-header": ("blocked", "fail")}),
        ("0.5.1", {"cxx_nccl_h_found": None}, {"symm-mem-allocator-nccl-header": ("unknown", "unknown")}),
        ("0.5.10", {"cxx_cuda_runtime_h_found": None}, {"symm-mem-allocator-cuda-header": ("unknown", "unknown")}),
    ],
)
def test_the_compiles_headers(tmp_path: Path, release: str, jit: dict[str, Any], refused: dict[str, Any]) -> None:
    """cuda_runtime.h for every release (0.5.1-0.5.4 through nccl.h), nccl.h for 0.5.1-0.5.4 only."""
    doc = _gate(tmp_path, _box(tmp_path, release, **jit), "--tp", "2", "--enable-symm-mem")
    # (the box's pins are 0.5.23's: an older release is refused for them too, which this test does not read)
    assert _hops(doc) == refused and (doc["decision"] == "refuse" or not refused), doc.get("reasons")


@pytest.mark.parametrize("release", ["0.5.17", "0.5.18"])
def test_no_hop_is_judged_where_the_release_ignores_the_flag_for_a_kimi_hybrid_model(
    tmp_path: Path, release: str
) -> None:
    """The merge of igap19 and isymm2: 0.5.17-0.5.18 turn --enable-symm-mem off for Kimi hybrid models under CUDA
    graphs (igap19's launch.symm_mem_ignored), so the allocator is never built and none of its hops can fail; the
    same box with a Llama model is refused by each missing hop."""
    box = _box(tmp_path, release, ninja_found=False, cxx_found=False, cxx_cuda_runtime_h_found=False,
               libnccl_so_found=False, libcudart_so_found=False, chosen_by="none")  # fmt: skip
    kimi = model_dir(
        tmp_path, "kimi", {**LLAMA3, "architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear"}
    )
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(kimi), "--tp", "2", "--enable-symm-mem"]
    doc = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]
    assert _hops(doc) == {}, doc.get("reasons")
    llama = _hops(_gate(tmp_path, box, "--tp", "2", "--enable-symm-mem"))
    hops = {"symm-mem-allocator-ninja", "symm-mem-allocator-cxx", "symm-mem-allocator-link"}
    assert hops | {"symm-mem-allocator-cudart-link"} <= set(llama), llama
