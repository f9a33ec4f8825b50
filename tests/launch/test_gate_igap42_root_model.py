"""igap42 (issue 16): `gate --root DIR` read the model path and the Hugging Face cache on this host: an absolute
--model-path named this host's directory (a root's /models/m judged missing, or a host directory of that name judged
in its place), and a repository id was looked up in this host's HF_HOME. Now both are read inside the root, with the
root's environment (its default PATH, the command's own `env` prefix) and ~ as its uid 0's home; this host's HF_HOME
never reaches the judgement. GPU memory, the port and /dev/shm stay this host's readings, and the decision says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from root_boxes import serving_root

REPO = Path(__file__).parent.parent.parent
HOST = REPO / "tests" / "cases" / "writeup-after" / "facts.json"
_COMMIT = "0123456789abcdef0123456789abcdef01234567"
#: a small dense model's config.json, written here in the shape of a Llama one
_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
           "num_attention_heads": 16, "num_key_value_heads": 8, "num_hidden_layers": 2}  # fmt: skip


def _gate(tmp_path: Path, host_env: dict[str, str], root: Path, *line: str) -> dict[str, Any]:
    drop = ("VIRTUAL_ENV", "CONDA_PREFIX", "STACKCHECK_PYTHON", "COLUMNS", "HF_HOME", "HF_HUB_CACHE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(host_env, PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(tmp_path / "cache"))
    argv = [sys.executable, "-m", "stackcheck", "gate", "--host-facts", str(HOST), "--root", str(root), "--format",
            "json", "--", *line]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/", timeout=200)
    assert proc.returncode in (0, 1), proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def _model(doc: dict[str, Any]) -> dict[str, Any]:
    found: list[dict[str, Any]] = [m for m in doc["preflight"]["models"] if m["role"] == "model"]
    assert len(found) == 1, doc["preflight"]
    return found[0]


def _cached(hub: Path, repo: str) -> None:
    base = hub / ("models--" + repo.replace("/", "--"))
    (base / "refs").mkdir(parents=True)
    (base / "refs/main").write_text(_COMMIT)
    (base / "snapshots" / _COMMIT).mkdir(parents=True)
    (base / "snapshots" / _COMMIT / "config.json").write_text(json.dumps(_CONFIG))


def _launch(model: str) -> list[str]:
    return ["python3", "-m", "sglang.launch_server", "--model-path", model]


def test_an_absolute_model_path_is_the_roots(tmp_path: Path) -> None:
    root = serving_root(tmp_path / "root")
    (root / "models/m").mkdir(parents=True)
    (root / "models/m/config.json").write_text(json.dumps(_CONFIG))
    model = _model(_gate(tmp_path, {}, root, *_launch("/models/m")))
    assert model["path"] == "/models/m" and model["found_by"] == "local directory", model
    assert model["architectures"] == ["LlamaForCausalLM"]
    # a host directory of the root's path is not read for it: the root's own is missing there
    host_dir = tmp_path / "host-model"
    host_dir.mkdir()
    (host_dir / "config.json").write_text(json.dumps(_CONFIG))
    model = _model(_gate(tmp_path, {}, root, *_launch(str(host_dir))))
    assert model["path"] is None and model["architectures"] == [], model


def test_a_repository_id_is_looked_up_in_the_roots_cache_never_the_hosts(tmp_path: Path) -> None:
    root = serving_root(tmp_path / "root")
    host_hf = tmp_path / "host-hf"
    _cached(host_hf / "hub", "org/only-on-host")
    (root / "etc").mkdir(exist_ok=True)
    # (uid 0's home in the root's /etc/passwd: another than this host's, whose home the output shows as ~)
    (root / "etc/passwd").write_text("root:x:0:0:root:/home/srv:/bin/sh\n")
    _cached(root / "home/srv/.cache/huggingface/hub", "org/in-root")
    host = {"HF_HOME": str(host_hf)}
    model = _model(_gate(tmp_path, host, root, *_launch("org/only-on-host")))
    assert model["path"] is None, model  # (the host's HF_HOME found it here before)
    model = _model(_gate(tmp_path, host, root, *_launch("org/in-root")))
    assert model["path"] == f"/home/srv/.cache/huggingface/hub/models--org--in-root/snapshots/{_COMMIT}", model
    assert "~/.cache/huggingface/hub" in model["found_by"], model
    # the command's own HF_HOME names the root's directory
    _cached(root / "data/hf/hub", "org/in-data")
    doc = _gate(tmp_path, host, root, "env", "HF_HOME=/data/hf", *_launch("org/in-data"))
    assert _model(doc)["path"] == f"/data/hf/hub/models--org--in-data/snapshots/{_COMMIT}", _model(doc)
    assert "Hugging Face cache were read inside the root" in doc["dry_run"]
    assert "GPU memory, the port and /dev/shm are this host's readings" in doc["dry_run"]
