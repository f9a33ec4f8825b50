"""Every SGLang launch imports torchao through transformers 4.57 (irev58; check extension-torch-abi-torchao, rule
torchao-abi-abort, stackcheck/verdicts/torchao_gate.py transformers_imports_torchao).

SGLang's model registry imports every module of sglang.srt.models on each launch (sglang 0.5.9
models/registry.py:128-129, 0.5.14 :130-131, 0.5.23 :153-159), and some of them import transformers' PreTrainedModel
at module level (0.5.9 models/gemma3_mm.py:25), so transformers.modeling_utils is imported, which imports its
quantizers (4.57.1 modeling_utils.py:73-74; quantizers/auto.py:62 imports quantizer_torchao.py), and
transformers 4.57.0-4.57.6 run `import torchao` there at module level where torchao >= 0.4.0 is installed
(quantizer_torchao.py:38-39; import_utils.py:122 TORCHAO_MIN_VERSION). So with SGLang 0.5.9 (which pins
transformers 4.57.1) a torchao that aborts as it loads its libraries under torch 2.9 (0.12.0: the rule's own
reading) ends every launch, --torchao-config or not; igap25 judged that abort information only (degraded) without
the flag, and the gate allowed the launch: a false pass. transformers 4.50.3 (no torchao import; 4.51-4.56 import
torchao.quantization in modeling_utils.py itself: tests/launch/test_gate_ifc41_torchao_via_transformers.py) and 5.x
(5.3.0 :39-41 import torchao only for torchao >= 0.15.0; 5.6.0+ TORCHAO_MIN_VERSION 0.15.0) do not import a torchao
0.12.0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, gate_json, model_dir
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
CHECK = "extension-torch-abi-torchao"
SITE = "/opt/venv/lib/python3.12/site-packages"
MANIFESTS = load_manifests([])


def _facts(tmp_path: Path, transformers: str | None, symbols: bool = True, sglang: str = "0.5.9") -> Path:
    """h200-newest with SGLang `sglang`, torch 2.9.1, torchao 0.12.0 whose _C.abi3.so resolves in full (the abort
    pair), and transformers `transformers` (None: not listed, as the packages probe before irev58 wrote it)."""
    doc = json.loads(H200.read_text())
    packages = doc["facts"]["packages"]
    packages["sglang"].update(version=sglang, dist_version=sglang)
    packages["torch"].update(version="2.9.1+cu128", dist_version="2.9.1")
    packages["torchao"] = {"installed": True, "version": "0.12.0", "location": SITE}
    if transformers is not None:
        packages["transformers"] = {"installed": True, "version": transformers, "location": SITE}
    if symbols:
        ext = [{"extension": "torchao", "path": "torchao/_C.abi3.so", "torch_symbols": 60, "torch_missing_count": 0,
                "torch_missing": []}]  # fmt: skip
        doc["facts"]["kernel_symbols"] = {
            "package": "sglang-kernel", "version": "0.4.10", "files": [], "extension_dirs": [SITE],
            "extensions": ext, "libcuda": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "torch_version": "2.9.1+cu128",
        }  # fmt: skip
    path = tmp_path / f"facts-{transformers}-{symbols}-{sglang}.json"
    path.write_text(json.dumps(doc))
    return path


def _abort(doc: dict[str, Any]) -> list[dict[str, Any]]:
    listed = [f for key in ("reasons", "warnings") for f in doc.get(key) or [] if isinstance(f, dict)]
    mine = [r for f in listed if f.get("feature") == CHECK for r in f["reasons"]]
    return [r for r in mine if r.get("rule") == "torchao-abi-abort"]


def _refused_for_it(doc: dict[str, Any]) -> bool:
    return any(f.get("feature") == CHECK for f in doc["reasons"])


@pytest.mark.parametrize("symbols", [True, False], ids=["files-read", "versions-only"])
def test_transformers_457_imports_the_aborting_torchao_on_every_launch(tmp_path: Path, symbols: bool) -> None:
    """SGLang 0.5.9 with its transformers 4.57.1, no --torchao-config: refused as a crash naming transformers."""
    doc = gate_json(_facts(tmp_path, "4.57.1", symbols), "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
                    dry_run=True)  # fmt: skip
    (abort,) = _abort(doc)
    assert abort["effect"] == "crash" and _refused_for_it(doc), abort
    assert "transformers 4.57.1" in abort["message"] and "quantizer_torchao.py:38-39" in abort["message"], abort


@pytest.mark.parametrize("transformers", ["4.50.3", "5.3.0"])
def test_a_transformers_that_does_not_import_it_stays_information(tmp_path: Path, transformers: str) -> None:
    doc = gate_json(_facts(tmp_path, transformers), "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
                    dry_run=True)  # fmt: skip
    (abort,) = _abort(doc)
    assert abort["effect"] == "degraded" and not _refused_for_it(doc), abort


def test_transformers_not_read_is_not_taken_for_absent(tmp_path: Path) -> None:
    """No transformers in the packages list (facts of an older stackcheck, or a hand-written document): SGLang
    requires it, and its release may import torchao: the abort is not waved through as information."""
    doc = gate_json(_facts(tmp_path, None), "--model-path", str(model_dir(tmp_path, "m", LLAMA3)), dry_run=True)
    (abort,) = _abort(doc)
    assert abort["effect"] == "crash" and _refused_for_it(doc), abort
    assert "transformers' version was not read" in abort["message"], abort


def _ctx(transformers: Any, torchao: Any, sglang: Any = "0.5.9") -> Context:
    packages: dict[str, Any] = {
        "sglang": {"installed": True, "version": sglang},
        "torchao": {"installed": True, "version": torchao},
        "transformers": {"installed": True, "version": transformers},
    }
    return Context(facts={"packages": packages}, manifests=MANIFESTS)


@settings(max_examples=300, deadline=None)
@given(
    transformers=st.one_of(
        st.text(max_size=12), st.from_regex(r"[45]\.\d{1,2}\.\d(\.dev\d|rc\d|\+\w+)?", fullmatch=True)
    ),
    torchao=st.one_of(st.text(max_size=12), st.from_regex(r"0\.1\d\.\d(\+cu12\d|\.dev\d+|rc\d)?", fullmatch=True)),
)
def test_any_version_strings_give_an_answer_and_never_a_false_no(transformers: str, torchao: str) -> None:
    """Generated version strings: never an exception; 'does not import' only for a transformers read to be before
    4.51 (or 5.x with a torchao before 0.15.0), never for one that cannot be read."""
    from stackcheck.facts.versions import public, version_in
    from stackcheck.verdicts.torchao_gate import transformers_imports_torchao

    imports, why = transformers_imports_torchao(_ctx(transformers, torchao))
    assert isinstance(why, str) and "\x1b" not in why
    if imports is False:
        assert public(transformers) is not None
        assert version_in(transformers, ">=4.51.0.dev0") is False or version_in(transformers, ">=5") is True


@pytest.mark.parametrize("transformers", ["4.51.0.dev0", "4.51.0rc1"])
def test_a_build_before_451s_release_is_not_taken_for_one_that_does_not_import_it(transformers: str) -> None:
    """A git or release-candidate build between 4.50.3 (no torchao import) and 4.51.0 (modeling_utils.py imports
    torchao.quantization at module level) sorts before 4.51: which side its modeling_utils is on is not read, so it
    is unknown, not 'does not import' (before: False, and a torchao that fails to import was let through)."""
    from stackcheck.verdicts.torchao_gate import transformers_imports_torchao

    imports, why = transformers_imports_torchao(_ctx(transformers, "0.12.0"))
    assert imports is None and "before 4.51.0's release" in why, why


def test_a_build_before_451s_release_leaves_the_abort_a_crash(tmp_path: Path) -> None:
    doc = gate_json(_facts(tmp_path, "4.51.0.dev0"), "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
                    dry_run=True)  # fmt: skip
    (abort,) = _abort(doc)
    assert abort["effect"] == "crash" and _refused_for_it(doc), abort


def test_the_packages_probe_reads_transformers(tmp_path: Path) -> None:
    """The probe lists transformers (it did not: the rule then read it as not read); an install with 4.57.1 gives
    the crash from the probe's own facts, one with 5.3.0 the information."""
    from stackcheck.probes.interface import ProbeContext
    from stackcheck.probes.packages import PackagesProbe

    def probe(version: str) -> dict[str, Any]:
        sp = tmp_path / version / "site-packages"
        info = sp / f"transformers-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: transformers\nVersion: {version}\n\n")
        packages: dict[str, Any] = PackagesProbe().run(ProbeContext(env={}, path_dirs=[str(sp)])).facts["packages"]
        return packages

    for version, imports in (("4.57.1", True), ("5.3.0", False)):
        entry = probe(version)["transformers"]
        assert entry["installed"] is True and entry["version"] == version, entry
        ctx = _ctx(version, "0.12.0")
        ctx.facts["packages"]["transformers"] = entry
        from stackcheck.verdicts.torchao_gate import transformers_imports_torchao

        assert transformers_imports_torchao(ctx)[0] is imports, version


GENAI = "fbgemm_gpu/experimental/gen_ai/fbgemm_gpu_experimental_gen_ai.so"


@pytest.mark.parametrize(
    ("transformers", "effect"), [("4.57.1", "crash"), ("5.3.0", "crash"), ("4.56.2", "crash"), ("4.50.3", "degraded")]
)
def test_torchao_015s_broken_fbgemm_fails_every_launch_through_transformers(
    tmp_path: Path, transformers: str, effect: str
) -> None:
    """torchao 0.15.0 imports fbgemm-gpu-genai as it is imported (int4_preshuffled_tensor.py:25), and transformers
    4.57 (any torchao) and 5.x (torchao >= 0.15.0) import torchao on every launch: SGLang 0.5.9's scheduler.py:213
    imports hf_transformers_utils, whose `from transformers import AutoProcessor` (:36) reaches processing_utils.py
    (4.57.1 :74-75, 5.3.0 :79) and modeling_utils, outside any try. An fbgemm-gpu-genai missing torch symbols then
    fails every launch, --torchao-config or not (it was information: degraded)."""
    facts = _facts(tmp_path, transformers, symbols=False)
    doc = json.loads(facts.read_text())
    doc["facts"]["packages"]["torchao"]["version"] = "0.15.0"
    doc["facts"]["packages"]["torch"].update(version="2.10.0+cu128", dist_version="2.10.0")
    doc["facts"]["packages"]["fbgemm-gpu-genai"] = {"installed": True, "version": "1.4.0", "location": SITE}
    lib = {"extension": "fbgemm_gpu_genai", "path": GENAI, "torch_symbols": 130, "torch_missing_count": 2,
           "torch_missing": ["_ZN3c1013MessageLoggerC1EPKcii"] * 2}  # fmt: skip
    doc["facts"]["kernel_symbols"] = {
        "package": "sglang-kernel", "version": "0.4.10", "files": [], "extension_dirs": [SITE], "extensions": [lib],
        "torch_version": "2.10.0+cu128",
    }  # fmt: skip
    facts.write_text(json.dumps(doc))
    got = gate_json(facts, "--model-path", str(model_dir(tmp_path, "m", LLAMA3)), dry_run=True)
    listed = [f for key in ("reasons", "warnings") for f in got.get(key) or [] if f.get("feature") == CHECK]
    (reason,) = [r for f in listed for r in f["reasons"] if r.get("rule") == "fbgemm-genai-symbols"]
    assert (reason["result"], reason["effect"]) == ("fail", effect), reason
    assert _refused_for_it(got) is (effect == "crash"), got["reasons"]
