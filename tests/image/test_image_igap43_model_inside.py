"""igap43 (issue 16 item 2): `gate --image IMAGE -- python -m sglang.launch_server --model-path M` read M (and the
Hugging Face cache, "~" this process's home) on this host, not in the image: a host directory decided the image's
judgement (its architecture, MLA, quantization: the features the launch needs), and a model the image holds was not
found. They are read inside the image now, as igap42 made `gate --root` read them inside the root: a relative path from
the image's WorkingDir (where its containers start), "~" its User's home (runc's setupUser: the image's /etc/passwd,
root's /root), HF_HOME from its Env; a model it lacks is a note (a volume the container mounts), never this host's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import clean_env, run_stackcheck
from gate_cli import LLAMA3
from imagebuild import docker_save, layer_tar

SITE = "opt/serve/lib/python3.12/site-packages"
HOST = ["--assume-gpu", "9.0x8", "--assume-driver", "580.95.05"]
PYTHON = "/opt/serve/bin/python"
DEEPSEEK = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "kv_lora_rank": 512,
            "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "num_attention_heads": 128}  # fmt: skip
SNAP = "0123456789abcdef0123456789abcdef01234567"


def _image(tmp_path: Path) -> Path:
    """Python 3.12 and SGLang 0.5.9 in /opt/serve, WorkingDir /srv holding models/llama, root's HF cache holding
    org/ds (a DeepSeek V3 config), /etc/passwd naming /root."""
    hub = "root/.cache/huggingface/hub/models--org--ds"
    files = [
        ("file", "etc/debian_version", b"12.5\n"),
        ("file", "etc/passwd", b"root:x:0:0:root:/root:/bin/bash\n"),
        ("file", "usr/bin/python3.12", b"\x7fELF", 0o755),
        ("symlink", "usr/bin/python3", "python3.12"),
        ("file", "usr/lib/python3.12/os.py", b""),
        ("file", "opt/serve/pyvenv.cfg", b"home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n"),
        ("symlink", "opt/serve/bin/python", "/usr/bin/python3.12"),
        ("file", f"{SITE}/sglang-0.5.9.dist-info/METADATA", b"Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.9\n"),
        ("file", "srv/models/llama/config.json", json.dumps(LLAMA3).encode()),
        ("file", f"{hub}/refs/main", SNAP.encode()),
        ("file", f"{hub}/snapshots/{SNAP}/config.json", json.dumps(DEEPSEEK).encode()),
    ]
    container = {"Entrypoint": [PYTHON], "WorkingDir": "/srv"}
    return docker_save(tmp_path / "img.tar", [layer_tar(files)], env=["PATH=/usr/bin:/bin"], container=container)


def _model(tmp_path: Path, image: Path, spec: str, host_home: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    env = {**clean_env("VIRTUAL_ENV", "CONDA_PREFIX", "HF_HOME", "HF_HUB_CACHE", "XDG_CACHE_HOME"),
           "HOME": str(host_home)}  # fmt: skip
    line = [PYTHON, "-m", "sglang.launch_server", "--model-path", spec, "--tp", "8"]
    proc = run_stackcheck("gate", "--format", "json", *HOST, "--image", str(image), "--", *line, env=env,
                          cwd=tmp_path, timeout=180)  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    models = doc["preflight"]["models"]
    checks = [c for c in doc["preflight"]["checks"] if c.get("check") == "model"]
    assert models and checks, doc["preflight"]
    return models[0], {**checks[0], "note": doc.get("note")}


def test_the_models_of_the_image_are_read_inside_it(tmp_path: Path) -> None:
    image = _image(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    # a path relative to WorkingDir /srv (before: read from this process's directory, not found)
    model, check = _model(tmp_path, image, "models/llama", home)
    assert model["path"] == "/srv/models/llama" and model["architectures"] == ["LlamaForCausalLM"], model
    assert "read inside the image" in str(check["note"])
    # a repository id in root's cache in the image (before: this host's ~/.cache/huggingface)
    model, _ = _model(tmp_path, image, "org/ds", home)
    assert model["architectures"] == ["DeepseekV3ForCausalLM"] and model["mla"] is True, model
    assert str(model["path"]).startswith("/root/.cache/huggingface/hub/models--org--ds/snapshots/"), model


def test_a_host_model_never_decides_the_images_judgement(tmp_path: Path) -> None:
    """The same relative path and repository id on this host, holding other configs: not read (before: they were)."""
    image = _image(tmp_path)
    home = tmp_path / "home"
    (tmp_path / "models/other").mkdir(parents=True)
    (tmp_path / "models/other/config.json").write_text(json.dumps(DEEPSEEK))
    hub = home / ".cache/huggingface/hub/models--org--host"
    (hub / "refs").mkdir(parents=True)
    (hub / "refs/main").write_text(SNAP)
    (hub / "snapshots" / SNAP).mkdir(parents=True)
    (hub / "snapshots" / SNAP / "config.json").write_text(json.dumps(DEEPSEEK))
    for spec in ("models/other", "org/host"):
        model, check = _model(tmp_path, image, spec, home)
        assert model["path"] is None and model["architectures"] == [], (spec, model)
        assert check["status"] == "warn" and "not in the image" in check["message"], check
