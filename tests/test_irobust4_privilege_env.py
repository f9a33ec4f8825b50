"""irobust4: a launch behind `sudo` / `doas` / `pkexec` runs in an environment that program rebuilds by a policy the
gate does not read. sudo's rebuild_env (sudo-project/sudo plugins/sudoers/env.c) starts from an empty environment
under env_reset (the default: only env_keep / env_check variables and /etc/environment), drops the env_delete table
even without it (initial_badenv_table: LD_*, PYTHONPATH, PYTHONHOME, ...) and replaces PATH with secure_path; doas
resets it unless doas.conf says keepenv / setenv (doas.conf(5)); pkexec sets "a minimal known and safe environment"
(pkexec(1)). The gate judged such a launch with the environment before the wrapper: a library the facts found
through LD_LIBRARY_PATH was taken as found by a server whose loader never searches that directory (a false pass).
Now the launch's environment is unknown there and the gate refuses (fail closed), unless an `env -i` after the
wrapper sets the whole environment again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.launch import gate
from stackcheck.launch.facts_loader_path import apply_launch_loader_path

LIBS = {n: f"/opt/cuda/lib64/{n}" for n in ("libibverbs.so.1", "libnuma.so.1", "libcurl.so.4", "libmlx5.so.1")}
LAUNCH = ["python3", "-m", "sglang.launch_server"]


def _gate(tmp_path: Path, prefix: list[str]) -> tuple[int, dict[str, Any]]:
    """gate --facts of a Llama 3 prefill launch at SGLang 0.5.23 with mooncake-transfer-engine 0.3.13.post1, whose
    system libraries the facts found in /opt/cuda/lib64, the facts' own LD_LIBRARY_PATH (check transfer-package)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    facts = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(facts.read_text())
    doc["facts"]["packages"]["mooncake-transfer-engine"] = {"installed": True, "version": "0.3.13.post1"}
    doc["facts"]["packages"]["torch"]["cuda"] = "12.8"
    # (and its NCCL wheel the cu12 one a cu128 build pins: igap47's torch-nccl-wheel-other-major is unknown for a cu12
    # torch beside only nvidia-nccl-cu13 under a CUDA 13 driver)
    packages = doc["facts"]["packages"]
    packages["nvidia-nccl-cu12"] = {**packages.pop("nvidia-nccl-cu13"), "installed": True}
    packages["nvidia-nccl-cu13"] = {"installed": False}
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", **LIBS, "ld_library_path": ["/opt/cuda/lib64"]}
    facts.write_text(json.dumps(doc))
    line = [*prefix, *LAUNCH, "--model-path", str(model_dir(tmp_path, "m", LLAMA3)), "--tp", "8",
            "--disaggregation-mode", "prefill"]  # fmt: skip
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])


def _transfer(doc: dict[str, Any]) -> str:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == "transfer-package"]
    assert found, doc.get("preflight")
    return str(found[0]["status"])


def test_the_baseline_is_allowed(tmp_path: Path) -> None:
    rc, doc = _gate(tmp_path, [])
    assert _transfer(doc) == "ok" and doc["decision"] == "allow", (rc, doc["decision"])


@pytest.mark.parametrize(
    "prefix",
    [["sudo"], ["sudo", "-E", "-u", "svc"], ["/usr/bin/sudo", "--preserve-env"], ["doas", "-u", "svc"], ["pkexec"],
     ["nohup", "sudo", "-u", "svc"], ["sudo", "env", "NCCL_DEBUG=INFO"], ["bash", "-c"]],
)  # fmt: skip
def test_a_launch_behind_sudo_is_not_judged_with_the_environment_before_it(tmp_path: Path, prefix: list[str]) -> None:
    # fails before: allow (the facts' LD_LIBRARY_PATH answers taken, sudo's env_delete drops LD_*)
    if prefix == ["bash", "-c"]:
        model = model_dir(tmp_path, "m", LLAMA3)
        rc, doc = _gate_shell(tmp_path, f"sudo -u svc python3 -m sglang.launch_server --model-path {model} --tp 8")
    else:
        rc, doc = _gate(tmp_path, prefix)
    assert doc["decision"] != "allow" and rc == 1, doc["decision"]
    text = json.dumps(doc)
    assert "environment" in text and "policy" in text


def _gate_shell(tmp_path: Path, script: str) -> tuple[int, dict[str, Any]]:
    facts = release_box(tmp_path, "0.5.23", "9.0")
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", "bash", "-c", script])


def test_env_i_after_sudo_sets_the_whole_environment_again(tmp_path: Path) -> None:
    # `sudo env -i NAME=VALUE ... python`: every variable the server sees is on the line; the facts' directory is not
    # searched (no LD_LIBRARY_PATH), and the libraries were found in it: unknown, not the facts' answer
    _, doc = _gate(tmp_path, ["sudo", "env", "-i", "PATH=/usr/bin"])
    assert _transfer(doc) == "unknown"
    assert "policy" not in json.dumps([p for p in doc.get("problems") or []])
    _, doc = _gate(tmp_path / "b", ["sudo", "env", "-i", "LD_LIBRARY_PATH=/opt/cuda/lib64", "PATH=/usr/bin"])
    assert _transfer(doc) == "ok", doc["decision"]
    assert not [p for p in doc["derived"]["problems"] if "policy" in p["message"]]  # (refused for PATH: the JIT)


def test_the_readers_under_the_gate() -> None:
    mapping = {"entrypoints": [{"id": "launch-server", "python_module": "sglang.launch_server"}]}
    trace: dict[str, Any] = {}
    entry, args, _ = gate.find_launch(["sudo", "-u", "svc", *LAUNCH, "--tp", "2"], mapping, {"A": "1"}, trace)
    assert entry == "launch-server" and args == ["--tp", "2"] and trace["env_policy"] == ["sudo"]
    # the wrapper's name as an argument after the launch is no wrapper; `env -i` after it sets everything
    for line in ([*LAUNCH, "--served-model-name", "sudo"], ["sudo", "env", "-i", "A=1", *LAUNCH]):
        trace = {}
        assert gate.find_launch(line, mapping, {}, trace)[0] == "launch-server"
        assert "env_policy" not in trace, line
    trace = {}
    assert gate.find_launch(["sudo", "env", "-i", "A=1", *LAUNCH], mapping, {"B": "2"}, trace)[2] == {"A": "1"}
    facts: dict[str, Any] = {"cuda_libs": {"ld_cache": "file", **LIBS, "ld_library_path": ["/opt/cuda/lib64"]}}
    assert sorted(apply_launch_loader_path(facts, ["sudo", *LAUNCH], mapping)) == sorted(LIBS)
    assert "sudo" in facts["cuda_libs"]["unreadable"]["libnuma.so.1"]


@pytest.mark.parametrize(
    ("preload", "status"),
    [("/opt/old/libnuma.so.1", "unknown"), ("/opt/shim/cuda_shim.so", "unknown"),
     ("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "ok")],
)  # fmt: skip
def test_a_launch_that_preloads_a_library_is_not_judged_on_the_facts_answer(
    tmp_path: Path, preload: str, status: str
) -> None:
    # fails before (the first two): ok, the facts' libnuma.so.1 taken where the launch preloads another copy, which
    # glibc loads first and gives every later request for its soname (elf/rtld.c handle_preload_list)
    _, doc = _gate(tmp_path, ["env", f"LD_PRELOAD={preload}"])
    assert _transfer(doc) == status, doc["decision"]
    if status == "unknown":
        assert doc["decision"] != "allow"
    facts: dict[str, Any] = {"cuda_libs": {"ld_cache": "file", **LIBS, "ld_library_path": ["/opt/cuda/lib64"]}}
    mapping = {"entrypoints": [{"id": "launch-server", "python_module": "sglang.launch_server"}]}
    line = ["bash", "-c", f"export LD_PRELOAD='{preload} '; python3 -m sglang.launch_server"]
    got = apply_launch_loader_path(facts, line, mapping)
    assert got == ([] if status == "ok" else ["libnuma.so.1"] if "numa" in preload else list(LIBS)), got


def test_a_preloaded_libcuda_makes_the_driver_half_unknown() -> None:
    facts: dict[str, Any] = {
        "cuda_libs": {"ld_cache": "file", **LIBS},
        "kernel_symbols": {"libcuda": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                           "files": [{"path": "common_ops.so", "driver_missing_count": 0, "driver_missing": []}]},
    }  # fmt: skip
    mapping = {"entrypoints": [{"id": "launch-server", "python_module": "sglang.launch_server"}]}
    apply_launch_loader_path(facts, ["env", "LD_PRELOAD=/opt/stubs/libcuda.so.1", *LAUNCH], mapping)
    entry = facts["kernel_symbols"]["files"][0]
    assert "driver_missing_count" not in entry and "LD_PRELOAD" in entry["driver_error"], entry
