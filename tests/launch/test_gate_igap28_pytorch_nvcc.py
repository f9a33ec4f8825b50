"""igap28 (issue 16, class 2: which compiler a JIT build really runs): PYTORCH_NVCC.

FlashInfer before 0.4.0rc4 writes `nvcc = os.environ.get("PYTORCH_NVCC", "$cuda_home/bin/nvcc")` into its JIT ninja
file (flashinfer-python 0.2.11 sdist flashinfer/jit/cpp_ext.py:116, 0.3.1 :175, 0.4.0rc1 :190, 0.4.0rc3 :191),
unquoted, so the nvcc every
FlashInfer JIT build runs is PYTORCH_NVCC's where it is set, while the jit-toolchain rules read the toolkit's
bin/nvcc (its version, headers, host compiler). Before, PYTORCH_NVCC was not read at all: a value naming no program,
or an older nvcc, was allowed on the toolkit's readings. Now the probe reads it (`jit.pytorch_nvcc*`) and two rules
judge it: a missing program fails, another nvcc than the toolkit's is unknown (never ok), the toolkit's own (with or
without ccache before it) is ok."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import CUDA_128_HOME, LLAMA3, cli_json, judged_rules, model_dir, release_box, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = CUDA_128_HOME.lstrip("/")
PATH = {"PATH": "/usr/local/bin:/usr/bin"}


def _box(root: Path) -> HostView:
    """A CUDA 12.8 toolkit (bin/nvcc an ELF), /usr/local/cuda -> it, ccache in /usr/bin, and another toolkit's nvcc
    in /opt/cuda-12.4/bin."""
    touch_exe(root / HOME / "bin/nvcc")
    (root / "usr/local/cuda").symlink_to(CUDA_128_HOME)
    touch_exe(root / "usr/bin/ccache")
    touch_exe(root / "opt/cuda-12.4/bin/nvcc")
    return HostView(str(root))


def _probe(root: Path, value: str | None) -> dict[str, Any]:
    env = {**PATH, **({"PYTORCH_NVCC": value} if value is not None else {})}
    return probe_jit(toolkit_128_facts(), env, _box(root))


# ---- the probe -------------------------------------------------------------------------------------------------


def test_unset_is_left_out(tmp_path: Path) -> None:
    assert not any(k.startswith("pytorch_nvcc") for k in _probe(tmp_path, None))


@pytest.mark.parametrize(
    "value", [f"{CUDA_128_HOME}/bin/nvcc", "/usr/local/cuda/bin/nvcc", f"ccache {CUDA_128_HOME}/bin/nvcc"]
)
def test_the_toolkits_own_nvcc_is_the_same(tmp_path: Path, value: str) -> None:
    jit = _probe(tmp_path, value)
    assert jit["pytorch_nvcc"] == value and jit["pytorch_nvcc_found"] is True, jit
    assert jit["pytorch_nvcc_same"] is True and "pytorch_nvcc_reason" not in jit, jit


def test_another_nvcc_is_found_and_not_the_same(tmp_path: Path) -> None:
    jit = _probe(tmp_path, "/opt/cuda-12.4/bin/nvcc")
    assert jit["pytorch_nvcc_found"] is True and jit["pytorch_nvcc_same"] is None, jit
    assert "/opt/cuda-12.4/bin/nvcc" in jit["pytorch_nvcc_reason"] and CUDA_128_HOME in jit["pytorch_nvcc_reason"], jit


@pytest.mark.parametrize("value", ["", "   ", "/opt/cuda-13.0/bin/nvcc", "sccache /usr/local/cuda/bin/nvcc", "nvcc"])
def test_no_program_is_false(tmp_path: Path, value: str) -> None:
    # (no sccache in the box; "nvcc" alone is not on the server's PATH, which holds no toolkit bin)
    jit = _probe(tmp_path, value)
    assert jit["pytorch_nvcc_found"] is False and jit["pytorch_nvcc_reason"], jit
    assert "pytorch_nvcc_same" not in jit, jit


NOT_READ = ["ccache distcc /usr/local/cuda/bin/nvcc", "bin/nvcc", "$CUDA_HOME/bin/nvcc", "/usr/local/cuda/bin/nvcc -v"]


@pytest.mark.parametrize("value", NOT_READ)
def test_what_is_not_read_is_null(tmp_path: Path, value: str) -> None:
    jit = _probe(tmp_path, value)
    assert jit["pytorch_nvcc_found"] is None and jit["pytorch_nvcc_reason"], jit


# ---- the gate --------------------------------------------------------------------------------------------------


def _gate(tmp_path: Path, jit: dict[str, Any], flashinfer: str) -> dict[str, Any]:
    """gate of a Llama 3 launch on SGLang 0.5.4 (FlashInfer `flashinfer`, no flashinfer-jit-cache: FlashInfer
    JIT-builds its sampler and attention), the probe's pytorch_nvcc keys in the case's jit section; --allow-unknown
    (the case's torch is not 0.5.4's), so that an unknown rule shows among the warnings."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = release_box(tmp_path, "0.5.4", "9.0")
    doc = json.loads(path.read_text())
    packages = doc["facts"]["packages"]
    packages["flashinfer-python"].update(version=flashinfer, dist_version=flashinfer)
    packages["sgl-kernel"] = {"installed": True, "version": "0.3.16.post3", "location": "/x"}
    packages["sglang-kernel"] = {"installed": False}
    packages["torch"].update(version="2.8.0+cu128", dist_version="2.8.0")
    doc["facts"]["jit"].update({k: v for k, v in jit.items() if k.startswith("pytorch_nvcc")})
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--allow-unknown", "--format", "json", "--", *line])[1]


def _results(doc: dict[str, Any]) -> dict[str, str]:
    return judged_rules(doc, lambda rule: rule.startswith("flashinfer-jit-pytorch-nvcc"))


def test_the_gate_judges_the_nvcc_flashinfer_runs(tmp_path: Path) -> None:
    # a PYTORCH_NVCC naming no program: refused (a fail, with the observed value); FlashInfer 0.3.1 (:175), a final
    # release (igap28 judged 0.4.1, which reads FLASHINFER_NVCC instead: igap31)
    doc = _gate(tmp_path / "a", _probe(tmp_path / "box-a", "/opt/cuda-13.0/bin/nvcc"), "0.3.1")
    assert doc["decision"] == "refuse" and _results(doc) == {"flashinfer-jit-pytorch-nvcc": "fail"}, doc["reasons"]
    failed = [x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == "flashinfer-jit-pytorch-nvcc"]
    assert failed[0]["observed"] is False and failed[0]["required"] is True and failed[0]["source"], failed
    # another nvcc than the toolkit's: unknown, never ok
    doc = _gate(tmp_path / "b", _probe(tmp_path / "box-b", "/opt/cuda-12.4/bin/nvcc"), "0.3.1")
    assert _results(doc) == {"flashinfer-jit-pytorch-nvcc-toolkit": "unknown"}, doc.get("warnings")
    # the toolkit's own, behind ccache: nothing to say
    doc = _gate(tmp_path / "c", _probe(tmp_path / "box-c", f"ccache {CUDA_128_HOME}/bin/nvcc"), "0.3.1")
    assert _results(doc) == {}, doc.get("warnings")  # (0.3.1 under SGLang 0.5.4's pin is refused for other reasons)


@pytest.mark.parametrize("flashinfer", ["0.4.0rc4", "0.4.0", "0.4.1", "0.5.3"])
def test_flashinfer_0_4_0rc4_on_reads_flashinfer_nvcc_not_pytorch_nvcc(tmp_path: Path, flashinfer: str) -> None:
    # igap31, read in the sdists: 0.4.0rc2 :190 and 0.4.0rc3 :191 read PYTORCH_NVCC; 0.4.0rc4 :192, 0.4.0 and 0.4.1
    # :193 read FLASHINFER_NVCC (igap28 had taken 0.4.0rc2-0.4.1 for PYTORCH_NVCC readers, inferred: an over-refusal)
    doc = _gate(tmp_path, _probe(tmp_path / "box", "/opt/cuda-13.0/bin/nvcc"), flashinfer)
    assert _results(doc) == {}, doc.get("reasons")


def test_a_pre_release_of_0_4_0_before_rc4_is_not_passed(tmp_path: Path) -> None:
    # 0.4.0rc3 reads PYTORCH_NVCC (:191, read in its sdist). The bound `<0.4.0rc4` names 0.4.0's pre-releases itself,
    # so the engine judges them by it (ipre; before, unknown): the rule holds for 0.4.0rc3, never ok
    doc = _gate(tmp_path, _probe(tmp_path / "box", "/opt/cuda-13.0/bin/nvcc"), "0.4.0rc3")
    assert _results(doc) == {"flashinfer-jit-pytorch-nvcc": "fail"}, doc.get("warnings")
