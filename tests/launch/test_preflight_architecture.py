"""model-architecture (stackcheck/launch/preflight/architecture.py): config.json's architectures against the classes
an SGLang tree written here registers (our own files in the shape of sglang/srt/models), through the preflight
runner as the gate calls it (the target environment's site directory from the facts' packages entry, the registry
read through the readings' view), and the verdict's hops: registered (ok), not registered with the Transformers
fallback (unknown: the installed transformers decides), without it (fail), --model-impl, --json-model-override-args,
SGLANG_DISABLED_MODEL_ARCHS, SGLANG_EXTERNAL_MODEL_PACKAGE, a module not read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import facts_of, load_doc

from stackcheck.knowledge.loader import load
from stackcheck.launch import preflight
from stackcheck.launch.gate_preflight import check_allow, merge
from stackcheck.launch.preflight.architecture import check_architecture
from stackcheck.readers.entryclasses import Registry
from stackcheck.readers.fsview import HostView

OURS = {"OurForCausalLM": "ours", "OurVisionModel": "ours_vl"}
WITH_FALLBACK = Registry({**OURS, "TransformersForCausalLM": "transformers"}, [], 3)
WITHOUT = Registry(dict(OURS), [], 2)


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def verdict(data: Any, archs: list[str], reg: Registry | None, options: Any = None, env: Any = None) -> Any:
    return check_architecture("model", "m", archs, reg, "no site", options or {}, env or {}, "0.5.9", data)


def test_registered_is_ok_and_names_the_module(data: Any) -> None:
    r = verdict(data, ["NotOurs", "OurForCausalLM"], WITHOUT)
    assert r.status == "ok" and "ours.py" in r.message
    assert r.observed["registered"] == "OurForCausalLM" and r.source  # the first registered one, as SGLang takes it


def test_not_registered_with_the_fallback_is_unknown_without_it_fail(data: Any) -> None:
    r = verdict(data, ["NewArchForCausalLM"], WITH_FALLBACK)
    assert r.status == "unknown" and "Transformers backend" in r.message and r.observed["fallback"]
    r = verdict(data, ["NewArchForCausalLM"], WITHOUT)
    assert r.status == "fail" and "not supported for now" in r.message and r.required


@pytest.mark.parametrize(
    ("options", "env", "status", "words"),
    [
        ({"--model-impl": "transformers"}, {}, "unknown", "--model-impl transformers"),
        ({"--model-impl": "mindspore"}, {}, "unknown", "MindSpore"),
        ({"--model-impl": "sglang"}, {}, "ok", "implements"),
        ({}, {"SGLANG_DISABLED_MODEL_ARCHS": "other,ours"}, "unknown", "SGLANG_DISABLED_MODEL_ARCHS"),
        ({"--json-model-override-args": '{"architectures": ["Gone"]}'}, {}, "fail", "registers none of Gone"),
        ({"--json-model-override-args": "{not json"}, {}, "unknown", "not JSON"),
        ({"--json-model-override-args": '{"rope_theta": 1}'}, {}, "ok", "implements"),
    ],
)
def test_flags_and_environment(data: Any, options: Any, env: Any, status: str, words: str) -> None:
    r = verdict(data, ["OurForCausalLM"], WITHOUT, options, env)
    assert r.status == status and words in r.message, r.message


def test_an_override_can_make_an_unknown_architecture_served(data: Any) -> None:
    r = verdict(data, ["Gone"], WITHOUT, {"--json-model-override-args": '{"architectures": ["OurVisionModel"]}'})
    assert r.status == "ok" and r.observed["from"] == "--json-model-override-args"


@pytest.mark.parametrize(
    ("reg", "env", "words"),
    [
        (Registry(dict(OURS), ["odd.py: EntryClass holds an expression, not a class name"], 3), {}, "odd.py"),
        (WITHOUT, {"SGLANG_EXTERNAL_MODEL_PACKAGE": "my_models"}, "SGLANG_EXTERNAL_MODEL_PACKAGE"),
        (None, {}, "was not read: no site"),
        (Registry({}, [], 0, "/x: cannot list: No such file or directory"), {}, "cannot list"),
    ],
)
def test_what_may_register_it_keeps_a_missing_architecture_unknown(data: Any, reg: Any, env: Any, words: str) -> None:
    r = verdict(data, ["NewArchForCausalLM"], reg, env=env)
    assert r.status == "unknown" and words in r.message, r.message


def test_no_architectures_is_unknown(data: Any) -> None:
    assert verdict(data, [], WITH_FALLBACK).status == "unknown"


def site(tmp_path: Path, files: dict[str, str]) -> Path:
    models = tmp_path / "site" / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    for name, text in files.items():
        (models / name).write_text(text)
    return tmp_path / "site"


def run(tmp_path: Path, data: Any, arch: str, search: bool = True, facts_site: Path | None = None) -> Any:
    d = tmp_path / "m"
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps({"architectures": [arch], "model_type": "x"}))
    facts = facts_of(load_doc("h200-1x.json"))
    if facts_site is not None:
        facts["packages"] = {"sglang": {"installed": True, "version": "0.5.9", "location": str(facts_site)}}
    readings = preflight.Readings(search_dirs=[str(facts_site)] if search and facts_site else None)
    inp = preflight.Inputs(
        options={"--model-path": "m"}, env={}, facts=facts, data=data, view=HostView(), cwd=str(tmp_path),
        home=str(tmp_path / "home"), sglang_version="0.5.9", readings=readings,
    )  # fmt: skip
    return preflight.run(inp)


OUR_TREE = {
    "ours.py": "class OurForCausalLM:\n    pass\n\n\nEntryClass = OurForCausalLM\n",
    "transformers.py": "class TransformersForCausalLM:\n    pass\n\n\nEntryClass = [TransformersForCausalLM]\n",
}


def test_runner_reads_the_target_environments_sglang(tmp_path: Path, data: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    tree = site(tmp_path, OUR_TREE)
    res = run(tmp_path, data, "OurForCausalLM", facts_site=tree)
    (r,) = [r for r in res.results if r.check == "model-architecture"]
    assert r.status == "ok"
    res = run(tmp_path, data, "NewArchForCausalLM", facts_site=tree)
    (r,) = [r for r in res.results if r.check == "model-architecture"]
    assert r.status == "unknown"
    (tree / "sglang" / "srt" / "models" / "transformers.py").unlink()  # a release without the fallback
    res = run(tmp_path, data, "NewArchForCausalLM", facts_site=tree)
    (r,) = [r for r in res.results if r.check == "model-architecture"]
    assert r.status == "fail" and r.to_json()["observed"]["sglang"] == "0.5.9"


def test_gate_refuses_fail_and_unknown_unless_allowed(tmp_path: Path, data: Any, monkeypatch: Any) -> None:
    class Decision:
        blocking: list[Any]
        warnings: list[Any]
        allow = True

    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    tree = site(tmp_path, OUR_TREE)
    pre = run(tmp_path, data, "NewArchForCausalLM", facts_site=tree)
    for allow_unknown, refused in ((False, True), (True, False)):
        d = Decision()
        d.blocking, d.warnings = [], []
        pre.results[:] = [r for r in pre.results if r.check == "model-architecture"]
        merge(d, pre, allow_unknown)
        assert (not d.allow) is refused
    assert check_allow(["model-architecture"], []) == ["model-architecture"]


def test_facts_from_a_file_or_an_image_skip_it(tmp_path: Path, data: Any) -> None:
    tree = site(tmp_path, OUR_TREE)
    res = run(tmp_path, data, "NewArchForCausalLM", search=False, facts_site=tree)
    assert "model-architecture" in res.skipped
    assert not [r for r in res.results if r.check == "model-architecture"]


def test_sglang_not_in_the_target_is_unknown(tmp_path: Path, data: Any) -> None:
    res = run(tmp_path, data, "OurForCausalLM", facts_site=None, search=False)
    assert "model-architecture" in res.skipped
    d = tmp_path / "m"
    facts = facts_of(load_doc("h200-1x.json"))
    facts["packages"] = {"sglang": {"installed": False}}
    inp = preflight.Inputs(
        options={"--model-path": str(d)}, env={}, facts=facts, data=data, view=HostView(), cwd=str(tmp_path),
        home=str(tmp_path), sglang_version=None, readings=preflight.Readings(search_dirs=[str(tmp_path)]),
    )  # fmt: skip
    (r,) = [r for r in preflight.run(inp).results if r.check == "model-architecture"]
    assert r.status == "unknown" and "not installed" in r.message


@pytest.mark.parametrize(
    ("flags", "status"),
    [
        ([], "ok"),
        (["--model-impl", "transformers"], "unknown"),
        (["--model-impl=sglang"], "ok"),
        (["--json-model-override-args", '{"architectures": ["NewArchForCausalLM"]}'], "unknown"),
    ],
)
def test_the_flags_as_the_gate_parses_them(
    tmp_path: Path, data: Any, monkeypatch: Any, flags: list[str], status: str
) -> None:
    """--model-impl and --json-model-override-args reach the check through launch.json's options (a flag the gate
    did not parse would leave the check judging an auto launch)."""
    from stackcheck.launch import gate

    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    tree = site(tmp_path, OUR_TREE)
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"architectures": ["OurForCausalLM"], "model_type": "x"}))
    derived = gate.derive(
        ["python", "-m", "sglang.launch_server", "--model-path", "m", *flags], load([], env={}).launch, {}
    )
    assert not derived.unlisted
    facts = facts_of(load_doc("h200-1x.json"))
    facts["packages"] = {"sglang": {"installed": True, "version": "0.5.9", "location": str(tree)}}
    inp = preflight.Inputs(
        options=derived.options, env={}, facts=facts, data=data, view=HostView(), cwd=str(tmp_path),
        home=str(tmp_path), sglang_version="0.5.9", readings=preflight.Readings(search_dirs=[str(tree)]),
    )  # fmt: skip
    (r,) = [r for r in preflight.run(inp).results if r.check == "model-architecture"]
    assert r.status == status, r.message


EMBEDDING_GEMMA = {
    "architectures": ["Gemma3TextModel"],
    "model_type": "gemma3_text",
    "use_bidirectional_attention": True,
}
GEMMA_REG = Registry({"EmbeddingGemmaModel": "gemma3_embedding", "TransformersForCausalLM": "transformers"}, [], 2)


@pytest.mark.parametrize(
    ("version", "config", "status"),
    [
        ("0.5.17", EMBEDDING_GEMMA, "ok"),  # SGLang looks up EmbeddingGemmaModel instead
        ("0.5.23", EMBEDDING_GEMMA, "ok"),
        ("0.5.16", EMBEDDING_GEMMA, "unknown"),  # no rename yet: the Transformers fallback decides
        (None, EMBEDDING_GEMMA, "unknown"),  # the release not known: not renamed, never ok
        ("0.5.23", {**EMBEDDING_GEMMA, "use_bidirectional_attention": False}, "unknown"),
        ("0.5.23", {**EMBEDDING_GEMMA, "model_type": "gemma3"}, "unknown"),
    ],
)
def test_embedding_gemma_is_renamed_by_the_releases_that_do(
    data: Any, version: str | None, config: dict[str, Any], status: str
) -> None:
    r = check_architecture("model", "m", ["Gemma3TextModel"], GEMMA_REG, None, {}, {}, version, data, config)
    assert r.status == status, r.message
    if status == "ok":
        assert r.observed["architectures"] == ["EmbeddingGemmaModel"] and "renamed by SGLang" in r.observed["from"]


@pytest.mark.parametrize("value", ['["OurForCausalLM"]', '"OurForCausalLM"', "1", "true"])
def test_an_override_that_is_not_an_object_is_unknown(data: Any, value: str) -> None:
    # SGLang's get_config walks the override's items(): a list or a string ends the launch; before, the gate
    # ignored it and judged config.json's architectures (ok)
    r = verdict(data, ["OurForCausalLM"], WITHOUT, {"--json-model-override-args": value})
    assert r.status == "unknown" and "not an object" in r.message, r.message
    for empty in ("null", "[]", '""', "{}"):  # no override applied
        assert verdict(data, ["OurForCausalLM"], WITHOUT, {"--json-model-override-args": empty}).status == "ok"


def test_architectures_that_are_not_all_names_are_unknown(data: Any) -> None:
    # config.json `architectures: [1, null, "OurForCausalLM"]`: the reader keeps the name; before, ok
    config = {"architectures": [1, None, "OurForCausalLM"], "model_type": "x"}
    r = check_architecture("model", "m", ["OurForCausalLM"], WITHOUT, None, {}, {}, "0.5.9", data, config)
    assert r.status == "unknown" and "not names" in r.message
    plain = {"architectures": ["OurForCausalLM"], "model_type": "x"}
    r = check_architecture("model", "m", ["OurForCausalLM"], WITHOUT, None, {}, {}, "0.5.9", data, plain)
    assert r.status == "ok"


def test_many_or_huge_names_make_a_short_message(data: Any) -> None:
    archs = ["A" * 1_000_000, *(f"Arch{i}" for i in range(100_000))]
    r = verdict(data, archs, WITHOUT)
    assert r.status == "fail" and len(r.message) < 2000 and "(+99996 more)" in r.message
    assert len(r.observed["architectures"]) == 100_001  # JSON keeps them all
