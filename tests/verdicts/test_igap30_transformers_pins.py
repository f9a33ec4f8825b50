"""igap30: the installed transformers (and torchao) against the SGLang release (issue 16, class "other": a missing or
mismatched pinned package).

SGLang does not test its transformers pin at start (0.5.9 configs/model_config.py:997-1029 only refuses a GLM-4.6V
model under transformers 4.x; 0.5.10 hf_transformers_utils.py:746 compares with 5.3.0 only in SGLang's CI), so a pin
that is not met is check sglang-pins' warning (components.json `requires`, read from each wheel's METADATA). What
crashes is a transformers without a name SGLang's start imports at module level (check sglang-start-imports: 0.5.2+
GptOssConfig, 0.5.10+ Lfm2VlConfig, 0.5.13-0.5.23 configuration_utils.PreTrainedConfig, 0.5.18-0.5.23
transformers.image_processing_backends: igap32), or none at all. On the
parent every pair below passed: no rule read transformers against SGLang. Boxes are written by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
from gate_cli import LLAMA3, gate_json, model_dir
from registry_wheels import fetch_wheel, read_texts, run_all

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.facts.versions import version_in
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

MANIFESTS = load_manifests([])
B200 = Path(__file__).resolve().parent.parent / "cases" / "b200-deepgemm-nvcc128" / "facts.json"  # SGLang 0.5.20


def _judge(check_id: str, packages: dict[str, Any]) -> dict[str, Any]:
    check = next(c for c in MANIFESTS.checks if c["id"] == check_id)
    facts = {"packages": packages, "packages_complete": False}
    return dict(evaluate_check(check, Context(facts=cast("Facts", facts), manifests=MANIFESTS)))


def _box(sglang: str, transformers: str | None, torchao: str | None = None) -> dict[str, Any]:
    pkgs: dict[str, Any] = {"sglang": {"installed": True, "version": sglang}}
    tf: dict[str, Any] = {"installed": True, "version": transformers} if transformers else {"installed": False}
    pkgs["transformers"] = tf
    if torchao is not None:
        pkgs["torchao"] = {"installed": True, "version": torchao}
    return pkgs


def _reason(verdict: dict[str, Any], rule: str) -> dict[str, Any] | None:
    return next((r for r in verdict["reasons"] if r.get("rule") == rule), None)


@pytest.mark.parametrize(
    ("sglang", "transformers", "rule"),
    [
        ("0.5.2", "4.54.1", "transformers-gptoss-config"),
        ("0.5.9", "4.53.0", "transformers-gptoss-config"),
        ("0.5.10", "4.56.2", "transformers-lfm2-vl-config"),
        ("0.5.14", "4.56.1", "transformers-lfm2-vl-config"),
        ("0.5.23", "4.57.1", "transformers-pretrained-config-5"),
        ("0.5.18", "4.57.6", "transformers-pretrained-config-5"),
        ("0.5.13", "4.57.1", "transformers-pretrained-config-5"),
        # igap32: the releases igap30 left unread, each read (configs/__init__.py -> cohere2_moe.py:4)
        ("0.5.14", "4.57.1", "transformers-pretrained-config-5"),
        ("0.5.16", "4.57.6", "transformers-pretrained-config-5"),
        ("0.5.17", "4.57.1", "transformers-pretrained-config-5"),
        ("0.5.19", "4.57.6", "transformers-pretrained-config-5"),
        ("0.5.20", "4.57.1", "transformers-pretrained-config-5"),
        ("0.5.21", "4.57.6", "transformers-pretrained-config-5"),
        ("0.5.13.post1", "4.57.1", "transformers-pretrained-config-5"),  # post releases read too (same import)
        ("0.5.15.post1", "4.57.6", "transformers-pretrained-config-5"),
        ("0.5.20+cu129", "4.57.1", "transformers-pretrained-config-5"),  # a local build of a release read
        # igap32: 0.5.18+ import transformers.image_processing_backends (muse_glimmer_processing.py:23), from 5.4.0
        ("0.5.18", "5.3.0", "transformers-image-processing-backends"),
        ("0.5.23", "5.0.0", "transformers-image-processing-backends"),
        ("0.5.20", "5.2.0", "transformers-image-processing-backends"),
        ("0.5.21", "5.3.0", "transformers-image-processing-backends"),
    ],
)
def test_a_transformers_without_a_name_the_start_imports_is_a_crash(sglang: str, transformers: str, rule: str) -> None:
    verdict = _judge("sglang-start-imports", _box(sglang, transformers))
    failing = _reason(verdict, rule)
    assert failing is not None and failing["result"] == "fail", verdict["reasons"]
    assert failing["effect"] == "crash" and verdict["status"] == "failed"
    assert failing.get("observed") == transformers and failing.get("required"), failing
    assert failing["source"] and ("cannot import name" in failing["message"] or "No module named" in failing["message"])


@pytest.mark.parametrize(
    ("sglang", "transformers"),
    [
        ("0.5.1", "4.51.1"),  # 0.5.1 imports no GptOssConfig
        ("0.5.2", "4.55.0"),
        # a transformers 5.x under 0.5.4 / 0.5.9: nothing their start imports is missing, but their model files read
        # config.rope_theta, which 5.x configs no longer carry (ifc49): the one rule that fails
        ("0.5.9", "5.19.0"),
        ("0.5.4", "5.0.0"),
        ("0.5.10", "4.57.0"),
        ("0.5.11", "4.57.1"),
        ("0.5.12", "4.57.1"),  # read: no cohere2_moe.py yet
        ("0.5.17", "5.0.0"),  # read: no muse_glimmer module before 0.5.18, PreTrainedConfig is there
        ("0.5.18", "5.4.0"),  # image_processing_backends.py from 5.4.0
        ("0.5.23", "5.5.4"),
        ("0.5.21", "5.12.1"),
        ("0.5.12.post1", "4.57.1"),  # read: no cohere2_moe.py
        ("0.5.24", "4.57.1"),  # not read: unknown (transformers-floor-not-read, irev63), no fail
    ],
)
def test_pairs_whose_start_finds_every_name_pass(sglang: str, transformers: str) -> None:
    verdict = _judge("sglang-start-imports", _box(sglang, transformers))
    fails = [r["rule"] for r in verdict["reasons"] if r.get("result") == "fail"]
    rope = sglang in ("0.5.4", "0.5.9") and transformers.startswith("5.")
    assert fails == (["transformers-5-rope-theta"] if rope else []), fails


def test_transformers_not_installed_is_a_crash() -> None:
    failing = _reason(_judge("sglang-start-imports", _box("0.5.9", None)), "transformers-installed")
    assert failing is not None and failing["result"] == "fail" and failing["effect"] == "crash"
    assert "No module named 'transformers'" in failing["message"]


def test_a_version_not_read_is_unknown_not_a_pass() -> None:
    pkgs = _box("0.5.10", "4.57.1")
    pkgs["transformers"] = {"installed": True, "version": None}
    verdict = _judge("sglang-start-imports", pkgs)
    assert _reason(verdict, "transformers-lfm2-vl-config") is not None
    assert _reason(verdict, "transformers-lfm2-vl-config")["result"] == "unknown"  # type: ignore[index]


@pytest.mark.parametrize(
    ("sglang", "transformers", "torchao", "dep", "pin"),
    [
        ("0.5.9", "5.3.0", None, "transformers", "==4.57.1"),
        ("0.5.23", "5.12.1", None, "transformers", "==5.19.0"),
        ("0.5.4", "4.57.1", "0.12.0", "torchao", "==0.9.0"),
        ("0.5.14", "5.8.1", "0.15.0", "torchao", "==0.17.0"),
    ],
)
def test_a_pin_not_met_is_a_warning(sglang: str, transformers: str, torchao: str | None, dep: str, pin: str) -> None:
    verdict = _judge("sglang-pins", _box(sglang, transformers, torchao))
    failing = _reason(verdict, f"sglang-pins:{dep}")
    assert failing is not None and failing["result"] == "fail", verdict["reasons"]
    assert failing["effect"] == "degraded" and failing["required"] == pin
    assert failing["observed"] == (transformers if dep == "transformers" else torchao)
    assert verdict["status"] == "warning"


def test_the_pins_read_from_the_wheels() -> None:
    pins = {
        str(r["version"]): (r["requires"].get("transformers"), r["requires"].get("torchao"))
        for r in MANIFESTS.releases("sglang")
    }
    assert pins["0.5.1"] == ("==4.55.2", "==0.9.0") and pins["0.5.2"] == ("==4.56.1", "==0.9.0")
    assert pins["0.5.3"] == ("==4.57.0", "==0.9.0") and pins["0.5.9"] == ("==4.57.1", "==0.9.0")
    assert pins["0.5.10"] == ("==5.3.0", "==0.9.0") and pins["0.5.11"] == ("==5.6.0", "==0.17.0")
    assert pins["0.5.17"] == ("==5.12.1", "==0.17.0") and pins["0.5.18"] == ("==5.12.1", None)
    assert pins["0.5.23"] == ("==5.19.0", None)


def _gate_box(tmp_path: Path, transformers: str) -> dict[str, Any]:
    """The gate on the B200 case box (SGLang 0.5.20) with `transformers` installed."""
    doc = json.loads(B200.read_text())
    doc["facts"]["packages"]["transformers"] = {"installed": True, "version": transformers}
    facts = tmp_path / f"facts-{transformers}.json"
    facts.write_text(json.dumps(doc))
    return gate_json(facts, "--model-path", str(model_dir(tmp_path, "llama3", LLAMA3)), "--tp", "8", dry_run=True)


def _gate_rules(doc: dict[str, Any]) -> set[str]:
    """The rules of check sglang-start-imports among the gate's reasons."""
    found = [r for r in doc["reasons"] if r.get("feature") == "sglang-start-imports"]
    return {str(x.get("rule")) for r in found for x in r.get("reasons", [])}


def test_the_gate_refuses_sglang_0520_under_a_transformers_without_a_name_its_start_imports(tmp_path: Path) -> None:
    """igap32: SGLang 0.5.20 under transformers 4.57.1 (no PreTrainedConfig) and 5.3.0 (no image_processing_backends)
    was let through by these rules (only the pin warned); the gate now refuses with the rule, and lets 5.12.1 (the
    release's pin) past both. (The case box is refused for its NCCL packages whatever transformers: only the two
    rules are asserted.)"""
    old = _gate_box(tmp_path, "4.57.1")
    assert old["decision"] == "refuse" and "transformers-pretrained-config-5" in _gate_rules(old)
    mid = _gate_box(tmp_path, "5.3.0")
    assert mid["decision"] == "refuse" and _gate_rules(mid) >= {"transformers-image-processing-backends"}
    assert "transformers-pretrained-config-5" not in _gate_rules(mid)
    good = _gate_rules(_gate_box(tmp_path, "5.12.1"))
    assert not good & {"transformers-pretrained-config-5", "transformers-image-processing-backends"}, good


def _rule(rule_id: str) -> dict[str, Any]:
    check = next(c for c in MANIFESTS.checks if c["id"] == "sglang-start-imports")
    return dict(next(r for r in check["rules"] if r["id"] == rule_id))


#: the SGLang releases each rule judges: every release PyPI lists in its range (read 2026-12-05)
JUDGED = {
    "transformers-pretrained-config-5": [
        "0.5.13", "0.5.13.post1", "0.5.14", "0.5.15", "0.5.15.post1", "0.5.16", "0.5.17", "0.5.18", "0.5.19",
        "0.5.20", "0.5.21", "0.5.22", "0.5.23",
    ],
    "transformers-image-processing-backends": ["0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23"],
}  # fmt: skip


def _sglang_spec(rule_id: str) -> str:
    return str(next(c for c in _rule(rule_id)["when"]["all"] if c["fact"] == "pkg.sglang.version")["value"])


def _judged_releases(rule_id: str) -> list[str]:
    judged = JUDGED[rule_id]
    assert all(version_in(v, _sglang_spec(rule_id)) for v in judged), _sglang_spec(rule_id)
    return judged


# (rule, the SGLang module that imports the name, its import line, the configs module that runs it at start and the
# line in configs/__init__.py, the last release before the rule's list, transformers without the name, with it)
FLOORS = [
    (
        "transformers-pretrained-config-5",
        "sglang/srt/configs/cohere2_moe.py",
        r"^from transformers\.configuration_utils import PreTrainedConfig$",
        r"^from sglang\.srt\.configs\.cohere2_moe import ",
        "0.5.12",
        ("4.57.6", "transformers/configuration_utils.py", r"^(class PreTrainedConfig\b|PreTrainedConfig\s*=)"),
        ("5.0.0", "transformers/configuration_utils.py", r"^class PreTrainedConfig\b"),
    ),
    (
        "transformers-image-processing-backends",
        "sglang/srt/configs/muse_glimmer_processing.py",
        r"^from transformers\.image_processing_backends import TorchvisionBackend$",
        r"^from sglang\.srt\.configs\.muse_glimmer import ",
        "0.5.17",
        ("5.3.0", "transformers/image_processing_backends.py", r"^class TorchvisionBackend\b"),
        ("5.4.0", "transformers/image_processing_backends.py", r"^class TorchvisionBackend\b"),
    ),
]


def _sglang_releases(rule_id: str) -> list[str]:
    judged = _judged_releases(rule_id)
    return judged if run_all() else [judged[0], judged[len(judged) // 2], judged[-1]]


@pytest.mark.registry
@pytest.mark.parametrize("floor", FLOORS, ids=[f[0] for f in FLOORS])
def test_the_wheels_import_the_name_at_start_as_the_rule_says(floor: tuple[Any, ...]) -> None:
    """igap32: each judged SGLang release imports the name at module level from a module configs/__init__.py runs at
    module level; the release before the list does not; the transformers below the rule's floor lacks the name and
    the floor has it. STACKCHECK_REGISTRY_ALL=1 reads every judged release (else the first, middle and last)."""
    rule_id, module, import_re, init_re, before, (tf_old, tf_file, name_re), (tf_new, _, new_re) = floor
    assert not version_in(before, _sglang_spec(rule_id)) and not version_in(f"{before}.post1", _sglang_spec(rule_id))
    for version in [before, *_sglang_releases(rule_id)]:
        texts = read_texts(fetch_wheel("sglang", version), lambda n: n in (module, "sglang/srt/configs/__init__.py"))
        imports = bool(re.search(import_re, texts.get(module, ""), re.M))
        runs = bool(re.search(init_re, texts.get("sglang/srt/configs/__init__.py", ""), re.M))
        assert (imports and runs) is (version != before), (version, imports, runs)
    assert _rule(rule_id)["require"]["value"] == f">={tf_new}"
    old = read_texts(fetch_wheel("transformers", tf_old), lambda n: n == tf_file).get(tf_file, "")
    assert not re.search(name_re, old, re.M), tf_old
    new = read_texts(fetch_wheel("transformers", tf_new), lambda n: n == tf_file).get(tf_file, "")
    assert re.search(new_re, new, re.M), tf_new
