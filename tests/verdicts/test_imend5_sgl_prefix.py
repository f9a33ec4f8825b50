"""SGLang's SGL_ spelling (imend5): from 0.5.3 on, importing sglang.srt.environ copies every SGL_X over SGLANG_X
(stackcheck/facts/sgl_prefix.py names the lines read). The gate's and the audit's reading of launch.json's `env`
entries missed it: `SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2=0` left v2 on (TP 3 on NVLink judged ok, while SGLang takes the
legacy class, which refuses world size 3). 0.5.12-0.5.20 read SGLANG_USE_JIT_ALL_REDUCE only before the copy, so its
SGL_ twin changes nothing there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, cli_json

NEW = "SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2"
OLD = "SGLANG_USE_JIT_ALL_REDUCE"


def _box(tmp_path: Path, release: str, gpus: int, env: dict[str, str] | None = None) -> Path:
    """h200-newest at SGLang RELEASE with its first GPUS GPUs all on NVLink and the probed environment ENV."""
    doc = json.loads(H200_NEWEST.read_text())
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version=release, dist_version=release)
    facts["gpus"] = facts["gpus"][:gpus]
    pairs = [{"a": a, "b": b, "p2p_read": "ok", "link": "nvlink", "nvlink_count": 18, "common_ancestor": "internal"}
             for a in range(gpus) for b in range(a + 1, gpus)]  # fmt: skip
    facts["topology"] = {"interconnect": "nvlink", "same_model": True, "gpu_count": gpus, "p2p": "all",
                         "nvswitch": True, "pairs": pairs}  # fmt: skip
    system_env = facts["system"].setdefault("env", {})
    for name in list(system_env):
        if name.startswith(("SGL_", "SGLANG_")):
            del system_env[name]
    system_env.update(env or {})
    tag = "-".join(f"{k}={v}" for k, v in sorted((env or {}).items()))
    path = tmp_path / f"facts-{release}-{gpus}-{tag}.json"
    path.write_text(json.dumps(doc))
    return path


def _audit(path: Path) -> tuple[str, dict[str, str]]:
    doc = cli_json(["audit", "--facts", str(path), "--format", "json"])[1]
    f = next(f for f in doc["features"] if f["id"] == "custom-allreduce")
    return str(f["status"]), {str(r["rule"]): str(r["result"]) for r in f.get("reasons") or []}


@pytest.mark.parametrize("release", ["0.5.13", "0.5.18", "0.5.23"])
def test_the_audit_reads_the_sgl_spelling(tmp_path: Path, release: str) -> None:
    # fails before imend5: world-size pass, ok (v2 read as on)
    status, rules = _audit(_box(tmp_path, release, 3, {"SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2": "0"}))
    assert rules["world-size"] == "fail" and status != "ok", (status, rules)


def test_the_sgl_copy_overrides_the_sglang_value(tmp_path: Path) -> None:
    status, rules = _audit(_box(tmp_path, "0.5.15", 3, {"SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2": "0", NEW: "1"}))
    assert rules["world-size"] == "fail" and status != "ok", (status, rules)
    status, rules = _audit(_box(tmp_path, "0.5.15", 3, {"SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2": "1", NEW: "0"}))
    assert rules["world-size"] == "pass" and status == "ok", (status, rules)


@pytest.mark.parametrize("release", ["0.5.10", "0.5.11"])
def test_the_old_opt_in_under_sgl_on_0_5_10_and_0_5_11(tmp_path: Path, release: str) -> None:
    # fails before imend5: world-size fail (the opt-in not read)
    status, rules = _audit(_box(tmp_path, release, 3, {"SGL_USE_JIT_ALL_REDUCE": "1"}))
    assert rules["world-size"] == "pass" and status == "ok", (status, rules)


@pytest.mark.parametrize("release", ["0.5.12", "0.5.17", "0.5.20"])
def test_the_old_name_under_sgl_is_copied_too_late_on_0_5_12_to_0_5_20(tmp_path: Path, release: str) -> None:
    status, rules = _audit(_box(tmp_path, release, 3, {"SGL_USE_JIT_ALL_REDUCE": "0"}))
    assert rules["world-size"] == "pass" and status == "ok", (status, rules)


def _gate(facts: Path, monkeypatch: pytest.MonkeyPatch, prefix: list[str]) -> tuple[str, dict[str, Any]]:
    import os

    for name in list(os.environ):
        if name.startswith(("SGL_", "SGLANG_")):
            monkeypatch.delenv(name)
    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", "/m", "--tp", "3"]
    doc = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    f = next(f for f in doc["features"] if f["feature"] == "custom-allreduce")
    return str(f["status"]), doc


def test_the_gate_reads_the_sgl_spelling_of_the_launch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = _box(tmp_path, "0.5.15", 8)
    assert _gate(facts, monkeypatch, [])[0] == "ok"
    # fails before imend5: ok (the SGL_ name not read)
    status, doc = _gate(facts, monkeypatch, ["env", "SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2=0"])
    assert status != "ok" and doc["derived"]["launch"]["custom_all_reduce_v2"] is False
    facts = _box(tmp_path, "0.5.11", 8)
    assert _gate(facts, monkeypatch, [])[0] != "ok"
    assert _gate(facts, monkeypatch, ["env", "SGL_USE_JIT_ALL_REDUCE=1"])[0] == "ok"
    facts = _box(tmp_path, "0.5.2", 8)  # (no sglang/srt/environ.py: no copy)
    status, doc = _gate(facts, monkeypatch, ["env", "SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2=0"])
    assert doc["derived"]["launch"]["custom_all_reduce_v2"] is True


def test_the_reading_per_release() -> None:
    from stackcheck.facts.sgl_prefix import sglang_environ

    env = {"SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2": "0", NEW: "1"}
    assert sglang_environ(env, "0.5.3") == ({**env, NEW: "0"}, [])
    assert sglang_environ(env, "0.5.2") == (env, [])
    assert sglang_environ(env, None) == ({**env, NEW: "0"}, [NEW])  # (judged again once the release is known)
    assert sglang_environ({"SGL_USE_JIT_ALL_REDUCE": "1"}, "0.5.15")[0] == {"SGL_USE_JIT_ALL_REDUCE": "1"}
    assert sglang_environ({"SGL_USE_JIT_ALL_REDUCE": "1"}, "0.5.11")[0][OLD] == "1"
    assert sglang_environ({"SGL_USE_JIT_ALL_REDUCE": "1"}, None)[1] == [OLD]


def test_the_probed_environment_keeps_sgl_names() -> None:
    from stackcheck.redact import redact_env

    assert redact_env({"SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2": "0", "SGL_API_TOKEN": "x"}, "/root") == {
        "SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2": "0"
    }
