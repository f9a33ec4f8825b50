"""The system probe, and `redact_env` / `scrub_path` with planted secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.system import SystemProbe
from stackcheck.redact import looks_secret, redact_env, scrub_path

HOME = "/home/ann"


def test_allow_list_only() -> None:
    env = {
        "PATH": "/usr/bin",
        "HOME": HOME,
        "CUDA_VISIBLE_DEVICES": "0,1",
        "NCCL_DEBUG": "INFO",
        "NCCL_IB_HCA": "mlx5_0,mlx5_1",
        "SGLANG_ENABLE_JIT_DEEPGEMM": "1",
        "FLASHINFER_CUDA_ARCH_LIST": "12.0a",
        "TORCH_CUDA_ARCH_LIST": "9.0;10.0;12.0",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "LD_LIBRARY_PATH": f"{HOME}/venv/lib:/usr/local/cuda/lib64",
        "MY_VAR": "x",
    }
    out = redact_env(env, home=HOME)
    assert "PATH" not in out and "HOME" not in out and "MY_VAR" not in out
    assert out["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert out["NCCL_IB_HCA"] == "mlx5_0,mlx5_1"
    assert out["TORCH_CUDA_ARCH_LIST"] == "9.0;10.0;12.0"
    assert out["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert out["LD_LIBRARY_PATH"] == "~/venv/lib:/usr/local/cuda/lib64"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SGLANG_HF_TOKEN", "anything"),
        ("NCCL_SECRET", "x"),
        ("SGLANG_API_KEY", "abc"),
        ("SGLANG_DB_PASSWORD", "pw"),
        ("SGLANG_AUTH_HEADER", "Bearer x"),
        ("NVSHMEM_CREDENTIALS", "c"),
        ("SGLANG_MODEL_SOURCE", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
        ("SGLANG_GH", "ghp_1234567890abcdefghijABCDEFGHIJ123456"),
        ("SGLANG_OPENAI", "sk-proj-abc123DEF456ghi789"),
        ("NCCL_AWS", "AKIAIOSFODNN7EXAMPLE"),
        ("SGLANG_BLOB", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("FLASHINFER_X", "Zq8vN3kP0rT5yW2mB7cX9dF4gH6jL1sA"),
    ],
)
def test_secrets_dropped(name: str, value: str) -> None:
    assert name not in redact_env({name: value}, home=HOME)


def test_url_credentials_redacted() -> None:
    out = redact_env({"SGLANG_REDIS_URL": "redis://admin:hunter2@cache.internal:6379/0"}, home=HOME)
    assert out == {"SGLANG_REDIS_URL": "redis://***@cache.internal:6379/0"}
    assert "hunter2" not in str(out)


def test_harmless_values_kept() -> None:
    uuid = "GPU-8f3a2b1c-1234-5678-9abc-def012345678,GPU-00000000-1111-2222-3333-444444444444"
    assert not looks_secret(uuid)
    assert not looks_secret("/usr/local/cuda-13.0/lib64:/opt/nvidia/hpc_sdk/Linux_x86_64/25.1/lib")
    assert not looks_secret("expandable_segments:True,garbage_collection_threshold:0.8")
    assert redact_env({"CUDA_VISIBLE_DEVICES": uuid}, home=HOME) == {"CUDA_VISIBLE_DEVICES": uuid}


def test_scrub_path() -> None:
    assert scrub_path("/home/ann/venv/lib", home=HOME) == "~/venv/lib"
    assert scrub_path("/home/ann", home=HOME) == "~"
    assert scrub_path("/home/anna/x", home=HOME) == "/home/anna/x"
    assert scrub_path("/usr/lib", home=HOME) == "/usr/lib"
    assert scrub_path("/x", home="/") == "/x"


def test_system_probe_on_fake_root(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").write_text('NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n')
    (tmp_path / ".dockerenv").write_text("")
    ctx = ProbeContext(env={"CUDA_VISIBLE_DEVICES": "0", "HF_TOKEN": "hf_x"}, root=tmp_path)
    result = SystemProbe().run(ctx)
    system = result.facts["system"]
    assert result.status == "ok"
    assert system["os"] == "Ubuntu 24.04.1 LTS"
    assert system["container"] == "docker"
    assert system["env"] == {"CUDA_VISIBLE_DEVICES": "0"}
    assert system["python"] and system["kernel"]  # the kernel is the host's; no python probe ran: this process
    assert system["machine"] is None  # a root's machine is its interpreter's ELF machine: none is here


def test_system_probe_container_hints(tmp_path: Path) -> None:
    (tmp_path / "proc/1").mkdir(parents=True)
    (tmp_path / "proc/1/cgroup").write_text("0::/kubepods/burstable/pod1234/abcd\n")
    result = SystemProbe().run(ProbeContext(env={}, root=tmp_path))
    assert result.facts["system"]["container"] == "kubernetes"
    assert result.status == "partial"  # no /etc/os-release under this root
    assert "os-release" in str(result.reason)
    assert (
        SystemProbe()
        .run(ProbeContext(env={"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, root=tmp_path / "x"))
        .facts["system"]["container"]
        == "kubernetes"
    )


def test_system_of_a_root_is_its_own(tmp_path: Path) -> None:
    """OS, glibc and machine come from the root (its libc banner, its interpreter's ELF header); the Python
    from the python probe's facts; the kernel is the host's."""
    libc = tmp_path / "lib/x86_64-linux-gnu/libc.so.6"
    libc.parent.mkdir(parents=True)
    libc.write_bytes(b"\x7fELF junk GNU C Library (Ubuntu GLIBC 2.39-0ubuntu8) stable release version 2.39.\n")
    py = tmp_path / "usr/bin/python3.12"
    py.parent.mkdir(parents=True)
    py.write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 9 + (2).to_bytes(2, "little") + (183).to_bytes(2, "little"))
    facts = {"python": {"executable": "/usr/bin/python3.12", "version": "3.12.3", "implementation": "cpython"}}
    system = SystemProbe().run(ProbeContext(env={}, root=tmp_path, facts=facts)).facts["system"]
    assert (system["glibc"], system["machine"], system["python"]) == ("2.39", "aarch64", "3.12.3")
    assert system["python_implementation"] == "CPython" and system["kernel"]
