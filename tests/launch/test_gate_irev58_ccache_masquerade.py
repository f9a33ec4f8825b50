"""A host compiler in GCC's name that is another program (irev58): a ccache masquerade link (/usr/lib/ccache/gcc ->
/usr/bin/ccache; ccache in a prefix of its own, as a conda or a hand install puts it) runs whichever gcc comes next,
and the jit probe read no major for it: nvcc_host_gnu_supported / cc_host_gnu_supported were left out, so the
version rules (flashinfer-jit-cc-host-version, sglang-jit-nvcc-host-version), which test that the key exists, were
skipped: the gate allowed the launch with a gcc 15 behind the link beside CUDA 12.8 (host_config.h takes gcc 14 at
most: nvidia-cuda-nvcc-cu12 12.8.93 include/crt/host_config.h:141-145), where the first JIT build stops at '#error
-- unsupported GNU version!'. igap24's flashinfer-jit-cc-args message itself suggests CC=/usr/lib/ccache/gcc. Now
the key is null with why (not read), so the rule is unknown, never a pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import CUDA_128_HOME, LLAMA3, cli_json, model_dir, release_box, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HEADER = "#if defined(__GNUC__)\n\n#if __GNUC__ > 14\n\n#error -- unsupported GNU version! gcc versions later than 14\n"
MASQ = "/opt/ccache/lib/ccache"
HOST_KEYS = ("nvcc_host", "flashinfer_host", "flashinfer_allow_unsupported", "cc_host")


def _box(root: Path) -> HostView:
    """CUDA 12.8, /usr/bin/gcc -> gcc-15 (cc1plus of 15), ccache at /opt/ccache/bin with its masquerade directory."""
    home = root / CUDA_128_HOME.lstrip("/")
    touch_exe(home / "bin/nvcc")
    (home / "include/crt").mkdir(parents=True, exist_ok=True)
    (home / "include/crt/host_config.h").write_text(HEADER)
    touch_exe(root / "usr/bin/gcc-15")
    (root / "usr/bin/gcc").symlink_to("gcc-15")
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"usr/lib/gcc/x86_64-linux-gnu/15/{name}")
    touch_exe(root / "opt/ccache/bin/ccache")
    (root / MASQ.lstrip("/")).mkdir(parents=True)
    (root / MASQ.lstrip("/") / "gcc").symlink_to("../../bin/ccache")
    return HostView(str(root))


def _gate(tmp_path: Path, jit: dict[str, Any]) -> dict[str, Any]:
    """gate of a Llama 3 launch on SGLang 0.5.5 with FlashInfer 0.5.0 and no flashinfer-jit-cache, the jit section's
    host-compiler keys from the probe (--allow-unknown: the case's other unknowns)."""
    path = release_box(tmp_path, "0.5.5", "9.0")
    doc = json.loads(path.read_text())
    packages = doc["facts"]["packages"]
    packages["flashinfer-python"].update(version="0.5.0", dist_version="0.5.0")
    packages["flashinfer-jit-cache"] = {"installed": False}
    packages["sgl-kernel"] = {"installed": True, "version": "0.3.16.post5", "location": "/x"}
    packages["sglang-kernel"] = {"installed": False}
    packages["torch"].update(version="2.8.0+cu128", dist_version="2.8.0")
    doc["facts"]["jit"].update({k: v for k, v in jit.items() if k.startswith(HOST_KEYS)})
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--allow-unknown", "--format", "json", "--", *line])[1]


def _results(doc: dict[str, Any], rule: str) -> set[str]:
    listed = [f for key in ("reasons", "warnings", "unknowns") for f in doc.get(key) or [] if isinstance(f, dict)]
    return {str(x.get("result")) for f in listed for x in f.get("reasons") or [] if x.get("rule") == rule}


@pytest.mark.parametrize("env", [{"CC": f"{MASQ}/gcc", "PATH": "/usr/bin"}, {"CC": "gcc", "PATH": f"{MASQ}:/usr/bin"}])
def test_cc_through_a_ccache_link_is_not_read_as_supported(tmp_path: Path, env: dict[str, str]) -> None:
    jit = probe_jit(toolkit_128_facts(), env, _box(tmp_path / "box"))
    assert jit["flashinfer_host"] == "cc" and jit["cc_host_found"] is True, jit
    assert "cc_host_gnu_supported" in jit and jit["cc_host_gnu_supported"] is None, jit
    assert "ccache" in jit["cc_host_gnu_supported_reason"] and jit["cc_host_gnu_max"] == 14, jit
    doc = _gate(tmp_path, jit)
    assert _results(doc, "flashinfer-jit-cc-host-version") == {"unknown"}, doc


def test_nvccs_default_gcc_through_a_ccache_link_is_not_read_as_supported(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), {"PATH": f"{MASQ}:/usr/bin"}, _box(tmp_path / "box"))
    assert jit["nvcc_host"].endswith(f"{MASQ}/gcc"), jit
    assert "nvcc_host_gnu_supported" in jit and jit["nvcc_host_gnu_supported"] is None, jit
    assert "ccache" in jit["nvcc_host_gnu_supported_reason"], jit


def test_the_gcc_itself_is_still_judged(tmp_path: Path) -> None:
    """Without the link on PATH the same box's gcc 15 is read and refused, as before."""
    jit = probe_jit(toolkit_128_facts(), {"CC": "gcc", "PATH": "/usr/bin"}, _box(tmp_path / "box"))
    assert jit["cc_host_gnu_major"] == 15 and jit["cc_host_gnu_supported"] is False, jit
    assert jit["nvcc_host_gnu_supported"] is False, jit


def test_allow_unsupported_compiler_leaves_it_unjudged(tmp_path: Path) -> None:
    env = {"CC": f"{MASQ}/gcc", "PATH": "/usr/bin", "NVCC_PREPEND_FLAGS": "-allow-unsupported-compiler"}
    jit = probe_jit(toolkit_128_facts(), env, _box(tmp_path / "box"))
    assert "cc_host_gnu_supported" not in jit, jit


def test_a_toolkit_step_keeps_it_unread(tmp_path: Path) -> None:
    """The plan's CUDA-toolkit step keeps a compiler it does not replace; one whose major was not read stays not read
    (the step dropped the null key, so after a step to CUDA 12.9 the version rule was skipped: the plan read clean)."""
    from typing import cast

    from stackcheck.knowledge.loader import load as load_manifests
    from stackcheck.plan.hypothetical import apply_choice
    from stackcheck.plan.solver import Choice
    from stackcheck.verdicts.context import Context

    jit = probe_jit(toolkit_128_facts(), {"CC": "gcc", "PATH": f"{MASQ}:/usr/bin"}, _box(tmp_path / "box"))
    jit["flashinfer_allow_unsupported"] = False
    ctx = Context(facts=cast("Any", {}), manifests=load_manifests([], env={}))
    step = apply_choice(cast("Any", {"jit": jit, "cuda_toolkits": []}), Choice("toolkit", "cuda-toolkit", "12.9"), ctx)
    after = dict(step["jit"])
    for key in ("nvcc_host", "cc_host"):
        assert after.get(f"{key}_found") is True, after
        assert f"{key}_gnu_supported" in after and after[f"{key}_gnu_supported"] is None, (key, after)
        assert "ccache" in after[f"{key}_gnu_supported_reason"], after
