"""The gate finds a Hugging Face hub id where huggingface_hub's constants put the cache (issue 21): the legacy
HUGGINGFACE_HUB_CACHE, "~" and $VAR in HF_HOME / HF_HUB_CACHE, a variable set to ""; a --revision is never a
path out of refs/; a model the gate cannot read is refused with how to make it readable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate_preflight
from stackcheck.launch.preflight import Preflight
from stackcheck.launch.preflight.model import hub_cache_dirs, read_model
from stackcheck.readers.fsview import HostView

COMMIT = "c" * 40
CONFIG = {"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_attention_heads": 4}


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def cached(cache: Path, repo: str, ref: str = "main") -> Path:
    base = cache / ("models--" + repo.replace("/", "--"))
    snap = base / "snapshots" / COMMIT
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(CONFIG))
    (base / "refs").mkdir()
    (base / "refs" / ref).write_text(COMMIT)
    return snap


def read(tmp_path: Path, spec: str, env: dict[str, str], data: Any, **options: str) -> Any:
    opts = {f"--{k}": v for k, v in options.items()}
    home = str(tmp_path / "home")
    return read_model(HostView(), spec, "model", env, opts, data, str(tmp_path / "cwd"), home)


def test_the_legacy_huggingface_hub_cache_is_read(tmp_path: Path, data: Any) -> None:
    snap = cached(tmp_path / "legacy", "acme/m")
    info = read(tmp_path, "acme/m", {"HUGGINGFACE_HUB_CACHE": str(tmp_path / "legacy")}, data)
    assert info.path == str(snap) and "HUGGINGFACE_HUB_CACHE" in (info.found_by or "")
    assert info.architectures == ["LlamaForCausalLM"]


def test_hf_hub_cache_wins_over_the_legacy_name(tmp_path: Path) -> None:
    env = {"HF_HUB_CACHE": "/new", "HUGGINGFACE_HUB_CACHE": "/old", "HF_HOME": "/h"}
    assert hub_cache_dirs(env, None, "/home/u") == [("/new", "HF_HUB_CACHE")]
    assert hub_cache_dirs({"HUGGINGFACE_HUB_CACHE": "/old", "HF_HOME": "/h"}, None, "/home/u") == [
        ("/old", "HUGGINGFACE_HUB_CACHE")
    ]


def test_a_tilde_in_hf_home_is_the_home_directory(tmp_path: Path, data: Any) -> None:
    snap = cached(tmp_path / "home" / "hfh" / "hub", "acme/m")
    info = read(tmp_path, "acme/m", {"HF_HOME": "~/hfh"}, data)
    assert info.path == str(snap)


def test_variables_in_hf_hub_cache_are_expanded_from_the_launch_environment(tmp_path: Path, data: Any) -> None:
    snap = cached(tmp_path / "data" / "hub", "acme/m")
    env = {"HF_HUB_CACHE": "${DATA}/hub", "DATA": str(tmp_path / "data")}
    assert read(tmp_path, "acme/m", env, data).path == str(snap)
    assert hub_cache_dirs({"HF_HUB_CACHE": "$NOPE/hub"}, None, "/home/u") == [("/$NOPE/hub", "HF_HUB_CACHE")]


def test_an_empty_hf_home_is_relative_to_the_working_directory_not_unset() -> None:
    # os.getenv("HF_HOME", default) gives "" for a variable set to "": huggingface_hub then uses ./hub
    assert hub_cache_dirs({"HF_HOME": ""}, None, "/home/u", "/srv") == [("/srv/hub", "HF_HOME/hub")]
    assert hub_cache_dirs({}, None, "/home/u", "/srv") == [
        ("/home/u/.cache/huggingface/hub", "~/.cache/huggingface/hub")
    ]


def test_a_revision_is_never_a_path_out_of_refs(tmp_path: Path, data: Any) -> None:
    cached(tmp_path / "hub", "acme/m")
    outside = tmp_path / "hub" / "models--acme--m" / "x"
    outside.mkdir()
    (outside / "evil").write_text(COMMIT)  # refs/../x/evil would name the snapshot
    info = read(tmp_path, "acme/m", {"HF_HUB_CACHE": str(tmp_path / "hub")}, data, revision="../x/evil")
    assert info.path is None
    assert "not a ref name" in info.results[0].message


def test_the_refusal_says_how_to_make_a_hub_model_readable(tmp_path: Path, data: Any) -> None:
    info = read(tmp_path, "acme/absent", {"HF_HUB_CACHE": str(tmp_path / "hub")}, data)
    assert info.path is None and info.attention is None
    why = gate_preflight.mla_unread(Preflight([], [info], [], {}, []))
    assert why is not None and "hf download acme/absent" in why and "--model-path" in why


def test_the_hint_for_other_unread_models(tmp_path: Path, data: Any) -> None:
    snap = cached(tmp_path / "hub", "acme/broken")
    (snap / "config.json").write_text("[1]")  # in the hub cache: unknown, not a usage error
    broken = read(tmp_path, "acme/broken", {"HF_HUB_CACHE": str(tmp_path / "hub")}, data)
    assert broken.path == str(snap) and broken.attention is None
    assert (
        gate_preflight.how_to_read(broken)
        == f"make {snap}/config.json a readable JSON object (the model's own config, under the size cap)"
    )
    url = read(tmp_path, "https://example.com/m", {}, data)
    assert gate_preflight.how_to_read(url) == "give --model-path a local model directory that holds its config.json"
    facts_file = read_model(HostView(), "acme/m", "model", {}, {}, data, "/", "/nohome", False)
    assert gate_preflight.how_to_read(facts_file).startswith("run the gate on the box that serves the model")
