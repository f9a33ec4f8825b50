"""irev62: SGLang 0.5.13+ against a transformers 4.x, and 0.5.18+ against a transformers 5.0-5.3 (false passes).

transformers-pretrained-config-5 named five releases (0.5.13, 0.5.15, 0.5.18, 0.5.22, 0.5.23), so 0.5.14, 0.5.16,
0.5.17 and 0.5.19-0.5.21, whose start imports configuration_utils.PreTrainedConfig the same way (each wheel read:
configs/cohere2_moe.py:4 through configs/__init__.py), passed under transformers 4.57.1; and 0.5.18-0.5.23 import
transformers.image_processing_backends (configs/muse_glimmer_processing.py:23, through configs/__init__.py), which
transformers 5.0.0 and 5.3.0 lack and 5.4.0 has, so 0.5.23 under 5.0.0 passed. Both crash at import. Boxes are written
by hand; the gate is the real one."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from stackcheck.cli import main

if TYPE_CHECKING:
    from pathlib import Path


def _gate(tmp_path: Path, capsys: pytest.CaptureFixture[str], sglang: str, transformers: str) -> tuple[int, Any]:
    doc = {"schema_version": 1, "facts": {"packages": {
        "sglang": {"installed": True, "version": sglang},
        "transformers": {"installed": True, "version": transformers},
    }}}  # fmt: skip
    path = tmp_path / "box.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    capsys.readouterr()
    argv = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--"]
    code = main([*argv, "python", "-m", "sglang.launch_server", "--model-path", "m"])
    return code, json.loads(capsys.readouterr().out)


def _start_imports(out: Any) -> dict[str, str]:
    """rule -> result of check sglang-start-imports' reasons in the gate's answer."""
    found = [r for r in out["reasons"] if r.get("feature") == "sglang-start-imports"]
    return {str(x.get("rule")): str(x.get("result")) for r in found for x in r.get("reasons") or []}


@pytest.mark.parametrize(
    ("sglang", "transformers", "rule"),
    [
        ("0.5.14", "4.57.1", "transformers-pretrained-config-5"),
        ("0.5.16", "4.57.6", "transformers-pretrained-config-5"),
        ("0.5.17", "4.57.1", "transformers-pretrained-config-5"),
        ("0.5.20", "4.57.1", "transformers-pretrained-config-5"),
        ("0.5.21", "4.57.6", "transformers-pretrained-config-5"),
        ("0.5.23", "5.0.0", "transformers-image-processing-backends"),
        ("0.5.18", "5.3.0", "transformers-image-processing-backends"),
        ("0.5.20", "5.2.0", "transformers-image-processing-backends"),
    ],
)
def test_the_gate_refuses_a_transformers_the_start_cannot_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sglang: str, transformers: str, rule: str
) -> None:
    code, out = _gate(tmp_path, capsys, sglang, transformers)
    assert code == 1 and out["decision"] == "refuse", out
    assert _start_imports(out).get(rule) == "fail", out["reasons"]


@pytest.mark.parametrize(
    ("sglang", "transformers"),
    [("0.5.12", "4.57.1"), ("0.5.17", "5.0.0"), ("0.5.18", "5.4.0"), ("0.5.23", "5.5.4")],
)
def test_a_transformers_that_has_the_names_is_not_refused_for_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sglang: str, transformers: str
) -> None:
    _, out = _gate(tmp_path, capsys, sglang, transformers)
    rules = _start_imports(out)
    assert rules.get("transformers-pretrained-config-5") != "fail", rules
    assert rules.get("transformers-image-processing-backends") != "fail", rules


def test_a_pre_release_of_the_floor_is_not_passed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = _gate(tmp_path, capsys, "0.5.23", "5.4.0rc1")
    assert _start_imports(out).get("transformers-image-processing-backends") in ("fail", "unknown"), out["reasons"]
