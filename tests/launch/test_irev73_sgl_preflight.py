"""irev73: the preflight's checks read the server's environment as SGLang does after importing sglang.srt.environ:
from 0.5.3rc2 on each SGL_X is copied over SGLANG_X (facts/sgl_prefix.py, imend5). imend5 read the copy for
launch.json's variables (gate.derive, the audit's launch facts) but the preflight was handed the command's
environment as written: `SGL_DISABLED_MODEL_ARCHS=ours` made 0.5.23's model registry skip sglang/srt/models/ours.py
(0.5.23 models/registry.py:123 reads envs.SGLANG_DISABLED_MODEL_ARCHS, after environ.py:2339's copy), and the
model-architecture check still said ok."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import facts_of, load_doc

from stackcheck.knowledge.loader import load
from stackcheck.launch import preflight
from stackcheck.readers.fsview import HostView

OUR_TREE = {"ours.py": "class OurForCausalLM:\n    pass\n\n\nEntryClass = OurForCausalLM\n"}


def _architecture(tmp_path: Path, env: dict[str, str], version: str) -> Any:
    models = tmp_path / "site" / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    for name, text in OUR_TREE.items():
        (models / name).write_text(text)
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"architectures": ["OurForCausalLM"], "model_type": "x"}))
    facts = facts_of(load_doc("h200-1x.json"))
    site = str(tmp_path / "site")
    facts["packages"] = {"sglang": {"installed": True, "version": version, "location": site}}
    inp = preflight.Inputs(
        options={"--model-path": "m"}, env=env, facts=facts, data=load([], env={}).preflight, view=HostView(),
        cwd=str(tmp_path), home=str(tmp_path / "home"), sglang_version=version,
        readings=preflight.Readings(search_dirs=[site]),
    )  # fmt: skip
    (r,) = [r for r in preflight.run(inp).results if r.check == "model-architecture"]
    return r


@pytest.mark.parametrize(
    ("env", "version", "status"),
    [
        ({"SGL_DISABLED_MODEL_ARCHS": "ours"}, "0.5.23", "unknown"),  # fails before the fix: ok
        ({"SGL_DISABLED_MODEL_ARCHS": "ours"}, "0.5.3", "unknown"),  # fails before the fix: ok
        ({"SGLANG_DISABLED_MODEL_ARCHS": "ours", "SGL_DISABLED_MODEL_ARCHS": ""}, "0.5.23", "ok"),  # (copied over)
        ({"SGL_DISABLED_MODEL_ARCHS": "ours"}, "0.5.2", "ok"),  # (0.5.2 has no environ.py: no copy)
        ({"SGLANG_DISABLED_MODEL_ARCHS": "ours"}, "0.5.23", "unknown"),
    ],
)
def test_the_sgl_spelling_reaches_the_preflight(
    tmp_path: Path, monkeypatch: Any, env: dict[str, str], version: str, status: str
) -> None:
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    r = _architecture(tmp_path, env, version)
    assert r.status == status, r.message
