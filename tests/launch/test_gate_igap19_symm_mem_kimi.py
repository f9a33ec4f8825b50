"""igap19 (2): SGLang 0.5.17-0.5.18 turn --enable-symm-mem back off for Kimi hybrid models with CUDA graphs on.

arg_groups/kimi_k3_hook.py disable_kimi_k3_symm_mem, called from ServerArgs._handle_cuda_graph_config right after
the per-phase graph backends are resolved, sets enable_symm_mem False where architectures[0] is
KimiLinearForCausalLM or KimiK3ForConditionalGeneration and the decode or the prefill graph backend is not
disabled; every later reader (the pool's preallocation, use_symmetric_memory, the communicators) reads the flag
from those server args, so the NCCL allocator is never built and a missing libnccl.so cannot fail the launch. The
check's rule symm-mem-allocator-link refused it (over-refusal). 0.5.16 has no such hook and 0.5.19 calls it no more;
with every graph disabled (--disable-cuda-graph, or both phases' flags) the hook keeps the flag. On the parent
(4b195b7) the three ignored cases fail."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

RULE = "symm-mem-allocator-link"
KIMI_LINEAR = {**LLAMA3, "architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear"}
KIMI_K3 = {**LLAMA3, "architectures": ["KimiK3ForConditionalGeneration"], "model_type": "kimi_k3"}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _rule(tmp_path: Path, release: str, config: dict[str, Any] | None, *flags: str) -> str | None:
    """The result of the rule in `gate` of a tp 2 --enable-symm-mem launch of a model whose config.json is `config`
    (None: a model directory the gate cannot read) on a box without libnccl.so; None where it is not named."""
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["jit"]["libnccl_so_found"] = False
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "m", config) if config is not None else tmp_path / "absent"
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "2", "--enable-symm-mem"]
    got = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line, *flags])[1]
    return next((str(x["result"]) for r in got.get("reasons") or [] for x in r.get("reasons") or []
                 if x.get("rule") == RULE), None)  # fmt: skip


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.17", KIMI_LINEAR, ()),
        ("0.5.18", KIMI_K3, ()),
        ("0.5.18", KIMI_LINEAR, ("--disable-decode-cuda-graph",)),  # prefill still captured
    ],
)
def test_the_flag_ignored_for_a_kimi_hybrid_model_under_cuda_graphs_is_not_refused(
    tmp_path: Path, release: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    assert _rule(tmp_path, release, config, *flags) is None


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.16", KIMI_LINEAR, ()),  # no hook yet
        ("0.5.19", KIMI_LINEAR, ()),  # no longer called
        ("0.5.17", LLAMA3, ()),  # another model
        ("0.5.17", KIMI_LINEAR, ("--disable-cuda-graph",)),  # every phase eager: the flag kept
        ("0.5.18", KIMI_LINEAR, ("--disable-decode-cuda-graph", "--disable-prefill-cuda-graph")),
        ("0.5.17", KIMI_LINEAR, ("--json-model-override-args", '{"architectures": ["LlamaForCausalLM"]}')),
        ("0.5.17", None, ()),  # the model not read
    ],
)
def test_the_flag_kept_is_still_refused(
    tmp_path: Path, release: str, config: dict[str, Any] | None, flags: tuple[str, ...]
) -> None:
    assert _rule(tmp_path, release, config, *flags) == "fail"


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.23"])
def test_the_wheels_turn_the_flag_off_for_the_listed_architectures_only_in_the_range(version: str) -> None:
    """The hook's call, its architectures and its graph test as the wheel holds them, against launch.json's entry."""
    import re

    from registry_wheels import fetch_wheel, read_texts

    from stackcheck.facts.versions import version_in
    from stackcheck.knowledge.loader import load

    hook, args = "sglang/srt/arg_groups/kimi_k3_hook.py", "sglang/srt/server_args.py"
    texts = read_texts(fetch_wheel("sglang", version), lambda n: n in (hook, args))
    option = next(o for o in load([], env={}).launch["options"] if o["flag"] == "--enable-symm-mem")
    entry = option["ignored_for_models"][0]
    called = "disable_kimi_k3_symm_mem(self)" in texts.get(args, "")
    assert called == (version_in(version, entry["versions"]) is True), version
    if not called:
        return
    body = texts[hook][texts[hook].index("def disable_kimi_k3_symm_mem") :]
    body = body[: body.index("\ndef ", 1)]
    listed = re.search(r"architectures\[0\] not in \((.*?)\)", body, re.S)
    assert listed is not None and re.findall(r'"(\w+)"', listed.group(1)) == entry["architectures"]
    assert "graph.decode.backend == Backend.DISABLED" in body and "graph.prefill.backend == Backend.DISABLED" in body
    assert "server_args.enable_symm_mem = False" in body
